"""A big JSON trace, written a block of rows at a time: the bytes of the document whether piped, redirected or written
with -o, and every way it can end ends well: a reader gone, Ctrl-C, SIGTERM, a full disk."""

import json
import os
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

from attntrace.core.engine import trace
from attntrace.files.problemfile import load
from attntrace.render import jsonform as contract
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """a problem whose JSON trace is larger than a pipe holds"""
    path = tmp_path_factory.mktemp("big") / "big.json"
    rng = np.random.default_rng(7)
    path.write_text(json.dumps({"x": rng.normal(size=(256, 48)).round(6).tolist(),
                                "w_q": (rng.normal(size=(48, 48)) * 1e-3).round(9).tolist(), "heads": 2}))
    return path


def _run(*args, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "attntrace", *map(str, args)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **kwargs)


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


def test_a_reader_that_goes_away_ends_it_quietly(big):
    proc = _run("run", big, "--format", "json")
    assert proc.stdout.read(1) == b"{"
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=30)
    assert proc.returncode == 0 and err == b""


@pytest.mark.skipif(sys.platform == "win32", reason="shell pipe")
def test_head_on_a_big_json_trace_is_quiet(big):
    out = subprocess.run(f'"{sys.executable}" -m attntrace run "{big}" --format json | head -c 100', shell=True,
                         capture_output=True, cwd=ROOT)
    assert out.stdout.startswith(b"{\n") and len(out.stdout) == 100 and out.stderr == b""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_while_writing_exits_130_quietly(big):
    proc = _run("run", big, "--format", "json", start_new_session=True)
    assert proc.stdout.read(1) == b"{"  # writing, and waiting for its reader
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    threading.Thread(target=proc.stdout.read, daemon=True).start()
    err = proc.stderr.read().decode()
    proc.wait(timeout=30)
    assert proc.returncode == 130 and err.strip() == ""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and FIFOs")
def test_sigterm_while_writing_with_o_leaves_no_temporary(big, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "attntrace", "run", str(big), "--format", "json", "-o", str(fifo)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with open(fifo, "rb") as reader:
        assert reader.read(1) == b"{"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM and out == b"" and "Traceback" not in err.decode()
    assert [p.name for p in tmp_path.iterdir()] == ["fifo"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_is_one_line(big):
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, "-m", "attntrace", "run", str(big), "--format", "json"], cwd=ROOT,
                              stdout=full, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.decode() == "attntrace: cannot write to stdout: No space left on device\n"
