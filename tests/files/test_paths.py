"""One way to look at a path: a symbolic link loop wherever a path is given is one line naming it, exit 1."""

import os

import pytest

from attntrace.errors import AttntraceError
from attntrace.files import paths


@pytest.fixture
def loop(tmp_path):
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    return tmp_path / "a"


@pytest.mark.parametrize("args", [["run", "-o", "{a}/out.txt"], ["run", "-o", "{a}"], ["run", "--export-svg", "{a}/x.svg"],
                                  ["run", "--export-html", "{a}/x.html"], ["worksheet", "-o", "{a}/w.md"], ["run", "{a}"],
                                  ["run", "{a}/x.json"], ["step", "{a}", "--input", "1"]])
def test_a_symlink_loop_is_one_line(attntrace, loop, args):
    r = attntrace(*[a.format(a=loop) for a in args])
    assert r.code == 1 and r.err.count("\n") == 1 and "Traceback" not in r.err, r.err
    assert "symbolic link" in r.err or "Too many levels" in r.err


def test_resolved_and_kind_name_the_loop(loop):
    for look in (paths.resolved, paths.kind, paths.regular_file):
        with pytest.raises(AttntraceError, match="symbolic link loop"):
            look(loop)


def test_regular_file_refuses_devices_folders_and_big_files(tmp_path, monkeypatch):
    with pytest.raises(AttntraceError, match="device or pipe"):
        paths.regular_file("/dev/zero")
    with pytest.raises(AttntraceError, match="folder"):
        paths.regular_file(tmp_path)
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(3_000_000)
    monkeypatch.setenv("ATTNTRACE_MAX_MB", "1")
    with pytest.raises(AttntraceError, match="over the 1 MB cap"):
        paths.regular_file(big, "a config")


def test_an_output_below_a_file_says_the_file_is_no_folder(attntrace, tmp_path):
    (tmp_path / "f").write_text("x")
    r = attntrace("run", "-o", tmp_path / "f" / "out.txt")
    assert r.code == 1 and f"{tmp_path / 'f'} is a file, not a folder" in r.err and r.err.count("\n") == 1


@pytest.mark.parametrize("args", [["new", "-o", "{a}"], ["run", "--export-html", "{a}"], ["worksheet", "-o", "{a}"]])
def test_an_output_that_is_a_loop_is_named_so(attntrace, loop, args):
    r = attntrace(*[a.format(a=loop) for a in args])
    assert r.code in (1, 2) and "symbolic link loop" in r.err and r.err.count("\n") == 1


def test_dash_as_the_output_is_stdout(attntrace, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert attntrace("run", "-o", "-").out == attntrace("run").out
    assert not (tmp_path / "-").exists()
