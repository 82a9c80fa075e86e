"""Pausing in a real terminal, Ctrl-C, and a reader that goes away."""

import json
import os
import signal
import subprocess
import sys

import numpy as np
import pexpect
import pytest

from tests.conftest import ROOT

PROMPT = "Enter: next step"


def _spawn(*args: str) -> pexpect.spawn:
    env = {**os.environ, "COLUMNS": "120", "LINES": "50", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    return pexpect.spawn(sys.executable, ["-m", "attntrace", *args], cwd=str(ROOT), env=env, encoding="utf-8",
                         timeout=20, dimensions=(50, 120))


def test_pause_waits_after_each_step_and_enter_continues():
    child = _spawn("run", "--pause")
    child.expect("Step 1 · prepare inputs")
    child.expect(PROMPT)
    assert "Step 2" not in child.before
    child.send("\r")
    child.expect("Step 2 · weights")
    child.expect(PROMPT)
    for _ in range(20):
        child.send("\r")
        if child.expect([PROMPT, pexpect.EOF]) == 1:
            break
    child.close()
    assert child.exitstatus == 0


def test_q_quits_with_exit_0():
    child = _spawn("run", "--pause")
    child.expect(PROMPT)
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and "Step 2" not in child.before


def test_ctrl_c_exits_130_without_a_traceback():
    child = _spawn("run", "--pause")
    child.expect(PROMPT)
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130 and "Traceback" not in child.before


def test_sigint_while_running_exits_130():
    proc = subprocess.Popen([sys.executable, "-c", "import time, attntrace.cli.terminal as c; c.exit_on_interrupt(); "
                             "print('ready', flush=True); time.sleep(30)"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, text=True)
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 130 and "Traceback" not in err


def test_pause_is_off_when_stdin_or_stdout_is_not_a_terminal():
    out = subprocess.run([sys.executable, "-m", "attntrace", "run", "--pause"], capture_output=True, text=True,
                         cwd=ROOT, stdin=subprocess.DEVNULL, timeout=20)
    assert out.returncode == 0 and "Step 8" in out.stdout and PROMPT not in out.stdout + out.stderr


def test_the_pause_prompt_goes_to_stderr_never_stdout(attntrace, terminal):
    terminal(keys="\r" * 30)
    r = attntrace("run", "--pause", "--color", "never")
    assert r.code == 0 and PROMPT not in r.out and PROMPT in r.err and "Step 8" in r.out


def test_a_closed_pipe_ends_quietly(tmp_path):
    path = tmp_path / "big.json"
    rng = np.random.default_rng(0)
    path.write_text(json.dumps({"x": rng.normal(size=(200, 32)).tolist()}))
    proc = subprocess.Popen([sys.executable, "-m", "attntrace", "run", str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout.readline().startswith(b"Step 1")
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=30)
    assert err == "" and proc.returncode == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a pipe's size is set by Linux's F_SETPIPE_SZ")
def test_a_piped_stdout_is_given_a_larger_pipe():
    import fcntl

    read_end, write_end = os.pipe()
    size = lambda: fcntl.fcntl(read_end, getattr(fcntl, "F_GETPIPE_SZ", 1032))  # noqa: E731
    try:
        before = size()
        with os.fdopen(write_end, "wb") as out:
            proc = subprocess.run([sys.executable, "-m", "attntrace", "run", "--format", "json"], stdout=out,
                                  stderr=subprocess.PIPE, cwd=ROOT, timeout=30)
        assert proc.returncode == 0 and proc.stderr == b""
        assert before < size() == 1 << 20
        assert json.loads(os.read(read_end, 1 << 20))["format"] == 1
    finally:
        os.close(read_end)


@pytest.mark.skipif(sys.platform == "win32", reason="shell pipe")
def test_head_pipeline_is_quiet(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"x": np.ones((300, 16)).tolist()}))
    out = subprocess.run(f'"{sys.executable}" -m attntrace run "{path}" | head -1', shell=True, capture_output=True,
                         text=True, cwd=ROOT)
    assert out.stdout == "Step 1 · prepare inputs\n" and out.stderr == ""


@pytest.mark.parametrize("setting", [{"PYTHONIOENCODING": "ascii"}, {"PYTHONIOENCODING": "cp1252"},
                                     {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"}])
def test_output_is_utf8_whatever_the_locale_says(setting):
    env = {**{k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LC_ALL", "LANG")}, **setting}
    args = [sys.executable, "-m", "attntrace", "run", str(ROOT / "samples" / "homework" / "problem.json")]
    out = subprocess.run(args, capture_output=True, env=env, cwd=ROOT, timeout=20)
    assert out.returncode == 0 and out.stderr == b""
    assert "Σ_j" in out.stdout.decode("utf-8") and "喜欢" in out.stdout.decode("utf-8")


def test_an_80_column_terminal_shows_every_number_whole_beside_a_72_character_label():
    """a 12-column matrix and a 72-character label in a real 80-column terminal: labels are cut, numbers never"""
    import re

    from attntrace.views.text import width

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env["TERM"] = "xterm-256color"
    child = pexpect.spawn(sys.executable, ["-m", "attntrace", "run", "samples/labels.json"], cwd=str(ROOT), env=env,
                          encoding="utf-8", timeout=30, dimensions=(40, 80))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    screen = re.sub(r"\x1b\[[0-9;]*m", "", child.before).replace("\r\n", "\n")
    assert "━" in screen  # the coloured tables, as a terminal gets them
    assert all(width(line) <= 80 for line in screen.split("\n")), max(screen.split("\n"), key=width)
    plain = subprocess.run([sys.executable, "-m", "attntrace", "run", "samples/labels.json", "--format", "plain"],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout
    number = re.compile(r"-?\d+\.\d{4}")
    assert set(number.findall(plain)) <= set(number.findall(screen))
    assert re.search(r"^  a token label long enough[^\n]*…  ", screen, re.M)  # a row's label, cut
