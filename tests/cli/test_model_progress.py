"""The progress line of a model trace: layer k of L on stderr in a real terminal once a second has gone by, gone when
the trace ends; nothing when stderr is not a terminal, and nothing in the first second."""

from __future__ import annotations

import io
import json
import sys

import pytest

from attntrace import cli
from attntrace.cli import progress
from attntrace.cli.terminal import Environment
from tests.conftest import ROOT
from tests.tmux import Tmux

sys.path.insert(0, str(ROOT / "scripts"))
import make_checkpoint  # noqa: E402

HELD = """
import sys, time
from pathlib import Path
from attntrace.cli import main, progress
progress.DELAY = 0  # drawn at once, and held after layer 3 until the test has read the screen
go, tell = Path(sys.argv[1]), progress.LayerProgress.tell
def held(self, done, total):
    tell(self, done, total)
    while done == 3 and not go.exists():
        time.sleep(0.02)
progress.LayerProgress.tell = held
sys.exit(main(sys.argv[2:]))
"""


@pytest.fixture
def small(small_checkpoint):
    return small_checkpoint


@pytest.mark.parametrize("lang, said", [("en", "layer 4 of 6"), ("zh", "第 4 层，共 6 层")])
def test_a_terminal_shows_the_layer_running_then_clears_it(small, tmp_path, lang, said):
    go = tmp_path / "go"
    t = Tmux(tmp_path, str(go), "model", str(small), make_checkpoint.SENTENCE, "--layer", "6", "--head", "5",
             "-f", "json", "-o", "out.json", "--lang", lang, python=("-c", HELD), width=80)
    try:
        t.shows(said)
        assert "━" in t.screen()  # rich's bar
        go.touch()
        assert t.ended() == 0
        assert said not in t.screen()  # the line is gone once the trace is done
        assert json.loads((tmp_path / "out.json").read_text())["heads"][0]["head"] == 5
    finally:
        t.close()


def test_no_progress_when_stderr_is_not_a_terminal(small, attntrace, monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0)
    r = attntrace("model", small, make_checkpoint.SENTENCE, "--layer", "6", "--head", "5", "-f", "json")
    assert r.code == 0 and r.err == ""


def test_nothing_is_drawn_in_the_first_second():
    now = [100.0]
    shown = progress.LayerProgress(io.StringIO(), True, "running", clock=lambda: now[0])
    now[0] += 0.9
    shown.tell(1, 22)
    assert shown.shown is None
    now[0] += 0.2
    shown.tell(2, 22)
    assert shown.shown is not None and shown.shown.tasks[0].completed == 2
    shown.stop()


class Watched(io.StringIO):
    """stderr as a terminal a person watches"""

    def isatty(self) -> bool:
        return True


def test_a_folder_name_is_shown_never_obeyed(small, tmp_path, monkeypatch):
    hostile = tmp_path / "evil\x1b[31m[bold]name"
    hostile.symlink_to(small, target_is_directory=True)
    monkeypatch.setattr(progress, "DELAY", 0)
    monkeypatch.chdir(tmp_path)  # the name short enough to be drawn whole
    err = Watched()
    env = Environment(stdout_isatty=False, stdin_isatty=False, no_color=True, stderr=err)
    code = cli.main(["model", hostile.name, make_checkpoint.SENTENCE, "--layer", "3", "--head", "5", "-f", "json",
                     "-o", str(tmp_path / "out.json")], env=env)
    drawn = err.getvalue()
    assert code == 0 and "layer 3 of 3" in drawn
    assert "\\x1b[31m[bold]name" in drawn and "\x1b[31m" not in drawn  # the escape written out, the [bold] as typed
