"""Online-softmax and decoding sheets marked as a teacher marks them, on random problems worked by hand without
attntrace (online_hand.py): the key passes, the true values rounded pass, every honest rounding path passes, and each
classic mistake fails and is named."""

from __future__ import annotations

import math
import random
from typing import Any

from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from attntrace.files.problemfile import from_dict as problem_from_dict
from attntrace.homework.kinds import Marker
from attntrace.homework.results import Rule
from attntrace.homework.sheet import from_dict as sheet_from_dict
from tests.homework import online_hand as hand

PROPERTY = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                    phases=[Phase.explicit, Phase.reuse, Phase.generate])  # a failure is shown as drawn


@st.composite
def problems(draw: st.DrawFn, causal: bool | None = None, sink: bool | None = None) -> dict[str, Any]:
    """a small problem with one-decimal numbers: 2 to 5 tokens, one or two heads, scaled or not, causal or not, with
    a learned sink or not"""
    heads = draw(st.integers(1, 2))
    n, d_model = draw(st.integers(2, 5)), draw(st.integers(2, 4))
    dk, dv = heads * draw(st.integers(1, 3)), heads * draw(st.integers(1, 2))

    def matrix(rows: int, cols: int) -> list[list[float]]:
        return [[draw(st.integers(-15, 15)) / 10 for _ in range(cols)] for _ in range(rows)]

    problem: dict[str, Any] = {"name": "drawn", "x": matrix(n, d_model), "w_q": matrix(d_model, dk),
                               "w_k": matrix(d_model, dk), "w_v": matrix(d_model, dv), "heads": heads,
                               "scale": draw(st.booleans())}
    if causal if causal is not None else draw(st.booleans()):
        problem["mask"] = ["causal"]
    if sink if sink is not None else draw(st.booleans()):
        problem["sink"] = [draw(st.integers(-10, 20)) / 10 for _ in range(heads)]
    return problem


def _mark(problem: dict[str, Any], sheet: dict[str, Any]) -> Any:
    marker = Marker(problem_from_dict(problem, "drawn.json"), "drawn.json")
    return marker.mark(sheet_from_dict(sheet, "sheet.json"), Rule())


def _given(problem: dict[str, Any], a: int, places: int, source: str, mistake: str | None) -> tuple[Any, Any, Any]:
    """head a's sink, and the scores and values a student works from: the handout's (source "carried", divided as the
    mistake divides them) or the true ones rounded"""
    sink = problem["sink"][a] if "sink" in problem else None
    divide = 1.0 if mistake == "unscaled" else math.sqrt(len(problem["w_q"][0]) // problem["heads"]) if (
        mistake == "scaled_when_none") else None
    if source == "carried":
        return (sink, *hand.head_scores(problem, a, places, divide))
    exact_s, exact_v = hand.head_scores(problem, a, None, divide)
    return sink, [[hand.rnd(x, places) for x in row] for row in exact_s], [[hand.rnd(x, places) for x in row]
                                                                          for row in exact_v]


def _flash_sheet(problem: dict[str, Any], block: int, places: int, source: str = "carried",
                 how: dict[str, Any] | None = None, mistake: str | None = None, seed: int = 0) -> dict[str, Any]:
    """a whole flash sheet worked by hand from the handout's scores (source "carried"), the true ones rounded
    ("rounded"), or the true values rounded at every cell ("true")"""
    rng = random.Random(seed)
    heads = []
    for a in range(problem["heads"]):
        if source == "true":
            sink = problem["sink"][a] if "sink" in problem else None
            s, v = hand.head_scores(problem, a, None)
            rows = [hand.flash_true(row, v, block, places, sink) for row in s]
        else:
            sink, s, v = _given(problem, a, places, source, mistake)
            flash_mistake = None if mistake in ("unscaled", "scaled_when_none") else mistake
            rows = [hand.flash_row(row, v, block, places, sink, how, flash_mistake, rng) for row in s]
        heads.append({"head": a + 1, "flash_m": [r[0] for r in rows], "flash_l": [r[1] for r in rows],
                      "flash_o": [r[2] for r in rows], "flash_output": [r[3] for r in rows]})
    return {"precision": places, "block": block, "heads": heads}


PATHS = [{}, {"round_factor": True}, {"round_exp": True, "round_products": True}, {"round_products": True},
         {"round_factor": "random", "round_exp": "random", "round_products": "random"}]


@PROPERTY
@given(problems(), st.integers(1, 5), st.integers(1, 4), st.integers(0, 1000))
def test_every_honest_flash_sheet_passes(problem, block, places, seed):
    block = min(block, len(problem["x"]))
    for source in ("carried", "rounded", "true"):
        for how in PATHS if source != "true" else [{}]:
            report = _mark(problem, _flash_sheet(problem, block, places, source, how, seed=seed))
            assert report.passed, (source, how, [(i.name, i.verdict, [(c.name, c.given, c.expected) for c in i.off])
                                                 for i in report.items])
    if "sink" in problem:
        report = _mark(problem, _flash_sheet(problem, block, places, "carried", {"fold_sink": True}))
        assert report.passed


FLASH_MISTAKES = {"no_carry": "maximum not carried", "no_rescale": "rescale factor forgotten",
                  "no_rescale_l": "rescale factor forgotten", "no_rescale_o": "rescale factor forgotten",
                  "normalised": "normalised per block", "no_division": "division by ℓ forgotten",
                  "no_sink": "sink left out", "sink_valued": "sink given a value", "unscaled": "scaling forgotten",
                  "scaled_when_none": "scaled when not asked"}


def _far(a: Any, b: Any, places: int) -> bool:
    """whether two sheets' numbers differ somewhere by 5 units of the last decimal or more"""
    if isinstance(a, dict):
        return any(_far(a[k], b[k], places) for k in a if k != "head")
    if isinstance(a, list):
        return any(_far(x, y, places) for x, y in zip(a, b))
    if a is None or b is None:
        return a is not b
    return abs(a - b) >= 5 * 10.0 ** -places


@PROPERTY
@given(problems(), st.integers(1, 3), st.integers(1, 3), st.sampled_from(sorted(FLASH_MISTAKES)))
def test_each_flash_mistake_fails_and_is_named(problem, block, places, mistake):
    block = min(block, len(problem["x"]) - 1)
    assume(mistake not in ("no_sink", "sink_valued") or "sink" in problem)
    assume(mistake != "unscaled" or problem["scale"] is True)
    assume(mistake != "scaled_when_none" or problem["scale"] is False)
    right = _flash_sheet(problem, block, places)
    wrong = _flash_sheet(problem, block, places, mistake=mistake)
    assume(_far(right["heads"], wrong["heads"], places))
    if "sink" in problem:  # a last ℓ that the sink, added to it at once, would give too is no mistake proved
        folded = _flash_sheet(problem, block, places, how={"fold_sink": True})
        assume(all(w["flash_l"][r][-1] != f["flash_l"][r][-1] for w, f in zip(wrong["heads"], folded["heads"])
                   for r in range(len(w["flash_l"]))))
    report = _mark(problem, wrong)
    assert not report.passed
    first = next(a for a, (w, r) in enumerate(zip(wrong["heads"], right["heads"])) if w != r)
    alike = {FLASH_MISTAKES[other] for other in FLASH_MISTAKES  # numbers that two mistakes give alike prove neither
             if _flash_sheet(problem, block, places, mistake=other)["heads"][first] == wrong["heads"][first]}
    assert alike & set(report.mistakes), (mistake, report.diagnosis, [
        (i.name, i.verdict, [(c.name, c.given, c.expected) for c in i.off]) for i in report.items])


def _decode_sheet(problem: dict[str, Any], places: int, window: int | None, sinks: int, source: str = "carried",
                  how: dict[str, Any] | None = None, mistake: str | None = None) -> dict[str, Any]:
    """a whole decoding sheet worked by hand from the handout's logits"""
    n = len(problem["x"])
    heads = []
    for a in range(problem["heads"]):
        sink, s, v = _given(problem, a, places, source, mistake)
        caches, weights, outputs = [], [], []
        for t in range(1, n + 1):
            if mistake == "new_token":
                cache = [p for p in hand.kept(t, window, sinks) if p != t] or [max(1, t - 1)]
            elif mistake == "window_long":
                cache = hand.kept(t, window + 1 if window else None, sinks)
            elif mistake == "sinks_dropped":
                cache = hand.kept(t, window, 0)
            else:
                cache = hand.kept(t, window, sinks)
            w, o = hand.decode_step(s[t - 1], v, cache, places, sink, how,
                                    mistake if mistake in ("no_sink", "sink_valued") else None)
            caches.append(cache)
            weights.append(w)
            outputs.append(o)
        heads.append({"head": a + 1, "decode_cache": caches, "decode_weights": weights, "decode_output": outputs})
    return {"precision": places, "window": window, "sinks": sinks, "heads": heads}


@st.composite
def cache_settings(draw: st.DrawFn, n: int) -> tuple[int | None, int]:
    window = draw(st.one_of(st.none(), st.integers(1, max(1, n - 1))))
    sinks = draw(st.integers(0, max(0, n - 1 - (window or n)))) if window is not None else 0
    return window, sinks


@PROPERTY
@given(st.data(), problems(causal=True), st.integers(1, 4))
def test_every_honest_decoding_sheet_passes(data, problem, places):
    window, sinks = data.draw(cache_settings(len(problem["x"])))
    for source in ("carried", "rounded"):
        for how in ({}, {"round_products": True}, {"round_exp": True}, {"round_exp": True, "round_products": True}):
            report = _mark(problem, _decode_sheet(problem, places, window, sinks, source, how))
            assert report.passed, (source, how, [(i.name, i.verdict, [(c.name, c.given, c.expected) for c in i.off])
                                                 for i in report.items])


DECODE_MISTAKES = {"new_token": "new token left out", "window_long": "window off by one",
                   "sinks_dropped": "sink tokens dropped", "no_sink": "sink left out",
                   "sink_valued": "sink given a value", "unscaled": "scaling forgotten",
                   "scaled_when_none": "scaled when not asked"}


@PROPERTY
@given(st.data(), problems(causal=True), st.integers(1, 3), st.sampled_from(sorted(DECODE_MISTAKES)))
def test_each_decoding_mistake_fails_and_is_named(data, problem, places, mistake):
    window, sinks = data.draw(cache_settings(len(problem["x"])))
    assume(mistake not in ("no_sink", "sink_valued") or "sink" in problem)
    assume(mistake != "window_long" or window is not None)
    assume(mistake != "sinks_dropped" or sinks > 0)
    assume(mistake != "unscaled" or problem["scale"] is True)
    assume(mistake != "scaled_when_none" or problem["scale"] is False)
    right = _decode_sheet(problem, places, window, sinks)
    wrong = _decode_sheet(problem, places, window, sinks, mistake=mistake)
    assume(right["heads"] != wrong["heads"])
    assume(mistake.startswith(("new", "window", "sinks")) or _far(right["heads"], wrong["heads"], places))
    report = _mark(problem, wrong)
    assert not report.passed
    assert DECODE_MISTAKES[mistake] in report.mistakes, (mistake, report.diagnosis, [
        (i.name, i.verdict, [(c.name, c.given, c.expected) for c in i.off]) for i in report.items])


@PROPERTY
@given(st.data(), problems(), st.integers(1, 5), st.integers(0, 6))
def test_the_tools_own_keys_pass(data, problem, block, places):
    """the keys the worksheets print pass check, for every problem, block size, window, sinks and precision"""
    from attntrace.core.engine import trace
    from attntrace.homework import decodesheet, flashsheet

    p = problem_from_dict(problem, "drawn.json")
    block = min(block, len(problem["x"]))
    key = flashsheet.answer_sheet(trace(p, carry_rounding=places), block, blank=False, precision=places)
    assert _mark(problem, key).passed
    if "mask" in problem:
        window, sinks = data.draw(cache_settings(len(problem["x"])))
        key = decodesheet.answer_sheet(p, window, sinks, blank=False, precision=places)
        assert _mark(problem, key).passed
