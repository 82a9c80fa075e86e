"""A big JSON output written on two cores: the same bytes as one process writes, and every way it can end ends well:
a reader gone, Ctrl-C to the group or to the parent alone, the child killed."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from attntrace.core.engine import trace
from attntrace.files import forked
from attntrace.files.problemfile import load
from attntrace.render import jsonform as contract
from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="two processes share the writing on Linux only")


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """a problem whose JSON trace holds more than forked.FROM numbers: written on two cores when piped"""
    path = tmp_path_factory.mktemp("forked") / "big.json"
    rng = np.random.default_rng(7)
    path.write_text(json.dumps({"x": rng.normal(size=(256, 48)).round(6).tolist(),
                                "w_q": (rng.normal(size=(48, 48)) * 1e-3).round(9).tolist(), "heads": 2}))
    problem = load(path)
    data = contract.trace_form(trace(problem))
    assert sum(p.cells for p in contract.pieces(data) if not isinstance(p, str)) >= forked.FROM
    return path


def _run(*args, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "attntrace", *map(str, args)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **kwargs)


def _children(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(c) for c in f.read().split()]


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def _ends(pid):
    """whether the process ends within 5 seconds (a signal takes a moment to be acted on)"""
    for _ in range(500):
        if not _alive(pid):
            return True
        time.sleep(0.01)
    return False


def _writing(proc):
    """the child that shares the writing, once the first bytes have come (the output then waits for its reader)"""
    assert proc.stdout.read(1) == b"{"
    for _ in range(500):
        found = _children(proc.pid)
        if found:
            return found[0]
        time.sleep(0.01)
    raise AssertionError("no second process")


def _written(segments, folder, shared):
    """what segments.write puts in a new file, after checking whether it takes two processes"""
    target = folder / "out"
    fd = os.open(target, os.O_WRONLY | os.O_CREAT)
    try:
        assert segments.worth_sharing(fd) == shared
        segments.write(fd)
    finally:
        os.close(fd)
    return target.read_text(encoding="utf-8")


def test_a_piped_trace_is_the_bytes_of_the_document(big):
    proc = _run("run", big, "--format", "json")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and err == b""
    problem = load(big)
    assert out.decode() == contract.dumps(contract.trace_form(trace(problem)))


def test_written_with_o_it_is_the_same_bytes_and_nothing_else_is_left(big, tmp_path):
    target = tmp_path / "trace.json"
    proc = subprocess.run([sys.executable, "-m", "attntrace", "run", big, "--format", "json", "-o", target],
                          cwd=ROOT, capture_output=True)
    assert proc.returncode == 0 and proc.stdout == proc.stderr == b""
    piped = subprocess.run([sys.executable, "-m", "attntrace", "run", big, "--format", "json"], cwd=ROOT,
                           capture_output=True).stdout
    assert target.read_bytes() == piped
    assert [p.name for p in tmp_path.iterdir()] == ["trace.json"]


def test_written_to_a_file_by_redirection_it_is_whole_too(big, tmp_path):
    target = tmp_path / "redirected.json"
    with open(target, "wb") as f:
        proc = subprocess.run([sys.executable, "-m", "attntrace", "run", big, "--format", "json"], cwd=ROOT, stdout=f,
                              stderr=subprocess.PIPE)
    assert proc.returncode == 0 and proc.stderr == b""
    assert json.loads(target.read_text())["heads"][1]["head"] == 2


def test_segments_are_written_in_order_whoever_formats_them(tmp_path):
    class Slow:
        """a block that takes its time: the other process is ready first and must still wait its turn"""

        def __init__(self, name, delay):
            self.name, self.delay, self.cells = name, delay, forked.FROM

        def text(self):
            time.sleep(self.delay)
            return f"<{self.name}>"

        def encoded(self):
            return self.text().encode()

    pieces = ["start 开始 "]
    for number in range(9):
        pieces += [Slow(number, 0.02 * (number % 3)), f" after {number}|"]
    segments = forked.Segments.of(pieces)
    assert len(segments.parts) == 9 and all(len([p for p in part if not isinstance(p, str)]) == 1
                                            for part in segments.parts)
    assert _written(segments, tmp_path, shared=True) == "start 开始 " + "".join(f"<{n}> after {n}|" for n in range(9))


def test_a_small_output_stays_in_one_process(tmp_path):
    small = forked.Segments.of(["[", contract.Rows(np.ones((3, 3)), 0, 3, ",\n"), "]", contract.Rows(np.ones((1, 3)), 0, 1, "")])
    written = _written(small, tmp_path, shared=False)
    assert written == "".join(small.texts()) == "[[1.0, 1.0, 1.0],\n[1.0, 1.0, 1.0],\n[1.0, 1.0, 1.0]][1.0, 1.0, 1.0]"


def test_a_reader_that_goes_away_ends_both_quietly(big):
    proc = _run("run", big, "--format", "json")
    child = _writing(proc)
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=30)
    assert proc.returncode == 0 and err == b""
    assert _ends(child)


@pytest.mark.skipif(sys.platform == "win32", reason="shell pipe")
def test_head_on_a_big_json_trace_is_quiet(big):
    out = subprocess.run(f'"{sys.executable}" -m attntrace run "{big}" --format json | head -c 100', shell=True,
                         capture_output=True, cwd=ROOT)
    assert out.stdout.startswith(b"{\n") and len(out.stdout) == 100 and out.stderr == b""


@pytest.mark.parametrize("to_group", [True, False], ids=["ctrl-c", "sigint-to-the-parent"])
def test_ctrl_c_exits_130_and_leaves_no_process(big, to_group):
    proc = _run("run", big, "--format", "json", start_new_session=True)
    child = _writing(proc)
    if to_group:  # what a terminal's Ctrl-C does: the signal to every process of the foreground group
        os.killpg(proc.pid, signal.SIGINT)
        threading.Thread(target=proc.stdout.read, daemon=True).start()
    else:  # and nothing reads on: a child left behind would wait for its reader for ever
        proc.send_signal(signal.SIGINT)
    err = proc.stderr.read().decode()
    proc.wait(timeout=30)
    assert proc.returncode == 130 and err.strip() == ""  # the parent's own line break, nothing from the child
    assert _ends(child)


def test_the_child_killed_is_one_line_and_exit_1(big):
    proc = _run("run", big, "--format", "json")
    child = _writing(proc)
    os.kill(child, signal.SIGKILL)
    reader = threading.Thread(target=proc.stdout.read, daemon=True)
    reader.start()
    err = proc.stderr.read().decode()
    proc.wait(timeout=30)
    assert proc.returncode == 1
    assert err.startswith("attntrace: ") and err.count("\n") == 1 and "not whole" in err


def test_sigterm_while_writing_with_o_ends_both_processes(big, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "attntrace", "run", str(big), "--format", "json", "-o", str(fifo)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with open(fifo, "rb") as reader:
        assert reader.read(1) == b"{"
        for _ in range(500):
            found = _children(proc.pid)
            if found:
                break
            time.sleep(0.01)
        assert found
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM and out == b"" and "Traceback" not in err.decode()
    assert _ends(found[0])


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_is_one_line_whichever_process_meets_it(big):
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, "-m", "attntrace", "run", str(big), "--format", "json"], cwd=ROOT,
                              stdout=full, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.decode() == "attntrace: cannot write to stdout: No space left on device\n"


def test_a_write_the_child_fails_is_raised_by_the_parent_as_the_same_error(tmp_path):
    class Refused:
        cells = forked.FROM

        def text(self):
            return self.encoded().decode()

        def encoded(self):
            if os.getpid() != parent:  # the child's block: its write fails as a full disk would
                raise OSError(28, os.strerror(28))
            return b"[]"

    parent = os.getpid()
    segments = forked.Segments.of(["{", Refused(), ",", Refused(), "}"])
    fd = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT)
    try:
        with pytest.raises(OSError) as e:
            segments.write(fd)
    finally:
        os.close(fd)
    assert e.value.errno == 28 and e.value.strerror == os.strerror(28)


def test_with_sigchld_ignored_the_output_is_whole_and_the_run_succeeds(big, tmp_path):
    """a supervisor may start a program with SIGCHLD ignored: the child's status must still be read"""
    ignoring = ("import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); "
                "os.execv(sys.executable, [sys.executable, '-m', 'attntrace', *sys.argv[1:]])")
    target = tmp_path / "o.json"
    for extra in ([], ["-o", str(target)]):
        proc = subprocess.run([sys.executable, "-c", ignoring, "run", str(big), "--format", "json", *extra], cwd=ROOT,
                              capture_output=True, timeout=60)
        assert proc.returncode == 0 and proc.stderr == b""
        assert (proc.stdout if not extra else target.read_bytes()).startswith(b"{")
    assert target.read_bytes() == subprocess.run([sys.executable, "-m", "attntrace", "run", str(big), "--format", "json"],
                                                 cwd=ROOT, capture_output=True).stdout


@pytest.mark.parametrize("failing", ["pipe", "fork"])
def test_without_a_second_process_one_writes_it_all(monkeypatch, tmp_path, failing):
    def refused(*args):
        raise OSError(24, os.strerror(24))

    pieces = ["{", contract.Rows(np.arange(12.0).reshape(4, 3), 0, 2, ",\n"), ",\n",
              contract.Rows(np.arange(12.0).reshape(4, 3), 2, 4, ",\n"), "}"]
    monkeypatch.setattr(forked, "FROM", 1)
    monkeypatch.setattr(forked.os, failing, refused)
    written = _written(forked.Segments.of(pieces), tmp_path, shared=True)
    assert written == "{[0.0, 1.0, 2.0],\n[3.0, 4.0, 5.0],\n[6.0, 7.0, 8.0],\n[9.0, 10.0, 11.0]}"


def test_the_warning_newer_pythons_give_on_forking_beside_threads_is_not_shown(monkeypatch, tmp_path):
    import warnings

    real = os.fork

    def warning_fork():
        warnings.warn("This process is multi-threaded, use of fork() may lead to deadlocks", DeprecationWarning,
                      stacklevel=2)
        return real()

    monkeypatch.setattr(forked, "FROM", 1)
    monkeypatch.setattr(forked.os, "fork", warning_fork)
    pieces = ["[", contract.Rows(np.eye(4), 0, 2, ",\n"), ",\n", contract.Rows(np.eye(4), 2, 4, ",\n"), "]"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        written = _written(forked.Segments.of(pieces), tmp_path, shared=True)
    assert written == "[[1.0, 0.0, 0.0, 0.0],\n[0.0, 1.0, 0.0, 0.0],\n[0.0, 0.0, 1.0, 0.0],\n[0.0, 0.0, 0.0, 1.0]]"
