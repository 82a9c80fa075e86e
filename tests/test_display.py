"""What the steps say and how they are drawn: step 8's formula as computed, heatmap bars, ASCII headers, label widths,
80-column plain text and paused screens."""

from __future__ import annotations

import numpy as np
import pytest

from attntrace.model.engine import trace
from attntrace.model.problem import Problem, example
from attntrace.views.page import Note
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
