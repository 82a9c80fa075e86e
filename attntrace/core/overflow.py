"""Every intermediate checked as it is made: the first cell that is not finite named by step, labels and cause."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from attntrace.core.problem import Dims, Problem
from attntrace.errors import AttntraceError
from attntrace.language import N_, _


class Cells:  # an attention.Watch
    """checks each intermediate as it is made: a cell that is not a finite number stops the trace with one line
    naming the step, the cell (by its labels) and the cause, with the size it would have had, and what to do"""

    def __init__(self, problem: Problem, d: Dims, rows: np.ndarray, keys: np.ndarray | None = None) -> None:
        """rows: the query rows (from 0) traced; keys: the key rows (from 0) that k's rows and the scores' columns stand
        for, in their order (None: every key in order, as a trace has them; decoding: the new token, or the cache)"""
        self.problem, self.d, self.rows, self.key_rows = problem, d, rows, keys

    @property
    def labels(self) -> list[str]:
        """the traced query rows' labels (only made when an error names one)"""
        labels = self.problem.labels
        return [labels[int(i)] for i in self.rows]

    @property
    def keys(self) -> tuple[str, ...]:
        labels = self.problem.key_labels
        return labels if self.key_rows is None else tuple(labels[int(j)] for j in self.key_rows)

    def _key(self, j: int) -> int:
        """the number (from 1) of the key in row or column j"""
        return (j if self.key_rows is None else int(self.key_rows[j])) + 1

    def _head(self, a: int) -> str:
        return _("head {n} · ").format(n=a + 1) if self.d.heads > 1 else ""

    def projected(self, name: str, inp: np.ndarray, w: np.ndarray | None, b: np.ndarray | None, out: np.ndarray) -> None:
        """step 3: q, k or v for every head, from X (or the source) · W + b"""
        cell = _first_bad(out)
        if cell is None:
            return
        r, c = cell
        width = self.d.d_v if name == "v" else self.d.d_k
        a, col = divmod(c, width)
        row_label = (self.labels if name == "q" else self.keys)[r]
        number = int(self.rows[r]) + 1 if name == "q" else self._key(r)
        src = "s" if name != "q" and self.problem.source is not None else "x"
        W, bias = f"W_{name.upper()}", f" + b_{name}[{c + 1}]" if b is not None else ""
        made = f"{src}{number}[{c + 1}]" if w is None else f"{src}{number} · {W}[:, {c + 1}]"
        logs = [_log10_abs(inp[r, c])] if w is None else list(_log10_abs(inp[r]) + _log10_abs(w[:, c]))
        if b is not None:
            logs.append(_log10_abs(b[c]))
        fix = _("scale the inputs down") if w is None and b is None else _("scale the inputs or {W} down").format(W=W)
        raise AttntraceError(_("step 3: {head}{name}[{row}, {column}] = {made}{bias} overflows a float64 (≈ {size}): "
                               "{fix}").format(head=self._head(a), name=name, row=row_label, column=col + 1, made=made,
                                               bias=bias, size=_about(_log10_sum(logs)), fix=fix))

    def scores(self, a: int, q: np.ndarray, k: np.ndarray, scores: np.ndarray) -> None:
        """step 4: q_i · k_j"""
        cell = _first_bad(scores)
        if cell is None:
            return
        i, j = cell
        size = _log10_norm(q[i]) + _log10_norm(k[j])
        raise AttntraceError(_("step 4: {head}scores[{query} → {key}] overflows a float64 (|q{i}| · |k{j}| ≈ {size}): "
                               "scale the inputs or the weights down").format(
            head=self._head(a), query=self.labels[i], key=self.keys[j], i=int(self.rows[i]) + 1, j=self._key(j),
            size=_about(size)))

    def scaled(self, a: int, scores: np.ndarray, s: float, scaled: np.ndarray, allowed: np.ndarray | None) -> None:
        """step 4: score / s; a masked cell becomes -inf later, as it should"""
        cell = _first_bad(scaled if allowed is None else np.where(allowed, scaled, 0.0))
        if cell is None:
            return
        i, j = cell
        score = float(scores[i, j])
        size = float(_log10_abs(score)) - math.log10(s)
        raise AttntraceError(_("step 4: {head}scaled[{query} → {key}] overflows a float64 ({score} / {s} ≈ {size}): "
                               "the scale {s} is too small for these scores; divide by a larger number, or by sqrt(d_k)")
                             .format(head=self._head(a), query=self.labels[i], key=self.keys[j], score=f"{score:.4g}",
                                     s=f"{s:.4g}", size=_about(size)))

    def finite(self, step: int, a: int, name: str, values: np.ndarray, what: str) -> None:
        """an intermediate that cannot overflow when its inputs are finite: said plainly all the same (what: N_-marked)"""
        cell = _first_bad(values)
        if cell is not None:
            i, j = cell
            raise AttntraceError(_("step {step}: {head}{name}[{query} → {key}] is {value}, not a finite number, as "
                                   "{what} should be; please report this problem").format(
                step=step, head=self._head(a), name=name, query=self.labels[i], key=self.keys[j], value=values[i, j],
                what=_(what)))

    def rotated(self, a: int, q_rotated: np.ndarray) -> None:
        """step 3 with rope: q turned by position"""
        self.finite(3, a, "q rotated", q_rotated, N_("a rotation of finite numbers"))

    def weights(self, a: int, weights: np.ndarray) -> None:
        """step 5: the softmax rows"""
        self.finite(5, a, "weights", weights, N_("the softmax of finite scores"))

    def output(self, a: int, weights: np.ndarray, v: np.ndarray, output: np.ndarray) -> None:
        """step 7: Σ_j w_ij · v_j"""
        cell = _first_bad(output)
        if cell is None:
            return
        i, c = cell
        size = _log10_sum(list(_log10_abs(weights[i]) + _log10_abs(v[:, c])))
        raise AttntraceError(_("step 7: {head}output[{query}, {column}] = Σ_j w({i}, j) · v_j[{column}] overflows a "
                               "float64 (≈ {size}): scale the inputs or W_V down").format(
            head=self._head(a), query=self.labels[i], column=c + 1, i=int(self.rows[i]) + 1, size=_about(size)))

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
        raise AttntraceError(_("step 7: output[{query}, {column}] = concat{i} · W_O[:, {column}]{bias} overflows a "
                               "float64 (≈ {size}): scale the inputs or W_O down").format(
            query=self.labels[i], column=c + 1, i=int(self.rows[i]) + 1, bias=bias, size=_about(_log10_sum(logs))))

    def checked(self, row: int, alone: np.ndarray) -> None:
        """step 8: the row recomputed on its own in float64"""
        cell = _first_bad(alone)
        if cell is not None:
            raise AttntraceError(_("step 8: output[{query}, {column}] recomputed on its own, softmax(q K^T / s) V, "
                                   "overflows a float64: scale the inputs down").format(
                query=self.problem.labels[row], column=cell[1] + 1))


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
