"""scripts/make_checkpoint.py never replaces a checkpoint without --force, refuses a bad folder or layer count in one
line before writing anything, bounds the size it writes, and leaves nothing behind when a write fails."""

from __future__ import annotations

import errno
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "make_checkpoint.py"
sys.path.insert(0, str(ROOT / "scripts"))
import make_checkpoint  # noqa: E402


def _script(*args, cwd):
    done = subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=60, check=False)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def _one_line(done, code: int, *says: str) -> str:
    line = done.stderr.strip().splitlines()[-1]
    assert done.returncode == code and done.stdout == "", done.stderr
    if code == 1:
        assert done.stderr.count("\n") == 1
    for part in says:
        assert part in line, line
    return line


def test_an_existing_checkpoint_is_never_replaced_without_force(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "config.json").write_text('{"mine": true}')
    (folder / "model.safetensors").write_bytes(b"my weights")
    done = _script("small", folder, "--layers", "1", cwd=tmp_path)
    _one_line(done, 1, f"{folder} already holds config.json", "--force")
    assert (folder / "config.json").read_text() == '{"mine": true}'
    assert (folder / "model.safetensors").read_bytes() == b"my weights"
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors"]
    (folder / "config.json").unlink()
    _one_line(_script("small", folder, "--layers", "1", cwd=tmp_path), 1, "already holds model.safetensors")
    done = _script("small", folder, "--layers", "1", "--force", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (folder / "model.safetensors").stat().st_size > 1_000_000 and '"num_hidden_layers": 1' in (
        folder / "config.json").read_text()


def test_force_replaces_the_whole_checkpoint_and_leaves_the_users_other_files(tmp_path):
    folder = tmp_path / "sharded"
    folder.mkdir()
    for name in ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "model.safetensors.index.json",
                 "notes.txt"):
        (folder / name).write_text("old")
    with pytest.raises(make_checkpoint.Refused, match="already holds model.safetensors.index.json"):
        make_checkpoint.write("small", folder, layers=1)
    make_checkpoint.write("small", folder, layers=1, force=True)
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors", "notes.txt",
                                                        "tokenizer.json", "tokenizer_config.json"]


@pytest.mark.parametrize("args, code, says", [
    (["small", ""], 2, "argument folder: empty"),
    (["small", " "], 2, "argument folder: empty"),
    (["small", "afile"], 1, "afile is a file, not a folder"),
    (["small", "afile/sub"], 1, "afile is a file, not a folder"),
    (["small", "/proc/x"], 1, "cannot make /proc/x"),
    (["small", "new", "--layers", "0"], 2, "argument --layers: 0: a checkpoint has 1 layer or more"),
    (["small", "new", "--layers", "-1"], 2, "argument --layers: -1"),
    (["small", "new", "--layers", "two"], 2, "argument --layers: 'two' is not a whole number"),
    (["small", "new/deeper", "--layers", "99999999999999999999"], 1,
     "small with 99999999999999999999 layers needs about 2.3e+27 bytes, more than the 100.0 GB"),
    (["tinyllama", "new", "--layers", "2000"], 1, "needs about 176.4 GB, more than the 100.0 GB this script writes"),
])
def test_a_bad_folder_or_layer_count_is_one_line_and_nothing_is_written(tmp_path, args, code, says):
    (tmp_path / "afile").write_text("mine")
    started = time.monotonic()
    done = _script(*args, cwd=tmp_path)
    assert time.monotonic() - started < 30
    _one_line(done, code, says)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"] and (tmp_path / "afile").read_text() == "mine"


def test_more_than_the_disk_has_free_is_refused_naming_it(tmp_path, monkeypatch):
    class Disk:
        total, free = 10**12, 10_000_000

    monkeypatch.setattr(make_checkpoint.shutil, "disk_usage", lambda place: Disk)
    with pytest.raises(make_checkpoint.Refused, match=r"small with 6 layers needs about \d+\.\d MB, more than the "
                                                      r"10\.0 MB free on .*; give fewer --layers, or another folder"):
        make_checkpoint.write("small", tmp_path / "a" / "b")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("error", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt(), SystemExit(143)])
def test_a_write_that_fails_leaves_nothing_behind_and_the_old_checkpoint_whole(tmp_path, monkeypatch, error):
    calls = []

    def failing(a, dtype):
        calls.append(1)
        if len(calls) == 5:
            raise error
        return a.astype("<f4")

    monkeypatch.setattr(make_checkpoint, "stored", failing)
    with pytest.raises((make_checkpoint.Refused, KeyboardInterrupt, SystemExit)):
        make_checkpoint.write("small", tmp_path / "new" / "deeper", layers=1)
    assert list(tmp_path.iterdir()) == []  # not even the folders it made
    old = tmp_path / "old"
    old.mkdir()
    (old / "config.json").write_text("old")
    calls.clear()
    with pytest.raises((make_checkpoint.Refused, KeyboardInterrupt, SystemExit)):
        make_checkpoint.write("small", old, layers=1, force=True)
    assert [p.name for p in old.iterdir()] == ["config.json"] and (old / "config.json").read_text() == "old"


def test_the_size_is_worked_out_without_listing_every_layer():
    config = make_checkpoint._config("tinyllama", None)
    listed = sum(int(make_checkpoint.np.prod(dims)) for dims, _kind in make_checkpoint.tensors(config).values())
    assert make_checkpoint.checkpoint_bytes(config) == 2 * listed
    started = time.monotonic()
    assert make_checkpoint.checkpoint_bytes(make_checkpoint._config("gpt2", 10**30)) > 10**36
    assert time.monotonic() - started < 1


def test_a_name_too_long_and_a_link_in_place_of_the_config_are_one_line(tmp_path):
    long = "a" * 300
    _one_line(_script("small", long, cwd=tmp_path), 1, "File name too long")
    _one_line(_script("small", f"{long}/sub", cwd=tmp_path), 1, "File name too long")
    folder = tmp_path / "linked"
    folder.mkdir()
    (folder / "config.json").symlink_to(tmp_path / "nowhere.json")  # the user's link, even dangling, is theirs
    _one_line(_script("small", folder, "--layers", "1", cwd=tmp_path), 1, "already holds config.json")
    assert (folder / "config.json").is_symlink() and len(list(folder.iterdir())) == 1


def test_a_script_killed_while_writing_leaves_nothing_behind(tmp_path):
    import signal

    folder = tmp_path / "new" / "big"
    child = subprocess.Popen([sys.executable, str(SCRIPT), "tinyllama", str(folder)], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not list(folder.glob(".*.partial")) and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert child.poll() is None, "it finished before it could be stopped"
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        child.kill()
        child.wait()
    assert "Traceback" not in child.stderr.read().decode()
    assert list(tmp_path.iterdir()) == []
