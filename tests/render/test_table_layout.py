"""The coloured tables at any width: numbers never cut, labels cut with an ellipsis, titles broken between parts."""

import io
import re

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attntrace.render import table
from attntrace.render.document import Document, Style, render
from attntrace.render.layout import MAX_SHOWN, cells, shown
from attntrace.views.page import Block, Step
from attntrace.views.text import width as text_width

LABELS = st.text(st.sampled_from("ab我😀é_ -"), min_size=1, max_size=80)
KINDS = st.sampled_from(["x", "q", "scores", "weights"])


def _render(block: Block, width: int, look: table.Look = table.Look()) -> str:
    buffer = io.StringIO()
    table.console(buffer, False, width).print(table.render_step(Step(4, "Step 4 · s", (block,)), 4, width, look),
                                                       crop=False)
    return buffer.getvalue()


def _numbers(block: Block) -> list[str]:
    rows, _ = shown(len(block.rows))
    cols, _ = shown(len(block.cols))
    return [c for row in cells(block.values, rows, cols, 4) for c in row]


@st.composite
def blocks(draw, max_rows: int = 5, max_cols: int = 14):
    n_rows, n_cols = draw(st.integers(1, max_rows)), draw(st.integers(1, max_cols))
    values = draw(arrays(np.float64, (n_rows, n_cols), elements=st.floats(-1e6, 1e6, allow_nan=False)))
    kind = draw(KINDS)
    if kind == "weights":
        values = np.abs(values) / np.maximum(np.abs(values).sum(axis=1, keepdims=True), 1e-9)
    rows = tuple(draw(st.lists(LABELS, min_size=n_rows, max_size=n_rows)))
    cols = tuple(draw(st.lists(LABELS, min_size=n_cols, max_size=n_cols)))
    title = draw(st.sampled_from(["score(2, j) = q2 · k_j", "head 2 · V = X · W_V[:, 4..6] + b_v[:, 4..6]"]))
    return Block(title, kind, rows, cols, values)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks(), st.integers(10, 200))
def test_every_number_is_shown_whole_and_every_line_fits(block, width):
    out = _render(block, width)
    words = set(re.findall(r"-?[0-9]+\.[0-9]{4}", out))
    for number in _numbers(block):
        assert number in words  # whole, never cropped to "6.66" or "-0.0"
    for line in out.splitlines():
        numbers = re.findall(r"-?[0-9]+\.[0-9]{4}", line)
        assert text_width(line.rstrip()) <= width or (len(numbers) == 1 and line.strip() == numbers[0])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks(), st.integers(24, 200))
def test_a_title_breaks_only_between_its_formula_shape_and_columns(block, width):
    out = _render(block, width)
    shape = f"[{len(block.rows)} x {len(block.cols)}]"
    assert shape in out  # never "[1" and "x 3]" on two lines
    if text_width(f"Step 4 · {block.title}") <= width:
        assert f"Step 4 · {block.title}" in out
    assert not re.search(r"\(columns[^\n)]*\n", out)  # a column range is whole on its line


def test_a_long_label_is_cut_with_an_ellipsis_and_its_start_kept():
    label = "a" * 72
    block = Block("X", "x", (label, "我"), tuple(str(i) for i in range(1, 13)), np.full((2, 12), 6.6666))
    out = _render(block, 80)
    assert label not in out and re.search(r"\ba{10,}…", out)
    assert out.count("6.6666") == 24 and all(text_width(line) <= 80 for line in out.splitlines())


def test_a_screen_too_narrow_for_a_number_beside_its_label_lists_one_cell_a_line():
    block = Block("X", "x", ("token", "我"), ("1", "2"), np.array([[-12345.5, 1.0], [2.0, -0.0625]]))
    out = _render(block, 10)
    for number in ("-12345.5000", "1.0000", "2.0000", "-0.0625"):
        assert re.search(rf"^\s*(\S+: )?{re.escape(number)}$", out, re.M), number


def test_hidden_columns_and_rows_are_marked_inside_the_table_where_they_are_hidden():
    n = MAX_SHOWN + 36
    labels = tuple(f"x{i}" for i in range(1, n + 1))
    values = np.arange(n * n, dtype=float).reshape(n, n)
    out = _render(Block("scores", "scores", labels, labels, values), 1000)
    header = next(line for line in out.splitlines() if "⋯ 36 hidden ⋯" in line)
    assert header.index("x32") < header.index("⋯ 36 hidden ⋯") < header.index("x69")
    rows = [line.split()[0] for line in out.splitlines() if re.match(r"\s+(x\d+|⋮)", line)]
    assert rows[rows.index("⋮") - 1] == "x32" and rows[rows.index("⋮") + 1] == "x69"


def test_a_gap_stands_for_three_or_more_rows_or_columns_never_one_or_two():
    assert [shown(n)[1] for n in range(MAX_SHOWN - 1, MAX_SHOWN + 6)] == [0, 0, 0, 0, 3, 4, 5]
    assert shown(MAX_SHOWN + 3)[0] == [*range(MAX_SHOWN // 2), *range(MAX_SHOWN // 2 + 3, MAX_SHOWN + 3)]
    for n in (MAX_SHOWN + 1, MAX_SHOWN + 2):
        labels = tuple(f"x{i}" for i in range(1, n + 1))
        for fmt in ("plain", "markdown", "table"):
            block = Block("scores", "scores", labels, labels, np.arange(n * n, dtype=float).reshape(n, n))
            step = Step(4, "Step 4", (block,))
            out = _render(block, 2000) if fmt == "table" else "".join(render(Document([step]), fmt, Style()))
            assert "hidden" not in out and "⋮" not in out and f"x{n}" in out, fmt


def test_heatmap_cells_line_up_on_the_decimal_point_and_have_a_legend():
    weights = np.array([[0.0, 0.25, 0.75], [1 / 3, 1 / 3, 1 / 3]])
    out = _render(Block("w", "weights", ("a", "b"), ("a", "b", "c"), weights), 80)
    rows = [line for line in out.splitlines() if line.strip().startswith(("a ", "b "))]
    points = {m.start() for line in rows for m in re.finditer(r"\.", line)}
    assert len(points) == 3  # one decimal point column per weight column, whatever the bar after it
    assert "0.0000 ▁" not in out and "0.7500 █" in out and "0.2500 ▃" in out  # bars against the row's largest
    assert out.count("0.3333 █") == 3 and "heatmap:" in out


def test_the_ascii_look_draws_no_box_or_bar_a_terminal_may_draw_wide():
    weights = np.array([[0.2, 0.8]])
    out = _render(Block("w", "weights", ("a" * 60,), ("a", "b"), weights), 40, table.Look(ascii=True))
    body = out.replace("Step 4 · ", "")
    assert body.isascii() and "0.8000 @" in out and "..." in out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "我", "😀", "👨\u200d👩\u200d👧", "❤\ufe0f", "👍🏽", "é", "e\u0301",
                                          "a\u200bb", "🇨🇳", "1\ufe0f\u20e3", "✔\ufe0f", " "]), min_size=1, max_size=6).map("".join),
                min_size=1, max_size=4))
def test_plain_rows_end_on_one_column_whatever_the_emoji_sequences_in_their_labels(labels):
    """plain text measures labels as a terminal (and the rich tables) do: every row of a table ends in one column"""
    from rich.cells import cell_len

    from attntrace.render import plain

    block = Block("X", "x", tuple(labels), ("1", "2"), np.arange(2.0 * len(labels)).reshape(len(labels), 2))
    rows = plain.block(block, 2, "")[2:]
    assert len({cell_len(line) for line in rows}) == 1, rows


def test_a_label_is_cut_further_when_that_saves_a_block_of_columns():
    labels = ("a" * 68, "b")
    block = Block("X", "x", labels, tuple(str(i) for i in range(1, 13)), np.full((2, 12), -10.5))
    out = _render(block, 200)
    assert "(columns" not in out and out.count("-10.5000") == 24  # one block holds all 12 columns


def test_a_block_of_one_column_says_column_and_a_block_across_the_gap_names_both_sides():
    out = _render(Block("X", "x", ("a" * 30,), ("1", "2", "3"), np.array([[-12345.25, 1.5, 2.5]])), 32)
    assert "(column 1)" in out and "(columns 1 to 1)" not in out
    n = MAX_SHOWN + 10
    labels = tuple(f"x{i}" for i in range(1, n + 1))
    wide = _render(Block("s", "scores", labels[:1], labels, np.arange(n, dtype=float)[None, :]), 160)
    assert re.search(r"\(columns x\d+ to x32 and x43 to x\d+\)", wide)
