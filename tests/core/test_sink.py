"""A learned sink logit per head (gpt-oss): one more score in each row's softmax, with no value."""

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import attntrace
from attntrace.core.attention import softmax, sunk
from attntrace.core.engine import trace
from attntrace.core.problem import Problem, example
from attntrace.errors import AttntraceError
from attntrace.files.problemfile import from_dict
from attntrace.render.jsonform import problem_to_dict
from tests.conftest import ROOT

CASES = json.loads((ROOT / "tests" / "fixtures" / "sink_reference.json").read_text())["cases"]
EXAMPLE = {"x": example().x.tolist(), "w_q": example().w_q.tolist(), "w_k": example().w_k.tolist(),
           "w_v": example().w_v.tolist(), "scale": False}


def test_the_sink_takes_its_share_of_each_row():
    weights, sink_weight = sunk(np.array([[1.0, 2.0, 3.0]]), None, 0.5)
    np.testing.assert_allclose(weights, [[0.0854, 0.2321, 0.6308]], atol=5e-5)
    np.testing.assert_allclose(sink_weight, [0.0518], atol=5e-5)
    np.testing.assert_array_equal(softmax(np.array([[1.0, 2.0, 3.0]]), None, 0.5), weights)


def test_a_fully_masked_row_gives_the_sink_everything():
    weights, sink_weight = sunk(np.array([[1.0, 2.0]]), np.array([[False, False]]), 0.5)
    assert weights.tolist() == [[0.0, 0.0]] and sink_weight.tolist() == [1.0]
    padded = trace(from_dict({**EXAMPLE, "mask": ["padding"], "padding": [True, True, True], "sink": 0.5}, "test"))
    assert padded.heads[0].weights.tolist() == [[0.0] * 3] * 3 and padded.heads[0].sink_weight.tolist() == [1.0] * 3
    assert not padded.output.any()


@given(st.lists(st.floats(-50, 50), min_size=1, max_size=6), st.floats(-50, 50),
       st.lists(st.booleans(), min_size=6, max_size=6))
def test_weights_and_sink_weight_sum_to_one(z, sink, seen):
    allowed = np.array([seen[:len(z)]])
    weights, sink_weight = sunk(np.array([z]), allowed, sink)
    assert np.all(weights >= 0) and np.all(weights[~allowed] == 0) and 0 < sink_weight[0] <= 1
    assert weights.sum() + sink_weight[0] == pytest.approx(1.0, abs=1e-12)


def test_a_very_negative_sink_is_no_sink():
    rng = np.random.default_rng(3)
    given_ = {"x": rng.normal(size=(4, 6)), "w_q": rng.normal(size=(6, 4)), "w_k": rng.normal(size=(6, 4)),
              "w_v": rng.normal(size=(6, 4)), "heads": 2, "mask": "causal"}
    plain, sunk_ = trace(Problem(**given_)), trace(Problem(**given_, sink=-1e300))
    for h, s in zip(plain.heads, sunk_.heads):
        np.testing.assert_allclose(s.weights, h.weights, rtol=0, atol=1e-15)
        assert s.sink_weight is not None and not s.sink_weight.any()
    np.testing.assert_allclose(sunk_.output, plain.output, rtol=0, atol=1e-15)


def test_each_head_has_its_own_sink_and_step_8_agrees():
    t = trace(from_dict({**EXAMPLE, "w_q": [[1, 0], [1, 0], [0, 0], [0, 1]], "w_k": [[0, 0], [1, 1], [0, 1], [1, 1]],
                         "w_v": [[0, 2], [0, 3], [1, 0], [1, 1]], "heads": 2, "sink": [0.5, 3.0]}, "test"))
    assert t.problem.sink == (0.5, 3.0) and t.self_check.ok and t.self_check.max_abs_diff == 0.0
    for h, sink in zip(t.heads, (0.5, 3.0)):
        assert h.sink_weight is not None
        np.testing.assert_allclose(h.sink_weight, sunk(h.scaled, None, sink)[1])
        np.testing.assert_allclose(h.weights.sum(axis=1) + h.sink_weight, 1.0)


def test_carried_rounding_rounds_the_weights_and_the_sink_weight():
    t = trace(from_dict({**EXAMPLE, "sink": 0.5}, "test"), carry_rounding=2)
    h = t.heads[0]
    assert h.sink_weight is not None
    np.testing.assert_array_equal(h.weights, np.round(h.weights, 2))
    np.testing.assert_array_equal(h.sink_weight, np.round(h.sink_weight, 2))
    assert t.self_check.ok


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"heads{c['problem']['heads']}-{c['problem'].get('mask')}")
def test_run_matches_the_reference(case, attntrace, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(case["problem"]))
    r = attntrace("run", path, "-f", "json")
    assert r.code == 0, r.err
    heads = json.loads(r.out)["heads"]
    for got, want in zip(heads, case["heads"], strict=True):
        weights = np.array([[0.0 if w is None else w for w in row] for row in got["weights"]])
        np.testing.assert_allclose(weights, want["weights"], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got["sink_weight"], want["sink_weight"], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got["output"], want["output"], rtol=1e-12, atol=1e-12)


def test_the_fixture_covers_one_sink_and_one_per_head_with_masks():
    sinks = {type(c["problem"]["sink"]).__name__ for c in CASES}
    assert sinks == {"float", "list"} and {c["problem"].get("mask", [None])[0] for c in CASES} == {None, "causal",
                                                                                                   "padding"}
    assert {c["problem"]["heads"] for c in CASES} >= {1, 2}


def test_a_single_sink_is_every_heads_and_is_written_back():
    p = Problem(x=[[1.0, 2.0, 3.0, 4.0]], heads=2, sink=0.5)
    assert p.sink == (0.5, 0.5) and problem_to_dict(p)["sink"] == 0.5
    assert problem_to_dict(Problem(x=[[1.0, 2.0]], heads=2, sink=[1, -2]))["sink"] == [1.0, -2.0]
    assert "sink" not in problem_to_dict(example())
    again = from_dict(problem_to_dict(Problem(x=[[1.0, 2.0]], heads=2, sink=[1, -2])), "test")
    assert again.sink == (1.0, -2.0)


def test_the_library_takes_a_sink():
    t = attntrace.trace(x=[[1, 0], [0, 1]], sink=0.5)
    assert t.problem.sink == (0.5,) and t.to_dict()["heads"][0]["sink_weight"] == t.heads[0].sink_weight.tolist()
    assert t.to_dict()["config"]["sink"] == [0.5]
    again = attntrace.trace(t.problem, sink=1.0)
    assert again.problem.sink == (1.0,)


@pytest.mark.parametrize(("sink", "says"), [
    ('"big"', 'sink = "big" must be a number (one logit for every head) or a list of one number per head'),
    ("true", "sink = true must be a number"),
    ("[1, 2, 3]", "sink has 3 values but heads = 2; give one per head, or one number for every head"),
    ('[1, "a"]', 'sink value 2 is "a"; give a finite number'),
    ("[[1], [2]]", "sink = a list of lists must be a number"),
    ('{"a": 1}', "sink = an object must be a number"),
    ("[1, NaN]", "sink value 2 is nan; give a finite number"),
    ("Infinity", "sink = inf must be a finite number"),
])
def test_a_bad_sink_is_one_line(sink, says, attntrace, tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"x": [[1, 2, 3, 4]], "heads": 2, "sink": ' + sink + "}")
    r = attntrace("run", path)
    assert r.code == 1 and r.out == "" and len(r.err.strip().splitlines()) == 1, r.err
    assert f"{path}: " in r.err and says in r.err


def test_the_library_refuses_a_sink_that_is_not_finite():
    with pytest.raises(AttntraceError, match="sink = -inf must be a finite number"):
        Problem(x=[[1.0]], sink=float("-inf"))


SINK_FILE = {**EXAMPLE, "mask": "causal", "sink": 0.5}


@pytest.fixture
def sink_file(tmp_path):
    path = tmp_path / "sink.json"
    path.write_text(json.dumps(SINK_FILE))
    return path


def test_run_shows_the_sink_and_each_rows_sink_weight(attntrace, sink_file):
    r = attntrace("run", sink_file, "-f", "plain")
    assert r.code == 0, r.err
    words = " ".join(r.out.split())  # notes are wrapped
    assert "sink: a learned logit per head (0.5) joins each row's softmax" in words
    assert "sink weight = e^sink / (Σ_j e^z_j + e^sink)" in r.out and "x1  0.1824" in r.out
    assert "input 1's weights sum to less than 1" in words and "softmax(Q K^T, sink) V" in r.out


def test_explain_puts_e_to_the_sink_in_the_denominator(attntrace, sink_file):
    r = attntrace("explain", sink_file, "--input", "3")
    assert r.code == 0, r.err
    assert "w(3,1) = e^4 / (e^4 + e^12 + e^10 + e^0.5) = 0.0003" in r.out
    assert "sink weight(3) = e^0.5 / (e^4 + e^12 + e^10 + e^0.5) = 0.0000" in r.out


def test_validate_and_schema_know_the_sink(attntrace, sink_file):
    r = attntrace("validate", sink_file)
    assert r.code == 0 and "sink     0.5: one more logit in each row's softmax" in r.out
    schema = json.loads(attntrace("schema").out)
    assert schema["properties"]["sink"]["oneOf"][0] == {"type": "number"}


def test_new_writes_the_sink(attntrace):
    r = attntrace("new", "--tokens", "3", "--d-model", "4", "--heads", "2", "--sink", "-1.5", "--seed", "1")
    assert r.code == 0, r.err
    assert json.loads(r.out)["sink"] == -1.5 and "sink -1.5" in json.loads(r.out)["name"]
    bad = attntrace("new", "--tokens", "3", "--d-model", "4", "--sink", "inf")
    assert bad.code == 2 and "--sink" in bad.err and "must be a finite number" in bad.err


def test_check_marks_the_key_of_a_sink_problem_right_and_names_a_sink_left_out(attntrace, sink_file, tmp_path):
    key = tmp_path / "key.json"
    assert attntrace("worksheet", sink_file, "--key", "-f", "json", "-o", key).code == 0
    right = attntrace("check", key, "--problem", sink_file, "--format", "json")
    assert right.code == 0, right.err
    assert "WRONG" not in attntrace("check", key, "--problem", sink_file).out
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({k: v for k, v in SINK_FILE.items() if k != "sink"}))
    plain_key = tmp_path / "plain_key.json"
    assert attntrace("worksheet", plain, "--key", "-f", "json", "-o", plain_key).code == 0
    sheet = json.loads(key.read_text())
    sheet["heads"][0]["weights"] = json.loads(plain_key.read_text())["heads"][0]["weights"]
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(sheet))
    r = attntrace("check", wrong, "--problem", sink_file)
    assert "step 5  weights        WRONG" in r.out
    assert "the sink was left out of the softmax's denominator" in r.out


def test_a_worksheet_does_not_give_the_sink_weights_away(attntrace, sink_file):
    r = attntrace("worksheet", sink_file, "-f", "markdown")
    assert r.code == 0 and "sink weight =" not in r.out and "the sink (0.5) joins the softmax's denominator" in r.out


def test_a_trace_json_with_sink_weights_is_read_back_as_a_sheet_and_a_problem(attntrace, sink_file, tmp_path):
    traced = tmp_path / "trace.json"
    traced.write_text(attntrace("run", sink_file, "-f", "json").out)
    assert attntrace("run", traced, "-f", "json").out == traced.read_text()
    r = attntrace("check", traced, "--problem", sink_file)
    assert r.code == 0 and "WRONG" not in r.out, r.out + r.err


def test_chinese_says_the_sink(attntrace, sink_file):
    r = attntrace("run", sink_file, "-f", "plain", "--lang", "zh")
    assert r.code == 0 and "汇聚权重" in r.out
