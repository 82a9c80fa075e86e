"""A student's hand calculation, with Python's decimal rounding and plain numpy: no code shared with attntrace.

`sheet(P, p, **mistake)` fills in an answer sheet for the problem dict P at p decimals (None: exact), with the rounding
carried (as by hand) or not, under a wrong convention if asked, or with one cell slipped and carried on.
"""

from __future__ import annotations

import itertools
import math
from decimal import ROUND_HALF_UP, Decimal

import numpy as np

STEPS = ("q", "k", "v", "scores", "scaled", "weights", "output")


def rnd(a, p):
    """half away from zero at p decimals, after cutting the float to 10 decimals; p None: unchanged"""
    if p is None:
        return np.asarray(a, dtype=float)

    def one(v):
        if not np.isfinite(v):
            return v
        return float(Decimal(repr(round(float(v), 10))).quantize(Decimal(1).scaleb(-p), ROUND_HALF_UP)) + 0.0

    return np.vectorize(one, otypes=[float])(np.asarray(a, dtype=float))


def _softmax(z, axis):
    """z with -inf where masked; a fully masked line is all zeros"""
    top = np.max(z, axis=axis, keepdims=True)
    e = np.exp(z - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def sheet(P, p=None, *, carried=True, divisor=None, mask=None, axis=1, qk_weights="right", scores="qk",
          transposed=(), interleaved=False, use_wo=True, order=None, slip=None, output_with="v", transpose_weights=False):
    """the answer sheet as a dict in the --format json layout (nulls for masked scaled cells)

    mask: None (the problem's), "none", "inverted" or "transposed"; qk_weights: "right" or "swapped" (Q = X W_K and
    K = X W_Q); scores: "qk", "kq" (transposed) or "kk"; transposed: weight names computed as x · W^T; order: the heads'
    order in the concatenation; slip: (head from 1 or None, key, row, column, amount) added after computing that cell;
    output_with: "v", or "k" (the output taken as weights · K); transpose_weights: the output as weights^T · V.
    """
    c = (lambda a: rnd(a, p)) if carried else (lambda a: np.asarray(a, dtype=float))
    x = np.array(P["x"], float)
    w = {k: np.array(P[k], float) for k in ("w_q", "w_k", "w_v")}
    for name in transposed:
        w[name] = w[name].T
    if qk_weights == "swapped":
        w["w_q"], w["w_k"] = w["w_k"], w["w_q"]
    h = P.get("heads", 1)
    n = len(x)
    keep = np.tril(np.ones((n, n), bool)) if P.get("mask") == "causal" else np.ones((n, n), bool)
    if P.get("mask") == "causal":
        keep = {None: keep, "none": np.ones((n, n), bool), "inverted": ~keep, "transposed": keep.T}[mask]
    full = {k: x @ w[k] for k in w}

    def slipped(head, key, a):
        if slip is not None and slip[0] == head and slip[1] == key:
            a = a.copy()
            a[slip[2], slip[3]] += slip[4]
        return a

    heads = []
    for a in range(h):
        def cols(m, a=a):
            size = m.shape[1] // h
            return m[:, a::h] if interleaved else m[:, a * size:(a + 1) * size]

        q, k, v = (slipped(a + 1, key, c(cols(full["w_" + key]))) for key in ("q", "k", "v"))
        d_k = q.shape[1]
        raw = {"qk": q @ k.T, "kq": k @ q.T, "kk": k @ k.T}[scores]
        s = slipped(a + 1, "scores", c(raw))
        s_div = math.sqrt(d_k) if P.get("scale", True) is True else 1.0
        if divisor is not None:
            s_div = divisor(d_k, x.shape[1])
        scaled = slipped(a + 1, "scaled", np.where(keep, c(s / s_div) if s_div != 1.0 else s, -np.inf))
        weights = slipped(a + 1, "weights", c(_softmax(scaled, axis)))
        ww, vv = (weights.T if transpose_weights else weights), {"v": v, "k": k}[output_with]
        out = ww @ vv if not carried or p is None else c(c(ww[:, :, None] * vv[None]).sum(axis=1))
        out = slipped(a + 1, "output", out)
        heads.append({"q": q, "k": k, "v": v, "scores": s, "scaled": scaled, "weights": weights, "output": out})
    concat = np.hstack([heads[i]["output"] for i in (order or range(h))])
    final = c(concat @ np.array(P["w_o"], float)) if "w_o" in P and use_wo else concat
    final = slipped(None, "output", final)

    def cells(m):
        m = rnd(m, p)
        return [[None if not np.isfinite(v) else float(v) for v in row] for row in m]

    return {"heads": [{"head": i + 1, **{key: cells(t[key]) for key in STEPS}} for i, t in enumerate(heads)],
            "output": cells(final)}


def orders(h):
    return [o for o in itertools.permutations(range(h)) if o != tuple(range(h))]
