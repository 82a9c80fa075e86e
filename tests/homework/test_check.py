"""Marking: verdicts at the student's precision, follow-through, every usual mistake named, strict sheets, classes."""

import csv
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attntrace.core.problem import Problem
from tests import hand
from tests.conftest import SAMPLES

# 我喜欢猫: one head, d_model 4, d_k = d_v = 2, scaled
ONE = {
    "name": "我喜欢猫", "tokens": ["我", "喜欢", "猫"],
    "x": [[0.5, -1.2, 0.8, 0.3], [1.1, 0.4, -0.6, 0.9], [-0.7, 0.2, 1.3, -0.4]],
    "w_q": [[0.6, -0.3], [0.2, 0.8], [-0.5, 0.4], [0.9, 0.1]],
    "w_k": [[-0.4, 0.7], [0.5, 0.3], [0.8, -0.6], [0.1, 0.9]],
    "w_v": [[1.2, -0.5], [0.3, 0.6], [-0.8, 0.4], [0.7, 1.1]],
    "scale": True,
}
# four tokens, causal, two heads joined by W_O; every weight matrix square
TWO = {
    "name": "birds", "tokens": ["birds", "sing", "at", "dawn"],
    "x": [[0.4, -0.9, 1.2, 0.3], [-0.5, 0.7, 0.2, 1.1], [1.3, 0.1, -0.6, -0.8], [0.2, 1.0, 0.5, -0.3]],
    "w_q": [[0.7, -0.2, 0.3, 0.9], [0.1, 0.6, -0.8, 0.2], [-0.4, 0.5, 0.6, -0.3], [0.8, 0.3, 0.1, 0.5]],
    "w_k": [[0.2, 0.9, -0.5, 0.4], [-0.6, 0.3, 0.7, 0.1], [0.5, -0.1, 0.2, 0.8], [0.3, 0.7, -0.4, -0.6]],
    "w_v": [[1.1, -0.3, 0.4, 0.6], [0.2, 0.8, -0.7, 0.3], [-0.5, 0.4, 0.9, -0.2], [0.6, 0.1, 0.3, 1.2]],
    "heads": 2,
    "w_o": [[0.5, -0.2, 0.1, 0.3], [0.5, 0.6, -0.3, 0.2], [-0.1, 0.3, 0.7, 0.5], [0.2, -0.4, 0.6, 0.9]],
    "mask": "causal", "scale": True,
}
UNSCALED_CAUSAL = {**ONE, "scale": False, "mask": "causal"}
ONE_CAUSAL = {**ONE, "mask": "causal"}
ORDER = [(h, k) for h in (1, 2) for k in hand.STEPS] + [(None, "output")]


def _write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def _mark(attntrace, tmp_path, problem, sheet, *args):
    r = attntrace("check", _write(tmp_path, "sheet.json", sheet), _write(tmp_path, "problem.json", problem),
                  "--format", "json", *args)
    assert r.code in (0, 1), r.err
    report = json.loads(r.out)
    return r, report, {(i["key"], i["head"]): i["verdict"] for i in report["items"]}


# (problem, what the student did, the keys it makes wrong, words the diagnosis must hold)
PLANTED = {
    "scaling forgotten": (ONE, dict(divisor=lambda d_k, d: 1.0), {"scaled"}, "not divided"),
    "divided by sqrt(d_model)": (ONE, dict(divisor=lambda d_k, d: math.sqrt(d)), {"scaled"}, "d_model"),
    "scaled when none": (UNSCALED_CAUSAL, dict(divisor=lambda d_k, d: math.sqrt(d_k)), {"scaled"}, "no scaling"),
    "softmax down the columns": (ONE, dict(axis=0), {"weights"}, "columns"),
    "W_Q transposed": (TWO, dict(transposed=("w_q",)), {"q"}, "W_Q was transposed"),
    "W_V transposed": (TWO, dict(transposed=("w_v",)), {"v"}, "W_V was transposed"),
    "K used where Q belongs": (ONE, dict(scores="kk"), {"scores"}, "K K^T"),
    "Q and K swapped (weights)": (ONE, dict(qk_weights="swapped"), {"q", "k"}, "swapped"),
    "Q and K swapped (scores)": (ONE, dict(scores="kq"), {"scores"}, "swapped"),
    "mask left out": (TWO, dict(mask="none"), {"scaled"}, "left out"),
    "mask inverted": (TWO, dict(mask="inverted"), {"scaled"}, "inverted"),
    "mask transposed": (TWO, dict(mask="transposed"), {"scaled"}, "mask was transposed"),
    "heads interleaved": (TWO, dict(interleaved=True), {"q", "k", "v"}, "interleaved"),
    "W_O forgotten": (TWO, dict(use_wo=False), {"final"}, "W_O was forgotten"),
    "heads in the wrong order": (TWO, dict(order=(1, 0)), {"final"}, "wrong order"),
    "scaling forgotten, two heads, causal": (TWO, dict(divisor=lambda d_k, d: 1.0), {"scaled"}, "not divided"),
    "softmax down the columns, two heads, causal": (TWO, dict(axis=0), {"weights"}, "columns"),
    "Q and K swapped, two heads": (TWO, dict(qk_weights="swapped"), {"q", "k"}, "swapped"),
    "K K^T, two heads, causal": (TWO, dict(scores="kk"), {"scores"}, "K K^T"),
    "mask left out, one head": (ONE_CAUSAL, dict(mask="none"), {"scaled"}, "left out"),
    "mask inverted, one head": (ONE_CAUSAL, dict(mask="inverted"), {"scaled"}, "inverted"),
    "scores multiplied by sqrt(d_k)": (ONE, dict(divisor=lambda d_k, d: 1 / math.sqrt(d_k)), {"scaled"}, "multiplied"),
    "multiplied, two heads, causal": (TWO, dict(divisor=lambda d_k, d: 1 / math.sqrt(d_k)), {"scaled"}, "multiplied"),
    "K used where V belongs": (TWO, dict(output_with="k"), {"output"}, "K was used where V belongs"),
    "weights transposed in the output": (TWO, dict(transpose_weights=True), {"output"}, "weights were transposed"),
}


@pytest.mark.parametrize("precision", [None, 4, 3, 2, 1])
@pytest.mark.parametrize("mistake", PLANTED)
def test_every_planted_mistake_is_named_and_what_follows_is_a_consequence(attntrace, tmp_path, mistake, precision):
    problem, how, wrong_keys, words = PLANTED[mistake]
    r, report, verdicts = _mark(attntrace, tmp_path, problem, hand.sheet(problem, precision, **how))
    assert r.code == 1
    assert words in (report["diagnosis"] or ""), report["diagnosis"]
    steps = list(hand.STEPS)
    first = min(steps.index(k) if k != "final" else 99 for k in wrong_keys)
    for (key, head), verdict in verdicts.items():
        name = "final" if head is None else key
        position = 99 if head is None else steps.index(key)
        if name in wrong_keys:
            assert verdict == "wrong", (key, head, verdict)
        elif position < first:
            assert verdict == "right", (key, head, verdict)
        else:
            assert verdict in ("consequence", "right"), (key, head, verdict)
    assert any(v == "consequence" for v in verdicts.values()) or "final" in wrong_keys


@pytest.mark.parametrize("problem", [ONE, TWO, UNSCALED_CAUSAL])
@pytest.mark.parametrize("precision", [None, 6, 4, 3, 2, 1])
@pytest.mark.parametrize("carried", [True, False])
def test_right_sheets_pass_at_every_precision_carried_or_not(attntrace, tmp_path, problem, precision, carried):
    r, report, verdicts = _mark(attntrace, tmp_path, problem, hand.sheet(problem, precision, carried=carried))
    assert r.code == 0 and report["passed"] and report["diagnosis"] is None
    assert set(verdicts.values()) == {"right"} and report["score"] == report["max_score"]


@pytest.mark.parametrize(("problem", "name"), [(ONE, "scaled scores"), (ONE_CAUSAL, "scaled scores"),
                                             (UNSCALED_CAUSAL, "masked scores")])
def test_the_scaled_scores_of_a_problem_that_only_masks_are_called_the_masked_scores(attntrace, tmp_path, problem, name):
    sheet = hand.sheet(problem, 2, slip=(1, "scores", 0, 0, 1.0))  # a wrong score, carried on by the student
    _, report, _ = _mark(attntrace, tmp_path, problem, sheet)
    item = next(i for i in report["items"] if i["key"] == "scaled")
    assert item["name"] == name and item["verdict"] == "consequence" and item["note"] == "follows from your own scores"
    assert "scaled scores" not in json.dumps(report) if name == "masked scores" else True


def test_a_wrong_cell_whose_key_value_differs_from_the_true_value_rounded_names_both(attntrace, tmp_path):
    carried, exact = hand.sheet(ONE, 2)["heads"][0], hand.sheet(ONE, 2, carried=False)["heads"][0]
    key, i, j = next((key, i, j) for key in ("scores", "scaled", "weights", "output")
                     for i, row in enumerate(carried[key]) for j, value in enumerate(row) if value != exact[key][i][j])
    _, report, _ = _mark(attntrace, tmp_path, ONE, hand.sheet(ONE, 2, slip=(1, key, i, j, 0.5)))
    item = next(item for item in report["items"] if item["key"] == key)
    cell = next(c for c in item["cells"] if (c["row"], c["column"]) == (i + 1, j + 1))
    assert item["verdict"] == "wrong"
    assert math.isclose(cell["expected"], exact[key][i][j], abs_tol=0.005)
    assert cell["expected_carried"] == carried[key][i][j] != round(cell["expected"], 2)
    text = attntrace("check", tmp_path / "sheet.json", tmp_path / "problem.json").out
    assert f"expected {exact[key][i][j]:.2f} (off by " in text
    assert f"; {carried[key][i][j]:.2f} with the rounding carried)" in text


def test_two_decimal_answers_are_not_held_to_four(attntrace, tmp_path):
    """0.14 for 0.1361 is right at 2 decimals; 0.13 (cut, not rounded) is not"""
    sheet = hand.sheet(ONE, 2, carried=False)
    r, report, verdicts = _mark(attntrace, tmp_path, ONE, sheet)
    assert r.code == 0 and report["precision"] == 2 and report["precision_from"] == "digits"
    cut = hand.sheet(ONE, None)
    cut["heads"][0]["q"] = [[math.trunc(v * 100) / 100 for v in row] for row in cut["heads"][0]["q"]]
    cut["heads"][0] = {"head": 1, "q": cut["heads"][0]["q"]}
    cut.pop("output")
    _, report, verdicts = _mark(attntrace, tmp_path, ONE, cut)
    assert verdicts[("q", 1)] == "wrong"


def test_the_precision_comes_from_the_sheet_then_the_teacher(attntrace, tmp_path):
    sheet = hand.sheet(ONE, 1)
    _, report, _ = _mark(attntrace, tmp_path, ONE, {**sheet, "precision": 1})
    assert report["precision"] == 1 and report["precision_from"] == "sheet" and report["passed"]
    r, report, _ = _mark(attntrace, tmp_path, ONE, sheet, "--precision", "3")
    assert report["precision"] == 3 and report["precision_from"] == "teacher" and r.code == 1


def test_carried_rounding_with_one_slip_marks_only_that_step(attntrace, tmp_path):
    sheet = hand.sheet(ONE, 2, slip=(1, "output", 2, 1, 0.3))
    r, report, verdicts = _mark(attntrace, tmp_path, ONE, sheet)
    assert r.code == 1
    assert [verdicts[(k, 1)] for k in hand.STEPS] == ["right"] * 6 + ["wrong"]
    wrong = next(i for i in report["items"] if i["verdict"] == "wrong")
    assert [c["name"] for c in wrong["cells"]] == ["output[猫, 2]"]
    assert report["score"] == 6 and report["max_score"] == 7


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(precision=st.integers(1, 6), carried=st.booleans(), problem=st.sampled_from([ONE, TWO]),
       where=st.sampled_from(hand.STEPS + ("final",)), row=st.integers(0, 2), col=st.integers(0, 1),
       amount=st.sampled_from([1.3, -2.7, 0.9]))
def test_one_changed_cell_makes_that_step_wrong_and_later_ones_consequences(attntrace, tmp_path, precision, carried,
                                                                             problem, where, row, col, amount):
    head = None if where == "final" else 1
    key = "output" if where == "final" else where
    if (problem is ONE and where == "final") or (problem is TWO and where == "scaled" and col > row):
        return  # one head has no separate final output; a masked cell is not a number to slip
    sheet = hand.sheet(problem, precision, carried=carried, slip=(head, key, row, col, amount))
    r, report, verdicts = _mark(attntrace, tmp_path, problem, sheet)
    assert r.code == 1
    slipped = ("output", 1) if problem is ONE and where == "output" else (key, head)
    assert verdicts[slipped] == "wrong"
    later = {"q": {"scores", "scaled", "weights", "output"}, "k": {"scores", "scaled", "weights", "output"},
             "v": {"output"}, "scores": {"scaled", "weights", "output"}, "scaled": {"weights", "output"},
             "weights": {"output"}, "output": set(), "final": set()}[where]
    for (k, h), verdict in verdicts.items():
        if (k, h) == slipped:
            continue
        downstream = h == head and k in later or (h is None and where != "final")
        assert verdict in (("consequence", "right") if downstream else ("right",)), (k, h, verdict)


def test_a_blank_sheet_is_not_answered_and_scores_nothing(attntrace, tmp_path):
    blank = tmp_path / "blank.json"
    problem = _write(tmp_path, "problem.json", TWO)
    assert attntrace("worksheet", problem, "--format", "json", "-o", blank).code == 0
    results = tmp_path / "results.json"
    r = attntrace("check", blank, problem, "--format", "json", "--gradescope", results)
    report = json.loads(r.out)
    assert r.code == 1 and not report["passed"] and report["score"] == 0 and report["diagnosis"] is None
    assert {i["verdict"] for i in report["items"]} == {"not answered"} and len(report["items"]) == 15
    doc = json.loads(results.read_text())
    assert doc["score"] == 0 and sum(t["max_score"] for t in doc["tests"]) == 15
    assert all(t["status"] == "failed" for t in doc["tests"])


def test_a_partly_filled_step_is_marked_on_its_cells_and_says_how_many_are_missing(attntrace, tmp_path):
    sheet = hand.sheet(ONE, 2)
    sheet["heads"][0]["weights"][1] = [None, None, None]
    r, report, verdicts = _mark(attntrace, tmp_path, ONE, sheet)
    item = next(i for i in report["items"] if i["key"] == "weights")
    assert r.code == 1 and item["verdict"] == "right" and "3 of 9 cells not written" in item["note"]
    assert item["points"] == pytest.approx(6 / 9, abs=1e-4) and not report["passed"]


def test_only_q_given_is_not_a_pass(attntrace, tmp_path):
    sheet = {"heads": [{"head": 1, "q": hand.sheet(ONE, 2)["heads"][0]["q"]}]}
    r, report, verdicts = _mark(attntrace, tmp_path, ONE, sheet)
    assert r.code == 1 and report["score"] == 1 and report["max_score"] == 7
    assert list(verdicts.values()).count("not answered") == 6


def test_one_head_without_w_o_reports_the_output_once(attntrace, tmp_path):
    _, report, verdicts = _mark(attntrace, tmp_path, ONE, hand.sheet(ONE, 2))
    assert [i["key"] for i in report["items"]].count("output") == 1 and report["max_score"] == 7


def test_gradescope_points_follow_through_and_its_switch(attntrace, tmp_path):
    sheet = _write(tmp_path, "sheet.json", hand.sheet(ONE, 2, divisor=lambda d_k, d: 1.0))
    problem = _write(tmp_path, "problem.json", ONE)
    results = tmp_path / "results.json"
    attntrace("check", sheet, problem, "--gradescope", results, "--points", "scaled=2,weights=3")
    doc = json.loads(results.read_text())
    assert sum(t["max_score"] for t in doc["tests"]) == 10 and doc["score"] == 8  # scaled (2) lost; weights (3) earned
    assert {"name", "score", "max_score", "status", "output"} <= set(doc["tests"][0])
    attntrace("check", sheet, problem, "--gradescope", results, "--no-follow-through")
    assert json.loads(results.read_text())["score"] == 4
    wrong = next(t for t in doc["tests"] if t["output"].startswith("WRONG"))
    lines = wrong["output"].split("\n")
    assert len(lines) > 1 and lines[1].startswith("scaled[") and "\\x0a" not in wrong["output"]  # lines, not escapes


@pytest.mark.parametrize("bad", ["nan", "0", "-1", "inf"])
@pytest.mark.parametrize("option", ["--tolerance", "--rtol", "--atol"])
def test_tolerances_must_be_finite_and_positive(attntrace, option, bad):
    r = attntrace("check", SAMPLES / "worked_example.json", option, bad)
    assert r.code == 2 and "finite number above 0" in r.err


@pytest.mark.parametrize("points", ["wieghts=2", "scores=x", "scores=-1", "scores=nan"])
def test_bad_points_are_usage_errors(attntrace, tmp_path, points):
    sheet = _write(tmp_path, "s.json", hand.sheet(ONE, 2))
    assert attntrace("check", sheet, _write(tmp_path, "p.json", ONE), "--points", points).code == 2


def test_exact_work_is_judged_within_rtol_atol(attntrace, tmp_path):
    sheet = hand.sheet(ONE, None)
    sheet["heads"][0]["output"][0][0] += 1e-6
    sheet["output"][0][0] += 1e-6
    r, report, _ = _mark(attntrace, tmp_path, ONE, sheet, "--atol", "1e-5")
    assert r.code == 0 and report["precision_from"] == "tolerance"
    r, _, verdicts = _mark(attntrace, tmp_path, ONE, sheet, "--atol", "1e-9")
    assert r.code == 1 and verdicts[("output", 1)] == "wrong"


MALFORMED = {
    "misspelled key": ({"heads": [{"head": 1, "wieghts": [[0.1]]}]}, 'did you mean "weights"'),
    "misspelled top key": ({"hedas": []}, 'did you mean "heads"'),
    "heads not a list": ({"heads": 5}, "heads must be a list"),
    "head not a number": ({"heads": [{"head": "x"}]}, "head must be the head's number"),
    "a string cell": ({"heads": [{"head": 1, "q": [["0.1", 0.2]] * 3}]}, 'row 1, column 1: expected a number or null'),
    "a boolean cell": ({"heads": [{"head": 1, "q": [[True, 0.2]] * 3}]}, "got true"),
    "a huge cell": ('{"heads": [{"head": 1, "q": [[1e400, 0.2], [1, 2], [3, 4]]}]}', "too large for a float64"),
    "NaN": ('{"heads": [{"head": 1, "q": [[NaN, 0.2]]}]}', "head 1 q row 1, column 1 is NaN"),
    "Infinity": ('{"heads": [{"head": 1, "q": [[0.1, -Infinity]]}]}', "head 1 q row 1, column 2 is -Infinity"),
    "query 0": ({"query": 0, "heads": []}, "query must be the number of the input"),
    "query out of range": ({"query": 7, "heads": []}, "query 7 is out of range; this problem has inputs 1 to 3"),
    "too many rows": ({"heads": [{"head": 1, "weights": [[0.1, 0.2, 0.3]] * 4}]}, "weights has 4 rows, expected 3: one per input"),
    "too few columns": ({"heads": [{"head": 1, "q": [[0.1]] * 3}]}, "q has 1 column, expected 2: d_k"),
    "a head the problem lacks": ({"heads": [{"head": 3}]}, "gives head 3, but the problem has 1 head"),
    "a head twice": ({"heads": [{"head": 1}, {"head": 1}]}, "given twice"),
    "ragged rows": ({"output": [[1, 2], [3]]}, "row 2 has 1 value,"),
    "not an object": ([1, 2], "an answer sheet is a JSON object"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_sheet_that_cannot_be_read_is_one_line_and_exit_2(attntrace, tmp_path, case):
    content, words = MALFORMED[case]
    path = tmp_path / "bad.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    r = attntrace("check", path, _write(tmp_path, "p.json", ONE))
    assert r.code == 2 and r.out == "" and words in r.err and r.err.count("\n") == 1, r.err
    assert "--input" not in r.err


def test_an_empty_head_object_is_a_blank_sheet(attntrace, tmp_path):
    r, report, verdicts = _mark(attntrace, tmp_path, ONE, {"heads": [{}]})
    assert r.code == 1 and set(verdicts.values()) == {"not answered"}


def test_cells_are_named_by_their_labels_in_the_text_report(attntrace, tmp_path):
    sheet = hand.sheet(ONE, 2)
    sheet["heads"][0]["weights"][1][2] = 0.5
    r = attntrace("check", _write(tmp_path, "s.json", sheet), _write(tmp_path, "p.json", ONE))
    assert "weights[喜欢 → 猫]: 0.50 written, expected 0.86" in r.out and "a slip in one cell" in r.out
    assert "marked at 2 decimals, inferred from the digits written" in r.out and "score: 6 of 7" in r.out


def test_one_input_sheets(attntrace, tmp_path):
    one = tmp_path / "one.json"
    one.write_text(attntrace("step", "--input", "2", "-f", "json").out)
    r = attntrace("check", one)
    assert r.code == 0, r.out
    doc = json.loads(one.read_text())
    doc["heads"][0]["weights"][0][0] = 0.5
    one.write_text(json.dumps(doc))
    r = attntrace("check", one, "--format", "json")
    assert r.code == 1 and json.loads(r.out)["query"] == 2


def test_a_csv_directory_sheet_with_answers_json(attntrace, tmp_path):
    d = tmp_path / "answers"
    d.mkdir()
    sheet = hand.sheet(ONE, 2)["heads"][0]
    for key in ("q", "k", "v", "scores", "weights", "output"):
        (d / f"{key}.csv").write_text("\n".join(",".join(str(v) for v in row) for row in sheet[key]) + "\n")
    scaled = [["" if v is None else str(v) for v in row] for row in sheet["scaled"]]
    (d / "answers.json").write_text('{"precision": 2}')
    (d / "problem.json").write_text(json.dumps(ONE))
    r = attntrace("check", d, "--format", "json")
    items = {i["key"]: i["verdict"] for i in json.loads(r.out)["items"]}
    assert r.code == 1 and items["scaled"] == "not answered" and items["weights"] == "right"
    (d / "scaled.csv").write_text("\n".join(",".join(row) for row in scaled) + "\n")
    assert attntrace("check", d).code == 0


@pytest.mark.parametrize("blank", ["", "null", "?", "-", "n/a", "____"])
def test_a_csv_sheet_leaves_a_cell_blank_as_a_worksheet_does_even_in_its_first_row(attntrace, tmp_path, blank):
    d = tmp_path / "answers"
    d.mkdir()
    sheet = hand.sheet(ONE, 2)["heads"][0]
    rows = [[str(v) for v in row] for row in sheet["q"]]
    rows[0][1] = blank
    (d / "q.csv").write_text("\n".join(",".join(row) for row in rows) + "\n")
    (d / "problem.json").write_text(json.dumps(ONE))
    r = attntrace("check", d, "--format", "json")
    q = next(item for item in json.loads(r.out)["items"] if item["key"] == "q")
    assert q["verdict"] == "right" and (q["cells_written"], q["cells_asked"]) == (5, 6) and r.err == ""


@pytest.mark.parametrize("args", [[], ["--input", "2"], ["--precision", "1"], ["--precision", "3"]])
def test_a_worksheets_json_key_passes(attntrace, tmp_path, args):
    key = tmp_path / "key.json"
    assert attntrace("worksheet", SAMPLES / "two_heads.json", "--key", "--format", "json", "-o", key, *args).code == 0
    assert json.loads(key.read_text())["precision"] == (int(args[1]) if args[:1] == ["--precision"] else 2)
    r = attntrace("check", key, SAMPLES / "two_heads.json")
    assert r.code == 0, r.out


def _class(tmp_path, problem=TWO):
    room = tmp_path / "class"
    room.mkdir()
    _write(room, "problem.json", problem)
    _write(room, "ana.json", hand.sheet(problem, 2))
    _write(room, "ben.json", hand.sheet(problem, 2, mask="none"))
    _write(room, "cai.json", hand.sheet(problem, 2, mask="none"))
    _write(room, "dee.json", {"heads": [{"head": 1, "q": [["x", 1]]}]})
    return room


def test_a_class_directory_with_a_gradebook_and_a_summary(attntrace, tmp_path):
    room = _class(tmp_path)
    book = tmp_path / "grades.csv"
    r = attntrace("check", room, "--gradebook", book)
    assert r.code == 2  # dee's sheet cannot be read; the others are marked
    assert "dee.json" in r.err and "ana.json" in r.out and "cai.json" in r.out
    assert "2 of 3 sheets marked: mask left out" in r.out and "3 sheets marked, 1 could not be read; 1 passed" in r.out
    rows = list(csv.DictReader(book.open(encoding="utf-8-sig")))
    assert [row["sheet"].split("/")[-1] for row in rows] == ["ana.json", "ben.json", "cai.json", "dee.json"]
    assert rows[0]["score"] == "15" and rows[1]["head 1 scaled"] == "wrong" and "mask" in rows[1]["diagnosis"]
    assert rows[3]["diagnosis"].startswith("cannot be read")


def test_a_problem_among_the_paths_or_given_with_problem(attntrace, tmp_path):
    room = _class(tmp_path, ONE)
    (room / "dee.json").unlink()
    elsewhere = _write(tmp_path, "other.json", TWO)
    r = attntrace("check", room / "ana.json", room / "ben.json", elsewhere, "--format", "json")
    assert r.code == 2 and "answers another problem (3 inputs" in r.err  # marked against the problem given, not beside
    assert len(json.loads(r.out)["unreadable"]) == 2
    r = attntrace("check", room / "ana.json", "--problem", room / "problem.json")
    assert r.code == 0
    r = attntrace("check", room / "ana.json", elsewhere, "--problem", room / "problem.json")
    assert r.code == 2


def test_gradescope_is_for_one_sheet(attntrace, tmp_path):
    room = _class(tmp_path)
    r = attntrace("check", room / "ana.json", room / "ben.json", "--gradescope", tmp_path / "r.json")
    assert r.code == 2 and "one sheet" in r.err


def test_an_output_may_not_overwrite_a_sheet(attntrace, tmp_path):
    room = _class(tmp_path)
    before = (room / "ana.json").read_text()
    r = attntrace("check", room / "ana.json", "--gradescope", room / "ana.json")
    assert r.code == 2 and (room / "ana.json").read_text() == before


def test_gradebook_cells_never_run_as_formulas(attntrace, tmp_path):
    room = tmp_path / "room"
    room.mkdir()
    _write(room, "problem.json", ONE)
    _write(room, "=cmd.json", {**hand.sheet(ONE, 2), "student": "=HYPERLINK(1)"})
    book = tmp_path / "g.csv"
    attntrace("check", room, "--gradebook", book)
    row = next(csv.DictReader(book.open(encoding="utf-8-sig")))
    assert row["student"] == "'=HYPERLINK(1)"


def test_when_two_mistakes_explain_the_numbers_both_are_named(attntrace, tmp_path):
    """with W_K = W_Q^T, Q computed with W_K is also Q computed with W_Q transposed"""
    problem = {**ONE, "w_q": [[0.6, -0.3], [0.2, 0.8]], "w_k": [[0.6, 0.2], [-0.3, 0.8]],
               "w_v": [[1.2, -0.5], [0.3, 0.6]], "x": [[0.5, -1.2], [1.1, 0.4], [-0.7, 0.2]]}
    _, report, verdicts = _mark(attntrace, tmp_path, problem, hand.sheet(problem, 2, transposed=("w_q",)))
    assert verdicts[("q", 1)] == "wrong" and verdicts[("k", 1)] == "right"
    assert report["diagnosis"].startswith("either ") and "transposed" in report["diagnosis"]
    assert "W_K" in report["diagnosis"] and len(report["mistakes"]) == 2


def test_labels_and_names_in_a_report_are_shown_never_obeyed(attntrace, tmp_path):
    problem = {**ONE, "tokens": ["\x1b[31mred", "b\u202eidi", "猫"], "name": "bell\x07"}
    sheet = hand.sheet(problem, 2)
    sheet["heads"][0]["weights"][0][1] = 0.5
    r = attntrace("check", _write(tmp_path, "s.json", {**sheet, "student": "a\rb"}), _write(tmp_path, "p.json", problem))
    assert "\x1b" not in r.out and "\u202e" not in r.out and "\x07" not in r.out and "\r" not in r.out
    assert "weights[\\x1b[31mred → b\\u202eidi]" in r.out and "bell\\x07" in r.out and "(a\\x0db)" in r.out


CAUSAL_ZEROS = {"precision": 2, "heads": [{
    "head": 1, "q": [[1, 0, 2], [2, 2, 2], [2, 1, 3], [2, 1, 3]], "k": [[0, 1, 1], [4, 4, 0], [2, 3, 1], [1, 1, 2]],
    "v": [[1, 2, 3], [2, 8, 0], [2, 6, 3], [1, 5, 0]], "scores": [[2, 4, 4, 5], [4, 16, 12, 8], [4, 12, 10, 9], [4, 12, 10, 9]],
    "scaled": [[1.15, 0, 0, 0], [2.31, 9.24, 0, 0], [2.31, 6.93, 5.77, 0], [2.31, 6.93, 5.77, 5.2]],
    "weights": [[0.51, 0.16, 0.16, 0.16], [0, 1, 0, 0], [0.01, 0.76, 0.24, 0], [0.01, 0.67, 0.21, 0.12]],
    "output": [[1.31, 4.06, 2.01], [2, 8, 0], [2.01, 7.54, 0.75], [1.89, 7.24, 0.66]]}]}


def test_zero_written_for_a_masked_score_is_wrong_and_its_softmax_never_right(attntrace, tmp_path):
    r = attntrace("check", _write(tmp_path, "s.json", CAUSAL_ZEROS), SAMPLES / "causal.json", "--format", "json")
    verdicts = {i["key"]: i["verdict"] for i in json.loads(r.out)["items"]}
    assert r.code == 1 and verdicts["scaled"] == "wrong" and verdicts["weights"] in ("wrong", "consequence")


def test_a_slip_in_cross_attention_scores_is_marked_not_a_crash(attntrace, tmp_path):
    sheet = {"precision": 2, "heads": [{"head": 1, "scores": [[-15.0, 4.0, 4.0, -14.0], [24.0, -6.0, -6.0, 21.0]]}]}
    r = attntrace("check", _write(tmp_path, "s.json", sheet), SAMPLES / "cross.json")
    assert r.code == 1 and "WRONG" in r.out and r.err == ""


def test_a_final_output_that_contradicts_the_heads_is_marked(attntrace, tmp_path):
    sheet = hand.sheet(ONE, 2)
    sheet["output"][0][0] = 9.99
    r, report, verdicts = _mark(attntrace, tmp_path, ONE, sheet)
    assert r.code == 1 and verdicts[("output", 1)] == "wrong" and "written twice, differently" in " ".join(report["notes"])


@pytest.mark.parametrize("fmt", ["json", "markdown", "plain"])
def test_a_key_at_0_decimals_passes(attntrace, tmp_path, fmt):
    key = tmp_path / ("key." + {"json": "json", "markdown": "md", "plain": "txt"}[fmt])
    attntrace("worksheet", SAMPLES / "scaled.json", "--precision", "0", "--key", "--format", fmt, "-o", key)
    r = attntrace("check", key, SAMPLES / "scaled.json")
    assert r.code == 0, r.out


def test_every_student_of_an_assigned_class_is_marked(attntrace, tmp_path):
    roster = tmp_path / "roster.txt"
    roster.write_text("ana\nben\ncai\n")
    room = tmp_path / "class"
    attntrace("assign", roster, "--seed", "5", "-o", room)
    (room / "ana" / "answers.json").write_text((room / "keys" / "ana" / "key.json").read_text())
    (room / "ben" / "worksheet.md").write_text((room / "keys" / "ben" / "key.md").read_text())  # filled in place
    book = tmp_path / "g.csv"
    r = attntrace("check", room, "--gradebook", book)
    rows = {row["sheet"].split("/")[-2]: row for row in csv.DictReader(book.open(encoding="utf-8-sig"))}
    assert set(rows) == {"ana", "ben", "cai"} and r.code == 1
    assert rows["ana"]["score"] == rows["ben"]["score"] == rows["ana"]["max_score"] and rows["cai"]["score"] == "0"


def test_a_sheet_in_a_sub_folder_uses_the_problem_above_it(attntrace, tmp_path):
    room = tmp_path / "room"
    (room / "sub").mkdir(parents=True)
    _write(room, "problem.json", ONE)
    _write(room / "sub", "ana.json", hand.sheet(ONE, 2))
    assert attntrace("check", room).code == 0


def test_messages_a_teacher_can_read(attntrace, tmp_path):
    inverted = hand.sheet(ONE_CAUSAL, 2, mask="inverted")
    r = attntrace("check", _write(tmp_path, "s.json", inverted), _write(tmp_path, "p.json", ONE_CAUSAL))
    assert "WRONG: 3 of 3 written cells off; 6 of 6 cells not written" in r.out
    r, report, _ = _mark(attntrace, tmp_path, TWO, hand.sheet(TWO, 2, interleaved=True))
    assert "every 2nd column" in report["diagnosis"]
    huge = hand.sheet(ONE, 2)
    huge["heads"][0]["q"][0][0] = 1e300
    r = attntrace("check", _write(tmp_path, "s.json", huge), _write(tmp_path, "p.json", ONE))
    assert "1.000e+300 written" in r.out and r.err == ""


def test_minus_infinity_written_where_a_number_belongs_is_wrong(tmp_path):
    import numpy as np

    from attntrace.files.problemfile import from_dict as problem_from
    from attntrace.homework.kinds import Marker
    from attntrace.homework.results import Rule
    from attntrace.homework.sheet import from_dict

    sheet = from_dict(hand.sheet(ONE, 2), "s")
    sheet.cells[(1, "q")][0, 0] = -np.inf  # "masked" typed into a Q cell of a worksheet
    report = Marker(problem_from(ONE, "p"), "p").mark(sheet, Rule())
    assert next(i for i in report.items if i.key == "q").verdict == "wrong"


def test_a_d_k_of_1_says_what_it_divides_by(attntrace, tmp_path):
    problem = {**ONE, "w_q": [[0.6], [0.2], [-0.5], [0.9]], "w_k": [[-0.4], [0.5], [0.8], [0.1]]}
    sheet = hand.sheet(problem, 2)
    sheet["heads"][0]["scaled"][0][0] = 7.0
    r, report, _ = _mark(attntrace, tmp_path, problem, sheet)
    assert "divides the scores by 1" in " ".join(report["notes"])


@pytest.mark.parametrize("args", [["--points", "scores=2,scores=3"], ["--precision", "2", "--atol", "0.1"]])
def test_contradicting_options_are_usage_errors(attntrace, tmp_path, args):
    r = attntrace("check", _write(tmp_path, "s.json", hand.sheet(ONE, 2)), _write(tmp_path, "p.json", ONE), *args)
    assert r.code == 2 and r.err.count("\n") == 1


def _masked_later(garbage: float | None = None) -> dict:
    """a right sheet whose masked scaled cells hold the score before the mask (or garbage), its weights 0 there"""
    sheet, unmasked = hand.sheet(ONE_CAUSAL, 2), hand.sheet(ONE_CAUSAL, 2, mask="none")
    rows = sheet["heads"][0]["scaled"]
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            if cell is None:
                row[j] = unmasked["heads"][0]["scaled"][i][j] if garbage is None else garbage
    return sheet


def test_masking_at_the_softmax_is_right_with_a_note_not_a_mask_left_out(attntrace, tmp_path):
    r, report, verdicts = _mark(attntrace, tmp_path, ONE_CAUSAL, _masked_later())
    assert set(verdicts.values()) == {"right"} and report["diagnosis"] is None and r.code == 0
    scaled = next(i for i in report["items"] if i["key"] == "scaled")
    assert "3 masked cells hold the score before the mask, and your weights there are 0" in scaled["note"]


def test_numbers_in_masked_cells_that_are_no_score_are_still_wrong(attntrace, tmp_path):
    _, _, verdicts = _mark(attntrace, tmp_path, ONE_CAUSAL, _masked_later(garbage=9.99))
    assert verdicts[("scaled", 1)] == "wrong"
    left_out = hand.sheet(ONE_CAUSAL, 2, mask="none")  # the scores before the mask, and weights on hidden keys
    _, report, verdicts = _mark(attntrace, tmp_path, ONE_CAUSAL, left_out)
    assert verdicts[("scaled", 1)] == "wrong" and "left out" in report["diagnosis"]


def test_a_slip_inside_a_consequence_is_named_against_the_students_own_numbers(attntrace, tmp_path):
    sheet = hand.sheet(ONE, 2, divisor=lambda d_k, d: 1.0, slip=(1, "weights", 0, 0, 0.1))  # no √d_k, then one slip
    r, report, verdicts = _mark(attntrace, tmp_path, ONE, sheet)
    assert verdicts[("scaled", 1)] == "wrong" and verdicts[("weights", 1)] == "wrong"
    assert verdicts[("output", 1)] == "consequence"
    weights = next(i for i in report["items"] if i["key"] == "weights")
    assert weights["note"] == "the other cells follow from your own scaled scores"
    assert [(c["row"], c["column"], c["expected_from"]) for c in weights["cells"]] == [(1, 1, "own")]
    own = hand.sheet(ONE, 2, divisor=lambda d_k, d: 1.0)["heads"][0]["weights"][0][0]  # what their scores give
    assert weights["cells"][0]["expected"] == pytest.approx(own) and weights["cells"][0]["given"] == pytest.approx(own + 0.1)
    text = attntrace("check", tmp_path / "sheet.json", tmp_path / "problem.json").out
    assert "WRONG: 1 of 9 written cells off; the other cells follow from your own scaled scores" in text
    assert f"weights[我 → 我]: {own + 0.1:.2f} written, your own scaled scores give {own:.2f} (off by 0.10)" in text


@pytest.mark.parametrize("fewer, asked", [(1, 2), (2, 3), (0, 2)])
def test_numbers_rounded_to_fewer_decimals_than_the_sheet_asks_are_named(attntrace, tmp_path, fewer, asked):
    sheet = {**hand.sheet(ONE, fewer), "precision": asked}
    _, report, _ = _mark(attntrace, tmp_path, ONE, sheet)
    unit = "decimal" if fewer == 1 else "decimals"
    assert f"the numbers were rounded to {fewer} {unit}, not the {asked} the sheet asks for" in report["diagnosis"]
    _, report, _ = _mark(attntrace, tmp_path, ONE, {**hand.sheet(ONE, asked), "precision": asked})
    assert report["diagnosis"] is None


def test_a_repeated_token_is_labelled_with_its_position_so_every_cell_has_its_own_name(attntrace, tmp_path):
    problem = {**ONE, "tokens": ["猫", "猫", "猫"]}
    assert Problem(x=np.eye(4), tokens=("猫", "猫", "猫·2", "猫")).labels == ("猫", "猫·2", "猫·2·3", "猫·4")
    sheet = hand.sheet(problem, 2, slip=(1, "weights", 0, 1, 0.2))
    r, report, _ = _mark(attntrace, tmp_path, problem, sheet)
    weights = next(i for i in report["items"] if i["key"] == "weights")
    assert [c["name"] for c in weights["cells"]] == ["weights[猫 → 猫·2]"]
    doc = json.loads(attntrace("run", tmp_path / "problem.json", "--format", "json").out)
    assert doc["tokens"] == ["猫", "猫·2", "猫·3"]
    assert json.loads(attntrace("run", "-", "--format", "json", input=json.dumps(doc)).out)["tokens"] == doc["tokens"]


@pytest.mark.parametrize(("value", "places", "text"), [
    (0.125, 2, "0.13"), (-0.001, 2, "0.00"), (float("nan"), 2, "blank"), (float("-inf"), 2, "masked (left blank)"),
    (float("inf"), 2, "a number past a float64's 1.8e308"), (1.5e200, 2, "1.500e+200"), (-2e12, 4, "-2.000e+12"),
])
def test_a_reported_number_is_written_as_a_teacher_writes_it(value, places, text):
    from attntrace.homework.said import number

    assert number(value, places) == text


def test_numbers_cut_off_instead_of_rounded_are_named(attntrace, tmp_path):
    from decimal import ROUND_DOWN, Decimal

    def product(a, b):  # exact, as by hand: rows of a times columns of b, every number a short decimal
        return [[sum(Decimal(repr(u)) * Decimal(repr(row_b[j])) for u, row_b in zip(row, b)) for j in range(len(b[0]))]
                for row in a]

    right = hand.sheet(ONE, 2)["heads"][0]
    q, k, v = (product(ONE["x"], ONE[w]) for w in ("w_q", "w_k", "w_v"))
    scores = product([[float(c) for c in row] for row in q], [list(col) for col in zip(*[[float(c) for c in row] for row in k])])
    cut = [[float(c.quantize(Decimal("0.01"), ROUND_DOWN)) for c in row] for row in scores]
    assert cut != right["scores"]  # some score rounds up
    sheet = {"precision": 2, "heads": [{"head": 1, "q": right["q"], "k": right["k"], "v": right["v"], "scores": cut}]}
    _, report, verdicts = _mark(attntrace, tmp_path, ONE, sheet)
    assert verdicts[("scores", 1)] == "wrong"
    assert report["diagnosis"].startswith("the numbers were cut off after 2 decimals instead of rounded: scores[")
    assert report["mistakes"] == ["cut instead of rounded"]


def test_a_number_written_as_masked_where_nothing_is_masked_is_named_and_reported_as_json(attntrace, tmp_path):
    from tests.homework.test_filled import edit_cells, printed, problem_path

    path = problem_path(tmp_path, "xihuan")
    seen = []

    def masked(title, label, cell):
        seen.extend([cell] if "Step 3 · V" in title else [])
        return "-inf" if len(seen) == 1 and "Step 3 · V" in title else cell

    sheet = tmp_path / "filled.md"
    sheet.write_text(edit_cells(printed(attntrace, path, "markdown"), "markdown", masked), encoding="utf-8")
    r = attntrace("check", sheet, path, "--format", "json")
    assert r.code == 1 and r.err == ""
    report = json.loads(r.out)
    v = next(item for item in report["items"] if item["key"] == "v")
    assert v["verdict"] == "wrong" and v["cells"][0]["given"] is None and v["cells"][0]["written_masked"] is True
    assert report["diagnosis"].startswith("a cell that is never masked was written as masked (-inf): v[")
    text = attntrace("check", sheet, path).out
    assert "masked written, expected" in text and "off by" not in text and "inf" not in text.replace("-inf", "")


def test_masked_written_for_the_weight_of_a_masked_key_is_its_0(attntrace, tmp_path):
    from tests.homework.test_filled import edit_cells, printed

    path = SAMPLES / "causal.json"

    def masked(title, label, cell):
        return "masked" if "softmax" in title and cell in ("0", "0.00") else cell

    sheet = tmp_path / "filled.md"
    sheet.write_text(edit_cells(printed(attntrace, path, "markdown"), "markdown", masked), encoding="utf-8")
    assert sheet.read_text(encoding="utf-8").count("| masked") >= 3
    r = attntrace("check", sheet, path, "--format", "json")
    report = json.loads(r.out)
    assert r.code == 0 and report["passed"] and report["notes"] == [], r.out



def test_a_json_sheet_of_another_problem_says_so(attntrace, tmp_path):
    sheet = {**hand.sheet(ONE, 2), "name": "li_ming: 3 tokens"}
    _, report, _ = _mark(attntrace, tmp_path, ONE, sheet)
    assert report["notes"] == ['the sheet answers the problem "li_ming: 3 tokens", and is marked against "我喜欢猫"']
    _, same, _ = _mark(attntrace, tmp_path, ONE, {**sheet, "name": ONE["name"]})
    assert same["notes"] == []


@pytest.mark.parametrize("precision", [2, 3])
def test_dividing_by_the_square_root_rounded_to_the_sheets_decimals_is_right(attntrace, tmp_path, precision):
    divided = hand.sheet(ONE, precision, divisor=lambda d_k, d: round(math.sqrt(d_k), precision))
    assert divided["heads"][0]["scaled"] != hand.sheet(ONE, precision)["heads"][0]["scaled"]
    r, report, verdicts = _mark(attntrace, tmp_path, ONE, divided)
    assert r.code == 0 and set(verdicts.values()) == {"right"}, report
    sloppy = hand.sheet(ONE, precision, divisor=lambda d_k, d: round(math.sqrt(d_k), precision - 1))
    assert _mark(attntrace, tmp_path, ONE, sloppy)[2][("scaled", 1)] != "right"


def test_within_a_tolerance_a_wrong_cell_is_quoted_as_written(attntrace, tmp_path):
    sheet = hand.sheet(ONE, 2, slip=(1, "q", 0, 0, 0.5))
    _, report, _ = _mark(attntrace, tmp_path, ONE, sheet, "--tolerance", "0.01")
    written = sheet["heads"][0]["q"][0][0]
    text = attntrace("check", tmp_path / "sheet.json", tmp_path / "problem.json", "--tolerance", "0.01").out
    assert f"q[我, 1]: {written:.2f} written, expected " in text and "0000" not in text
    assert "the 9" not in (report["diagnosis"] or "")


def test_a_partly_written_sheet_scores_the_sum_rounded_and_its_gradebook_says_what_is_missing(attntrace, tmp_path):
    sheet = hand.sheet(ONE, 2)
    for key in ("q", "k"):  # one cell of six left blank in each: 5/6 + 5/6 + 5 = 6.6667, not 0.8333 + 0.8333 + 5
        sheet["heads"][0][key][0][0] = None
    book = tmp_path / "book.csv"
    r, report, _ = _mark(attntrace, tmp_path, ONE, sheet, "--gradebook", str(book))
    assert report["score"] == 6.6667
    rows = list(csv.DictReader(book.open(encoding="utf-8-sig")))
    assert rows[0]["score"] == "6.6667" and rows[0]["head 1 q"] == "right, 5 of 6 cells" and rows[0]["head 1 v"] == "right"


def test_a_problem_holding_nan_among_the_paths_is_refused_as_the_problem(attntrace, tmp_path):
    bad = tmp_path / "problem.json"
    bad.write_text('{"x": [[1, NaN]]}', encoding="utf-8")
    r = attntrace("check", _write(tmp_path, "sheet.json", hand.sheet(ONE, 2)), bad)
    assert r.code == 2 and r.out == ""
    assert r.err == f"attntrace: {bad}: x row 1, column 2 is NaN; every value must be finite\n"


def test_a_sheet_named_twice_is_marked_once(attntrace, tmp_path):
    sheet = _write(tmp_path, "sheet.json", hand.sheet(ONE, 2))
    r = attntrace("check", sheet, sheet, _write(tmp_path, "problem.json", ONE), "--format", "json")
    assert r.code == 0 and json.loads(r.out)["sheet"] == str(sheet)


def test_masked_cells_written_as_0_are_named(attntrace, tmp_path):
    sheet = hand.sheet(ONE_CAUSAL, 2)
    scaled = sheet["heads"][0]["scaled"]
    sheet["heads"][0]["scaled"] = [[0.0 if v is None else v for v in row] for row in scaled]
    assert any(v is None for row in scaled for v in row)
    _, report, verdicts = _mark(attntrace, tmp_path, ONE_CAUSAL, sheet)
    assert verdicts[("scaled", 1)] == "wrong" and report["mistakes"] == ["masked cells written as 0"]
    assert report["diagnosis"].startswith("the masked cells were written as 0 (scaled[")


# the exit status is the verdict: 0 passed, 1 not passed; what keeps check from marking or reporting is 2
class _GoneReader:
    """a stdout whose reader has gone away (| head after its lines)"""

    def write(self, text):
        raise BrokenPipeError()

    def flush(self):
        pass

    def isatty(self):
        return False


@pytest.mark.parametrize("student, verdict", [("ana", 0), ("ben", 1)])
def test_a_reader_gone_keeps_the_verdict(attntrace, environment, student, verdict):
    from attntrace.cli.terminal import Environment

    expected = attntrace("check", SAMPLES / "homework" / f"{student}.json").code
    environment["make"] = lambda: Environment(stdout_isatty=False, stdin_isatty=False, stdout=_GoneReader())
    r = attntrace("check", SAMPLES / "homework" / f"{student}.json")
    assert expected == verdict and r.code == verdict and r.err == ""


@pytest.mark.parametrize("student", ["ana", "ben"])
def test_a_closed_stdout_is_trouble_never_a_verdict(attntrace, environment, student):
    from attntrace.cli.terminal import Environment

    environment["make"] = lambda: Environment(stdout_isatty=False, stdin_isatty=False, stdout=None)
    r = attntrace("check", SAMPLES / "homework" / f"{student}.json")
    assert r.code == 2 and r.err.startswith("attntrace: stdout is closed") and r.err.count("\n") == 1


def test_a_problem_that_cannot_be_read_is_trouble(attntrace, tmp_path):
    r = attntrace("check", "--problem", tmp_path / "missing.json", SAMPLES / "homework" / "ben.json")
    assert r.code == 2 and r.err == f"attntrace: {tmp_path / 'missing.json'}: no such file or directory\n"


@pytest.mark.parametrize("args, status", [(["key"], 0), (["ben"], 1), (["--problem", "missing.json", "ben"], 2),
                                          (["broken"], 2)])
def test_a_reader_gone_from_stderr_leaves_the_status(tmp_path, args, status):
    import subprocess
    import sys

    from tests.conftest import ROOT

    (tmp_path / "broken.json").write_text("{bad", encoding="utf-8")
    problem = SAMPLES / "homework" / "problem.json"
    sheets = {"key": SAMPLES / "homework" / "ana.json", "ben": SAMPLES / "homework" / "ben.json",
              "broken": tmp_path / "broken.json", "missing.json": tmp_path / "missing.json"}
    line = [str(sheets.get(a, a)) for a in args] + (["--problem", str(problem)] if "--problem" not in args else [])
    proc = subprocess.Popen([sys.executable, "-m", "attntrace", "check", *line], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    proc.stderr.close()  # before anything is written: every message meets a closed pipe
    assert proc.wait(timeout=60) == status
