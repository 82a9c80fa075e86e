"""A layer's attention output computed straight from its Problem, with the engine's own maths but none of its
intermediates: the forward pass through the layers before the one traced, where nothing is shown."""

from __future__ import annotations

import numpy as np

from attntrace.core import masks
from attntrace.core.maths import attention
from attntrace.core.problem import Problem, divisor
from attntrace.core.variants import alibi_bias, alibi_slopes, angles, rotate


def project(inp: np.ndarray, w: np.ndarray | None, b: np.ndarray | None) -> np.ndarray:
    """inp · W + b: [rows, d_in] @ [d_in, d_out] -> [rows, d_out]; W held transposed (out x in, as nn.Linear stores
    it) is multiplied in that layout, which BLAS reads faster"""
    if w is None:
        out = inp.copy()
    elif w.flags.f_contiguous and not w.flags.c_contiguous:
        out = (w.T @ inp.T).T
    else:
        out = inp @ w
    return out if b is None else out + b


def attend(problem: Problem) -> np.ndarray:
    """[n, d_out]: what trace(problem).output holds (self-attention), every head at once"""
    d = problem.dims
    x = problem.x
    q_all = project(x, problem.w_q, problem.b_q)  # [n, heads * d_k]
    k_all = project(x, problem.w_k, problem.b_k)  # [n, kv_heads * d_k]
    v_all = project(x, problem.w_v, problem.b_v)  # [n, kv_heads * d_v]
    rows = np.arange(d.n)
    allowed = masks.allowed(problem.mask, rows, d.m)  # [n, n] or None
    s = divisor(problem, d.d_k)
    rope = problem.rope
    theta = None
    if rope is not None:  # [n, d_k / 2] the angle each pair turns by at each position
        theta = angles(np.arange(d.n, dtype=np.float64) if rope.positions is None else np.array(rope.positions),
                       rope.pair_frequencies(d.d_k))
    slopes = alibi_slopes(d.heads) if problem.alibi else None
    outputs = []
    for a in range(d.heads):
        g = d.kv_block(a)
        q = q_all[:, a * d.d_k:(a + 1) * d.d_k]  # [n, d_k]
        k = k_all[:, g * d.d_k:(g + 1) * d.d_k]  # [n, d_k]
        v = v_all[:, g * d.d_v:(g + 1) * d.d_v]  # [n, d_v]
        if rope is not None and theta is not None:
            q, k = rotate(q, theta, rope.pairs), rotate(k, theta, rope.pairs)
        bias = None if slopes is None else alibi_bias(float(slopes[a]), rows, d.m)
        outputs.append(attention(q, k, v, s, allowed, bias, problem.softcap))  # [n, d_v]
    concat = np.concatenate(outputs, axis=1)  # [n, heads * d_v]
    return project(concat, problem.w_o, problem.b_o) if problem.w_o is not None else concat
