"""Worksheets and marking with RoPE, grouped-query heads, ALiBi and soft-capping: the key passes, and each usual
mistake of these variants is named."""

import json

import numpy as np
import pytest

from attntrace.core.engine import trace
from attntrace.core.problem import Problem
from attntrace.core.variants import angles, frequencies, pair_index
from attntrace.render.jsonform import problem_to_dict

PRECISION = 2


def _problem(**settings) -> Problem:
    rng = np.random.default_rng(7)
    base = dict(x=rng.integers(-2, 3, size=(4, 4)).astype(float), w_q=rng.integers(-1, 2, size=(4, 8)).astype(float),
                w_k=rng.integers(-1, 2, size=(4, 8)).astype(float), w_v=rng.integers(-1, 2, size=(4, 4)).astype(float),
                heads=2, tokens=["我", "喜欢", "猫", "。"], name="variants")
    return Problem(**{**base, **settings})


def _key(attntrace, tmp_path, problem: Problem) -> tuple[dict, object]:
    path = tmp_path / "problem.json"
    path.write_text(json.dumps(problem_to_dict(problem)), encoding="utf-8")
    key = json.loads(attntrace("worksheet", path, "--key", "--format", "json", "--precision", str(PRECISION)).out)
    return key, path


def _mark(attntrace, tmp_path, sheet: dict, problem_path) -> dict:
    path = tmp_path / "sheet.json"
    path.write_text(json.dumps(sheet), encoding="utf-8")
    return json.loads(attntrace("check", path, problem_path, "--format", "json").out)


def _turned(v: np.ndarray, theta: np.ndarray, pairs: str) -> np.ndarray:
    """each pair (a, b) of v's columns turned by its angle, written out here: (a cos θ − b sin θ, b cos θ + a sin θ)"""
    first, second = pair_index(v.shape[1], pairs)
    turned = np.empty_like(v)
    turned[:, first] = v[:, first] * np.cos(theta) - v[:, second] * np.sin(theta)
    turned[:, second] = v[:, second] * np.cos(theta) + v[:, first] * np.sin(theta)
    return turned


def _round(a) -> list:
    return np.round(np.asarray(a, dtype=float), PRECISION).tolist()


@pytest.mark.parametrize("settings", [
    dict(rope=True), dict(rope={"pairs": "adjacent", "base": 100}), dict(kv_heads=1, w_k=np.eye(4, 4), w_v=np.eye(4, 2)),
    dict(alibi=True, mask="causal"), dict(softcap=1.5), dict(rope=True, alibi=True, softcap=2.0, mask="causal"),
])
def test_the_key_of_a_variant_problem_passes_and_asks_for_what_the_variant_adds(attntrace, tmp_path, settings):
    problem = _problem(**settings)
    key, path = _key(attntrace, tmp_path, problem)
    asked = set(key["heads"][0])
    assert ({"q_rotated", "k_rotated"} <= asked) == (problem.rope is not None)
    assert ("scaled" in asked) and "bias" not in asked
    report = _mark(attntrace, tmp_path, key, path)
    assert report["passed"] and report["diagnosis"] is None


def test_a_rotation_left_out_is_named(attntrace, tmp_path):
    key, path = _key(attntrace, tmp_path, _problem(rope=True))
    head = key["heads"][0]
    head["q_rotated"], head["k_rotated"] = head["q"], head["k"]
    report = _mark(attntrace, tmp_path, key, path)
    assert "rotation was forgotten" in report["diagnosis"] and not report["passed"]


def test_rope_pairs_mixed_up_are_named(attntrace, tmp_path):
    problem = _problem(rope=True)
    key, path = _key(attntrace, tmp_path, problem)
    t = trace(problem)
    theta = angles(np.arange(4.0), frequencies(4, 10000.0))
    for a, name in ((0, "q"), (0, "k")):  # the problem pairs i with i + 2; the student paired 2i - 1 with 2i
        key["heads"][a][f"{name}_rotated"] = _round(_turned(getattr(t.heads[a], name), theta, "adjacent"))
    report = _mark(attntrace, tmp_path, key, path)
    assert "pairs were mixed up" in report["diagnosis"]


@pytest.mark.parametrize(("wrong", "words", "tag"), [
    (lambda theta, turns: -theta, "turned the wrong way", "rotation the wrong way"),
    (lambda theta, turns: theta + turns, "positions were counted from 1", "positions counted from 1"),
    (lambda theta, turns: theta * np.pi / 180, "taken as degrees", "angles in degrees"),
])
def test_a_rotation_by_the_wrong_angles_is_named(attntrace, tmp_path, wrong, words, tag):
    problem = _problem(rope=True)
    key, path = _key(attntrace, tmp_path, problem)
    t = trace(problem)
    turns = frequencies(4, 10000.0)
    theta = wrong(angles(np.arange(4.0), turns), turns)
    for a in range(2):
        for name in ("q", "k"):
            key["heads"][a][f"{name}_rotated"] = _round(_turned(getattr(t.heads[a], name), theta, "half"))
    report = _mark(attntrace, tmp_path, key, path)
    assert words in report["diagnosis"] and report["mistakes"] == [tag] and not report["passed"]


def test_heads_swapped_are_named(attntrace, tmp_path):
    problem = _problem()
    key, path = _key(attntrace, tmp_path, problem)
    first, second = key["heads"]
    key["heads"] = [{**second, "head": 1}, {**first, "head": 2}]
    report = _mark(attntrace, tmp_path, key, path)
    assert "another head's columns of W_Q" in report["diagnosis"] and "heads were mixed up" in report["diagnosis"]
    assert report["mistakes"][0] == "another head's columns"


def test_a_query_head_reading_the_wrong_key_value_block_is_named(attntrace, tmp_path):
    problem = _problem(heads=4, w_q=np.random.default_rng(1).integers(-1, 2, size=(4, 8)).astype(float),
                       w_k=np.random.default_rng(2).integers(-1, 2, size=(4, 4)).astype(float),
                       w_v=np.random.default_rng(3).integers(-1, 2, size=(4, 4)).astype(float), kv_heads=2)
    key, path = _key(attntrace, tmp_path, problem)
    # head 2 (from 1) shares block 1 with head 1; a student who deals blocks in turn gives it block 2
    key["heads"][1]["k"] = _round(problem.x @ problem.w_k[:, 2:4])
    report = _mark(attntrace, tmp_path, key, path)
    assert "another head's block" in report["diagnosis"] and "wrong key/value block" in report["mistakes"]


def test_a_head_reading_another_heads_keys_is_named_in_ordinary_multi_head_attention(attntrace, tmp_path):
    problem = _problem()  # two heads, each with its own block of W_K
    key, path = _key(attntrace, tmp_path, problem)
    key["heads"][1]["k"] = _round(problem.x @ problem.w_k[:, 0:4])  # head 2 took head 1's columns
    report = _mark(attntrace, tmp_path, key, path)
    assert "another head's block" in report["diagnosis"] and "its own columns" in report["diagnosis"]


@pytest.mark.parametrize(("settings", "left_out", "words"), [
    (dict(alibi=True, mask="causal"), "bias", "ALiBi bias"),
    (dict(softcap=1.5), "cap", "soft-capping was left out"),
])
def test_a_bias_or_cap_left_out_of_the_scaled_scores_is_named(attntrace, tmp_path, settings, left_out, words):
    problem = _problem(**settings)
    key, path = _key(attntrace, tmp_path, problem)
    t = trace(problem)
    h = t.heads[0]
    z = h.scores / t.divisor
    if left_out == "cap" and h.bias is not None:
        z = z + h.bias
    if t.allowed is not None:
        z = np.where(t.allowed, z, np.nan)
    key["heads"][0]["scaled"] = [[None if np.isnan(c) else round(float(c), PRECISION) for c in row] for row in z]
    report = _mark(attntrace, tmp_path, key, path)
    assert words in report["diagnosis"]


def test_a_slip_in_q_carried_through_the_rotation_is_a_consequence(attntrace, tmp_path):
    problem = _problem(rope=True)
    key, path = _key(attntrace, tmp_path, problem)
    t = trace(problem)
    q = t.heads[0].q.copy()
    q[1, 0] += 1  # a slip in one cell of Q
    key["heads"][0]["q"] = _round(q)
    theta = angles(np.arange(4.0), frequencies(4, 10000.0))
    first, second = pair_index(4, "half")
    turned = np.empty_like(q)
    turned[:, first] = q[:, first] * np.cos(theta) - q[:, second] * np.sin(theta)
    turned[:, second] = q[:, second] * np.cos(theta) + q[:, first] * np.sin(theta)
    key["heads"][0]["q_rotated"] = _round(turned)
    report = _mark(attntrace, tmp_path, key, path)
    verdicts = {(i["head"], i["key"]): i["verdict"] for i in report["items"]}
    assert verdicts[(1, "q")] == "wrong" and verdicts[(1, "q_rotated")] == "consequence"


def test_a_variant_worksheet_has_a_table_for_each_rotation(attntrace, tmp_path):
    _, path = _key(attntrace, tmp_path, _problem(rope=True, alibi=True, mask="causal"))
    sheet = attntrace("worksheet", path, "--format", "plain").out
    assert "Q' = Q turned by position" in sheet and "K' = K turned by position" in sheet
    assert sheet.count("angle θ =") == 1 and "bias(1, j) = -0.0625 · |1 - j|" in sheet
    given = sheet.split("angle θ =")[1].split("\n\n")[0]
    assert "____" not in given and "1.0000" not in given and "1.00" in given  # the angles are given, not asked


@pytest.mark.parametrize("fmt", ["plain", "markdown"])
@pytest.mark.parametrize("query", [[], ["--input", "2"]])
def test_a_filled_in_variant_worksheet_is_read_back_and_its_key_passes(attntrace, tmp_path, fmt, query):
    _, path = _key(attntrace, tmp_path, _problem(rope=True, alibi=True, softcap=3.0, mask="causal", kv_heads=1,
                                                 w_k=np.eye(4, 4), w_v=np.eye(4, 2)))
    filled = tmp_path / ("filled.txt" if fmt == "plain" else "filled.md")
    filled.write_text(attntrace("worksheet", path, "--key", "--format", fmt, *query).out, encoding="utf-8")
    r = attntrace("check", filled, path, "--format", "json")
    report = json.loads(r.out)
    assert r.code == 0 and report["passed"]
    assert {"q_rotated", "k_rotated", "scaled"} <= {i["key"] for i in report["items"]}
