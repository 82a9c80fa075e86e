"""The answer checker: right sheets pass, each planted mistake is named, and the reports hold every field."""

import json
from dataclasses import replace

import numpy as np
import pytest

from attntrace.contract import dumps, trace_to_dict
from attntrace.engine import trace
from attntrace.load.problemfile import load
from attntrace.maths import softmax
from tests.conftest import SAMPLES


def _sheet(tmp_path, t, name="answers.json", **edit):
    doc = trace_to_dict(t)
    sheet = {"query": doc["query"], "heads": [{k: h[k] for k in ("q", "k", "v", "scores", "weights", "output")}
                                              for h in doc["heads"]], "output": doc["output"]}
    for key, value in edit.items():
        sheet["heads"][0][key] = value
    path = tmp_path / name
    path.write_text(dumps(sheet))
    return path


def _problem(name):
    return load(str(SAMPLES / name))


def test_a_right_answer_sheet_passes(attntrace, tmp_path):
    path = tmp_path / "right.json"
    path.write_text(attntrace("run", SAMPLES / "scaled.json", "-f", "json").out)
    r = attntrace("check", path, SAMPLES / "scaled.json")
    assert r.code == 0 and "PASS" in r.out and "WRONG" not in r.out


def test_answers_rounded_to_3_decimals_pass_with_the_default_tolerance(attntrace, tmp_path):
    doc = json.loads(attntrace("run", "-f", "json").out)
    rounded = {"heads": [{k: np.round(doc["heads"][0][k], 3).tolist() for k in ("q", "scores", "weights", "output")}]}
    path = tmp_path / "rounded.json"
    path.write_text(json.dumps(rounded))
    assert attntrace("check", path).code == 0


def test_a_wrong_cell_is_reported_with_its_row_column_and_size(attntrace, tmp_path):
    t = trace(load(None))
    scores = t.heads[0].scores.tolist()
    scores[1][2] = 13.0
    r = attntrace("check", _sheet(tmp_path, t, scores=scores))
    assert r.code == 1
    assert "step 4  head 1 · scores" in r.out and "WRONG: 1 of 9 cells off" in r.out
    assert "row 2, column 3: 13.0000 given, expected 12.0000 (off by 1.0000)" in r.out


PLANTED = {
    "scaling forgotten": ("scaled.json", lambda p: trace(replace(p, scale=False)), "scaling was forgotten"),
    "scaling applied": ("worked_example.json", lambda p: trace(replace(p, scale=True)), "this problem has no scaling"),
    "transposed weights": ("two_heads.json", lambda p: trace(replace(p, w_q=p.w_q.T, w_k=p.w_k.T, w_v=p.w_v.T)),
                           "transposed"),
    "K for Q": ("scaled.json", lambda p: trace(replace(p, w_q=p.w_k)), "K was used where Q belongs"),
    "mask missing": ("causal.json", lambda p: trace(replace(p, mask=())), "the mask was left out"),
}


@pytest.mark.parametrize("mistake", PLANTED)
def test_each_planted_mistake_is_named(attntrace, tmp_path, mistake):
    sample, wrong, words = PLANTED[mistake]
    r = attntrace("check", _sheet(tmp_path, wrong(_problem(sample))), SAMPLES / sample)
    assert r.code == 1 and "WRONG" in r.out
    assert words in r.out.split("diagnosis:")[1]


def _by_hand(t, weights_of):
    """a sheet whose weights come from weights_of(scaled) and whose outputs follow from them"""
    h = t.heads[0]
    weights = weights_of(h)
    return {"scores": h.scores.tolist(), "weights": weights.tolist(), "output": (weights @ h.v).tolist()}


def test_softmax_over_the_wrong_axis_is_named(attntrace, tmp_path):
    t = trace(_problem("scaled.json"))
    path = _sheet(tmp_path, t, **_by_hand(t, lambda h: softmax(h.scaled.T).T))
    r = attntrace("check", path, SAMPLES / "scaled.json")
    assert r.code == 1 and "softmax was taken down the columns" in r.out


def test_an_inverted_mask_is_named(attntrace, tmp_path):
    t = trace(_problem("causal.json"))
    path = _sheet(tmp_path, t, **_by_hand(t, lambda h: softmax(h.scores / t.divisor, ~t.allowed)))
    r = attntrace("check", path, SAMPLES / "causal.json")
    assert r.code == 1 and "the mask was inverted" in r.out


def test_carried_rounding_counts_as_right_with_a_note(attntrace, tmp_path):
    p = _problem("scaled.json")
    r = attntrace("check", _sheet(tmp_path, trace(p, decimals=1)), SAMPLES / "scaled.json")
    assert r.code == 0 and "rounding carried at 1 decimals" in r.out


def test_a_later_error_that_follows_from_an_earlier_one_is_a_consequence(attntrace, tmp_path):
    t = trace(load(None))
    h = t.heads[0]
    q = h.q.copy()
    q[0, 0] += 1.0  # a slip in Q ...
    scores = q @ h.k.T  # ... carried honestly into the scores
    r = attntrace("check", _sheet(tmp_path, t, q=q.tolist(), scores=scores.tolist(),
                                  weights=softmax(scores).tolist(), output=(softmax(scores) @ h.v).tolist()))
    assert r.code == 1
    lines = r.out.splitlines()
    assert "WRONG" in next(line for line in lines if "· Q " in line)
    for name in ("scores", "softmax weights"):
        assert "consequence" in next(line for line in lines if f"· {name}" in line)


def test_single_input_answers_in_the_step_layout(attntrace, tmp_path):
    path = tmp_path / "one.json"
    path.write_text(attntrace("step", "--input", "2", "-f", "json").out)
    assert attntrace("check", path).code == 0
    doc = json.loads(path.read_text())
    doc["heads"][0]["weights"][0][0] = 0.5
    path.write_text(json.dumps(doc))
    r = attntrace("check", path)
    assert r.code == 1 and "softmax weights" in r.out and "WRONG" in r.out


def test_a_csv_directory_answer_sheet(attntrace, tmp_path):
    t = trace(load(None))
    d = tmp_path / "answers"
    d.mkdir()
    for key in ("q", "scores", "weights"):
        np.savetxt(d / f"{key}.csv", getattr(t.heads[0], key), delimiter=",", fmt="%.4f")
    np.savetxt(d / "output.csv", t.output, delimiter=",", fmt="%.4f")
    assert attntrace("check", d).code == 0
    np.savetxt(d / "scores.csv", t.heads[0].scores + 1, delimiter=",", fmt="%.4f")
    assert attntrace("check", d).code == 1


def test_exact_tolerances(attntrace, tmp_path):
    t = trace(load(None))
    path = _sheet(tmp_path, t, output=(t.heads[0].output + 1e-6).tolist())
    assert attntrace("check", path).code == 0
    assert attntrace("check", path, "--rtol", "0", "--atol", "1e-9").code == 1


def test_gradescope_results_have_every_documented_field(attntrace, tmp_path):
    t = trace(_problem("scaled.json"))
    results = tmp_path / "results.json"
    scores = (t.heads[0].scores * 2).tolist()
    r = attntrace("check", _sheet(tmp_path, t, scores=scores), SAMPLES / "scaled.json", "--gradescope", results)
    assert r.code == 1
    doc = json.loads(results.read_text())
    assert set(doc) >= {"score", "tests"} and doc["score"] == sum(test["score"] for test in doc["tests"])
    assert len(doc["tests"]) == 7
    for test in doc["tests"]:
        assert {"name", "score", "max_score", "output"} <= set(test) and test["max_score"] == 1.0
    assert any(test["score"] == 0 and "WRONG" in test["output"] for test in doc["tests"])


def test_json_report(attntrace, tmp_path):
    t = trace(load(None))
    r = attntrace("check", _sheet(tmp_path, t, v=(t.heads[0].v + 1).tolist()), "--format", "json")
    doc = json.loads(r.out)
    assert r.code == 1 and doc["passed"] is False
    wrong = [item for item in doc["items"] if item["verdict"] == "wrong"]
    assert wrong[0]["key"] == "v" and wrong[0]["cells"][0] == {"row": 1, "column": 1, "given": 2.0, "expected": 1.0}


def test_bad_answer_sheets_are_clear_errors(attntrace, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"heads": [{"scores": [[1, 2]]}]}')
    r = attntrace("check", path)
    assert r.code == 1 and "the answer is 1 x 2, expected 3 x 3" in r.err
    path.write_text('{"nothing": 1}')
    assert "no answers found" in attntrace("check", path).err


@pytest.mark.parametrize("args", [[], ["--input", "2"], ["--precision", "1"], ["--precision", "3"]])
def test_a_worksheets_key_fed_back_to_check_passes(attntrace, tmp_path, args):
    key = tmp_path / "key.json"
    assert attntrace("worksheet", SAMPLES / "two_heads.json", "--key", "--format", "json", "-o", key, *args).code == 0
    assert attntrace("check", key, SAMPLES / "two_heads.json").code == 0


def test_worksheet_markdown_and_plain_have_blank_tables_and_the_key_fills_them(attntrace):
    blank = attntrace("worksheet").out
    assert blank.startswith("# Worksheet: worked example") and "| x1 |     |     |     |" in blank
    assert "| x1 | 1.00 | 0.00 | 1.00 | 0.00 |" in blank  # the problem itself is filled in
    key = attntrace("worksheet", "--key").out
    assert "ANSWER KEY" in key and "|     |" not in key and "| x1 | 0.06 | 0.47 | 0.47 |" in key
    plain = attntrace("worksheet", "--format", "plain", "--input", "1").out
    assert "______" in plain and "Step 7" in plain and "Step 8" not in plain


def test_blank_json_answer_sheet_is_all_nulls(attntrace):
    doc = json.loads(attntrace("worksheet", "--format", "json").out)
    assert doc["heads"][0]["q"] == [[None] * 3] * 3 and doc["output"] == [[None] * 3] * 3


def test_a_csv_directory_for_one_input_names_it_in_answers_json(attntrace, tmp_path):
    t = trace(load(None), query=2)
    d = tmp_path / "one"
    d.mkdir()
    np.savetxt(d / "scores.csv", t.heads[0].scores, delimiter=",", fmt="%.4f")
    (d / "answers.json").write_text('{"query": 2}')
    assert attntrace("check", d).code == 0
    (d / "answers.json").write_text('{"query": 1}')
    assert attntrace("check", d).code == 1
