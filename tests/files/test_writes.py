"""Nothing lost: outputs never overwrite inputs, files are written whole or not at all, and every failure is one line."""

import json
import os
import shutil
import signal
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attntrace.files import written as cli_files
from tests.conftest import ROOT, SAMPLES


def _copy(tmp_path, name="p.json"):
    path = tmp_path / name
    shutil.copy(SAMPLES / "scaled.json", path)
    return path


@pytest.mark.parametrize("outputs", [["-o", "{p}"], ["--export-svg", "{p}"], ["--export-html", "{p}"],
                                     ["--export-svg", "{o}", "-o", "{o}"], ["--export-svg", "{o}", "--export-html", "{o}"],
                                     ["-o", "{link}"]])
def test_an_output_that_is_an_input_or_another_output_is_a_usage_error(attntrace, tmp_path, outputs):
    p = _copy(tmp_path)
    os.link(p, tmp_path / "link.json")
    before = p.read_bytes()
    args = [a.format(p=p, o=tmp_path / "out.txt", link=tmp_path / "link.json") for a in outputs]
    r = attntrace("run", p, *args)
    assert r.code == 2 and r.out == "" and r.err.count("\n") == 1 and p.read_bytes() == before
    assert not (tmp_path / "out.txt").exists()


def test_an_output_inside_a_csv_problem_directory_is_refused(attntrace, tmp_path):
    d = tmp_path / "csv"
    shutil.copytree(SAMPLES / "worked_example_csv", d)
    before = (d / "x.csv").read_bytes()
    r = attntrace("run", d, "-o", d / "x.csv")
    assert r.code == 2 and (d / "x.csv").read_bytes() == before


def test_a_worksheet_or_a_gradescope_file_never_replaces_its_input(attntrace, tmp_path):
    p = _copy(tmp_path)
    assert attntrace("worksheet", p, "-o", p).code == 2
    sheet = tmp_path / "s.json"
    sheet.write_text(attntrace("worksheet", p, "--key", "--format", "json").out)
    before = sheet.read_bytes()
    r = attntrace("check", sheet, p, "--gradescope", sheet)
    assert r.code == 2 and sheet.read_bytes() == before
    assert r.err == f"attntrace: --gradescope {sheet} is the input {sheet}; give --gradescope another file\n"
    r = attntrace("check", sheet, p, "--gradescope", tmp_path / "g.json", "--gradebook", tmp_path / "g.json")
    assert r.code == 2 and "--gradebook" in r.err and "is the file of --gradescope too" in r.err


def _leftovers(folder):
    return [f.name for f in folder.iterdir() if f.name.endswith(".tmp")]


def test_text_utf8_cannot_write_leaves_the_old_file_and_no_temporary(tmp_path):
    from attntrace.errors import AttntraceError

    out, other = tmp_path / "out.txt", tmp_path / "other.txt"
    out.write_text("old")
    with pytest.raises(AttntraceError, match="lone surrogate"):
        cli_files.write_files({other: "fine", out: "a\ud800"})
    assert out.read_text() == "old" and not other.exists() and _leftovers(tmp_path) == []


def test_a_failing_write_writes_none_of_the_outputs(attntrace, tmp_path, monkeypatch):
    out, svg = tmp_path / "out.txt", tmp_path / "side.svg"
    out.write_text("old")
    real = cli_files._temporary

    def full(path, data):
        if path == out:
            raise OSError(28, "No space left on device", str(path))
        return real(path, data)

    monkeypatch.setattr(cli_files, "_temporary", full)
    r = attntrace("run", "-o", out, "--export-svg", svg)
    assert r.code == 1 and "No space left on device" in r.err and r.err.count("\n") == 1
    assert out.read_text() == "old" and not svg.exists() and _leftovers(tmp_path) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(count=st.integers(1, 4), failing=st.integers(0, 4), at_rename=st.booleans())
def test_any_failing_write_leaves_every_previous_file_intact(tmp_path, count, failing, at_rename):
    folder = tmp_path / f"w{count}{failing}{int(at_rename)}"
    folder.mkdir(exist_ok=True)
    targets = {folder / f"f{i}.txt": f"new {i}" for i in range(count)}
    for path in targets:
        path.write_text("old")
    calls = {"n": 0}
    real = cli_files._temporary if not at_rename else None

    def flaky(path, data):
        if calls["n"] == failing:
            raise OSError(5, "Input/output error", str(path))
        calls["n"] += 1
        return cli_files_real(path, data)

    cli_files_real = real or cli_files.__dict__["_temporary"]
    original = cli_files._temporary
    cli_files._temporary = flaky
    try:
        cli_files.write_files(targets)
        wrote = True
    except Exception:
        wrote = False
    finally:
        cli_files._temporary = original
    contents = {path.read_text() for path in targets}
    assert contents == ({f"new {i}" for i in range(count)} if wrote else {"old"})
    assert _leftovers(folder) == []


def test_sigterm_while_writing_removes_the_temporary_files(tmp_path, monkeypatch):
    out = tmp_path / "out.txt"
    out.write_text("old")

    def terminated(path, data):
        raise cli_files.Interrupted()

    monkeypatch.setattr(cli_files, "_temporary", terminated)
    with pytest.raises(SystemExit) as e:
        cli_files.write_files({out: "new"})
    assert e.value.code == 128 + signal.SIGTERM and out.read_text() == "old" and _leftovers(tmp_path) == []


@pytest.mark.parametrize("target, words", [("missing/out.txt", "the folder"), ("", "needs a name")])
def test_writing_where_it_cannot_is_one_line(attntrace, tmp_path, target, words):
    r = attntrace("run", "-o", str(tmp_path / target) if target else "")
    assert r.code in (1, 2) and r.out == "" and r.err.count("\n") == 1


def _run(args, **kwargs):
    return subprocess.run([sys.executable, "-m", "attntrace", *args], capture_output=True, cwd=ROOT, timeout=30, **kwargs)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["run"], ["schema"], ["--help"], ["run", "--help"]])
def test_a_full_stdout_is_one_line(args):
    with open("/dev/full", "w") as full:
        out = subprocess.run([sys.executable, "-m", "attntrace", *args], stdout=full, stderr=subprocess.PIPE, cwd=ROOT,
                             timeout=30)
    err = out.stderr.decode()
    assert out.returncode == 1 and "No space left on device" in err and "Traceback" not in err and err.count("\n") == 1


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_device_as_output_file_writes_no_side_file(tmp_path):
    out = _run(["run", "-o", "/dev/full", "--export-svg", str(tmp_path / "side.svg")])
    assert out.returncode == 1 and b"Traceback" not in out.stderr and not (tmp_path / "side.svg").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="closing fds")
def test_closed_stdout_or_stdin_fail_only_what_needs_them(tmp_path):
    out = tmp_path / "out.txt"
    ok = subprocess.run(f'"{sys.executable}" -m attntrace run -o "{out}" >&- <&-', shell=True, capture_output=True,
                        cwd=ROOT, timeout=30)
    assert ok.returncode == 0 and "Step 1 · prepare inputs" in out.read_text()
    closed = subprocess.run(f'"{sys.executable}" -m attntrace run >&-', shell=True, capture_output=True, cwd=ROOT,
                            timeout=30)
    assert closed.returncode == 1 and b"stdout is closed" in closed.stderr and b"Traceback" not in closed.stderr
    stdin = subprocess.run(f'"{sys.executable}" -m attntrace run - <&-', shell=True, capture_output=True, cwd=ROOT,
                           timeout=30)
    assert stdin.returncode == 1 and b"stdin is closed" in stdin.stderr and b"Traceback" not in stdin.stderr


def test_help_into_a_closed_pipe_exits_0():
    proc = subprocess.Popen([sys.executable, "-m", "attntrace", "run", "--help"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=30) == 0 and err == b""


INTERRUPTED_WHILE_IMPORTING = """
import os, signal, sys
interrupted_at = sys.argv.pop(1)
sys.argv[0] = "attntrace"  # as the console script runs: Ctrl-C is handled from its first import on


class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == interrupted_at:  # Ctrl-C as this module starts to be imported, however busy the machine
            os.kill(os.getpid(), signal.SIGINT)
        return None


sys.meta_path.insert(0, CtrlC())
from attntrace.cli import main
raise SystemExit(main())
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("module", ["attntrace.cli.guard", "numpy"], ids=["before-main", "numpy"])
def test_ctrl_c_while_still_importing_exits_130_quietly(tmp_path, module):
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"x": [[1.0] * 8] * 300}))
    proc = subprocess.run([sys.executable, "-c", INTERRUPTED_WHILE_IMPORTING, module, "run", str(path)],
                          capture_output=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 130 and proc.stdout == b"" and proc.stderr.strip() == b""


def test_an_output_through_a_symlink_replaces_the_file_and_keeps_the_link(attntrace, tmp_path):
    real, link = tmp_path / "real.txt", tmp_path / "link.txt"
    real.write_text("old")
    link.symlink_to(real)
    assert attntrace("run", "-o", link).code == 0
    assert link.is_symlink() and "Step 1 · prepare inputs" in real.read_text() and _leftovers(tmp_path) == []


@pytest.mark.skipif(not os.path.exists("/proc/self/fd/1"), reason="needs /proc")
def test_an_output_that_is_stdout_through_a_link_writes_through_it(tmp_path):
    link = tmp_path / "mystdout"
    link.symlink_to("/proc/self/fd/1")
    redirected = tmp_path / "redirected.txt"
    with open(redirected, "w") as out:
        subprocess.run([sys.executable, "-m", "attntrace", "run", "-o", str(link)], stdout=out, cwd=ROOT, timeout=30,
                       check=True)
    assert link.is_symlink() and "Step 1 · prepare inputs" in redirected.read_text()


def test_check_never_writes_over_the_problem_beside_a_sheet(attntrace, tmp_path):
    roster = tmp_path / "roster.txt"
    roster.write_text("ann\n")
    room = tmp_path / "class"
    attntrace("assign", roster, "--seed", "7", "-o", room)
    (room / "ann" / "answers.json").write_text((room / "keys" / "ann" / "key.json").read_text())
    before = (room / "ann" / "problem.json").read_bytes()
    assert attntrace("check", room, "--gradebook", room / "ann" / "problem.json").code == 2
    assert attntrace("check", room / "ann" / "answers.json", "--gradescope", room / "ann" / "problem.json").code == 2
    assert (room / "ann" / "problem.json").read_bytes() == before


def test_assign_never_writes_over_its_roster_and_needs_a_folder(attntrace, tmp_path):
    (tmp_path / "r" / "keys" / "ann").mkdir(parents=True)
    roster = tmp_path / "r" / "keys" / "ann" / "key.md"
    roster.write_text("ann\n")
    assert attntrace("assign", roster, "--seed", "1", "-o", tmp_path / "r").code == 2 and roster.read_text() == "ann\n"
    r = attntrace("assign", roster, "--seed", "1", "-o", "")
    assert r.code == 2 and r.err.count("\n") == 1


def test_an_output_inside_a_csv_problem_directory_under_a_new_name_is_refused(attntrace, tmp_path):
    d = tmp_path / "csv"
    shutil.copytree(SAMPLES / "worked_example_csv", d)
    assert attntrace("run", d, "-o", d / "tokens.txt").code == 2 and not (d / "tokens.txt").exists()


def test_a_damaged_first_csv_row_is_an_error_not_a_header(attntrace, tmp_path):
    d = tmp_path / "csv"
    shutil.copytree(SAMPLES / "worked_example_csv", d)
    (d / "x.csv").write_text("1,0,1,0\x00\n0,2,0,2\n1,1,1,1\n")
    r = attntrace("run", d)
    assert r.code == 1 and "header" not in r.err and "\\x00" in r.err
