"""RoPE, grouped-query heads, ALiBi and soft-capping as the commands show them: the steps, the JSON, explain's
arithmetic, validate, schema and new."""

import json
import re
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest

from attntrace.core.engine import trace
from attntrace.core.problem import Problem
from attntrace.core.variants import alibi_slopes

PROBLEM = {"name": "variants", "tokens": ["我", "喜欢", "猫", "。"],
           "x": [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1], [0, 1, 0, 1]],
           "w_q": [[1, 0, 1, 0, 1, 1, 0, 0], [1, 0, 0, 1, 0, 1, 1, 0], [0, 0, 1, 0, 1, 0, 0, 1], [0, 1, 1, 1, 0, 0, 1, 1]],
           "w_k": [[0, 1, 1, 0], [1, 1, 0, 1], [0, 1, 1, 1], [1, 0, 0, 1]],
           "w_v": [[0, 2], [0, 3], [1, 0], [1, 1]],
           "heads": 2, "kv_heads": 1, "rope": {"pairs": "half"}, "alibi": True, "softcap": 5, "mask": "causal"}


@pytest.fixture
def variant_file(tmp_path):
    path = tmp_path / "variants.json"
    path.write_text(json.dumps(PROBLEM, ensure_ascii=False), encoding="utf-8")
    return path


def test_the_steps_show_what_each_variant_adds_where_it_happens(attntrace, variant_file):
    out = attntrace("run", variant_file, "--format", "plain").out
    step2, step3 = out.split("Step 2 · weights")[1].split("Step 3 ·")[0], out.split("Step 3 · derive")[1].split("Step 4")[0]
    assert "2 query heads share 1 key/value block" in step2 and "rope:" in step2 and "alibi:" in step2
    assert "softcap:" in step2
    assert "head 2 · K = X · W_K[:, 1..4] (key/value block 1)" in step3 and "angle θ =" in step3
    assert "head 1 · Q' = Q turned by position" in step3 and "head 2 · K' = K turned by position" in step3
    step5 = out.split("Step 5 · softmax for input 3")[1].split("Step 6")[0]
    slope = alibi_slopes(2)[0]
    assert f"head 1 · bias(3, j) = -{slope:g} · |3 - j|" in step5
    assert "head 1 · z(3, j) = score(3, j) / sqrt(d_k) + bias(3, j)" in step5 and "5 · tanh(z(3, j) / 5)" in step5
    flat = " ".join(out.split())  # a title as long as this one is broken to fit 80 columns
    assert "scores = Q' K'^T" in out and "softmax(5 · tanh((scores / sqrt(d_k) + bias) / 5), masked)" in flat


def test_the_json_trace_holds_each_variants_arrays_and_reads_back_as_the_same_problem(attntrace, variant_file):
    doc = json.loads(attntrace("run", variant_file, "--format", "json").out)
    t = trace(Problem(**{k: v for k, v in PROBLEM.items()}))
    for a, head in enumerate(doc["heads"]):
        h = t.heads[a]
        assert head["kv_head"] == 1
        assert np.array_equal(head["q_rotated"], h.q_rotated) and np.array_equal(head["k_rotated"], h.k_rotated)
        assert np.array_equal(head["bias"], h.bias)
        scaled = np.array([[-np.inf if c is None else c for c in row] for row in head["scaled"]])
        assert np.array_equal(scaled, h.scaled)  # the final logits: scaled, biased, capped, masked
    assert doc["config"]["kv_heads"] == 1 and doc["config"]["alibi"] and doc["config"]["softcap"] == 5
    again = attntrace("run", "-", "--format", "json", input=attntrace("run", variant_file, "--format", "json").out)
    assert json.loads(again.out)["heads"] == doc["heads"]


def test_explain_writes_the_rotation_bias_and_cap_lines_a_calculator_confirms(attntrace, variant_file):
    out = attntrace("explain", variant_file, "--input", "3", "--precision", "3").out
    turned = re.findall(r"'\[\d+\] = \S+ cos θ [-+] \S+ sin θ = (\S+)×(\S+) ([-+]) (\S+)×(\S+) = (\S+)", out)
    assert len(turned) == 2 * 2 * (1 + 4) * 2  # heads · pairs (d_k = 4) · (q3 and the 4 keys) · 2 cells a pair
    for a, c, sign, b, s, result in turned:
        value = Decimal(a.strip("()")) * Decimal(c.strip("()"))
        other = Decimal(b.strip("()")) * Decimal(s.strip("()"))
        exact = value - other if sign == "-" else value + other
        assert Decimal(result) == exact.quantize(Decimal("0.001"), rounding=ROUND_HALF_UP)
    capped = re.findall(r"(\S+) · tanh\((\S+) / \S+\) = \S+×(\S+) = (\S+)", out)
    assert capped and all(Decimal(r) == (Decimal(c) * Decimal(t)).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP)
                          for c, _, t, r in capped)
    assert "score(3,1) = q3' · k1'" in out and "+ bias(3,1)" in out


def test_validate_and_schema_know_the_variants(attntrace, variant_file):
    out = attntrace("validate", variant_file).out
    assert "kv_heads 1" in out and "rope     base 10000, pairs half" in out and "alibi" in out and "softcap  5" in out
    schema = json.loads(attntrace("schema").out)["properties"]
    assert {"kv_heads", "rope", "alibi", "softcap"} <= set(schema)
    assert set(schema["rope"]["oneOf"][1]["properties"]) == {"base", "pairs", "positions", "source_positions", "frequencies"}


def test_new_draws_a_variant_problem_that_traces(attntrace, tmp_path):
    path = tmp_path / "new.json"
    r = attntrace("new", "--heads", "4", "--kv-heads", "2", "--rope", "--alibi", "--softcap", "30", "--seed", "3",
                  "-o", path)
    assert r.code == 0
    doc = json.loads(path.read_text())
    assert doc["kv_heads"] == 2 and doc["rope"]["pairs"] == "half" and doc["alibi"] and doc["softcap"] == 30
    assert len(doc["w_k"][0]) == 2 * 4 and len(doc["w_q"][0]) == 4 * 4  # two blocks of d_k = 4, four query heads
    assert attntrace("run", path, "--format", "json").code == 0


@pytest.mark.parametrize(("args", "says"), [
    (["--rope", "--d-k", "3"], "give d_k = 4"),
    (["--heads", "4", "--kv-heads", "3"], "kv_heads = 3 does not divide heads = 4"),
    (["--softcap", "0"], "Invalid value for '--softcap': 0.0 must be a finite number above 0"),
    (["--softcap", "inf"], "Invalid value for '--softcap': inf must be a finite number above 0"),
])
def test_new_refuses_a_variant_it_cannot_draw_in_one_line(attntrace, args, says):
    r = attntrace("new", *args)
    assert r.code == 2 and says in r.err and r.err.count("\n") == 1


@pytest.mark.parametrize(("key", "value", "says"), [
    ("kv_heads", 3, "kv_heads = 3 must be a whole number that divides heads = 2"),
    ("rope", {"pairs": "both"}, 'rope pairs = "both"'),
    ("softcap", -1, "softcap = -1"),
    ("alibi", "yes", 'alibi = "yes" must be true or false'),
])
def test_a_bad_variant_key_in_a_file_is_one_line_naming_the_file(attntrace, tmp_path, key, value, says):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**PROBLEM, key: value}), encoding="utf-8")
    r = attntrace("run", path)
    assert r.code == 1 and says in r.err and str(path) in r.err and r.err.count("\n") == 1


def test_explain_adds_the_bias_to_the_score_itself_when_nothing_scales_it(attntrace, tmp_path):
    path = tmp_path / "alibi.json"
    path.write_text(json.dumps({"x": [[1, 0], [0, 2], [1, 1]], "alibi": True, "scale": False}), encoding="utf-8")
    out = attntrace("explain", path, "--input", "1").out
    lines = re.findall(r"score\(1,(\d)\) \+ bias\(1,\d\) = (\S+) \+ \((\S+)\) = (\S+)", out)
    scores = dict(re.findall(r"score\(1,(\d)\) = q1 · k\d = .* = (\S+)", out))
    assert len(lines) == 2  # keys 2 and 3; key 1's bias is 0
    for j, score, bias, result in lines:
        assert score == scores[j] and Decimal(result) == Decimal(score) + Decimal(bias)


def test_rope_settings_written_beside_rope_say_where_they_belong(attntrace, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"x": [[1, 0], [0, 1]], "rope": True, "source_positions": [0, 1]}), encoding="utf-8")
    r = attntrace("run", path)
    assert r.code == 1 and 'it belongs inside "rope"' in r.err


def test_a_problems_own_rope_frequencies_show_in_the_steps_explain_validate_and_json(attntrace, tmp_path):
    path = tmp_path / "scaled_rope.json"
    path.write_text(json.dumps({**PROBLEM, "rope": {"frequencies": [1.0, 0.125]}}, ensure_ascii=False), encoding="utf-8")
    out = attntrace("run", path, "--format", "plain").out
    assert "pair i by position · ω_i (the frequencies given)" in " ".join(out.split())  # a note broken to fit
    step3 = out.split("Step 3 · derive")[1].split("Step 4")[0]
    assert "ω = each pair's turn per position, as the model scales it" in step3 and "0.125" in step3
    assert "angle θ = position · ω_i (the frequencies given)" in step3
    explained = attntrace("explain", path, "--input", "3").out
    assert "θ of q3, pair (2,4) = 2 · ω2 = 0.2500" in explained and "θ of q3, pair (1,3) = 2 · ω1 = 2\n" in explained
    assert "rope     2 frequencies given, pairs half" in attntrace("validate", path).out
    doc = json.loads(attntrace("run", path, "--format", "json").out)
    assert doc["problem"]["rope"]["frequencies"] == [1.0, 0.125]
    again = attntrace("run", "-", "--format", "json", input=json.dumps(doc))
    assert json.loads(again.out)["heads"] == doc["heads"]
