"""An independent attention written with plain loops, to check the engine against."""

from __future__ import annotations

import math

import numpy as np


def loops(x, w_q, w_k, w_v, *, source=None, b_q=None, b_k=None, b_v=None, heads=1, w_o=None, b_o=None,
          divisor=None, allowed=None):
    """softmax(Q K^T / s) V head by head, query by query, key by key: no shared code with the engine"""
    kv = x if source is None else source
    q_full = x @ w_q + (0 if b_q is None else b_q)
    k_full = kv @ w_k + (0 if b_k is None else b_k)
    v_full = kv @ w_v + (0 if b_v is None else b_v)
    d_k = q_full.shape[1] // heads
    d_v = v_full.shape[1] // heads
    s = math.sqrt(d_k) if divisor is None else divisor
    n, m = len(x), len(kv)
    outs = []
    for a in range(heads):
        q = q_full[:, a * d_k:(a + 1) * d_k]
        k = k_full[:, a * d_k:(a + 1) * d_k]
        v = v_full[:, a * d_v:(a + 1) * d_v]
        out = np.zeros((n, d_v))
        for i in range(n):
            keys = [j for j in range(m) if allowed is None or allowed[i][j]]
            if not keys:
                continue
            z = [sum(q[i, c] * k[j, c] for c in range(d_k)) / s for j in keys]
            top = max(z)
            e = [math.exp(t - top) for t in z]
            total = sum(e)
            for j, ej in zip(keys, e):
                out[i] += ej / total * v[j]
        outs.append(out)
    concat = np.concatenate(outs, axis=1)
    if w_o is not None:
        concat = concat @ w_o + (0 if b_o is None else b_o)
    return concat
