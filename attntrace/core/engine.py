"""The eight steps of self-attention, computed: trace(problem) -> Trace. Pure numpy, no printing; words only in its errors."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from attntrace.core.maths import (
    attention,
    carried_affine,
    carried_attention,
    carried_quotient,
    carried_sum,
    round_half_up,
    softmax,
)
from attntrace.core.overflow import Cells
from attntrace.core.problem import Dims, Problem, check_memory, dims, divisor
from attntrace.core.trace import HeadTrace, SelfCheck, Trace, read_only, weighted_values
from attntrace.errors import AttntraceError, OutOfRange
from attntrace.language import N_, _


def trace(problem: Problem, *, query: int | None = None, show: Iterable[int] | None = None,
          decimals: int | None = None) -> Trace:
    """trace every input, or only input `query` (from 1) at O(n*d) cost.

    show: the rows (from 0) a reader walks through one by one; step 8 recomputes each of them on its own
    (default: every traced row). The trace keeps them as self_check.rows.
    decimals: round every intermediate to this many decimals and carry it on, as a hand calculation does: the
    products, sums and quotients of the decimals shown are exact and rounded half away from zero (maths.carried_*).
    Every intermediate is a finite number, or the trace raises an AttntraceError naming the step, the cell and why.
    """
    d = dims(problem)
    if query is not None and not 1 <= query <= d.n:
        raise OutOfRange(N_("query"), query, d.n, N_("this problem has inputs"))
    if decimals is not None and decimals < 0:
        raise AttntraceError(_("decimals = {decimals} must be 0 or more").format(decimals=decimals))
    with np.errstate(all="ignore"):  # an overflow is found by the checks below and said in words, never warned of
        return _trace(problem, d, query, show, decimals)


def _trace(problem: Problem, d: Dims, query: int | None, show: Iterable[int] | None, decimals: int | None) -> Trace:
    rows = np.arange(d.n) if query is None else np.array([query - 1])  # [n_q] the query rows traced
    check_memory(len(rows), d.m, d.d_model, d.d_src, d.d_k * d.heads, d.d_v * d.heads, d.heads, d.d_out)
    shown = None if show is None else set(show)
    checked = [j for j, i in enumerate(rows.tolist()) if shown is None or i in shown]  # indices into rows
    say = Cells(problem, d, rows)

    x = problem.x[rows]  # [n_q, d_model]
    kv = problem.kv_input  # [m, d_src]: X again, or the source in cross-attention
    q_all = read_only(_project(x, problem.w_q, problem.b_q, decimals))  # [n_q, d_model] @ [d_model, heads*d_k] -> [n_q, heads*d_k]
    k_all = read_only(_project(kv, problem.w_k, problem.b_k, decimals))  # [m, d_src] @ [d_src, heads*d_k] -> [m, heads*d_k]
    v_all = read_only(_project(kv, problem.w_v, problem.b_v, decimals))  # [m, d_src] @ [d_src, heads*d_v] -> [m, heads*d_v]
    say.projected("q", x, problem.w_q, problem.b_q, q_all)
    say.projected("k", kv, problem.w_k, problem.b_k, k_all)
    say.projected("v", kv, problem.w_v, problem.b_v, v_all)
    s = divisor(problem, d.d_k)
    rope, cap = problem.rope, problem.softcap
    if problem.mask or rope is not None or problem.alibi or cap is not None:  # imported only when a problem needs them
        from attntrace.core import masks, variants
    allowed = masks.allowed(problem.mask, rows, d.m) if problem.mask else None  # [n_q, m], None when nothing is masked
    if rope is not None:  # [n_q, d_k/2] and [m, d_k/2]: the angle each pair of q_i and k_j turns by
        q_positions = np.arange(d.n, dtype=np.float64) if rope.positions is None else np.array(rope.positions)
        k_positions = q_positions if problem.source is None else np.array(rope.source_positions)
        turns = rope.pair_frequencies(d.d_k)
        q_angles, k_angles = variants.angles(q_positions[rows], turns), variants.angles(k_positions, turns)
    slopes = variants.alibi_slopes(d.heads) if problem.alibi else None

    heads = []
    worst = 0.0
    for a in range(d.heads):
        g = d.kv_block(a)  # the key/value block this head reads
        qs, ks, vs = (slice(a * d.d_k, (a + 1) * d.d_k), slice(g * d.d_k, (g + 1) * d.d_k),
                      slice(g * d.d_v, (g + 1) * d.d_v))  # this head's columns
        q, k, v = q_all[:, qs], k_all[:, ks], v_all[:, vs]  # [n_q, d_k], [m, d_k], [m, d_v]
        q_rotated = k_rotated = bias = uncapped = None
        if rope is not None:  # [n_q, d_k], [m, d_k]: each pair turned by its position's angle
            q_rotated = _rounded(variants.rotate(q, q_angles, rope.pairs), decimals)
            k_rotated = _rounded(variants.rotate(k, k_angles, rope.pairs), decimals)
            say.finite(3, a, "q rotated", q_rotated, N_("a rotation of finite numbers"))
        q_used = q if q_rotated is None else q_rotated
        k_used = k if k_rotated is None else k_rotated
        scores = q_used @ k_used.T if decimals is None else carried_affine(q_used, k_used.T, None, decimals)  # [n_q, m]
        say.scores(a, q_used, k_used, scores)
        if s != 1.0:
            scaled = scores / s if decimals is None else carried_quotient(scores, s, decimals)  # [n_q, m]
            say.scaled(a, scores, s, scaled, allowed)
        else:
            scaled = scores
        if slopes is not None:  # [n_q, m] -slope_a · |i - j|
            bias = _rounded(variants.alibi_bias(float(slopes[a]), rows, d.m), decimals)
            scaled = scaled + bias if decimals is None else carried_sum(np.stack([scaled, bias], axis=-1), -1, decimals)
        if cap is not None:  # [n_q, m] c · tanh(z / c)
            uncapped = scaled
            scaled = _rounded(variants.softcap(scaled, cap), decimals)
        weights = softmax(scaled, allowed)  # [n_q, m] -> [n_q, m], each row summing to 1 (or all 0 if masked)
        if decimals is not None:
            weights = round_half_up(weights, decimals)  # e^z is transcendental: float64, its result rounded exactly
        say.finite(5, a, "weights", weights, N_("the softmax of finite scores"))
        if allowed is not None:
            scaled = np.where(allowed, scaled, -np.inf)  # [n_q, m], -inf where masked
            uncapped = None if uncapped is None else np.where(allowed, uncapped, -np.inf)
        if decimals is None:
            output = weights @ v  # [n_q, m] @ [m, d_v] -> [n_q, d_v]
        else:  # [n_q, m, d_v] -> [n_q, d_v]: each product rounded, then summed and rounded, by hand
            output = carried_sum(weighted_values(weights, v, decimals), 1, decimals)
        say.output(a, weights, v, output)
        for j in checked:  # step 8: each shown row recomputed on its own, q_i against every k_j, rounded as the rest
            row_allowed = None if allowed is None else allowed[j:j + 1]
            row_bias = None if bias is None else bias[j:j + 1]
            alone = (attention(q_used[j:j + 1], k_used, v, s, row_allowed, row_bias, cap) if decimals is None
                     else carried_attention(q_used[j:j + 1], k_used, v, s, row_allowed, decimals, row_bias, cap))
            say.checked(int(rows[j]), alone)
            worst = max(worst, _max_diff(output[j:j + 1], alone))
        heads.append(HeadTrace(
            w_q=_weight_columns(problem.w_q, qs), w_k=_weight_columns(problem.w_k, ks), w_v=_weight_columns(problem.w_v, vs),
            b_q=_bias_part(problem.b_q, qs), b_k=_bias_part(problem.b_k, ks), b_v=_bias_part(problem.b_v, vs),
            q=q, k=k, v=v, scores=scores, scaled=scaled, weights=weights, output=output,
            q_rotated=q_rotated, k_rotated=k_rotated, bias=bias, uncapped=uncapped,
            kv_head=g if d.kv_heads != d.heads else None,
        ))

    concat = np.concatenate([h.output for h in heads], axis=1) if d.heads > 1 else heads[0].output  # [n_q, heads*d_v]
    if problem.w_o is None:
        output = concat  # the heads' concatenation is the output
    else:
        output = _project(concat, problem.w_o, problem.b_o, decimals)  # [n_q, heads*d_v] @ [heads*d_v, d_out] -> [n_q, d_out]
        say.final(concat, problem.w_o, problem.b_o, output)
    scale_v = max(1.0, float(np.max(np.abs(v_all))) if v_all.size else 1.0)
    tolerance = 1e-9 * scale_v
    from_exact = None if decimals is None else _max_diff(output, _trace(problem, d, query, show, None).output)
    return Trace(
        problem=problem, dims=d, query=query, rows=tuple(int(i) for i in rows), divisor=s, allowed=allowed,
        heads=tuple(heads), concat=concat, output=output,
        self_check=SelfCheck(worst, tolerance, tuple(int(rows[j]) for j in checked), from_exact), decimals=decimals,
        fully_masked=_fully_masked(rows, allowed),
    )


def _rounded(values: np.ndarray, decimals: int | None) -> np.ndarray:
    """a transcendental step's result (a rotation, a tanh, an ALiBi slope), rounded when rounding is carried"""
    return values if decimals is None else round_half_up(values, decimals)


def _project(inp: np.ndarray, w: np.ndarray | None, b: np.ndarray | None, decimals: int | None) -> np.ndarray:
    """inp · W + b, where a missing W is the identity; always a new array, never the problem's own.
    With decimals, each cell is computed exactly from the decimals shown and rounded, as on paper."""
    if decimals is not None:
        return carried_affine(inp, w, b, decimals)
    out = inp.copy() if w is None else inp @ w  # [rows, d_in] @ [d_in, d_out] -> [rows, d_out]
    return out if b is None else out + b  # + [d_out]


def _weight_columns(w: np.ndarray | None, cols: slice) -> np.ndarray | None:
    """one head's block of a weight matrix's columns; a missing W (the identity) stays missing"""
    return None if w is None else w[:, cols]


def _bias_part(b: np.ndarray | None, cols: slice) -> np.ndarray | None:
    """one head's block of a bias"""
    return None if b is None else b[cols]


def _max_diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def _fully_masked(rows: np.ndarray, allowed: np.ndarray | None) -> tuple[int, ...]:
    """the rows (from 0) with no key left to attend to: a fact the view words as a warning"""
    if allowed is None:
        return ()
    return tuple(int(i) for i, row in zip(rows.tolist(), allowed) if not row.any())
