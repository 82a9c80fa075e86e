"""The page model: immutable steps, notes marked by kind, and the one table of intermediates every list reads."""

from dataclasses import FrozenInstanceError, fields

import numpy as np
import pytest

from attntrace.core import intermediates
from attntrace.core.engine import trace
from attntrace.core.problem import Problem, example
from attntrace.core.trace import HeadTrace
from attntrace.homework import marking, sheet, worksheet
from attntrace.render.jsonform import trace_to_dict
from attntrace.views.explain import explain_steps
from attntrace.views.page import Note, Step
from attntrace.views.walkthrough import run_steps, step_steps, worksheet_steps


def _long() -> Problem:
    """more inputs than a run walks through one by one, so its steps say which are not shown"""
    rng = np.random.default_rng(3)
    return Problem(x=rng.integers(-2, 3, (20, 3)).astype(float), w_q=np.eye(3), w_k=np.eye(3), w_v=np.eye(3))


def _notes(steps: list[Step], kind: str) -> list[str]:
    return [item.text for step in steps for item in step.items if isinstance(item, Note) and item.kind == kind]


def test_a_step_and_its_items_cannot_be_changed():
    t = trace(example())
    for step in run_steps(t) + explain_steps(trace(example(), query=1), 4):
        assert isinstance(step.items, tuple)
        with pytest.raises(FrozenInstanceError):
            step.items = ()  # type: ignore[misc]


def test_a_note_is_words_unless_marked():
    assert Note("hello").kind == "text"


def test_step_8_self_check_is_marked_and_a_worksheet_drops_it_by_kind():
    t = trace(example())
    assert [text[:6] for text in _notes(run_steps(t), "self_check")] == ["check:"]
    assert _notes(worksheet_steps(t), "self_check") == []
    assert not any(isinstance(item, Note) and item.text.startswith("check") for step in worksheet_steps(t)
                   for item in step.items)


def test_a_worksheet_is_the_run_without_its_self_check():
    t = trace(example(), carry_rounding=2)

    def shown(steps: list[Step], drop: str) -> list[list[str]]:
        return [[getattr(item, "text", None) or getattr(item, "title", "") for item in step.items
                 if not (isinstance(item, Note) and item.kind == drop)] for step in steps]

    assert shown(worksheet_steps(t), "") == shown(run_steps(t), "self_check")


def test_the_inputs_a_long_run_skips_are_marked_hidden_and_a_worksheet_keeps_them():
    p = _long()
    t = trace(p)
    hidden = _notes(run_steps(t), "hidden")
    assert hidden == ["… steps 4-7 for inputs 4 to 19 (16 inputs) are not shown; attntrace step --input N shows any one, "
                      "and step 8 shows them all"]
    assert _notes(worksheet_steps(trace(p, carry_rounding=2)), "hidden") == hidden


def test_single_input_steps_have_no_self_check_or_hidden_notes():
    t = trace(example(), query=2)
    assert _notes(step_steps(t), "self_check") == _notes(step_steps(t), "hidden") == []


def test_the_table_of_intermediates_in_order_with_steps_and_names():
    assert intermediates.KEYS == ("q", "k", "v", "q_rotated", "k_rotated", "scores", "scaled", "weights", "output")
    assert [i.step for i in intermediates.INTERMEDIATES] == [3, 3, 3, 3, 3, 4, 4, 5, 7]
    assert intermediates.NAME["scaled"] == "scaled scores" and intermediates.NAME["q"] == "Q"
    assert set(intermediates.KEYS) <= {f.name for f in fields(HeadTrace)}


def test_every_list_of_intermediates_reads_the_table():
    t = trace(example())
    rope = {"q_rotated", "k_rotated"}  # asked and written only with rope
    plain = [k for k in intermediates.KEYS if k not in rope]
    assert list(trace_to_dict(t)["heads"][0]) == ["head", *plain[:-1], "weighted", "output"]
    turned = trace(Problem(x=np.eye(2), rope=True))
    assert list(trace_to_dict(turned)["heads"][0]) == ["head", *intermediates.KEYS[:-1], "weighted", "output"]
    assert sheet.HEAD_KEYS == ("head", "kv_head", "bias", *intermediates.KEYS, "sink_weight", "weighted")
    assert [key for _, key in worksheet.asked(trace(Problem(x=np.eye(2), mask=("causal",))))] == plain
    assert [key for _, key in worksheet.asked(t)] == [k for k in plain if k != "scaled"]  # no scaling, no mask
    assert [key for _, key in worksheet.asked(turned)] == list(intermediates.KEYS)
    item = marking.Item(1, "weights", "weights")
    assert item.step == intermediates.STEP_OF["weights"] == 5
    assert marking.item_name(t, (1, "scaled")) == "scaled scores"
