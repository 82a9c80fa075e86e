"""The eight steps of self-attention, computed: trace(problem) -> Trace. Pure numpy, no printing."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from attntrace.errors import AttntraceError
from attntrace.maths import allowed_keys, attention, round_half_up, softmax
from attntrace.problem import Problem, dims, divisor
from attntrace.trace import Check, HeadTrace, Trace


def trace(problem: Problem, *, query: int | None = None, show: Iterable[int] | None = None,
          decimals: int | None = None) -> Trace:
    """trace every input, or only input `query` (from 1) at O(n*d) cost.

    show: the rows (from 0) whose per-key weighted values (step 6) are formed; default all traced rows.
    decimals: round every intermediate to this many decimals and carry it on, as a hand calculation does.
    """
    d = dims(problem)
    if query is not None and not 1 <= query <= d.n:
        raise AttntraceError(f"--input {query} is out of range; this problem has inputs 1 to {d.n}")
    rows = np.arange(d.n) if query is None else np.array([query - 1])
    shown = set(rows.tolist()) if show is None else set(show) & set(rows.tolist())
    if decimals is not None and decimals < 0:
        raise AttntraceError(f"decimals = {decimals} must be 0 or more")
    r: Callable[[np.ndarray], np.ndarray] = (
        (lambda a: a) if decimals is None else (lambda a: round_half_up(a, decimals))
    )
    x = problem.x[rows]
    kv = problem.kv_input
    q_all = r(_project(x, problem.w_q, problem.b_q))
    k_all = r(_project(kv, problem.w_k, problem.b_k))
    v_all = r(_project(kv, problem.w_v, problem.b_v))
    s = divisor(problem, d.d_k)
    allowed = allowed_keys(rows, d.m, problem.masks, problem.window, problem.padding)

    heads = []
    worst = 0.0
    checked = [j for j, i in enumerate(rows.tolist()) if i in shown]
    for a in range(d.heads):
        qs, vs = slice(a * d.d_k, (a + 1) * d.d_k), slice(a * d.d_v, (a + 1) * d.d_v)
        q, k, v = q_all[:, qs], k_all[:, qs], v_all[:, vs]
        scores = r(q @ k.T)
        scaled = r(scores / s) if s != 1.0 else scores
        weights = r(softmax(scaled, allowed))
        if allowed is not None:
            scaled = np.where(allowed, scaled, -np.inf)
        if decimals is None:
            weighted = {int(i): weights[j][:, None] * v for j, i in enumerate(rows) if int(i) in shown}
            output = weights @ v
        else:
            every = r(weights[:, :, None] * v[None, :, :])
            weighted = {int(i): every[j] for j, i in enumerate(rows) if int(i) in shown}
            output = r(every.sum(axis=1))
        for j in checked:  # step 8: each shown row recomputed on its own, q_i against every k_j
            alone = attention(q[j:j + 1], k, v, s, None if allowed is None else allowed[j:j + 1])
            worst = max(worst, _max_diff(output[j:j + 1], alone))
        heads.append(HeadTrace(
            w_q=_cols(problem.w_q, qs), w_k=_cols(problem.w_k, qs), w_v=_cols(problem.w_v, vs),
            b_q=_part(problem.b_q, qs), b_k=_part(problem.b_k, qs), b_v=_part(problem.b_v, vs),
            q=q, k=k, v=v, scores=scores, scaled=scaled, weights=weights, weighted=weighted, output=output,
        ))

    concat = np.concatenate([h.output for h in heads], axis=1) if d.heads > 1 else heads[0].output
    output = concat if problem.w_o is None else r(_project(concat, problem.w_o, problem.b_o))
    scale_v = max(1.0, float(np.max(np.abs(v_all))) if v_all.size else 1.0)
    tolerance = 1e-9 * scale_v if decimals is None else d.m * 10.0**-decimals * scale_v
    return Trace(
        problem=problem, dims=d, query=query, rows=tuple(int(i) for i in rows), divisor=s, allowed=allowed,
        heads=tuple(heads), concat=concat, output=output,
        check=Check(worst, tolerance, tuple(int(rows[j]) for j in checked)), decimals=decimals,
        warnings=_warnings(problem, rows, allowed),
    )


def _project(inp: np.ndarray, w: np.ndarray | None, b: np.ndarray | None) -> np.ndarray:
    """inp · W + b, where a missing W is the identity"""
    out = inp if w is None else inp @ w
    return out if b is None else out + b


def _cols(w: np.ndarray | None, cols: slice) -> np.ndarray | None:
    return None if w is None else w[:, cols]


def _part(b: np.ndarray | None, cols: slice) -> np.ndarray | None:
    return None if b is None else b[cols]


def _max_diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def _warnings(problem: Problem, rows: np.ndarray, allowed: np.ndarray | None) -> tuple[str, ...]:
    if allowed is None:
        return ()
    labels = problem.labels
    return tuple(
        f"input {i + 1} ({labels[i]}): every key is masked, so its weights are all 0 and its output is 0"
        for i, row in zip(rows.tolist(), allowed) if not row.any()
    )
