"""The eight steps of self-attention, computed: trace(problem) -> Trace. Pure numpy, no printing; words only in its errors."""

from __future__ import annotations

import numpy as np

from attntrace.core import masks
from attntrace.core.arithmetic import EXACT, Exact, arithmetic
from attntrace.core.attention import heads
from attntrace.core.overflow import Cells
from attntrace.core.problem import Dims, Problem, dims, divisor
from attntrace.core.trace import HeadTrace, SelfCheck, Trace, read_only
from attntrace.errors import OutOfRange, whole
from attntrace.language import N_

CHECK_ALL_UP_TO = 16  # step 8 recomputes every row of a problem this small; of a larger one, the first 3 and the last


def checked_rows(n: int) -> list[int]:
    """the inputs (from 0) step 8 recomputes on their own in a trace of every input: all of a small problem, the
    first three and the last of a larger one (what a reader walks through)"""
    if n <= CHECK_ALL_UP_TO:
        return list(range(n))
    return [0, 1, 2, n - 1]


def trace(problem: Problem, *, query: int | None = None, carry_rounding: int | None = None) -> Trace:
    """trace every input, or only input `query` (from 1) at O(n*d) cost.

    carry_rounding: round every intermediate to this many decimals and carry it on, as a hand calculation does: the
    products, sums and quotients of the decimals shown are exact and rounded half away from zero (arithmetic.Carried).
    Step 8 recomputes the traced input, or checked_rows(n), each on its own.
    Every intermediate is a finite number, or the trace raises an AttntraceError naming the step, the cell and why.
    """
    d = dims(problem)
    query, carry_rounding = whole("query", query), whole("carry_rounding", carry_rounding, 0)
    if query is not None and not 1 <= query <= d.n:
        raise OutOfRange(N_("query"), query, d.n, N_("this problem has inputs"))
    with np.errstate(all="ignore"):  # an overflow is found by the checks below and said in words, never warned of
        return _trace(problem, d, query, arithmetic(carry_rounding))


def _trace(problem: Problem, d: Dims, query: int | None, calc: Exact) -> Trace:
    rows = np.arange(d.n) if query is None else np.array([query - 1])  # [n_q] the query rows traced
    checked = list(range(len(rows))) if query is not None else checked_rows(d.n)  # indices into rows
    say = Cells(problem, d, rows)

    x = problem.x[rows]  # [n_q, d_model]
    kv = problem.kv_input  # [m, d_src]: X again, or the source in cross-attention
    q_all = read_only(calc.affine(x, problem.w_q, problem.b_q))  # [n_q, d_model] @ [d_model, heads*d_k]
    k_all = read_only(calc.affine(kv, problem.w_k, problem.b_k))  # [m, d_src] @ [d_src, heads*d_k] -> [m, heads*d_k]
    v_all = read_only(calc.affine(kv, problem.w_v, problem.b_v))  # [m, d_src] @ [d_src, heads*d_v] -> [m, heads*d_v]
    say.projected("q", x, problem.w_q, problem.b_q, q_all)
    say.projected("k", kv, problem.w_k, problem.b_k, k_all)
    say.projected("v", kv, problem.w_v, problem.b_v, v_all)
    s = divisor(problem, d.d_k)
    allowed = masks.allowed(problem.mask, rows, d.m) if problem.mask else None  # [n_q, m], None when nothing is masked

    traced = []
    worst = 0.0
    made = heads(problem, d, rows, q_all, k_all, v_all, allowed, s, calc, say)
    alone = {j: heads(problem, d, rows[j:j + 1], q_all[j:j + 1], k_all, v_all,
                      None if allowed is None else allowed[j:j + 1], s, calc)
             for j in checked}  # step 8: each checked row recomputed on its own, q_i against every k_j
    for a, head in enumerate(made):
        seen = head.attended
        for j in checked:
            output = alone[j][a].attended.output
            say.checked(int(rows[j]), output)
            worst = max(worst, _max_diff(seen.output[j:j + 1], output))
        qs, ks, vs = (slice(a * d.d_k, (a + 1) * d.d_k), slice(head.kv_block * d.d_k, (head.kv_block + 1) * d.d_k),
                      slice(head.kv_block * d.d_v, (head.kv_block + 1) * d.d_v))  # this head's columns
        traced.append(HeadTrace(
            w_q=_weight_columns(problem.w_q, qs), w_k=_weight_columns(problem.w_k, ks), w_v=_weight_columns(problem.w_v, vs),
            b_q=_bias_part(problem.b_q, qs), b_k=_bias_part(problem.b_k, ks), b_v=_bias_part(problem.b_v, vs),
            q=head.q, k=head.k, v=head.v, scores=seen.scores, scaled=seen.scaled, weights=seen.weights,
            output=seen.output, q_rotated=head.q_rotated, k_rotated=head.k_rotated, bias=head.bias,
            uncapped=seen.uncapped, kv_head=head.kv_block if d.kv_heads != d.heads else None,
            sink_weight=seen.sink_weight,
        ))

    concat = np.concatenate([h.output for h in traced], axis=1) if d.heads > 1 else traced[0].output  # [n_q, heads*d_v]
    if problem.w_o is None:
        output = concat  # the heads' concatenation is the output
    else:
        output = calc.affine(concat, problem.w_o, problem.b_o)  # [n_q, heads*d_v] @ [heads*d_v, d_out] -> [n_q, d_out]
        say.final(concat, problem.w_o, problem.b_o, output)
    scale_v = max(1.0, float(np.max(np.abs(v_all))) if v_all.size else 1.0)
    tolerance = 1e-9 * scale_v
    from_exact = None if calc.precision is None else _max_diff(output, _trace(problem, d, query, EXACT).output)
    return Trace(
        problem=problem, dims=d, query=query, rows=tuple(int(i) for i in rows), divisor=s, allowed=allowed,
        heads=tuple(traced), concat=concat, output=output,
        self_check=SelfCheck(worst, tolerance, tuple(int(rows[j]) for j in checked), from_exact),
        carry_rounding=calc.precision, fully_masked=_fully_masked(rows, allowed),
    )


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
