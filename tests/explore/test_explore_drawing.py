"""attntrace explore on a large problem: a matrix laid out only when first shown (its height foretold exactly), each
line given its cells' places when first shown and kept, and what Enter shows worked out ahead."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.style import Style
from rich.terminal_theme import MONOKAI
from textual.color import Color
from textual.filter import ANSIToTruecolor, Monochrome, NoColor
from textual.geometry import Region

from attntrace.core.generate import random_problem
from attntrace.core.problem import example
from attntrace.errors import AttntraceError
from attntrace.explore import drawing, state
from attntrace.explore.drawing import Drawer, Finish
from attntrace.explore.keys import likely
from attntrace.explore.state import Session
from attntrace.explore.stepview import StepView
from attntrace.render.jsonform import dumps, problem_to_dict
from attntrace.render.table import Look
from attntrace.views.page import Block
from tests.explore.test_explore import drive, main_lines, page, press, tables_run

WIDTH = 100


def tokens64(d_model: int = 8):
    return random_problem(n=64, d_model=d_model, init="normal", seed=3)


def _chars(line) -> list[tuple[str, object, object]]:
    """a line a character at a time, with its style (without its meta) and its meta"""
    chars: list[tuple[str, object, object]] = []
    for seg in line:
        style, meta = (str(seg.style), seg.style.meta) if seg.style else (None, {})
        chars.extend((ch, style, meta) for ch in seg.text)
    return chars


def test_a_large_matrix_is_laid_out_only_when_one_of_its_lines_is_first_shown():
    s = Session(tokens64())
    s.go(8)  # scores, weights (both 64 x 64) and the output
    drawer = Drawer()
    parts = drawer.step(s.current(), 4, WIDTH, s.changed(), near=50)
    laid = [part for part in parts if part.later is None]
    foretold = [part for part in parts if part.later is not None]
    assert {part.later.k for part in foretold} == {1}  # the weights; the scores start on the first screen
    assert all(part.renderable is None and part.lines is None for part in foretold)
    line = 0
    for part in parts:  # a screen of 50 lines at the top
        if line < 50:
            for at in range(min(part.height, 50 - line)):
                drawer.line(part, at, WIDTH)
        line += part.height
    assert all(part.renderable is None for part in foretold)
    assert any(part.lines is None for part in laid)  # the scores' later tables are not drawn either
    drawer.lines(foretold[-1], WIDTH)
    assert all(part.renderable is not None for part in foretold)  # one line of the weights lays every table out
    assert sum(part.height for part in parts) == sum(part.height for part in Drawer().step(s.current(), 4, WIDTH,
                                                                                          s.changed(), near=10**6))


def _exactly(b: Block, precision: int, prefix: str, width: int, look: Look) -> None:
    """the matrix foretold is the matrix laid out: the same parts, as tall, drawing the same lines"""
    foretelling, laying = Drawer(look), Drawer(look)
    laying.foretell = False
    foretold = foretelling.block(b, 0, prefix, precision, width, None)
    laid = laying.block(b, 0, prefix, precision, width, None)
    assert [part.height for part in foretold] == [part.height for part in laid]
    for mine, real in zip(foretold, laid):
        assert [_chars(foretelling.line(mine, at, width)) for at in range(mine.height)] == \
               [_chars(laying.line(real, at, width)) for at in range(real.height)]
        assert mine.cells == real.cells
    assert foretelling.foretell


LABELS = st.text(st.sampled_from("abcxyz 我😀é·-_"), min_size=1, max_size=30)


@settings(max_examples=30, deadline=None)
@given(rows=st.sampled_from([*range(1, 25), 64]), cols=st.integers(1, 70),  # 1 and 2 digits of rows, now and then 64
       kind=st.sampled_from(["x", "q", "scores", "weights", "output"]),
       precision=st.integers(0, 6), width=st.integers(20, 200), scale=st.sampled_from([1e-3, 1.0, 1e4]),
       ascii=st.booleans(), masked=st.booleans(), data=st.data())
def test_a_foretold_matrix_is_exactly_the_matrix_laid_out(rows, cols, kind, precision, width, scale, ascii, masked,
                                                          data):
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    values = rng.normal(size=(rows, cols)) * scale
    if masked:
        values[rng.random(size=values.shape) < 0.2] = -np.inf
    labels = tuple(data.draw(st.lists(LABELS, min_size=rows, max_size=rows)))
    heads = tuple(data.draw(st.lists(LABELS, min_size=cols, max_size=cols)))
    title = data.draw(st.sampled_from(["scores = Q K^T", "w(3, j) = softmax over j of score(3, j) / sqrt(d_k) and "
                                                         "a long title that wraps on a narrow screen"]))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(drawing, "LATER", 1)  # every matrix foretold, however small
        _exactly(Block(title, kind, labels, heads, values), precision, data.draw(st.sampled_from(["", "head 2 · "])),
                 width, Look(ascii=ascii))


@pytest.mark.parametrize("width", [132, 30])
def test_every_table_of_a_64_token_step_8_is_foretold_exactly(width):
    s = Session(random_problem(n=64, d_model=16, d_k=8, d_v=8, init="normal", seed=0))
    s.go(8)
    for b in s.blocks():
        _exactly(b, 4, s.current().prefix, width, Look())


def test_a_matrix_that_hides_rows_is_laid_out_at_once():
    s = Session(random_problem(n=67, d_model=2, init="normal", seed=2))  # 65 and 66 rows are shown whole
    s.go(8)
    assert all(part.later is None for part in Drawer().step(s.current(), 4, WIDTH, s.changed()))


def test_a_line_is_given_its_cells_places_once_and_as_rich_gives_them():
    s = Session(tokens64())
    s.go(8)
    drawer, stylized = Drawer(), Drawer()
    for mine, theirs in zip(drawer.step(s.current(), 4, WIDTH, s.changed()),
                            stylized.step(s.current(), 4, WIDTH, s.changed())):
        lines = drawer.lines(mine, WIDTH)
        assert all(seg.style is None or "cell" not in seg.style.meta for line in lines for seg in line)  # drawn bare
        shown = [drawer.line(mine, at, WIDTH) for at in range(mine.height)]
        assert all(drawer.line(mine, at, WIDTH) is shown[at] for at in range(mine.height))  # kept
        stylized.lines(theirs, WIDTH)
        if theirs.places:
            stylized._placed_by_rich(theirs, WIDTH)  # each cell's text styled with its place, then drawn by rich
        assert [_chars(line) for line in shown] == [_chars(stylized.line(theirs, at, WIDTH))
                                                   for at in range(theirs.height)]
        for key, at in mine.cells.items():
            assert any(seg.style is not None and seg.style.meta.get("cell") == key for seg in shown[at])


def test_cells_not_where_a_simple_table_has_them_get_their_places_from_rich():
    s = Session(tokens64())
    s.go(3)
    drawer = Drawer()
    part = next(part for part in drawer.step(s.current(), 4, WIDTH, s.changed()) if part.places)
    drawer.lines(part, WIDTH)
    assert part.places is not None
    key, line, column, text = part.places[0]
    part.places[0] = (key, line, column + 1, text)  # as if the table were laid out otherwise
    assert any(seg.style is not None and seg.style.meta.get("cell") == key for seg in drawer.line(part, line, WIDTH))
    assert part.marks == {}  # every line drawn again, the places in them


def test_a_height_foretold_wrong_draws_the_step_again_as_run_draws_it(attntrace, tmp_path, monkeypatch):
    problem = tokens64()
    path = tmp_path / "p64.json"
    path.write_text(dumps(problem_to_dict(problem)), encoding="utf-8")
    run = tables_run(attntrace, path)
    foretold = Drawer._foretold

    def wrong(self, *args):
        parts = foretold(self, *args)
        if parts:
            parts[-1].height += 1
        return parts

    monkeypatch.setattr(Drawer, "_foretold", wrong)

    async def script(pilot, app):
        await press(pilot, *["right"] * 7)
        main = app.screen.query_one("#main", StepView)
        start = next(at for at, part in zip(main.starts, main.parts) if part.later is not None)
        main.scroll_to(y=start, animate=False)  # the weights' first lines
        await pilot.pause()
        await pilot.pause()
        assert not main.drawer.foretell and all(part.later is None for part in main.parts)
        lines, top = main_lines(app), int(main.scroll_offset.y)
        assert len(lines) > 3
        assert lines == page(run, app.session.current().heading, top + len(lines))[top:]

    drive(script, problem)


def _refused_on_the_screen(monkeypatch) -> None:
    """tables laid out and arithmetic worked out only on another thread (drawing ahead): on the screen's own thread,
    when a key comes, they fail"""
    for module, name in ((drawing, "tables"), (state, "explain_steps")):
        original = getattr(module, name)

        def refused(*args, original=original, **kwargs):
            if threading.current_thread() is threading.main_thread():
                raise AssertionError("worked out when the key came")
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, refused)


def test_drawing_ahead_readies_step_8_with_the_panel_open_and_its_arithmetic(monkeypatch):
    async def script(pilot, app):
        await press(pilot, *["right"] * 7)
        await app.workers.wait_for_complete()
        _refused_on_the_screen(monkeypatch)
        await press(pilot, "enter")
        assert app.session.explaining and "score(1,1)" in " ".join(main_lines(app) + [_side(app)])

    drive(script, random_problem(n=24, d_model=8, d_k=4, d_v=4, init="normal", seed=0), draw_ahead=True)


def _side(app) -> str:
    from tests.explore.test_explore import side_text

    return side_text(app)


@pytest.mark.parametrize("filters", [(ANSIToTruecolor(MONOKAI),), (NoColor(), Monochrome())])
def test_a_line_finished_once_is_the_line_textual_would_finish_as_shown(filters):
    """the pane's style under each line and the terminal's filters applied to it, a style at a time by the drawer, are
    what Textual does to the line as it shows it: its style, then each filter on each segment"""
    s = Session(tokens64())
    s.go(8)
    style, background = Style(color="#e0e0e0", bgcolor="#121212", italic=True), Color(18, 18, 18)
    finished, bare = Drawer(), Drawer()
    finished.finish = Finish(style, filters, background)
    for mine, theirs in zip(finished.step(s.current(), 4, WIDTH, [None, np.eye(64, dtype=bool), None]),
                            bare.step(s.current(), 4, WIDTH, [None, np.eye(64, dtype=bool), None])):
        for at in range(min(mine.height, 12)):
            textual = bare.line(theirs, at, WIDTH).crop_extend(0, WIDTH, style).apply_style(style)
            for f in filters:
                textual = textual.apply_filter(f, background)
            assert list(finished.line(mine, at, WIDTH)) == list(textual)


def _screen(app) -> tuple[str, list[list[tuple[str, object, object]]]]:
    """the whole screen as Textual's screenshot shows it, and each pane's lines a character at a time, each with its
    style and its meta (what a click finds there)"""
    panes = [line for pane in app.screen.query(StepView)
             for line in pane.render_lines(Region(0, 0, pane.outer_size.width, pane.outer_size.height))]
    return app.export_screenshot(), [_chars(line) for line in panes]


@pytest.mark.parametrize("key", ["s", "t", "right_square_bracket", "enter", "m"])
def test_what_a_likely_key_shows_is_drawn_ahead_and_is_what_it_shows_drawn_at_the_key(monkeypatch, key):
    problem = random_problem(n=24, d_model=8, d_k=4, d_v=4, init="normal", seed=0)
    before = ["right"] * 4 + ["tab"]
    screens = {}

    async def ahead(pilot, app):
        await press(pilot, *before)
        await app.workers.wait_for_complete()
        with monkeypatch.context() as patch:
            _refused_on_the_screen(patch)
            await press(pilot, key)
            screens["ahead"] = _screen(app)

    async def at_the_key(pilot, app):
        await press(pilot, *before, key)
        screens["at the key"] = _screen(app)

    drive(ahead, problem, draw_ahead=True)
    drive(at_the_key, problem)
    assert screens["ahead"] == screens["at the key"]


def test_the_last_key_is_drawn_ahead_first():
    async def script(pilot, app):
        await press(pilot, "right", "right", "right", "right", "s")
        keys, _ = likely(app.session, app.screen.again)
        v = app.session.ahead()
        keys[1](v)  # after this screen: s again
        assert v.problem.scale is not False and app.session.problem.scale is False
        assert app.session.history == [app.session.original]  # the copy's change is its own

    drive(script, random_problem(n=8, d_model=4, init="normal", seed=0))


@pytest.mark.parametrize("text", ["1_000", "nan", "inf", "0x10", "½", " 1 2"])
def test_an_edit_takes_only_a_plain_number(text):
    s = Session(example())
    s.go(1)  # X, its first cell selected
    before = s.problem.x.copy()
    with pytest.raises(AttntraceError, match="is not a number|is not a finite number"):
        s.edit(text)
    np.testing.assert_array_equal(s.problem.x, before)
    assert s.edit("1e3") == "X[1, 1] = 1000" and s.problem.x[0, 0] == 1000


def test_one_head_of_a_model_says_which_in_the_status():
    assert " · head 1/1 · " in Session(example()).status()
    status = Session(example(), whose="layer 5 · head 3/12").status()
    assert status.startswith("input 1/3 (x1) · layer 5 · head 3/12 · precision 4") and "head 1/1" not in status
