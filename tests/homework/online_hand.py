"""The online softmax and decoding worked by hand, as students and teachers do it, written without attntrace: Python's
decimal for the rounding, math for e^x. Each function can work on any honest rounding path, or make one classic
mistake, so that tests can hand check sheets that a teacher would pass or fail."""

from __future__ import annotations

import math
import random
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

MASKED = -math.inf


def rnd(x: float, places: int) -> float:
    """half away from zero, from the decimal a float shows (cut to 15 significant digits, as on a calculator)"""
    if not math.isfinite(x):
        return x
    return float(Decimal(format(x, ".15g")).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def d(x: float) -> Decimal:
    return Decimal(repr(float(x)))


def matmul_rounded(a: list[list[float]], b: list[list[float]], places: int) -> list[list[float]]:
    """a · b, each cell's sum exact and rounded once"""
    return [[rnd(float(sum((d(a[i][t]) * d(b[t][j]) for t in range(len(b))), Decimal(0))), places)
             for j in range(len(b[0]))] for i in range(len(a))]


def matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    """a · b exactly, as decimals, then as the nearest floats"""
    return [[float(sum((d(a[i][t]) * d(b[t][j]) for t in range(len(b))), Decimal(0))) for j in range(len(b[0]))]
            for i in range(len(a))]


def columns(m: list[list[float]], start: int, stop: int) -> list[list[float]]:
    return [row[start:stop] for row in m]


def head_scores(problem: dict[str, Any], head: int, places: int | None, divide: float | None = None
                ) -> tuple[list[list[float]], list[list[float]]]:
    """head's scaled scores [n][n] (masked: -inf) and values [n][d_v]: with places, the hand calculation with the
    rounding carried (Q, K, V, the scores and the scaled scores each rounded), else exact. divide: the scores divided by
    this instead of the problem's divisor (1 for the scaling forgotten)"""
    heads = problem.get("heads", 1)
    dk = len(problem["w_q"][0]) // heads
    dv = len(problem["w_v"][0]) // heads
    mul = (lambda a, b: matmul_rounded(a, b, places)) if places is not None else matmul
    q = columns(mul(problem["x"], problem["w_q"]), head * dk, (head + 1) * dk)
    k = columns(mul(problem["x"], problem["w_k"]), head * dk, (head + 1) * dk)
    v = columns(mul(problem["x"], problem["w_v"]), head * dv, (head + 1) * dv)
    scale = problem.get("scale", False)
    divisor = (math.sqrt(dk) if scale is True else 1.0) if divide is None else divide
    n = len(problem["x"])
    causal = "causal" in problem.get("mask", [])
    scaled = []
    for i in range(n):
        row = []
        for j in range(n):
            if causal and j > i:
                row.append(MASKED)
                continue
            if places is None:  # q and k are exact decimals here: the score too, then divided to many digits
                row.append(float(sum((d(a) * d(b) for a, b in zip(q[i], k[j])), Decimal(0)) / _divisor(divisor)))
            else:
                score = rnd(float(sum((d(a) * d(b) for a, b in zip(q[i], k[j])), Decimal(0))), places)
                row.append(rnd(float(d(score) / _divisor(divisor)), places))
        scaled.append(row)
    return scaled, v


def _divisor(divisor: float) -> Decimal:
    """√d_k to many digits (a whole number's root), so that score / √d_k is rounded from its true decimal"""
    square = round(divisor * divisor)
    return Decimal(square).sqrt() if abs(divisor * divisor - square) < 1e-9 else d(divisor)


# --- the online softmax ---

def flash_row(s: list[float], v: list[list[float]], block: int, places: int, sink: float | None = None,
              how: dict[str, Any] | None = None, mistake: str | None = None, rng: random.Random | None = None
              ) -> tuple[list[float | None], list[float], list[list[float]], list[float]]:
    """one query's recurrence, B keys at a time: m, ℓ, O after each block and the output. how: the rounding path
    (round_factor, round_exp, round_products: True, False or "random" per block; fold_sink: the sink added to ℓ
    at the last block); mistake: no_carry, no_rescale, no_rescale_l, no_rescale_o, normalised, no_division, no_sink,
    sink_valued"""
    how = how or {}
    rng = rng or random.Random(0)

    def choose(name: str) -> bool:
        value = how.get(name, False)
        return rng.random() < 0.5 if value == "random" else bool(value)

    def r(x: float) -> float:
        return rnd(x, places)

    m, ell, o = -math.inf, 0.0, [0.0] * len(v[0])
    ms: list[float | None] = []
    ls, os_ = [], []
    bounds = list(range(0, len(s), block))
    for index, start in enumerate(bounds):
        keys = [(x, v[j]) for j, x in enumerate(s[start:start + block], start) if x != MASKED]
        if keys:
            top = max(x for x, _v in keys)
            m_new = top if mistake == "no_carry" else max(m, top)
            factor = math.exp(m - m_new) if m != -math.inf else 0.0
            if choose("round_factor"):
                factor = r(factor)
            f_l = 1.0 if mistake in ("no_rescale", "no_rescale_l") and m != -math.inf else factor
            f_o = 1.0 if mistake in ("no_rescale", "no_rescale_o") and m != -math.inf else factor
            products = choose("round_products")
            p = [math.exp(x - m_new) for x, _v in keys]
            if choose("round_exp"):
                p = [r(x) for x in p]
            total = math.fsum(p)
            add = [math.fsum((r(pi * vv[c]) if products else pi * vv[c]) for pi, (_x, vv) in zip(p, keys))
                   for c in range(len(o))]
            if mistake == "normalised":
                add = [a / total for a in add]
            lf = r(ell * f_l) if products else ell * f_l
            ell = r(lf + total)
            o = [r((r(oc * f_o) if products else oc * f_o) + a) for oc, a in zip(o, add)]
            m = m_new
        if sink is not None and index == len(bounds) - 1 and how.get("fold_sink") and mistake != "no_sink" and (
                m != -math.inf):
            ell = r(ell + math.exp(sink - m))
        ms.append(None if m == -math.inf else m)
        ls.append(ell)
        os_.append(list(o))
    if mistake == "no_division":
        out = [r(x) for x in o]
    else:
        denominator = ell
        if sink is not None and not how.get("fold_sink") and mistake != "no_sink":
            denominator = ell + math.exp(sink - m) if m != -math.inf else math.inf
        if mistake == "sink_valued" and sink is not None and m != -math.inf:  # the sink taken for token 1
            o = [x + math.exp(sink - m) * v[0][c] for c, x in enumerate(o)]
        out = [r(x / denominator) if denominator else 0.0 for x in o]
    return ms, ls, os_, out


def flash_true(s: list[float], v: list[list[float]], block: int, places: int, sink: float | None
               ) -> tuple[list[float | None], list[float], list[list[float]], list[float]]:
    """the recurrence unrounded, from the true scores and values, each cell then rounded: the true values rounded"""
    m, ell, o = -math.inf, 0.0, [0.0] * len(v[0])
    ms: list[float | None] = []
    ls, os_ = [], []
    for start in range(0, len(s), block):
        keys = [(x, v[j]) for j, x in enumerate(s[start:start + block], start) if x != MASKED]
        if keys:
            m_new = max(m, max(x for x, _v in keys))
            factor = math.exp(m - m_new) if m != -math.inf else 0.0
            p = [math.exp(x - m_new) for x, _v in keys]
            ell = ell * factor + math.fsum(p)
            o = [oc * factor + math.fsum(pi * vv[c] for pi, (_x, vv) in zip(p, keys)) for c, oc in enumerate(o)]
            m = m_new
        ms.append(None if m == -math.inf else rnd(m, places))
        ls.append(rnd(ell, places))
        os_.append([rnd(x, places) for x in o])
    denominator = ell + (math.exp(sink - m) if sink is not None and m != -math.inf else 0.0)
    out = [rnd(x / denominator, places) if denominator else 0.0 for x in o]
    return ms, ls, os_, out


# --- decoding ---

def kept(t: int, window: int | None, sinks: int) -> list[int]:
    """the positions (from 1) in the cache after step t, in slot order: a rolling buffer of the last W after S sinks"""
    slots: list[int] = []
    for position in range(1, t + 1):
        if window is None or position <= sinks or len(slots) < sinks + window:
            slots.append(position)
        else:
            oldest = min(range(sinks, len(slots)), key=lambda i: slots[i])
            slots[oldest] = position
    return slots


def decode_step(logits: list[float], v: list[list[float]], cache: list[int], places: int, sink: float | None,
                how: dict[str, Any] | None = None, mistake: str | None = None) -> tuple[list[float], list[float]]:
    """the weights over the cache (slot order) and the output of one step. how: round_exp (each e^(s - m) rounded
    before the sum), round_products (each w · v rounded before the sum); mistake: no_sink, sink_valued"""
    how = how or {}
    z = [logits[p - 1] for p in cache]
    use_sink = sink is not None and mistake != "no_sink"
    top = max(z + ([sink] if use_sink else []))  # type: ignore[list-item]
    e = [math.exp(x - top) for x in z]
    e_sink = math.exp(sink - top) if use_sink else 0.0  # type: ignore[operator]
    if how.get("round_exp"):
        e, e_sink = [rnd(x, places) for x in e], rnd(e_sink, places)
    total = math.fsum(e) + e_sink
    weights = [rnd(x / total, places) for x in e]
    products = [[(rnd(w * v[p - 1][c], places) if how.get("round_products") else w * v[p - 1][c])
                 for w, p in zip(weights, cache)] for c in range(len(v[0]))]
    out = [math.fsum(col) for col in products]
    if mistake == "sink_valued":
        out = [x + (1 - math.fsum(weights)) * v[0][c] for c, x in enumerate(out)]
    return weights, [rnd(x, places) for x in out]
