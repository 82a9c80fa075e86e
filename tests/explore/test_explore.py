"""attntrace explore: the session without a screen, every key through Textual's Pilot, the screens against what
`attntrace run` prints, and a real terminal."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace
from xml.etree import ElementTree

import numpy as np
import pexpect
import pytest
from rich.cells import cell_len
from rich.style import Style

from attntrace.core.engine import trace
from attntrace.core.generate import random_problem
from attntrace.core.problem import Problem, example
from attntrace.errors import AttntraceError
from attntrace.explore import app as explorer_app
from attntrace.explore.app import Explorer
from attntrace.explore.dialogs import Keys, Prompt
from attntrace.explore.drawing import CHANGED, SELECTED, Drawer
from attntrace.explore.state import STEPS, Selected, Session
from attntrace.files.problemfile import read
from attntrace.render.layout import shown
from attntrace.render.table import Look, render_step
from attntrace.render.table import console as table_console
from tests.conftest import ROOT, SAMPLES

SIZE = (128, 50)  # the main pane is then 100 columns wide, as `run` lays out tables when piped

Script = Callable[..., Awaitable[None]]


def drive(script: Script, problem=None, size=SIZE, folder=None, draw_ahead=False, look=Look(), **settings) -> Explorer:
    """run the explorer headless on problem (default: the built-in example), script pressing its keys"""
    app = Explorer(Session(problem if problem is not None else example(), **settings), folder=folder,
                   draw_ahead=draw_ahead, look=look)

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await script(pilot, app)

    asyncio.run(main())
    return app


async def press(pilot, *keys: str) -> None:
    await pilot.press(*keys)
    await pilot.pause()


def screen_lines(app: Explorer) -> list[str]:
    """the whole screen as text, a line each, read from Textual's screenshot of it (an SVG: each run of text a <text>
    at its column times the width of a character, clipped to its line)"""
    placed: dict[int, list[tuple[int, str]]] = {}
    width = 0.0
    for drawn in ElementTree.fromstring(app.export_screenshot()).iter("{http://www.w3.org/2000/svg}text"):
        clip, text = drawn.get("clip-path"), (drawn.text or "").replace("\xa0", " ").rstrip("\n")
        if clip is None or not text:
            continue  # the window's title, or the end of a line
        width = width or float(drawn.get("textLength", 0)) / len(text)
        line = int(clip.rstrip(")").rpartition("-")[2])
        placed.setdefault(line, []).append((round(float(drawn.get("x", 0)) / width), text))
    lines = []
    for y in range(app.size.height):
        line, at = "", 0
        for x, text in sorted(placed.get(y, [])):
            line, at = line + " " * (x - at) + text, x + cell_len(text)
        lines.append(line + " " * (app.size.width - at))
    return lines


def main_lines(app: Explorer) -> list[str]:
    """the main pane's lines as the screen shows them, trailing blank lines dropped"""
    region = app.screen.query_one("#main").scrollable_content_region
    lines = [line[region.x:region.x + region.width].rstrip()
             for line in screen_lines(app)[region.y:region.y + region.height]]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def side_text(app: Explorer) -> str:
    region = app.screen.query_one("#side").scrollable_content_region
    return "\n".join(line[region.x:region.right].strip() for line in screen_lines(app)[region.y:region.bottom])


def unwrapped(text: str) -> str:
    return " ".join(text.split())


def status(app: Explorer) -> list[str]:
    """the status line and the message line, each as one line, however many rows it wraps onto"""
    rows, said = app.screen_stack[0].status_rows
    lines = [line.strip() for line in screen_lines(app)[-(rows + said):]]
    return [" · ".join(lines[:rows]), " ".join(lines[rows:])]


def page(run_output: str, heading: str, count: int) -> list[str]:
    """count lines of `run` output from a step's heading on"""
    lines = [line.rstrip() for line in run_output.splitlines()]
    at = lines.index(heading)
    return lines[at:at + count]


def shows_as_run(app: Explorer, run_output: str) -> None:
    """the main pane is the current step exactly as `run --format table` draws it"""
    lines = main_lines(app)
    assert len(lines) > 3
    assert lines == page(run_output, app.session.current().heading, len(lines))


def tables_run(attntrace, *args: str) -> str:
    r = attntrace("run", *args, "--format", "table", "--color", "never")
    assert r.code == 0, r.err
    return r.out


def marked(app: Explorer, style: Style) -> set[tuple[int, int, int]]:
    """the cells on the screen drawn with style (reversed, or its background), as (table, row, column)"""
    region = app.screen.query_one("#main").scrollable_content_region
    out = set()
    for y in range(region.y, region.bottom):
        for x in range(region.x, region.right):
            drawn = app.screen.get_style_at(x, y)
            cell = drawn.meta.get("cell")
            if cell is None:
                continue
            if (style.reverse and drawn.reverse) or (style.bgcolor is not None and drawn.bgcolor is not None and
                                                     drawn.bgcolor.get_truecolor() == style.bgcolor.get_truecolor()):
                out.add(tuple(cell))
    return out


def where(app: Explorer, cell: Selected) -> tuple[int, int]:
    """where a cell is on the screen"""
    region = app.screen.query_one("#main").scrollable_content_region
    for y in range(region.y, region.bottom):
        for x in range(region.x, region.right):
            if app.screen.get_style_at(x, y).meta.get("cell") == (cell.block, cell.row, cell.col):
                return x, y
    raise AssertionError(f"{cell} is not on the screen")


# the session, without a screen


def test_the_session_imports_no_textual():
    code = "import sys, attntrace.explore.state; assert not any(m.startswith('textual') for m in sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_run_never_imports_textual():
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "attntrace", "run"], capture_output=True,
                         text=True, cwd=ROOT, check=True)
    assert "textual" not in out.stderr and "attntrace.explore" not in out.stderr


def test_a_session_opens_on_step_1_with_the_first_cell_selected():
    s = Session(example())
    assert (s.step, s.row, s.head, s.cell) == (1, 0, 0, Selected(0, 0, 0))
    s.go(5)
    assert s.cell == Selected(0, 0, 0) and s.current().number == 5


def test_steps_are_those_of_run_and_step_for_the_input_followed():
    p = read(str(SAMPLES / "scaled.json"), {})[0]
    s = Session(p, row=1)
    from attntrace.views.walkthrough import run_steps, step_steps

    whole = run_steps(trace(p))
    one = step_steps(trace(p, query=2))
    assert [st.heading for st in s.view()] == [*(st.heading for st in whole[:3]), *(st.heading for st in one[1:]),
                                               whole[-1].heading]


def test_moving_skips_hidden_rows_and_tab_goes_round_every_table():
    s = Session(random_problem(n=70, d_model=4, init="normal", seed=1))
    rows, hidden = shown(70)
    s.move(31, 0)
    assert s.cell == Selected(0, 31, 0)
    s.move(1, 0)
    assert s.cell == Selected(0, 31 + hidden + 1, 0) and hidden == 6 and rows[32] == 38  # rows 33 to 38 are hidden
    s.move(100, 3)
    assert s.cell == Selected(0, 69, 3)
    s.go(3)
    count = sum(len(shown(len(b.rows))[0]) * len(shown(len(b.cols))[0]) for b in s.blocks())
    for _ in range(count):
        s.tab(1)
    assert s.cell == Selected(0, 0, 0)
    s.tab(-1)
    assert s.cell.block == len(s.blocks()) - 1


def test_a_problem_the_engine_refuses_is_never_taken():
    s = Session(example())
    with pytest.raises(AttntraceError, match="score"):
        s.edit("1e300")  # its scores overflow
    assert s.problem is s.original and not s.history


# drawing, without a screen


def _drawn_problems(width):
    yield example(), Look()
    yield read(str(SAMPLES / "two_heads.json"), {})[0], Look(ascii=True)
    if width == 100:
        yield random_problem(n=65, d_model=2, init="normal", seed=2), Look()  # a row and a column hidden in step 8


@pytest.mark.parametrize("width", [100, 47])
def test_parts_draw_exactly_what_render_step_draws(width):
    for problem, look in _drawn_problems(width):
        s = Session(problem)
        drawer = Drawer(look)
        for number in range(1, 9):
            s.go(number)
            step = s.current()
            parts = drawer.step(step, 3, width, s.changed())
            lines = []
            for part in parts:
                drawn = drawer.lines(part, width)
                assert len(drawn) == part.height
                lines.extend(drawn)
            buffer = io.StringIO()
            table_console(buffer, False, width).print(render_step(step, 3, width, look), crop=False)
            assert [line.text.rstrip() for line in lines] == [line.rstrip() for line in buffer.getvalue().splitlines()]


def test_drawing_ahead_draws_the_same_lines_and_every_cell_knows_its_line():
    problem = random_problem(n=65, d_model=2, init="normal", seed=2)
    s = Session(problem)
    s.go(8)
    now, ahead = Drawer(), Drawer()
    paused = []
    for a, b in zip(now.step(s.current(), 4, 100, s.changed()), ahead.step(s.current(), 4, 100, s.changed())):
        ahead.ahead(b, 100, lambda: paused.append(1))
        assert [list(line) for line in now.lines(a, 100)] == [list(line) for line in b.lines]
        for key, line in a.cells.items():
            assert any(seg.style is not None and seg.style.meta.get("cell") == key for seg in now.line(a, line, 100))
    assert len(paused) > 500  # a pause after every line drawn ahead


# every key, through the Pilot


def test_right_left_n_p_change_the_step(attntrace):
    run = tables_run(attntrace)

    async def script(pilot, app):
        shows_as_run(app, run)
        for number, key in ((2, "right"), (3, "n"), (4, "right"), (5, "n"), (6, "right"), (7, "right"), (8, "n")):
            await press(pilot, key)
            assert app.session.step == number
            shows_as_run(app, run)
        await press(pilot, "right")
        assert app.session.step == 8 and "last step" in status(app)[1]
        await press(pilot, "left", "p")
        assert app.session.step == 6
        shows_as_run(app, run)

    drive(script, draw_ahead=True)


def test_down_up_and_digits_pick_the_input_steps_4_to_7_follow(attntrace):
    run = tables_run(attntrace)

    async def script(pilot, app):
        await press(pilot, *["right"] * 4)
        await press(pilot, "down")
        assert app.session.row == 1 and status(app)[0].startswith("input 2/3 (x2)")
        assert app.session.current().heading == "Step 5 · softmax for input 2"
        shows_as_run(app, run)
        await press(pilot, "3")
        assert app.session.row == 2
        shows_as_run(app, run)
        await press(pilot, "up", "up")
        assert app.session.row == 0
        await press(pilot, "up")
        assert app.session.row == 0 and "first" in status(app)[1]
        await press(pilot, "9")
        assert app.session.row == 0 and "input 9 is out of range" in status(app)[1]

    drive(script)


def test_h_and_shift_h_change_the_head(attntrace):
    path = str(SAMPLES / "two_heads.json")
    run = tables_run(attntrace, path)

    async def script(pilot, app):
        await press(pilot, "right", "right")
        titles = [b.title for b in app.session.blocks()]
        assert all(t.startswith("head 1 · ") for t in titles)
        await press(pilot, "h")
        assert app.session.head == 1 and "head 2/2" in status(app)[0]
        assert all(b.title.startswith("head 2 · ") for b in app.session.blocks())
        screen = "\n".join(main_lines(app))
        assert "head 2 · Q = X · W_Q[:, 3..4]" in screen and "head 1 · " not in screen
        await press(pilot, "right", "right", "right", "right")
        assert {b.answer[0] for b in app.session.blocks()} == {2, None}  # head 2, then the heads together
        await press(pilot, "H")
        assert app.session.head == 0
        await press(pilot, "H")
        assert app.session.head == 1  # round again
        await press(pilot, "right")
        lines = main_lines(app)
        expected = [line.rstrip() for line in run.splitlines()]
        assert all(line in expected for line in lines)

    drive(script, read(path, {})[0])


def test_one_head_says_so():
    async def script(pilot, app):
        await press(pilot, "h")
        assert "one head" in status(app)[1] and app.session.head == 0

    drive(script)


def test_tab_and_shift_arrows_move_the_selected_cell_and_the_screen_marks_it():
    async def script(pilot, app):
        assert marked(app, SELECTED) == {(0, 0, 0)}
        await press(pilot, "tab")
        assert app.session.cell == Selected(0, 0, 1) and marked(app, SELECTED) == {(0, 0, 1)}
        await press(pilot, "shift+down", "shift+right")
        assert app.session.cell == Selected(0, 1, 2)
        await press(pilot, "shift+left", "shift+up")
        assert app.session.cell == Selected(0, 0, 1)
        await press(pilot, "shift+tab", "shift+tab")
        assert app.session.cell == Selected(0, 2, 3)  # round to the last cell
        x, y = where(app, Selected(0, 2, 3))
        assert app.screen.get_style_at(x, y).reverse
        await press(pilot, "right", "right")  # step 3: Q, K and V
        assert app.session.cell == Selected(0, 0, 0)
        for _ in range(9):
            await press(pilot, "tab")
        assert app.session.cell == Selected(1, 0, 0)  # past Q's nine cells, into K
        assert marked(app, SELECTED) == {(1, 0, 0)}

    drive(script)


def test_a_click_selects_a_cell_and_a_step():
    async def script(pilot, app):
        await press(pilot, "right", "right")
        x, y = where(app, Selected(1, 2, 1))
        await pilot.click(offset=(x, y))
        await pilot.pause()
        assert app.session.cell == Selected(1, 2, 1)
        y = next(k for k, line in enumerate(screen_lines(app)) if line.startswith(" 5 softmax"))
        await pilot.click(offset=(3, y))
        await pilot.pause()
        assert app.session.step == 5

    drive(script)


def test_enter_shows_the_arithmetic_as_explain_writes_it(attntrace):
    explained = attntrace("explain", "--input", "1").out.splitlines()
    second = attntrace("explain", "--input", "2").out.splitlines()

    async def script(pilot, app):
        await press(pilot, "right", "right", "right")  # step 4: the scores of input 1
        await press(pilot, "tab", "enter")
        assert app.session.explaining and app.session.cell == Selected(0, 0, 1)
        side = side_text(app)
        assert "score(1,2) = q1 · k2 = 1×4 + 0×4 + 2×0 = 4" in explained
        assert "score(1,2) = q1 · k2 = 1×4 + 0×4 + 2×0 = 4" in side
        for keys, line in ((("right", "tab"), "w(1,2) = "), (("right", "shift+down"), "w(1,2) · v2[1] = "),
                           (("right",), "output1[1] = ")):
            await press(pilot, *keys)
            first = app.session.arithmetic()[0]
            assert first.startswith(line) and first in explained and unwrapped(first) in unwrapped(side_text(app))
        await press(pilot, "left", "left", "left", "left", "shift+down", "shift+right")  # step 3, Q: q2[2]
        assert app.session.arithmetic()[0].startswith("q2[2] = x2 · W_Q[:,2]")
        assert app.session.arithmetic()[0] in second
        for _ in range(9):
            await press(pilot, "tab")  # K: k2[2]
        assert app.session.arithmetic()[0].startswith("k2[2] = x2 · W_K[:,2]")
        assert app.session.arithmetic()[0] in explained
        await press(pilot, "enter")
        assert not app.session.explaining and "arithmetic" not in side_text(app)

    drive(script)


def test_the_arithmetic_of_step_8_is_that_of_the_row_s_input(attntrace):
    explained = attntrace("explain", "--input", "3").out.splitlines()

    async def script(pilot, app):
        await press(pilot, "8")  # input 3 for steps 4 to 7; step 8 holds every input
        app.session.go(8)
        app.session.select(Selected(2, 2, 1))  # output = weights · V, row 3
        await press(pilot, "enter")
        first = app.session.arithmetic()[0]
        assert first.startswith("output3[2] = ") and first in explained

    drive(script)


def test_e_edits_a_cell_and_every_step_shows_what_run_shows_for_the_edited_problem(attntrace, tmp_path):
    edited = tmp_path / "edited.json"
    before = trace(example())

    async def script(pilot, app):
        await press(pilot, "tab", "shift+down")  # X[2, 2]
        await press(pilot, "e")
        assert isinstance(app.screen, Prompt)
        await press(pilot, *"-1.5", "enter")
        assert app.session.problem.x[1, 1] == -1.5 and "X[2, 2] = -1.5" in status(app)[1]
        await press(pilot, "w")
        await press(pilot, "ctrl+u", *edited.name, "enter")  # in the folder w writes to
        assert edited.exists()
        run = tables_run(attntrace, edited)
        after = trace(read(str(edited), {})[0])
        assert app.session.problem.x[1, 1] == -1.5
        for step in range(1, 9):
            app.session.go(step)
            await press(pilot, "escape")
            shows_as_run(app, run)
            if step == 3:
                now = after.heads[0]
                was = before.heads[0]
                want = {(k, int(r), int(c)) for k, key in enumerate(("q", "k", "v"))
                        for r, c in zip(*np.nonzero(getattr(now, key) != getattr(was, key)))}
                assert want and marked(app, CHANGED) == want
                x, y = where(app, Selected(*sorted(want)[0]))
                assert app.screen.get_style_at(x, y).bgcolor.get_truecolor() == CHANGED.bgcolor.get_truecolor()

    drive(script, folder=tmp_path)


def test_e_on_a_weight_and_on_a_computed_cell(attntrace, tmp_path):
    w_q = tmp_path / "w_q.json"

    async def script(pilot, app):
        await press(pilot, "right", "tab", "tab", "tab", "tab")  # W_Q[2, 2]
        await press(pilot, "e", "5", "enter")
        assert app.session.problem.w_q[1, 1] == 5
        w_q.write_text(json.dumps(app.session.problem.w_q.tolist()), encoding="utf-8")
        run = tables_run(attntrace, "--w-q", w_q)
        await press(pilot, "right")
        shows_as_run(app, run)
        await press(pilot, "e")
        assert not isinstance(app.screen, Prompt) and "is computed" in status(app)[1]
        await press(pilot, "left", "e", *"two", "enter")
        assert "not a number" in status(app)[1] and app.session.problem.w_q[1, 1] == 5
        await press(pilot, "e", "9", "escape")
        assert app.session.problem.w_q[1, 1] == 5 and not isinstance(app.screen, Prompt)

    drive(script)


def test_u_undoes_each_change_and_shows_run_again(attntrace):
    run = tables_run(attntrace)

    async def script(pilot, app):
        await press(pilot, "e", "7", "enter")
        await press(pilot, "s", "m")
        assert len(app.session.history) == 3 and "3 changes (u undoes)" in status(app)[0]
        await press(pilot, "u", "u", "u")
        assert app.session.problem is app.session.original
        for _ in range(7):
            await press(pilot, "right")
            shows_as_run(app, run)
        await press(pilot, "u")
        assert "nothing to undo" in status(app)[1]

    drive(script)


def test_s_toggles_scaling_as_run_scale_does(attntrace):
    scaled, unscaled = tables_run(attntrace, "--scale"), tables_run(attntrace)

    async def script(pilot, app):
        await press(pilot, "4")
        await press(pilot, "right", "right", "right")
        await press(pilot, "s")
        assert app.session.problem.scale is True and "scale ÷ sqrt(d_k = 3)" in status(app)[0]
        shows_as_run(app, scaled)
        await press(pilot, "s")
        assert app.session.problem.scale is False
        shows_as_run(app, unscaled)

    drive(script)


def test_m_cycles_the_masks_as_run_mask_does(attntrace):
    causal, window = tables_run(attntrace, "--mask", "causal"), tables_run(attntrace, "--window", "1")

    async def script(pilot, app):
        await press(pilot, "2")
        await press(pilot, "right", "right", "right", "right")  # step 5 for input 2
        await press(pilot, "m")
        assert app.session.problem.masks == ("causal",) and "masks causal" in status(app)[0]
        shows_as_run(app, causal)
        await press(pilot, "m")
        assert app.session.problem.window == 1
        shows_as_run(app, window)
        await press(pilot, "m")
        assert app.session.problem.mask == ()

    drive(script)


def test_plus_and_minus_change_the_precision(attntrace):
    five, two = tables_run(attntrace, "--precision", "5"), tables_run(attntrace, "--precision", "2")

    async def script(pilot, app):
        await press(pilot, "right", "right")
        await press(pilot, "plus")
        assert app.session.precision == 5
        shows_as_run(app, five)
        await press(pilot, "minus", "minus", "minus")
        shows_as_run(app, two)
        for _ in range(3):
            await press(pilot, "minus")
        assert app.session.precision == 0 and "0 to 17" in status(app)[1]

    drive(script)


def test_carried_rounding_is_run_s(attntrace):
    run = tables_run(attntrace, "--carry-rounding", "--precision", "1")

    async def script(pilot, app):
        for _ in range(7):
            await press(pilot, "right")
            shows_as_run(app, run)
        await press(pilot, "plus", "minus")
        shows_as_run(app, run)

    drive(script, precision=1, carry_rounding=True)


def test_t_and_brackets_show_the_softmax_at_a_temperature_as_run_scale_by_does(attntrace):
    async def script(pilot, app):
        await press(pilot, "t")
        assert app.session.tempered and "softmax at a temperature" in side_text(app)
        await press(pilot, "right_square_bracket")
        assert app.session.temperature == 2
        block = app.session.temperature_block()
        halved = trace(replace(example(), scale=2.0)).heads[0].weights[0]
        assert np.allclose(block.values[1], halved, rtol=0, atol=1e-15)
        assert np.allclose(block.values[0], trace(example()).heads[0].weights[0], rtol=0, atol=1e-15)
        step5 = page(tables_run(attntrace, "--scale-by", "2"), "Step 5 · softmax for input 1", 12)
        shown_by_run = next(line.split() for line in step5 if line.split()[:1] == ["x1"] and len(line.split()) == 7)[1::2]
        side = next(line for line in side_text(app).splitlines() if line.startswith("T = 2"))
        assert side.split()[3::2] == shown_by_run and len(shown_by_run) == 3  # T = 2  w11 bar  w12 bar  w13 bar
        await press(pilot, "left_square_bracket", "left_square_bracket")
        assert app.session.temperature == 0.5
        await press(pilot, "t")
        assert not app.session.tempered

    drive(script)


def test_x_saves_the_screen_as_an_svg(tmp_path):
    async def script(pilot, app):
        await press(pilot, "right")
        await press(pilot, "x")
        await press(pilot, "x")

    drive(script, folder=tmp_path)
    first, second = tmp_path / "attntrace-step2.svg", tmp_path / "attntrace-step2-2.svg"
    assert first.read_text(encoding="utf-8").startswith("<svg") and second.exists()
    assert "weights" in first.read_text(encoding="utf-8")


def test_w_writes_the_edited_problem_that_run_reads(attntrace, tmp_path):
    written = tmp_path / "attntrace-edited.json"

    async def script(pilot, app):
        await press(pilot, "m", "w")
        assert isinstance(app.screen, Prompt)
        await press(pilot, "enter")
        assert f"wrote {written}" in status(app)[1]

    drive(script, folder=tmp_path)
    assert json.loads(written.read_text(encoding="utf-8"))["mask"] == ["causal"]
    assert attntrace("run", written).out == attntrace("run", "--mask", "causal").out


def test_question_mark_lists_the_keys_and_any_key_closes_it():
    async def script(pilot, app):
        await press(pilot, "question_mark")
        assert isinstance(app.screen, Keys)
        screen = "\n".join(screen_lines(app))
        for keys in ("Enter", "Tab, Shift+Tab", "h H", "PgUp PgDn", "f, b B", "d "):
            assert keys in screen
        await press(pilot, "q")
        assert not isinstance(app.screen, Keys) and app.return_code is None

    drive(script)


def test_q_quits_with_0_and_ctrl_c_with_130():
    async def quit_(pilot, app):
        await press(pilot, "q")

    async def interrupt(pilot, app):
        await press(pilot, "e", "ctrl+c")

    assert drive(quit_).return_code == 0
    assert drive(interrupt).return_code == 130


# screens


def test_the_first_screen(attntrace):
    async def script(pilot, app):
        lines = screen_lines(app)
        for number, name in enumerate(STEPS, start=1):
            assert lines[number - 1].startswith(f" {number} {name}")
        assert lines[-2].strip() == "input 1/3 (x1) · head 1/1 · precision 4 · scale none · masks none"
        assert lines[-1].strip() == "cell [1, 1] of X · ? keys · q quit"
        shows_as_run(app, tables_run(attntrace))
        x, y = where(app, Selected(0, 0, 0))
        assert app.screen.get_style_at(x, y).reverse

    drive(script)


def test_a_screen_with_the_side_panel_open(attntrace, terminal):
    causal = str(SAMPLES / "causal.json")
    explained = attntrace("explain", causal, "--input", "2").out.splitlines()
    terminal(width=80)  # the main pane's width with the side panel open on a screen 160 wide
    run = attntrace("run", causal, "--color", "never").out

    async def script(pilot, app):
        await press(pilot, "2", "right", "right", "right", "right", "enter", "t")
        assert app.screen._width() == app.screen.query_one("#main").scrollable_content_region.width == 80
        shows_as_run(app, run)
        side = side_text(app)
        assert app.session.arithmetic()[0].startswith("w(2,1) = ")
        assert app.session.arithmetic()[0] in explained
        assert unwrapped(app.session.arithmetic()[0]) in unwrapped(side)

    drive(script, read(causal, {})[0], size=(160, 50))


def test_a_resized_terminal_gets_tables_of_its_width(attntrace, terminal):
    terminal(width=60)
    narrow = attntrace("run", "--color", "never").out

    async def script(pilot, app):
        await press(pilot, "right", "right")
        await pilot.resize_terminal(88, 50)
        await pilot.pause()
        assert app.screen._width() == app.screen.query_one("#main").scrollable_content_region.width == 60
        shows_as_run(app, narrow)

    drive(script)


NARROW = (60, 20)  # a small terminal: the side panel goes below the main pane


def boxed(app: Explorer) -> list[str]:
    """the lines of the dialog on top, each checked to fit the screen with both its borders"""
    region = app.screen.query_one("#dialog").region
    assert region.x >= 0 and region.right <= app.size.width and region.bottom <= app.size.height
    lines = [line[region.x:region.right] for line in screen_lines(app)[region.y:region.bottom]]
    assert all(line.startswith("█") and line.endswith("█") for line in lines[1:-1])
    return lines


def box_text(app: Explorer) -> str:
    """the words of the dialog on top, its borders and scroll bar left out"""
    return unwrapped(re.sub("[▀▁▂▃▄▅▆▇█]", " ", " ".join(boxed(app))))


def test_on_a_narrow_screen_the_status_and_the_message_wrap_onto_two_rows_each(tmp_path):
    async def script(pilot, app):
        first, message = status(app)
        assert first == "input 1/3 (x1) · head 1/1 · precision 4 · scale none · masks none"  # on two rows
        assert app.screen.status_rows == (2, 1)
        assert message == "cell [1, 1] of X · ? keys · q quit"
        await press(pilot, "h")
        assert status(app)[1] == "cell [1, 1] of X · ! this problem has one head"
        await press(pilot, "x")
        said = "".join(screen_lines(app)[-2:]).replace(" ", "")  # a long path goes on over the next row
        assert said.endswith(f"wrote{tmp_path / 'attntrace-step1.svg'}")
        await press(pilot, "right", "right", "right", "e")  # a score is computed: the message takes the whole row
        assert status(app)[1] == ("! score(1, j) = q1 · k_j is computed; edit X or the weights (steps 1 and 2) and "
                                  "watch it change")
        assert all(len(line.rstrip()) <= 59 for line in screen_lines(app)[-4:])

    drive(script, size=NARROW, folder=tmp_path)


def test_on_a_low_screen_the_status_and_the_message_keep_to_a_row_each():
    async def script(pilot, app):
        first, message = status(app)
        assert app.screen.status_rows == (1, 1)
        assert first.startswith("input 1/3 (x1) · head 1/1 · precision 4") and first.endswith("…")
        await press(pilot, "right", "right", "right", "e")
        assert status(app)[1].startswith("! score(1, j) = q1 · k_j is computed;") and status(app)[1].endswith("…")

    drive(script, size=(60, 12))


def test_on_a_narrow_screen_the_panel_goes_below_the_main_pane_and_wraps_the_arithmetic():
    async def script(pilot, app):
        await press(pilot, "right", "right", "right", "tab", "enter")
        main, side = (app.screen.query_one(name).scrollable_content_region for name in ("#main", "#side"))
        assert main.width >= 30 and main.height >= 5 and side.width >= 30 and side.height >= 5
        assert side.y > main.bottom - 1 and side.right <= NARROW[0]
        assert app.screen._width() == main.width
        assert marked(app, SELECTED) == {(0, 0, 1)}
        first = app.session.arithmetic()[0]
        assert first.startswith("score(1,2) = ") and len(first) > side.width  # wrapped, not cut
        assert unwrapped(first) in unwrapped(side_text(app))

    drive(script, size=NARROW)


def test_opening_the_panel_keeps_the_selected_cell_in_view():
    problem = random_problem(n=6, d_model=8, init="normal", seed=3)

    async def script(pilot, app):
        await press(pilot, "right", "right")
        for _ in range(20):
            await press(pilot, "tab")  # K's third column, below the screen's middle
        assert marked(app, SELECTED) == {(1, 0, 2)}
        await press(pilot, "enter")
        assert app.session.explaining and marked(app, SELECTED) == {(1, 0, 2)}
        await press(pilot, "enter")
        assert marked(app, SELECTED) == {(1, 0, 2)}

    drive(script, problem, size=NARROW)


def test_on_a_narrow_screen_the_keys_and_the_edit_box_fit_and_wrap():
    async def script(pilot, app):
        await press(pilot, "question_mark")
        text = box_text(app)
        assert "the selected cell's arithmetic; again hides it" in text
        await press(pilot, "pagedown", "pagedown")  # longer than the screen: PgDn scrolls it
        assert isinstance(app.screen, Keys)
        assert "quit; Ctrl-C ends with exit status 130" in box_text(app)
        await press(pilot, "q")
        assert not isinstance(app.screen, Keys) and app.return_code is None
        await press(pilot, "e")
        assert isinstance(app.screen, Prompt)
        text = box_text(app)
        assert "X[1, 1] is 1. Type a new value and Enter (Esc keeps it):" in text

    drive(script, size=NARROW)


def test_a_64_token_problem_draws_every_step(attntrace, tmp_path):
    problem = random_problem(n=64, d_model=8, init="normal", seed=3)
    path = tmp_path / "p64.json"
    from attntrace.render.jsonform import dumps, problem_to_dict

    path.write_text(dumps(problem_to_dict(problem)), encoding="utf-8")
    run = tables_run(attntrace, path)

    async def script(pilot, app):
        for _ in range(7):
            await press(pilot, "right")
        shows_as_run(app, run)

    drive(script, read(str(path), {})[0])


# the command


def test_off_a_terminal_it_refuses_in_one_line_suggesting_run(attntrace):
    r = attntrace("explore", SAMPLES / "causal.json")
    assert r.code == 1 and r.out == ""
    assert r.err == f"attntrace: explore needs a terminal for stdin and stdout; to print the trace instead, use " \
                    f"attntrace run {SAMPLES / 'causal.json'}\n"


def test_the_command_opens_the_problem_with_its_options(attntrace, terminal, monkeypatch):
    opened = {}

    def fake(session, **how):
        opened.update(session=session, **how)
        return 0

    monkeypatch.setattr(explorer_app, "explore", fake)
    terminal()
    r = attntrace("explore", SAMPLES / "scaled.json", "--input", "2", "--precision", "2", "--carry-rounding",
                  "--mask", "causal", "--ascii")
    assert r.code == 0, r.err
    s = opened["session"]
    assert (s.row, s.precision, s.carry_rounding, s.problem.masks) == (1, 2, True, ("causal",))
    assert opened["look"].ascii and opened["stem"] == "scaled"
    assert attntrace("explore").code == 0 and opened["session"].problem.name == "worked example"
    r = attntrace("explore", "--input", "9")
    assert r.code == 2 and r.err == "attntrace: --input 9 is out of range; this problem has inputs 1 to 3\n"


def test_the_command_passes_the_exit_status_on(attntrace, terminal, monkeypatch):
    monkeypatch.setattr(explorer_app, "explore", lambda session, **how: 130)
    terminal()
    assert attntrace("explore").code == 130


# a real terminal


def _spawn(*args: str) -> pexpect.spawn:
    env = {**os.environ, "COLUMNS": "120", "LINES": "40", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    return pexpect.spawn(sys.executable, ["-m", "attntrace", "explore", *args], cwd=str(ROOT), env=env,
                         encoding="utf-8", timeout=30, dimensions=(40, 120))


def test_in_a_real_terminal_it_steps_forward_and_back_and_q_quits_with_0():
    child = _spawn()
    child.expect("Step 1 · prepare inputs")
    child.send("\x1b[C")
    child.expect("Step 2 · weights")
    child.send("\x1b[C")
    child.expect("Step 3 · derive Q, K, V")
    child.send("\x1b[D")
    child.expect("Step 2 · weights")
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and "Traceback" not in child.before


def test_in_a_real_terminal_ctrl_c_exits_130():
    child = _spawn(str(SAMPLES / "causal.json"))
    child.expect("Step 1 · prepare inputs")
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130 and "Traceback" not in child.before


def test_a_models_head_opens_in_the_explorer_in_a_real_terminal():
    """attntrace model … --explore: the head's own tokens in a real terminal, then q quits with 0"""
    env = {**os.environ, "COLUMNS": "120", "LINES": "40", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    model = ROOT / "tests" / "fixtures" / "models" / "llama"
    child = pexpect.spawn(sys.executable, ["-m", "attntrace", "model", str(model), "the cat sat on the mat", "--layer",
                                           "2", "--head", "3", "--explore"], cwd=str(ROOT), env=env, encoding="utf-8",
                          timeout=60, dimensions=(40, 120))
    child.expect("Step 1 · prepare inputs")
    child.expect("▁cat")
    child.expect(r"layer 2 · head 3/\d+ · precision 4")  # the model's head, never "head 1/1"
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and "Traceback" not in child.before


@pytest.mark.parametrize("extra", [["--who"], ["--all-heads"], ["--extract", "head.json"]])
def test_explore_steps_through_one_head_only(attntrace, extra):
    r = attntrace("model", str(ROOT / "tests" / "fixtures" / "models" / "llama"), "the cat", "--explore", *extra)
    assert r.code == 2 and "--explore steps through one head" in r.err


def test_a_models_head_off_a_terminal_is_refused_before_the_model_loads(attntrace):
    r = attntrace("bert", "the cat sat", "--explore")
    assert r.code == 1 and "without --explore" in r.err and r.err.count("\n") == 1


@pytest.mark.parametrize("settings", [dict(alibi=True), dict(softcap=1.0, mask="causal"), dict(rope=True),
                                      dict(rope=True, alibi=True, softcap=2.0, mask="causal", heads=2, kv_heads=1)])
def test_every_cell_of_a_variant_problem_has_its_arithmetic(settings):
    """Enter on any cell, a given one (an angle, a bias) or a computed one (Q', a capped score), shows lines"""
    for step, block, lines in every_arithmetic(variant_session(settings)):
        assert any(" = " in line for line in lines), (step, block.title)


def variant_session(settings: dict) -> Session:
    """a session on a small random problem with these settings, following input 1"""
    rng = np.random.default_rng(0)
    heads, kv = settings.get("heads", 1), settings.get("kv_heads", settings.get("heads", 1))
    problem = Problem(x=rng.integers(-2, 3, size=(3, 4)).astype(float),
                      w_q=rng.integers(-1, 2, size=(4, 4 * heads)).astype(float),
                      w_k=rng.integers(-1, 2, size=(4, 4 * kv)).astype(float),
                      w_v=rng.integers(-1, 2, size=(4, 2 * kv)).astype(float), **settings)
    return Session(problem, precision=2, carry_rounding=False, row=1)


def every_arithmetic(session: Session):
    """each cell of every step from 3 on, selected in turn: its step, its block and the lines Enter shows for it"""
    for step in range(3, 9):
        session.step = step
        for index, block in enumerate(session.blocks()):
            for r in range(len(block.rows)):
                for c in range(len(block.cols)):
                    session.cell = Selected(index, r, c)
                    yield step, block, session.arithmetic()
