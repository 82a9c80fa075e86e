"""Diagnoses name only what the numbers prove: the ALiBi bias with its sign flipped, a rotation forgotten (and not the
angles taken as degrees), and the diagnosis kept when the teacher asks for more decimals than the student wrote."""

import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attntrace.files.problemfile import from_dict as problem_from_dict
from attntrace.homework import sheet as sheets
from attntrace.homework.kinds import Marker
from attntrace.homework.results import Rule
from tests import hand


def _slopes(h: int) -> list[float]:
    """the ALiBi paper's slopes for h a power of two: 2^(-8/h), 2^(-16/h), ..."""
    return [2.0 ** (-8.0 * (a + 1) / h) for a in range(h)]


def _alibi_sheet(P: dict, p: int, sign: float) -> dict:
    """a hand calculation of an ALiBi problem (no W_O), carried at p decimals; sign -1 is the bias as Press et al.
    add it (-slope · |i - j|), +1 the bias with its sign flipped"""
    def c(a):
        return hand.rnd(a, p)

    x, h = np.array(P["x"], float), P["heads"]
    n = len(x)
    keep = np.tril(np.ones((n, n), bool)) if P.get("mask") == "causal" else np.ones((n, n), bool)
    distance = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    heads = []
    for a in range(h):
        def cols(name, a=a):
            w = np.array(P[name], float)
            size = w.shape[1] // h
            return c(x @ w[:, a * size:(a + 1) * size])

        q, k, v = cols("w_q"), cols("w_k"), cols("w_v")
        s = c(q @ k.T)
        scaled = np.where(keep, c(s / math.sqrt(q.shape[1]) + sign * _slopes(h)[a] * distance), -np.inf)
        weights = c(hand._softmax(scaled, 1))
        out = c(c(weights[:, :, None] * v[None]).sum(axis=1))
        heads.append({"q": q, "k": k, "v": v, "scores": s, "scaled": scaled, "weights": weights, "output": out})

    def cells(m):
        return [[None if not np.isfinite(value) else float(value) for value in row] for row in hand.rnd(m, p)]

    return {"heads": [{"head": a + 1, **{key: cells(t[key]) for key in hand.STEPS}} for a, t in enumerate(heads)],
            "output": cells(np.hstack([t["output"] for t in heads]))}


def _matrix(rows: int, cols: int):
    return st.lists(st.lists(st.integers(-20, 20).map(lambda i: i / 10), min_size=cols, max_size=cols),
                    min_size=rows, max_size=rows)


@st.composite
def alibi_problems(draw):
    h = draw(st.sampled_from([1, 2, 4]))
    n, d_model, d_k, d_v = draw(st.integers(2, 5)), draw(st.integers(1, 4)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    return {"name": "alibi", "x": draw(_matrix(n, d_model)), "w_q": draw(_matrix(d_model, h * d_k)),
            "w_k": draw(_matrix(d_model, h * d_k)), "w_v": draw(_matrix(d_model, h * d_v)), "heads": h, "alibi": True,
            "scale": True, **({"mask": "causal"} if draw(st.booleans()) else {})}


def _report(P: dict, sheet: dict, rule: Rule | None = None):
    return Marker(problem_from_dict(P, "problem.json"), "problem.json").mark(sheets.from_dict(sheet, "sheet.json"),
                                                                             rule or Rule())


@settings(max_examples=60, deadline=None)
@given(P=alibi_problems(), precision=st.integers(1, 3))
def test_the_alibi_bias_with_its_sign_flipped_is_named_whenever_it_is_the_mistake_and_never_on_a_right_sheet(P, precision):
    right = _report(P, _alibi_sheet(P, precision, -1.0))
    assert right.passed and right.diagnosis is None and right.mistakes == ()
    flipped = _report(P, _alibi_sheet(P, precision, +1.0))
    if not flipped.passed:
        assert "ALiBi bias with the wrong sign" in flipped.mistakes, (flipped.diagnosis, flipped.items)
        assert "wrong sign" in (flipped.diagnosis or "")


def test_the_alibi_bias_with_its_sign_flipped_is_named_by_check(attntrace, tmp_path):
    P = {"name": "alibi", "tokens": ["a", "b", "c", "d"], "x": [[1, 0], [0, 1], [1, 1], [2, -1]],
         "w_q": [[1, 0.5], [0, 1]], "w_k": [[0.5, 1], [1, 0]], "w_v": [[1, 0], [0, 1]], "heads": 2, "alibi": True,
         "mask": "causal", "scale": True}
    problem, sheet = tmp_path / "problem.json", tmp_path / "sheet.json"
    problem.write_text(json.dumps(P), encoding="utf-8")
    sheet.write_text(json.dumps(_alibi_sheet(P, 2, +1.0)), encoding="utf-8")
    r = attntrace("check", sheet, problem)
    assert r.code == 1 and "none of the usual mistakes" not in r.out
    assert "diagnosis: the ALiBi bias was added with the wrong sign: +slope · |i - j| instead of -slope · |i - j|" in r.out


# two inputs, so the second is turned by 1 radian (or 1 degree) in its first pair: Q's numbers are too small to tell the
# degrees from no turn at all, K's are not (1.50 turned by 1 degree is 1.49)
ROPE = {"name": "rope", "x": [[1, 1, 0, -1], [0, 0, 0, 1]],
        "w_q": [[0.7, 2.1, 0.7, -0.4], [1.6, -0.3, 0.3, 0.2], [-2.3, 0.3, 0.3, -0.2], [-0.1, -1.3, 0.1, 1.5]],
        "w_k": [[-0.2, -0.5, -0.6, 2.0], [-1.4, 0.8, 0.1, 1.9], [1.3, -0.1, -1.5, 1.4], [1.5, -1.1, 0.7, -0.8]],
        "w_v": [[-0.8, -1.6, 0.9, 0.3], [0.5, 1.5, 0.7, 0.6], [0.7, -1.1, 0.0, -1.2], [-0.9, -0.1, 1.1, 2.1]],
        "rope": True, "scale": True}


def test_a_rotation_forgotten_is_not_also_blamed_on_degrees_when_the_numbers_rule_degrees_out(attntrace, tmp_path):
    problem, sheet = tmp_path / "problem.json", tmp_path / "sheet.json"
    problem.write_text(json.dumps(ROPE), encoding="utf-8")
    key = json.loads(attntrace("worksheet", problem, "--key", "--format", "json").out)
    head = key["heads"][0]
    head["q_rotated"], head["k_rotated"] = head["q"], head["k"]  # Q' = Q and K' = K exactly
    sheet.write_text(json.dumps(key), encoding="utf-8")
    report = json.loads(attntrace("check", sheet, problem, "--format", "json").out)
    assert report["mistakes"] == ["rotation forgotten"], report["diagnosis"]
    assert "degrees" not in report["diagnosis"] and not report["diagnosis"].startswith("either")


@pytest.mark.parametrize("rounded", [True, False])
def test_angles_taken_as_degrees_are_still_named_when_the_numbers_show_them(rounded):
    """Q and K turned by p · ω degrees (cos and sin rounded, or not) is named as such, never as no turn at all"""
    from attntrace.core.variants import angles, frequencies, pair_index

    x = np.array(ROPE["x"], float)
    theta = np.radians(angles(np.arange(2.0), frequencies(4, 10000.0)))
    first, second = pair_index(4, "half")
    key = {"heads": [{}]}
    for name in ("q", "k"):
        v = hand.rnd(x @ np.array(ROPE[f"w_{name}"], float), 2)
        cos, sin = (hand.rnd(np.cos(theta), 2), hand.rnd(np.sin(theta), 2)) if rounded else (np.cos(theta), np.sin(theta))
        turned = np.empty_like(v)
        turned[:, first] = v[:, first] * cos - v[:, second] * sin
        turned[:, second] = v[:, second] * cos + v[:, first] * sin
        key["heads"][0][name], key["heads"][0][f"{name}_rotated"] = v.tolist(), hand.rnd(turned, 2).tolist()
    report = _report(ROPE, key)
    assert report.mistakes == ("angles in degrees",), report.diagnosis


def test_more_decimals_asked_than_written_quotes_what_was_written_and_keeps_the_diagnosis(attntrace, tmp_path):
    from tests.homework.test_check import ONE

    problem, sheet = tmp_path / "problem.json", tmp_path / "sheet.json"
    problem.write_text(json.dumps(ONE), encoding="utf-8")
    sheet.write_text(json.dumps(hand.sheet(ONE, 2, divisor=lambda d_k, d: 1.0)), encoding="utf-8")
    r = attntrace("check", sheet, problem, "--precision", "3")
    written = re.findall(r": (-?\d+\.\d+) written", r.out)
    assert r.code == 1 and written and all(len(w.split(".")[1]) <= 2 for w in written), r.out
    assert re.search(r"expected -?\d+\.\d{3}\b", r.out)  # the answer at the decimals asked for
    report = json.loads(attntrace("check", sheet, problem, "--precision", "3", "--format", "json").out)
    assert report["mistakes"] == ["scaling forgotten", "rounded to fewer decimals"]
    assert report["diagnosis"].startswith("the scaling was forgotten") and "rounded to 2 decimals" in report["diagnosis"]
    right = tmp_path / "right.json"
    right.write_text(json.dumps(hand.sheet(ONE, 2)), encoding="utf-8")
    only = json.loads(attntrace("check", right, problem, "--precision", "3", "--format", "json").out)
    assert only["mistakes"] == ["rounded to fewer decimals"]
