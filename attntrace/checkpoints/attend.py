"""A layer's attention output computed straight from its Problem, with the trace's own attention but none of its
intermediates kept: the forward pass through the layers before the one traced, where nothing is shown."""

from __future__ import annotations

import numpy as np

from attntrace.core import masks
from attntrace.core.attention import heads
from attntrace.core.problem import Problem, divisor


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
    outputs = [head.attended.output for head in heads(problem, d, rows, q_all, k_all, v_all, allowed,
                                                      divisor(problem, d.d_k))]  # [n, d_v] each
    concat = np.concatenate(outputs, axis=1)  # [n, heads * d_v]
    return project(concat, problem.w_o, problem.b_o) if problem.w_o is not None else concat
