"""The eight steps of self-attention, computed: trace(problem) -> Trace. Pure numpy, no printing; words only in its errors."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from attntrace.errors import AttntraceError, OutOfRange
from attntrace.model import masks
from attntrace.model.maths import attention, carried_affine, carried_quotient, carried_sum, round_half_up, softmax
from attntrace.model.problem import Dims, Problem, check_memory, dims, divisor
from attntrace.model.trace import HeadTrace, SelfCheck, Trace, read_only, weighted_values


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
        raise OutOfRange("query", query, d.n, "this problem has inputs")
    if decimals is not None and decimals < 0:
        raise AttntraceError(f"decimals = {decimals} must be 0 or more")
    with np.errstate(all="ignore"):  # an overflow is found by the checks below and said in words, never warned of
        return _trace(problem, d, query, show, decimals)


def _trace(problem: Problem, d: Dims, query: int | None, show: Iterable[int] | None, decimals: int | None) -> Trace:
    rows = np.arange(d.n) if query is None else np.array([query - 1])  # [n_q] the query rows traced
    check_memory(len(rows), d.m, d.d_model, d.d_src, d.d_k * d.heads, d.d_v * d.heads, d.heads, d.d_out)
    shown = None if show is None else set(show)
    checked = [j for j, i in enumerate(rows.tolist()) if shown is None or i in shown]  # indices into rows
    say = _Cells(problem, d, rows)

    x = problem.x[rows]  # [n_q, d_model]
    kv = problem.kv_input  # [m, d_src]: X again, or the source in cross-attention
    q_all = read_only(_project(x, problem.w_q, problem.b_q, decimals))  # [n_q, d_model] @ [d_model, heads*d_k] -> [n_q, heads*d_k]
    k_all = read_only(_project(kv, problem.w_k, problem.b_k, decimals))  # [m, d_src] @ [d_src, heads*d_k] -> [m, heads*d_k]
    v_all = read_only(_project(kv, problem.w_v, problem.b_v, decimals))  # [m, d_src] @ [d_src, heads*d_v] -> [m, heads*d_v]
    say.projected("q", x, problem.w_q, problem.b_q, q_all)
    say.projected("k", kv, problem.w_k, problem.b_k, k_all)
    say.projected("v", kv, problem.w_v, problem.b_v, v_all)
    s = divisor(problem, d.d_k)
    allowed = masks.allowed(problem.mask, rows, d.m)  # [n_q, m] or None

    heads = []
    worst = 0.0
    for a in range(d.heads):
        qs, vs = slice(a * d.d_k, (a + 1) * d.d_k), slice(a * d.d_v, (a + 1) * d.d_v)  # this head's columns
        q, k, v = q_all[:, qs], k_all[:, qs], v_all[:, vs]  # [n_q, d_k], [m, d_k], [m, d_v]
        scores = q @ k.T if decimals is None else carried_affine(q, k.T, None, decimals)  # [n_q, d_k] @ [d_k, m] -> [n_q, m]
        say.scores(a, q, k, scores)
        if s != 1.0:
            scaled = scores / s if decimals is None else carried_quotient(scores, s, decimals)  # [n_q, m]
            say.scaled(a, scores, s, scaled, allowed)
        else:
            scaled = scores
        weights = softmax(scaled, allowed)  # [n_q, m] -> [n_q, m], each row summing to 1 (or all 0 if masked)
        if decimals is not None:
            weights = round_half_up(weights, decimals)  # e^z is transcendental: float64, its result rounded exactly
        say.finite(5, a, "weights", weights, "the softmax of finite scores")
        if allowed is not None:
            scaled = np.where(allowed, scaled, -np.inf)  # [n_q, m], -inf where masked
        if decimals is None:
            output = weights @ v  # [n_q, m] @ [m, d_v] -> [n_q, d_v]
        else:  # [n_q, m, d_v] -> [n_q, d_v]: each product rounded, then summed and rounded, by hand
            output = carried_sum(weighted_values(weights, v, decimals), 1, decimals)
        say.output(a, weights, v, output)
        for j in checked:  # step 8: each shown row recomputed on its own, q_i against every k_j
            alone = attention(q[j:j + 1], k, v, s, None if allowed is None else allowed[j:j + 1])  # [1, d_k] -> [1, d_v]
            say.checked(int(rows[j]), alone)
            worst = max(worst, _max_diff(output[j:j + 1], alone))
        heads.append(HeadTrace(
            w_q=_weight_columns(problem.w_q, qs), w_k=_weight_columns(problem.w_k, qs), w_v=_weight_columns(problem.w_v, vs),
            b_q=_bias_part(problem.b_q, qs), b_k=_bias_part(problem.b_k, qs), b_v=_bias_part(problem.b_v, vs),
            q=q, k=k, v=v, scores=scores, scaled=scaled, weights=weights, output=output,
        ))

    concat = np.concatenate([h.output for h in heads], axis=1) if d.heads > 1 else heads[0].output  # [n_q, heads*d_v]
    if problem.w_o is None:
        output = concat  # the heads' concatenation is the output
    else:
        output = _project(concat, problem.w_o, problem.b_o, decimals)  # [n_q, heads*d_v] @ [heads*d_v, d_out] -> [n_q, d_out]
        say.final(concat, problem.w_o, problem.b_o, output)
    scale_v = max(1.0, float(np.max(np.abs(v_all))) if v_all.size else 1.0)
    tolerance = 1e-9 * scale_v if decimals is None else d.m * 10.0**-decimals * scale_v
    return Trace(
        problem=problem, dims=d, query=query, rows=tuple(int(i) for i in rows), divisor=s, allowed=allowed,
        heads=tuple(heads), concat=concat, output=output,
        self_check=SelfCheck(worst, tolerance, tuple(int(rows[j]) for j in checked)), decimals=decimals,
        fully_masked=_fully_masked(rows, allowed),
    )


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


class _Cells:
    """checks each intermediate as it is made: a cell that is not a finite number stops the trace with one line
    naming the step, the cell (by its labels) and the cause, with the size it would have had, and what to do"""

    def __init__(self, problem: Problem, d: Dims, rows: np.ndarray) -> None:
        self.problem, self.d, self.rows = problem, d, rows

    @property
    def labels(self) -> list[str]:
        """the traced query rows' labels (only made when an error names one)"""
        labels = self.problem.labels
        return [labels[int(i)] for i in self.rows]

    @property
    def keys(self) -> tuple[str, ...]:
        return self.problem.key_labels

    def _head(self, a: int) -> str:
        return f"head {a + 1} · " if self.d.heads > 1 else ""

    def projected(self, name: str, inp: np.ndarray, w: np.ndarray | None, b: np.ndarray | None, out: np.ndarray) -> None:
        """step 3: q, k or v for every head, from X (or the source) · W + b"""
        cell = _first_bad(out)
        if cell is None:
            return
        r, c = cell
        width = self.d.d_v if name == "v" else self.d.d_k
        a, col = divmod(c, width)
        row_label = (self.labels if name == "q" else self.keys)[r]
        number = int(self.rows[r]) + 1 if name == "q" else r + 1
        src = "s" if name != "q" and self.problem.source is not None else "x"
        W, bias = f"W_{name.upper()}", f" + b_{name}[{c + 1}]" if b is not None else ""
        made = f"{src}{number}[{c + 1}]" if w is None else f"{src}{number} · {W}[:, {c + 1}]"
        logs = [_log10_abs(inp[r, c])] if w is None else list(_log10_abs(inp[r]) + _log10_abs(w[:, c]))
        if b is not None:
            logs.append(_log10_abs(b[c]))
        fix = "scale the inputs down" if w is None and b is None else f"scale the inputs or {W} down"
        raise AttntraceError(f"step 3: {self._head(a)}{name}[{row_label}, {col + 1}] = {made}{bias} overflows a float64 "
                             f"(≈ {_about(_log10_sum(logs))}): {fix}")

    def scores(self, a: int, q: np.ndarray, k: np.ndarray, scores: np.ndarray) -> None:
        """step 4: q_i · k_j"""
        cell = _first_bad(scores)
        if cell is None:
            return
        i, j = cell
        size = _log10_norm(q[i]) + _log10_norm(k[j])
        raise AttntraceError(f"step 4: {self._head(a)}scores[{self.labels[i]} → {self.keys[j]}] overflows a float64 "
                             f"(|q{int(self.rows[i]) + 1}| · |k{j + 1}| ≈ {_about(size)}): scale the inputs or the weights down")

    def scaled(self, a: int, scores: np.ndarray, s: float, scaled: np.ndarray, allowed: np.ndarray | None) -> None:
        """step 4: score / s; a masked cell becomes -inf later, as it should"""
        cell = _first_bad(scaled if allowed is None else np.where(allowed, scaled, 0.0))
        if cell is None:
            return
        i, j = cell
        score = float(scores[i, j])
        size = float(_log10_abs(score)) - math.log10(s)
        raise AttntraceError(f"step 4: {self._head(a)}scaled[{self.labels[i]} → {self.keys[j]}] overflows a float64 "
                             f"({score:.4g} / {s:.4g} ≈ {_about(size)}): the scale {s:.4g} is too small for these scores; "
                             "divide by a larger number, or by sqrt(d_k)")

    def finite(self, step: int, a: int, name: str, values: np.ndarray, what: str) -> None:
        """an intermediate that cannot overflow when its inputs are finite: said plainly all the same"""
        cell = _first_bad(values)
        if cell is not None:
            i, j = cell
            raise AttntraceError(f"step {step}: {self._head(a)}{name}[{self.labels[i]} → {self.keys[j]}] is "
                                 f"{values[i, j]}, not a finite number, as {what} should be; please report this problem")

    def output(self, a: int, weights: np.ndarray, v: np.ndarray, output: np.ndarray) -> None:
        """step 7: Σ_j w_ij · v_j"""
        cell = _first_bad(output)
        if cell is None:
            return
        i, c = cell
        size = _log10_sum(list(_log10_abs(weights[i]) + _log10_abs(v[:, c])))
        raise AttntraceError(f"step 7: {self._head(a)}output[{self.labels[i]}, {c + 1}] = Σ_j w({int(self.rows[i]) + 1}, j) · "
                             f"v_j[{c + 1}] overflows a float64 (≈ {_about(size)}): scale the inputs or W_V down")

    def final(self, concat: np.ndarray, w_o: np.ndarray, b_o: np.ndarray | None, output: np.ndarray) -> None:
        """step 7 with W_O: concat_i · W_O + b_O"""
        cell = _first_bad(output)
        if cell is None:
            return
        i, c = cell
        logs = list(_log10_abs(concat[i]) + _log10_abs(w_o[:, c]))
        if b_o is not None:
            logs.append(_log10_abs(b_o[c]))
        bias = f" + b_o[{c + 1}]" if b_o is not None else ""
        raise AttntraceError(f"step 7: output[{self.labels[i]}, {c + 1}] = concat{int(self.rows[i]) + 1} · W_O[:, {c + 1}]{bias} "
                             f"overflows a float64 (≈ {_about(_log10_sum(logs))}): scale the inputs or W_O down")

    def checked(self, row: int, alone: np.ndarray) -> None:
        """step 8: the row recomputed on its own in float64"""
        cell = _first_bad(alone)
        if cell is not None:
            raise AttntraceError(f"step 8: output[{self.problem.labels[row]}, {cell[1] + 1}] recomputed on its own, "
                                 "softmax(q K^T / s) V, overflows a float64: scale the inputs down")


def _first_bad(a: np.ndarray) -> tuple[int, ...] | None:
    """the first cell (row by row) that is not a finite number, or None"""
    finite = np.isfinite(a)
    if finite.all():
        return None
    return tuple(int(i) for i in np.argwhere(~finite)[0])


def _log10_abs(a: np.ndarray | float) -> np.ndarray:
    """log10 |a|, -inf for 0, never a warning"""
    with np.errstate(all="ignore"):
        return np.log10(np.abs(np.asarray(a, dtype=np.float64)))


def _log10_sum(logs: list[Any] | np.ndarray) -> float:
    """log10 Σ 10^l for the given logs, without overflowing: the size of a sum of products of finite numbers"""
    arr = np.asarray(logs, dtype=np.float64)
    arr = arr[np.isfinite(arr)]
    if not arr.size:
        return -math.inf
    top = float(arr.max())
    return top + math.log10(float(np.sum(10.0 ** (arr - top))))


def _log10_norm(a: np.ndarray) -> float:
    """log10 of a vector's length, without overflowing or underflowing"""
    top = float(np.max(np.abs(a))) if a.size else 0.0
    if top == 0.0 or not math.isfinite(top):
        return -math.inf if top == 0.0 else math.inf
    return math.log10(top) + 0.5 * math.log10(float(np.sum((a / top) ** 2)))


def _about(log10: float) -> str:
    """a size known by its log10, as 3.6e308 or 1e616"""
    if not math.isfinite(log10):
        return "inf" if log10 > 0 else "0"
    exponent = math.floor(log10)
    mantissa = f"{10 ** (log10 - exponent):.1f}"
    if mantissa == "10.0":
        mantissa, exponent = "1.0", exponent + 1
    return f"{mantissa.removesuffix('.0')}e{exponent}"
