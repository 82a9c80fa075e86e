"""The tables and titles drawn straight to segments read exactly as rich's own Table and Text draw them: the same
segments (text and style) in colour and for the exports, the same text without colour; and rich draws what they do
not cover."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text

from attntrace.render import table
from attntrace.render.fastrich import FastTable, FastText
from attntrace.render.layout import MAX_SHOWN
from attntrace.views.page import Block

LABELS = st.sampled_from(["a", "x1", "tok", "我", "😀", "é", "e\u0301", "👨\u200d👩\u200d👧", "a" * 30, "", "⋯"])


def consoles(width: int) -> list:
    return [table.console(io.StringIO(), colour, width, record=record)
            for colour, record in ((False, False), (True, False), (True, True))]


def drawn(renderable: FastTable | FastText, console) -> list[Segment]:  # type: ignore[no-untyped-def]
    return list(type(renderable).__mro__[1].__rich_console__(renderable, console, console.options))


def same(fast: list[Segment], rich: list[Segment], console) -> bool:  # type: ignore[no-untyped-def]
    """equal segments, or without colour (where no style reaches the output) the same text"""
    if console.color_system is None and not console.record:
        return "".join(s.text for s in fast) == "".join(s.text for s in rich)
    return fast == rich


@st.composite
def blocks(draw: st.DrawFn) -> Block:
    n = draw(st.sampled_from([1, 2, 4, MAX_SHOWN + 3]))
    m = draw(st.sampled_from([1, 3, 9, MAX_SHOWN + 2]))
    kind = draw(st.sampled_from(["x", "q", "scores", "weights"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = rng.normal(size=(n, m)) * draw(st.sampled_from([1.0, 1000.0]))
    if kind == "weights":
        values = np.abs(values) / np.abs(values).sum(axis=1, keepdims=True)
        if draw(st.booleans()):
            values[0, 0] = -np.inf
    rows = tuple(draw(LABELS) + str(i) for i in range(n))
    cols = tuple(draw(LABELS) + str(i) for i in range(m))
    return Block("T", kind, rows, cols, values)


@settings(max_examples=40, deadline=None)
@given(blocks(), st.sampled_from([30, 40, 80, 120]), st.booleans(), st.sampled_from(["terminal", "light", "dark"]),
       st.booleans())
def test_a_table_and_its_title_draw_as_rich_draws_them(block, width, ascii_, palette, marked):
    for console in consoles(width):
        for part in table.tables(block, 4, "Step 3 · ", width, table.Look(ascii=ascii_, palette=palette)):
            if isinstance(part, FastTable) and marked:  # as the explorer marks cells: a span over each
                for column in part.columns[1:]:
                    for cell in column.cells:
                        if isinstance(cell, Text):
                            cell.stylize(Style(meta={"cell": 1}))
                            cell.stylize(Style(bgcolor="dark_magenta", bold=True), 0, 1)
            if isinstance(part, FastTable):
                fast = part._drawn(console, console.options)
                assert fast is not None
                assert same(fast, drawn(part, console), console)
            elif isinstance(part, FastText):
                assert same(list(part.__rich_console__(console, console.options)), drawn(part, console), console)


@pytest.mark.parametrize("text", ["", "a title", "Step 1 · X  [4 x 8]", "two\nlines", "a\ttab", "我" * 30,
                                  "words " * 30])
@pytest.mark.parametrize("style", ["", "bold red", "italic"])
def test_a_line_of_text_draws_as_rich_draws_it(text, style):
    for console in consoles(40):
        line = FastText(text, style=style)
        line.stylize("underline", 0, 2)
        assert same(list(line.__rich_console__(console, console.options)), drawn(line, console), console)


def test_a_table_that_is_not_simple_or_does_not_fit_is_drawn_by_rich():
    wide = FastTable(show_edge=True)
    wide.add_column("", no_wrap=True)
    wide.add_row(Text("x" * 200))
    titled = FastTable(title="a title")
    titled.add_column("a")
    titled.add_row(Text("1"))
    for part in (wide, titled):
        console = table.console(io.StringIO(), True, 80)
        assert part._drawn(console, console.options) is None
        assert list(console.render(part, console.options)) == list(console.render(_as_rich(part), console.options))


def _as_rich(part: FastTable) -> Table:
    copy = Table.__new__(Table)
    copy.__dict__.update(part.__dict__)
    return copy
