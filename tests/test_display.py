"""What the steps say and how they are drawn: step 8's formula as computed, heatmap bars, ASCII headers, label widths,
80-column plain text and paused screens."""

from __future__ import annotations

import io

import numpy as np
import pytest

from attntrace.model.engine import trace
from attntrace.model.problem import Problem, example
from attntrace.render import table
from attntrace.views.page import Block, Note, Step
from attntrace.views.steps import run_steps


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
