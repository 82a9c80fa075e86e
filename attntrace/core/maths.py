"""The arithmetic of attention as plain array functions: no I/O, no state.

Carried rounding is a hand calculation's arithmetic, done exactly: a float stands for the decimal its shortest repr
shows (what a student reads), and products, sums and quotients of those decimals are rounded half away from zero as
on paper. numpy computes every cell in float64 first, with a bound on how far that is from the exact decimal result;
only a cell too close to a rounding half for float64 to decide (or too large to test in float64) is recomputed with
decimal.Decimal, so hand-sized traces cost little more than the float ones. round_half_up rounds a float the same
way, from the decimal it shows (see reading_of). The decimal module is imported by the first cell that needs it: a
trace that carries no rounding never does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from decimal import Context, Decimal

_U = 2.0**-52  # twice float64's unit roundoff: a generous bound on each operation's relative error
_MAX_EXPONENT = 308  # a decimal whose leading digit is further left does not fit a float64


def softmax(z: np.ndarray, allowed: np.ndarray | None = None) -> np.ndarray:
    """stable softmax over the last axis; a row with no allowed cell is all zeros, never NaN (finite z never gives NaN)"""
    with np.errstate(all="ignore"):
        if allowed is None:
            exp_z = np.exp(z - np.max(z, axis=-1, keepdims=True))
            return exp_z / np.sum(exp_z, axis=-1, keepdims=True)
        z = np.where(allowed, z, -np.inf)
        row_max = np.max(z, axis=-1, keepdims=True)
        exp_z = np.exp(z - np.where(np.isfinite(row_max), row_max, 0.0))
        total = np.sum(exp_z, axis=-1, keepdims=True)
        return np.divide(exp_z, total, out=np.zeros_like(exp_z), where=total > 0)


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, divisor: float,
              allowed: np.ndarray | None = None, bias: np.ndarray | None = None, cap: float | None = None) -> np.ndarray:
    """softmax(cap(Q K^T / s + bias)) V in one expression: [n_q, d_k], [m, d_k], [m, d_v] -> [n_q, d_v]"""
    with np.errstate(all="ignore"):
        z = q @ k.T / divisor  # [n_q, m]
        if bias is not None:
            z = z + bias
        if cap is not None:
            z = cap * np.tanh(z / cap)
        return softmax(z, allowed) @ v


def decimal_of(x: float) -> Decimal:
    """the decimal a float shows: its shortest repr, the number a student reads off the page"""
    from decimal import Decimal

    return Decimal(repr(float(x)))


def reading_of(x: float, decimals: int) -> Decimal:
    """the decimal a float is read as when it is rounded to decimals: its shortest repr, cut to its first 15 significant
    digits (all a float64 holds for certain) when it is rounded to fewer than those. For a float whose shortest repr has
    15 digits or fewer (whatever a person writes) this is exactly that repr; a computed float's noise in the 16th and
    17th digits is dropped, so 0.75 · 0.15 · 2 = 0.22499999999999998 is read as the 0.225 a student computes on paper"""
    from decimal import Decimal

    shown = Decimal(repr(float(x)))
    if not shown.is_finite() or not shown or decimals >= 14 - shown.adjusted():
        return shown
    return Decimal(format(float(x), ".15g"))


def round_half_up(a: np.ndarray, decimals: int) -> np.ndarray:
    """round as a student does by hand: the decimal each float shows (0.285, not 0.28499999...; see reading_of), halves
    away from zero, exactly (0.224999999999 is 0.22 at 2 decimals); a non-finite value is left as it is"""
    a = np.asarray(a, dtype=np.float64)
    flat = a.reshape(-1)
    return _settle(flat, None, decimals, lambda i: reading_of(flat[i], decimals)).reshape(a.shape)


def carried_affine(inp: np.ndarray, w: np.ndarray | None, b: np.ndarray | None, decimals: int) -> np.ndarray:
    """inp · W + b (W None: the identity), each cell's sum of products exact and rounded once, as on paper:
    [rows, d_in] @ [d_in, d_out] -> [rows, d_out]"""
    with np.errstate(all="ignore"):
        c = inp.copy() if w is None else inp @ w
        size = np.abs(inp) if w is None else np.abs(inp) @ np.abs(w)
        if b is not None:
            c, size = c + b, size + np.abs(b)
        terms = (1 if w is None else inp.shape[1]) + (b is not None)
        err = size * (terms + 2) * _U

    def exact(cell: int) -> Decimal:
        i, j = divmod(cell, c.shape[1])
        total = decimal_of(inp[i, j]) if w is None else sum(
            (decimal_of(inp[i, t]) * decimal_of(w[t, j]) for t in range(inp.shape[1])), decimal_of(0))
        return total if b is None else total + decimal_of(b[j])

    return _settle(c.reshape(-1), err.reshape(-1), decimals, exact).reshape(c.shape)


def carried_quotient(a: np.ndarray, divisor: float, decimals: int) -> np.ndarray:
    """a / divisor, each quotient rounded as on paper (the divisor as its decimal shows)"""
    with np.errstate(all="ignore"):
        c = a / divisor
        err = np.abs(c) * 2 * _U
    flat = a.reshape(-1)
    by = decimal_of(divisor)
    return _settle(c.reshape(-1), err.reshape(-1), decimals, lambda i: decimal_of(flat[i]) / by).reshape(c.shape)


def carried_product(a: np.ndarray, b: np.ndarray, decimals: int) -> np.ndarray:
    """a * b cell by cell (broadcast), each product rounded as on paper"""
    a, b = np.broadcast_arrays(a, b)
    with np.errstate(all="ignore"):
        c = a * b
        err = np.abs(c) * 2 * _U
    fa, fb = a.reshape(-1), b.reshape(-1)
    return _settle(c.reshape(-1), err.reshape(-1), decimals,
                   lambda i: decimal_of(fa[i]) * decimal_of(fb[i])).reshape(c.shape)


def carried_sum(a: np.ndarray, axis: int, decimals: int) -> np.ndarray:
    """a summed over axis, each sum exact and rounded as on paper"""
    with np.errstate(all="ignore"):
        c = a.sum(axis=axis)
        err = np.abs(a).sum(axis=axis) * (a.shape[axis] + 2) * _U
    terms = np.moveaxis(a, axis, -1).reshape(-1, a.shape[axis])  # [cells, terms]
    return _settle(c.reshape(-1), err.reshape(-1), decimals,
                   lambda i: sum((decimal_of(t) for t in terms[i]), decimal_of(0))).reshape(c.shape)


def carried_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, divisor: float, allowed: np.ndarray | None,
                      decimals: int, bias: np.ndarray | None = None, cap: float | None = None) -> np.ndarray:
    """softmax(cap(Q K^T / s + bias)) V with every intermediate rounded to decimals and carried on, as on paper:
    [n_q, d_k], [m, d_k], [m, d_v] -> [n_q, d_v]"""
    scores = carried_affine(q, k.T, None, decimals)  # [n_q, m]
    scaled = scores if divisor == 1.0 else carried_quotient(scores, divisor, decimals)
    if bias is not None:
        scaled = carried_sum(np.stack([scaled, bias], axis=-1), -1, decimals)
    if cap is not None:
        scaled = round_half_up(cap * np.tanh(scaled / cap), decimals)
    weights = round_half_up(softmax(scaled, allowed), decimals)  # [n_q, m]
    return carried_sum(carried_product(weights[..., None], v, decimals), 1, decimals)  # [n_q, m, d_v] -> [n_q, d_v]


def _settle(c: np.ndarray, err: np.ndarray | None, decimals: int, exact: Callable[[int], Decimal]) -> np.ndarray:
    """[cells] c rounded half away from zero at decimals, where c is the float value of the exact decimal
    exact(cell) to within err (None: exact(cell) is c's reading_of): rounded in float64 where that decides it,
    else from exact(cell) computed in decimal. A result beyond float64's range is ±inf (its caller names the cell)."""
    rounded, undecided = _decide(c, err, decimals)
    if undecided.any():
        from decimal import localcontext

        with localcontext(_context(decimals)):
            for cell in np.flatnonzero(undecided).tolist():
                rounded[cell] = _to_float(exact(cell), decimals)
    return rounded


def _decide(c: np.ndarray, err: np.ndarray | None, decimals: int) -> tuple[np.ndarray, np.ndarray]:
    """c rounded half away from zero at decimals in float64, and where that is not certain to be the exact result:
    within the error of a half, at or above 2^50 (where the slack reaches 1; 2^46 when err is None), NaN or inf"""
    if not 0 <= decimals <= 22:  # 10^decimals is not a float64 exactly
        return c.astype(np.float64, copy=True), np.ones(c.shape, dtype=bool)
    unit = 10.0**decimals
    with np.errstate(all="ignore"):
        y = np.abs(c)
        y *= unit  # |c| · 10^decimals, within one rounding
        whole = np.floor(y)
        frac = y - whole  # exact below 2^52
        # the slack: c's own error, and a few ulps of y (an ulp is at most y · 2^-52) for the roundings of y
        # (err None: c is read at 15 significant digits, which moves it by up to 5e-15 of itself; 2^-46 is 1.4e-14)
        slack = y * 2.0**-46 if err is None else err * (2.0 * unit) + y * 2.0**-50
        undecided = ~(np.abs(frac - 0.5) > slack)
        whole += frac > 0.5
        whole /= unit  # a whole number below 2^50 over 10^decimals, exact: the float nearest the rounded decimal
        rounded = np.copysign(whole, c, out=whole)
    return rounded, undecided


def _to_float(value: Decimal, decimals: int) -> float:
    """value rounded half away from zero at decimals, as the nearest float64 (±inf beyond its range)"""
    from decimal import ROUND_HALF_UP

    if not value.is_finite():
        return float(value)
    if value and value.adjusted() > _MAX_EXPONENT:
        return math.copysign(math.inf, value)
    return float(value.quantize(_places(decimals), rounding=ROUND_HALF_UP))


@lru_cache(maxsize=64)
def _places(decimals: int) -> Decimal:
    from decimal import Decimal

    return Decimal(1).scaleb(-decimals)


@lru_cache(maxsize=64)
def _context(decimals: int) -> Context:
    """where sums and products of float64 decimals are exact (their digits span under 1400 places), quantizing at
    decimals fits, and a quotient is cut toward zero far below the rounding digit, which never moves it across a half"""
    from decimal import ROUND_DOWN, Context

    return Context(prec=max(2000, decimals + 700), rounding=ROUND_DOWN, Emax=10**6, Emin=-10**6)
