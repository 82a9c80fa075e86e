"""What the steps say and how they are drawn: step 8's formula as computed, heatmap bars, ASCII headers, label widths,
80-column plain text and paused screens."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from attntrace.model.engine import trace
from attntrace.model.problem import Problem, example
from attntrace.render import plain, table
from attntrace.render.escape import visible
from attntrace.views.page import Block, Note, Step
from attntrace.views.steps import run_steps, who_steps
from attntrace.views.text import width as text_width


def _problem(scale: bool | float) -> Problem:
    x = np.array([[1.0, 0.0, 2.0, 1.0], [0.0, 1.0, 1.0, -1.0], [2.0, 1.0, 0.0, 0.0]])
    return Problem(x=x, w_q=np.eye(4), w_k=np.eye(4), w_v=np.eye(4), scale=scale)


@pytest.mark.parametrize(("scale", "formula"), [(False, "softmax(Q K^T) V"), (True, "softmax(Q K^T / √d_k) V"),
                                                (2.5, "softmax(Q K^T / 2.5) V")])
def test_step_8_names_the_scale_the_problem_uses(scale, formula):
    step = run_steps(trace(_problem(scale)))[-1]
    check = step.items[-1]
    assert step.heading == f"Step 8 · every input: {formula}"
    assert isinstance(check, Note) and check.text.startswith(f"check: {formula} equals")
    assert "/ s)" not in step.heading + check.text


def test_the_worked_example_is_unscaled_and_says_so():
    assert run_steps(trace(example()))[-1].heading.endswith("softmax(Q K^T) V")


def _drawn(block: Block, width: int = 80, look: table.Look = table.Look(), precision: int = 4) -> str:
    """the rich tables of a one-block step, without colour"""
    buffer = io.StringIO()
    table.console(buffer, False, width).print(table.render_step(Step(5, "Step 5 · s", (block,)), precision, width, look),
                                              crop=False)
    return buffer.getvalue()


@pytest.mark.parametrize("ascii_", [False, True])
def test_a_weight_shown_as_zero_draws_no_bar(ascii_):
    weights = np.array([[0.00004, 0.0001, 0.99986], [0.0, 0.5, 0.5]])
    look = table.Look(ascii=ascii_)
    out = _drawn(Block("w", "weights", ("a", "b"), ("1", "2", "3"), weights), look=look)
    lowest = look.bars[0]
    assert out.count("0.0000 " + lowest) == 0 and out.count("0.0000  ") == 2
    assert f"0.0001 {lowest}" in out  # shown above zero: the smallest bar
    whole = _drawn(Block("w", "weights", ("a",), ("1", "2"), np.array([[0.2, 0.8]])), look=look, precision=0)
    assert f"0 {lowest}" not in whole and f"1 {look.bars[-1]}" in whole


@pytest.mark.parametrize("width", [30, 50, 80])
@pytest.mark.parametrize("kind", ["weights", "scores"])
def test_an_ascii_head_ends_where_its_column_s_digits_end(kind, width):
    heads = ("a very long head name", "b", "我们的", "x\u0301yz", "😀 smile face")
    values = np.random.default_rng(0).dirichlet(np.ones(len(heads)), size=2)
    out = _drawn(Block("w", kind, ("a", "b"), heads, values), width, table.Look(ascii=True))
    lines = out.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("|-"):  # the rule under a header: the header above, the rows below
            header = lines[k - 1].split("|")[2:-1]
            for row in lines[k + 1:]:
                if not row.startswith("|"):
                    break
                for head, cell in zip(header, row.split("|")[2:-1], strict=True):
                    number = re.search(r"-?[0-9]+\.[0-9]+", cell)
                    assert number is not None
                    assert text_width(head.rstrip()) == text_width(cell[:number.end()]), (head, cell)


ODD = ["a", "x1", "\u200b", "\u0301", "e\u0301", "我", "喜欢", "😀", "👍🏽", "👨\u200d👩\u200d👧", "❤\ufe0f", "\u200d", "\ufe0f",
       "\u2060", " "]
ODD_LABELS = st.lists(st.sampled_from(ODD), min_size=1, max_size=4).map("".join).filter(lambda s: not s[-1].isspace())


@settings(max_examples=300, deadline=None)
@given(st.lists(ODD_LABELS, min_size=1, max_size=4), st.lists(ODD_LABELS, min_size=1, max_size=4))
def test_every_line_of_a_block_is_as_wide_as_the_others_whatever_its_labels_hold(labels, heads):
    """zero-width, combining, joining, wide and emoji characters: every line of a table is one width, measured as
    the rich tables measure it; in plain text and in the tables' own lines"""
    values = np.full((len(labels), len(heads)), 0.25)
    for kind in ("x", "weights"):
        block = Block("X", kind, tuple(labels), tuple(heads), values)
        lines = plain.block(block, 4, "")[1:]
        assert len({cell_len(line) for line in lines}) == 1, lines
        drawn = [line for line in _drawn(block).splitlines()[3:] if line.startswith(" ")]
        assert len({cell_len(line) for line in drawn}) == 1, drawn


def test_a_joiner_that_joins_nothing_is_shown_as_an_escape_and_an_emoji_sequence_as_it_is():
    assert visible("x\u200d") == "x\\u200d" and visible("x\u200d y") == "x\\u200d y"
    assert visible("👨\u200d👩\u200d👧") == "👨\u200d👩\u200d👧" and visible("a\u200b\u0301") == "a\u200b\u0301"


def test_the_who_lines_pad_each_token_as_shown():
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    problem = Problem(x=x, w_q=np.eye(2), w_k=np.eye(2), w_v=np.eye(2), tokens=("x\u200d", "ab", "我"))
    notes = [item.text for item in who_steps(trace(problem), "who")[0].items if isinstance(item, Note)]
    lines = plain.render_step(Step(0, "who", tuple(Note(text) for text in notes)), 4).splitlines()[3:-1]
    assert len(lines) == 3 and len({cell_len(line.partition(" → ")[0]) for line in lines}) == 1, lines
    assert len({cell_len(line.split(" · ")[0]) for line in lines}) == 1, lines
