"""attntrace explore against a hostile reader: labels that are terminal codes or markup, keys in one burst (a paste, a
slow link), files that cannot be written, tiny screens; headless through Textual's Pilot, and in tmux."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
from textual import events

from attntrace.core.generate import random_problem
from attntrace.explore.app import Explorer
from attntrace.explore.dialogs import Answer, Confirm, Keys, Prompt
from attntrace.explore.state import Session
from attntrace.files.problemfile import read
from tests.conftest import SAMPLES
from tests.explore.test_explore import box_text, drive, press, screen_lines, status
from tests.tmux import Tmux

HOSTILE = ["\x1b[31mred", "\x1b]0;PWNED\x07", "a\u202eb", "[bold]x[/]"]
OBEYED = ("\x1b", "\x07", "\u202e", "\x9b")  # what a terminal would act on, were a label passed to it as it is
CHARACTERS = {".": "full_stop", "\n": "enter", "\r": "enter", " ": "space", "/": "slash", "~": "tilde", "-": "minus"}
NAMED = {"backspace": "\x7f", "enter": "\r", "escape": "\x1b", "full_stop": ".", "space": " ", "slash": "/",
         "tilde": "~", "minus": "-"}


def hostile_problem(tmp_path: Path) -> Path:
    """samples/causal.json with labels and a name a terminal would obey"""
    problem = json.loads((SAMPLES / "causal.json").read_text(encoding="utf-8"))
    problem.update(name="evil \x1b]0;PWNED\x07 [/] \u202e name", tokens=HOSTILE)
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(problem), encoding="utf-8")
    return path


def burst(app: Explorer, *keys: str) -> None:
    """the keys, all queued at once, as a terminal hands over a paste or what a slow link held back: a key name
    ("backspace") or a text typed key by key"""
    for key in keys:
        for name in ([key] if key in NAMED or len(key) > 1 and key.isidentifier() else list(key)):
            name = CHARACTERS.get(name, name)
            app.post_message(events.Key(name, NAMED.get(name, name if len(name) == 1 else None)))


async def settled(pilot, done) -> None:
    """pause until done() holds: the app has answered every key queued (a pause is only as long as the app is busy)"""
    for _ in range(400):
        if done():
            break
        await pilot.pause()
    await pilot.pause()


def said(app: Explorer) -> str:
    """what the message line says, without the selected cell's words before it"""
    message = status(app)[1]
    cell = app.session.cell_words() + " · "
    return message[len(cell):] if message.startswith(cell) else message


def shows_nothing_obeyed(app: Explorer) -> str:
    screen = "\n".join(screen_lines(app))
    assert not any(code in screen for code in OBEYED), [line for line in screen.splitlines() if "\x1b" in line]
    return screen


# 1. labels are shown, never obeyed


def test_labels_and_names_are_shown_as_escapes_everywhere_and_never_as_markup(tmp_path):
    folder = tmp_path / "out \x1b[31m [b]"
    folder.mkdir()
    path = hostile_problem(tmp_path)

    async def script(pilot, app):
        for row, label in enumerate(["\\x1b[31mred", "\\x1b]0;PWNED\\x07", "a\\u202eb", "[bold]x[/]"]):
            screen = shows_nothing_obeyed(app)
            assert status(app)[0].startswith(f"input {row + 1}/4 ({label}) · ")
            assert "evil \\x1b]0;PWNED\\x07" in screen  # the name, in the list of steps
            await press(pilot, "down")
        await press(pilot, "w")
        assert isinstance(app.screen, Prompt)
        shows_nothing_obeyed(app)
        assert "out \\x1b[31m [b]" in box_text(app)  # the folder, in the question
        app.post_message(events.Paste("\x1b]0;PWNED\x07[b]\u202e.json\nsecond line"))
        await settled(pilot, lambda: app.screen.query_one(Answer).value.endswith(".json"))
        assert app.screen.query_one(Answer).value == "\\x1b]0;PWNED\\x07[b]\\u202e.json"
        shows_nothing_obeyed(app)
        await press(pilot, "enter")
        written = folder / "\\x1b]0;PWNED\\x07[b]\\u202e.json"
        assert written.is_file() and status(app)[1].startswith("wrote ")
        assert "out \\x1b[31m [b]" in status(app)[1]
        shows_nothing_obeyed(app)
        await press(pilot, "x")
        await press(pilot, "right", "right", "right", "enter", "t")  # the arithmetic and the softmax quote labels
        shows_nothing_obeyed(app)

    drive(script, read(str(path), {})[0], folder=folder)


def test_the_svg_of_a_screen_with_hostile_labels_is_well_formed_xml(tmp_path):
    path = hostile_problem(tmp_path)

    async def script(pilot, app):
        await press(pilot, "down", "x")

    drive(script, read(str(path), {})[0], folder=tmp_path)
    svg = tmp_path / "attntrace-step1.svg"
    root = ElementTree.parse(svg).getroot()  # a control character anywhere would make it fail
    text = "".join(root.itertext())
    assert "PWNED\\x07" in text.replace("\xa0", " ") and "\x1b" not in text and "\u202e" not in text


def test_a_models_head_with_hostile_tokens_shows_them_as_escapes():
    """a model's head is a problem whose labels are the tokenizer's: shown as a file's are"""
    problem = random_problem(n=4, d_model=4, init="normal", seed=1)
    from dataclasses import replace

    problem = replace(problem, tokens=tuple(HOSTILE), name="\x1b]0;PWNED\x07 model")

    async def script(pilot, app):
        for _ in HOSTILE:
            shows_nothing_obeyed(app)
            assert "layer 5 · head 3/12" in status(app)[0]
            await press(pilot, "down")

    drive(script, problem, whose="layer 5 · head 3/12")


# 2. w never overwrites a file without asking


def test_w_asks_before_overwriting_the_problem_file_it_opened(tmp_path):
    opened = tmp_path / "problem.json"
    opened.write_text((SAMPLES / "causal.json").read_text(encoding="utf-8"), encoding="utf-8")
    before = opened.read_bytes()
    app = Explorer(Session(read(str(opened), {})[0]), folder=tmp_path, draw_ahead=False, opened=Path("problem.json"))

    async def script(pilot):
        await pilot.pause()
        await press(pilot, "m", "w", "ctrl+u")
        burst(app, "problem.json", "enter")
        await settled(pilot, lambda: isinstance(app.screen, Confirm))
        assert "is the problem file this explorer opened. Overwrite it" in box_text(app)
        await press(pilot, "n")
        assert opened.read_bytes() == before
        assert said(app) == f"kept {tmp_path / 'problem.json'} as it was; w again writes to another file"
        await press(pilot, "w", "ctrl+u")
        burst(app, "problem.json", "enter", "y")
        await settled(pilot, lambda: said(app).startswith("wrote"))
        assert opened.read_text(encoding="utf-8") == app.session.problem_text() != before.decode()

    import asyncio

    async def main():
        async with app.run_test(size=(128, 40)) as pilot:
            await script(pilot)

    os.chdir(tmp_path)  # the explorer was opened on problem.json, relative to here
    asyncio.run(main())


def test_w_asks_before_overwriting_any_file_and_refuses_a_read_only_one(tmp_path):
    other = tmp_path / "other.json"
    other.write_text("{}", encoding="utf-8")
    locked = tmp_path / "locked.json"
    locked.write_text("{}", encoding="utf-8")
    locked.chmod(0o444)

    async def script(pilot, app):
        await press(pilot, "w", "ctrl+u")
        burst(app, "other.json", "enter")
        await settled(pilot, lambda: isinstance(app.screen, Confirm))
        assert "/other.jsonexists.Overwriteit" in "".join(box_text(app).split())  # a long folder wraps anywhere
        await press(pilot, "escape")
        assert other.read_text(encoding="utf-8") == "{}"
        await press(pilot, "w", "ctrl+u")
        burst(app, "locked.json", "enter")
        await settled(pilot, lambda: said(app) != "? keys · q quit")
        assert said(app).startswith("! ") and said(app).endswith("/locked.json: is read-only; give another name")

    drive(script, folder=tmp_path)


def test_the_command_tells_the_explorer_which_file_it_opened(attntrace, terminal, monkeypatch):
    from attntrace.explore import app as explorer_app

    opened = {}
    monkeypatch.setattr(explorer_app, "explore", lambda session, **how: opened.update(how) or 0)
    terminal()
    assert attntrace("explore", SAMPLES / "causal.json").code == 0
    assert opened["opened"] == SAMPLES / "causal.json"
    assert attntrace("explore").code == 0 and opened["opened"] is None


# 3. never a traceback


def test_enter_twice_in_a_prompt_answers_once(tmp_path):
    async def script(pilot, app):
        burst(app, "e", "5", "enter", "enter")
        await settled(pilot, lambda: app.session.problem.x[0, 0] == 5)
        assert app.session.explaining  # the second Enter is the explorer's own: the cell's arithmetic
        burst(app, "w", "enter", "enter", "enter")
        await settled(pilot, lambda: (tmp_path / "attntrace-edited.json").exists())
        assert not isinstance(app.screen, Prompt) and len(app.session.history) == 1

    assert drive(script, folder=tmp_path).return_code is None


def test_a_long_paste_in_a_prompt_then_q(tmp_path):
    text = "12345678\n" * 1111 + "1"  # 10 000 characters

    async def pasted(pilot, app):
        await press(pilot, "e")
        app.post_message(events.Paste(text))  # a terminal that marks a paste: its first line
        await settled(pilot, lambda: app.screen.query_one(Answer).value == "12345678")
        burst(app, "q", "escape", "q")
        await settled(pilot, lambda: app.return_code is not None)

    async def typed(pilot, app):
        await press(pilot, "w", "ctrl+u")
        burst(app, text, "q")  # a terminal that does not: every character a key, every line an Enter
        await settled(pilot, lambda: app.return_code is not None)

    assert drive(pasted, folder=tmp_path).return_code == 0
    assert drive(typed, folder=tmp_path).return_code == 0
    assert json.loads((tmp_path / "12345678").read_text(encoding="utf-8"))["x"]


def written_as(tmp_path: Path, name: str, size=(128, 40)) -> str:
    """what the status says after w is given name"""
    out = []

    async def script(pilot, app):
        await press(pilot, "w", "ctrl+u")
        burst(app, name, "enter")
        await settled(pilot, lambda: not isinstance(app.screen, Prompt) and app.screen.message != "? keys · q quit")
        out.append(said(app))
        assert all(len(line.rstrip()) <= size[0] for line in screen_lines(app))

    drive(script, folder=tmp_path, size=size)
    return out[0]


def test_w_into_a_name_that_cannot_be_written_says_why(tmp_path, monkeypatch):
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    assert written_as(tmp_path, "loop.json").endswith("/loop.json: a symbolic link loop (a link that leads back to "
                                                      "itself); fix or remove the link")
    message = written_as(tmp_path, "missing/x.json", size=(80, 24))
    assert message.endswith("/missing: no such folder; create it, or give another folder")
    message = written_as(tmp_path, "a" * 300 + ".json", size=(80, 24))
    assert "…aaa" in message and message.endswith("aa.json: the name is too long for this file system; give a "
                                                   "shorter one")
    assert written_as(tmp_path, str(tmp_path)).endswith("_cannot0: is a folder; give a file name")
    assert written_as(tmp_path, "/dev/null") == "! /dev/null: is a device or a pipe, not a file; give a file name"
    monkeypatch.setenv("HOME", str(tmp_path / "nowhere"))
    message = written_as(tmp_path, "~/x.json")
    assert message.startswith("! ")
    assert message.endswith("/nowhere: no such folder; create it, or give another folder")
    monkeypatch.delenv("HOME")
    import pwd

    def unknown(uid):
        raise KeyError(uid)

    monkeypatch.setattr(pwd, "getpwuid", unknown)
    assert written_as(tmp_path, "~/x.json") == "! ~ names no home folder here (is HOME set?); give the file's full path"
    assert written_as(tmp_path, "~nobody-here/x.json").startswith("! ~nobody-here names no home folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["loop.json"]


def test_x_never_writes_over_a_name_taken_even_by_a_loop_and_says_when_the_folder_is_gone(tmp_path, monkeypatch):
    loop = tmp_path / "attntrace-step1.svg"
    loop.symlink_to(loop)

    async def script(pilot, app):
        await press(pilot, "x")
        assert said(app).replace(" ", "") == f"wrote{tmp_path / 'attntrace-step1-2.svg'}"

    drive(script, folder=tmp_path)
    assert loop.is_symlink()
    gone = tmp_path / "gone"

    async def folder_gone(pilot, app):
        await press(pilot, "x")
        assert said(app).startswith("! ") and said(app).endswith("/gone does not exist")

    drive(folder_gone, folder=gone)
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    here.rmdir()

    async def cwd_gone(pilot, app):
        await press(pilot, "x")
        assert said(app) == "! the current folder no longer exists; give w a full path, or quit and start again " \
                            "in another folder"
        await press(pilot, "w")
        assert not isinstance(app.screen, Prompt) and said(app).startswith("! the current folder no longer")

    drive(cwd_gone)


# 4. the status line at 80 columns


def test_at_80_columns_the_status_wraps_between_its_parts_and_shows_them_all():
    problem = replace_mask(random_problem(n=12, d_model=8, heads=2, init="normal", seed=2))

    async def script(pilot, app):
        await press(pilot, "m", "s", "right", "h")
        parts = app.session.status_parts()
        assert len(" · ".join(parts)) > 78
        first, message = status(app)
        assert first == " · ".join(parts)
        rows = screen_lines(app)[-3:]
        assert all(len(row.rstrip()) <= 79 and not row.rstrip().endswith("…") for row in rows)
        assert app.screen.status_rows == (2, 1)

    drive(script, problem, size=(80, 24), carry_rounding=True)


def replace_mask(problem):
    from dataclasses import replace

    from attntrace.core import masks

    return replace(problem, mask=(masks.Causal(),), scale=2.5)


# 5. keys in one burst


def test_an_edit_typed_in_one_burst_keeps_every_key():
    async def script(pilot, app):
        burst(app, "e", "backspace", "4.5", "enter")
        await settled(pilot, lambda: app.session.history)
        assert app.session.problem.x[0, 0] == 4.5
        burst(app, "right", "e", "12", "backspace", "3", "left", "left", "-", "enter", "tab")
        await settled(pilot, lambda: len(app.session.history) == 2)
        assert app.session.problem.w_q[0, 0] == -13 and app.session.cell.col == 1  # on step 2; the Tab after it too

    drive(script)


def test_the_keys_list_closes_once_however_many_keys_come_at_once():
    async def script(pilot, app):
        burst(app, "question_mark", "a", "b", "c")
        await settled(pilot, lambda: not isinstance(app.screen, Keys))
        await press(pilot, "right")
        assert app.session.step == 2

    assert drive(script).return_code is None


# hostile screens and problems


@pytest.mark.parametrize("size", [(1, 1), (10, 4), (30, 8), (200, 3)])
def test_tiny_screens_draw_and_answer_every_key(size, tmp_path):
    async def script(pilot, app):
        for keys in (["right"] * 3, ["enter", "t", "e"], ["escape", "w"], ["escape", "x", "question_mark"], ["q", "q"]):
            await press(pilot, *keys)
            shows_nothing_obeyed(app)

    assert drive(script, size=size, folder=tmp_path).return_code == 0


def test_a_huge_problem_opens_and_steps_through():
    rng = np.random.default_rng(0)
    problem = random_problem(n=256, d_model=64, init="normal", seed=4)
    from dataclasses import replace

    problem = replace(problem, tokens=tuple("\u202e" * int(k) + "t" for k in rng.integers(0, 3, size=256)))

    async def script(pilot, app):
        for _ in range(7):
            await press(pilot, "right")
            shows_nothing_obeyed(app)
        await press(pilot, "end", "pagedown", "q")

    assert drive(script, problem, size=(100, 30)).return_code == 0


# a real terminal: tmux


@pytest.fixture
def tmux(tmp_path):
    started = []

    def start(*args: str, **size: int) -> Tmux:
        started.append(Tmux(tmp_path, *args, **size))
        return started[-1]

    yield start
    for session in started:
        session.close()


def test_in_a_real_terminal_labels_never_set_the_title_nor_colour_the_status(tmp_path, tmux):
    t = tmux("explore", str(hostile_problem(tmp_path)))
    title = t.title()
    t.shows("input 1/4 (\\x1b[31mred) · head 1/1")
    t.keys("Down")
    t.shows("input 2/4 (\\x1b]0;PWNED\\x07) · head 1/1")
    t.keys("Down", "Down")
    t.shows("input 4/4 ([bold]x[/]) · head 1/1")
    assert t.title() == title and "PWNED" not in title
    t.keys("q")
    assert t.ended() == 0


def test_in_a_real_terminal_an_edit_sent_in_one_burst_keeps_every_key(tmp_path, tmux):
    t = tmux("explore")
    t.shows("cell [1, 1] of X · ? keys · q quit")
    t.keys("e", "BSpace", "4.5", "Enter", "Right", "e", "-2", "Enter")
    t.shows("W_Q[1, 1] = -2")
    assert "1 change" not in t.screen() and "2 changes (u undoes)" in t.screen()
    t.keys("Left")
    t.shows("4.5000")
    t.keys("q")
    assert t.ended() == 0


def test_in_a_real_terminal_a_long_paste_in_a_prompt_then_q_never_fails(tmp_path, tmux):
    t = tmux("explore", str(SAMPLES / "causal.json"))
    t.shows("cell [1, 1] of X · ? keys · q quit")
    t.keys("w", "C-u")
    t.shows("Write the problem")
    (tmp_path / "paste").write_text("12345678\n" * 500 + "1", encoding="utf-8")  # more than one read of the terminal
    t.tmux("load-buffer", str(tmp_path / "paste"))
    t.tmux("paste-buffer", "-t", "t")  # not marked as a paste: every line an Enter
    t.keys("q")
    assert t.ended() == 0
    assert "Traceback" not in t.screen()
    assert json.loads((tmp_path / "12345678").read_text(encoding="utf-8"))["tokens"] == ["I", "love", "cats", "."]


def test_a_click_beside_a_prompt_cancels_it_and_a_click_on_its_question_does_not():
    async def script(pilot, app):
        await press(pilot, "w")
        await pilot.click("#dialog", offset=(3, 2))  # on the question
        await pilot.pause()
        assert isinstance(app.screen, Prompt)
        await pilot.click(offset=(0, 0))
        await settled(pilot, lambda: not isinstance(app.screen, Prompt))
        assert not isinstance(app.screen, Prompt) and app.return_code is None

    drive(script)
