"""The two arithmetics a trace is computed in: exact float64 (EXACT), or carried rounding (Carried(precision)), the
hand calculation's. Attention (attention.py) is written once over either; explain reads its decimals with decimal_of.

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

MAX_PRECISION = 17  # the most decimals a number is shown or rounded to: a float64 holds no more


class Exact:
    """float64 as numpy computes it: what every shown number is, unless rounding is carried"""

    precision: int | None = None

    def affine(self, inp: np.ndarray, w: np.ndarray | None, b: np.ndarray | None) -> np.ndarray:
        """inp · W + b, where a missing W is the identity; always a new array: [rows, d_in] @ [d_in, d_out]"""
        out = inp.copy() if w is None else inp @ w
        return out if b is None else out + b

    def quotient(self, a: np.ndarray, divisor: float) -> np.ndarray:
        return a / divisor

    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a + b

    def product(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a * b

    def dot(self, weights: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Σ_j w_ij · v_j: [n_q, m] @ [m, d_v] -> [n_q, d_v]"""
        return weights @ v

    def rounded(self, values: np.ndarray) -> np.ndarray:
        """a transcendental step's result (a rotation, a tanh, e^z, an ALiBi slope), as float64 gives it"""
        return values


class Carried(Exact):
    """every intermediate rounded to precision decimals and carried on, as on paper: the products, sums and quotients of
    the decimals shown are exact and rounded half away from zero; a transcendental step's float64 result is rounded"""

    def __init__(self, precision: int) -> None:
        self.precision: int = precision

    def affine(self, inp: np.ndarray, w: np.ndarray | None, b: np.ndarray | None) -> np.ndarray:
        return carried_affine(inp, w, b, self.precision)

    def quotient(self, a: np.ndarray, divisor: float) -> np.ndarray:
        return carried_quotient(a, divisor, self.precision)

    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return carried_sum(np.stack([a, b], axis=-1), -1, self.precision)

    def product(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return carried_product(a, b, self.precision)

    def dot(self, weights: np.ndarray, v: np.ndarray) -> np.ndarray:
        """each product w_ij · v_j rounded, then their sum rounded: [n_q, m, d_v] -> [n_q, d_v]"""
        return carried_sum(self.product(weights[..., None], v), 1, self.precision)

    def rounded(self, values: np.ndarray) -> np.ndarray:
        return round_half_up(values, self.precision)


EXACT = Exact()


def exact_context() -> Context:
    """the decimal context where sums, products and quotients of written numbers are exact, or (a quotient by a square
    root) hundreds of digits past any rounding digit shown: what explain works a cell out in"""
    from decimal import Context

    return Context(prec=2000, Emax=10**6, Emin=-10**6)


def arithmetic(precision: int | None) -> Exact:
    """EXACT for None, else carried rounding at precision decimals"""
    return EXACT if precision is None else Carried(precision)


def product_bound(a: np.ndarray, a_off: np.ndarray, b: np.ndarray, b_off: np.ndarray) -> np.ndarray:
    """how far a @ b can move when each entry of a is off by up to a_off and each of b by up to b_off (a worksheet's
    numbers carried rounded, say): |a| @ b_off + a_off @ |b| + a_off @ b_off, [n, k], [k, m] -> [n, m]"""
    return np.abs(a) @ b_off + a_off @ np.abs(b) + a_off @ b_off


_U = 2.0**-52  # twice float64's unit roundoff: a generous bound on each operation's relative error
_MAX_EXPONENT = 308  # a decimal whose leading digit is further left does not fit a float64


def decimal_of(x: float) -> Decimal:
    """the decimal a float shows: its shortest repr, the number a student reads off the page"""
    from decimal import Decimal

    return Decimal(repr(float(x)))


def reading_of(x: float, precision: int) -> Decimal:
    """the decimal a float is read as when it is rounded to precision: its shortest repr, cut to its first 15 significant
    digits (all a float64 holds for certain) when it is rounded to fewer than those. For a float whose shortest repr has
    15 digits or fewer (whatever a person writes) this is exactly that repr; a computed float's noise in the 16th and
    17th digits is dropped, so 0.75 · 0.15 · 2 = 0.22499999999999998 is read as the 0.225 a student computes on paper"""
    from decimal import Decimal

    shown = Decimal(repr(float(x)))
    if not shown.is_finite() or not shown or precision >= 14 - shown.adjusted():
        return shown
    return Decimal(format(float(x), ".15g"))


def round_half_up(a: np.ndarray, precision: int) -> np.ndarray:
    """round as a student does by hand: the decimal each float shows (0.285, not 0.28499999...; see reading_of), halves
    away from zero, exactly (0.224999999999 is 0.22 at 2 decimals); a non-finite value is left as it is"""
    a = np.asarray(a, dtype=np.float64)
    flat = a.reshape(-1)
    return _settle(flat, None, precision, lambda i: reading_of(flat[i], precision)).reshape(a.shape)


def carried_affine(inp: np.ndarray, w: np.ndarray | None, b: np.ndarray | None, precision: int) -> np.ndarray:
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

    return _settle(c.reshape(-1), err.reshape(-1), precision, exact).reshape(c.shape)


def carried_quotient(a: np.ndarray, divisor: float, precision: int) -> np.ndarray:
    """a / divisor, each quotient rounded as on paper (the divisor as its decimal shows)"""
    with np.errstate(all="ignore"):
        c = a / divisor
        err = np.abs(c) * 2 * _U
    flat = a.reshape(-1)
    by = decimal_of(divisor)
    return _settle(c.reshape(-1), err.reshape(-1), precision, lambda i: decimal_of(flat[i]) / by).reshape(c.shape)


def carried_product(a: np.ndarray, b: np.ndarray, precision: int) -> np.ndarray:
    """a * b cell by cell (broadcast), each product rounded as on paper"""
    a, b = np.broadcast_arrays(a, b)
    with np.errstate(all="ignore"):
        c = a * b
        err = np.abs(c) * 2 * _U
    fa, fb = a.reshape(-1), b.reshape(-1)
    return _settle(c.reshape(-1), err.reshape(-1), precision,
                   lambda i: decimal_of(fa[i]) * decimal_of(fb[i])).reshape(c.shape)


def carried_sum(a: np.ndarray, axis: int, precision: int) -> np.ndarray:
    """a summed over axis, each sum exact and rounded as on paper"""
    with np.errstate(all="ignore"):
        c = a.sum(axis=axis)
        err = np.abs(a).sum(axis=axis) * (a.shape[axis] + 2) * _U
    terms = np.moveaxis(a, axis, -1).reshape(-1, a.shape[axis])  # [cells, terms]
    return _settle(c.reshape(-1), err.reshape(-1), precision,
                   lambda i: sum((decimal_of(t) for t in terms[i]), decimal_of(0))).reshape(c.shape)


def _settle(c: np.ndarray, err: np.ndarray | None, precision: int, exact: Callable[[int], Decimal]) -> np.ndarray:
    """[cells] c rounded half away from zero at precision, where c is the float value of the exact decimal
    exact(cell) to within err (None: exact(cell) is c's reading_of): rounded in float64 where that decides it,
    else from exact(cell) computed in decimal. A result beyond float64's range is ±inf (its caller names the cell)."""
    rounded, undecided = _decide(c, err, precision)
    if undecided.any():
        from decimal import localcontext

        with localcontext(_context(precision)):
            for cell in np.flatnonzero(undecided).tolist():
                rounded[cell] = _to_float(exact(cell), precision)
    return rounded


def _decide(c: np.ndarray, err: np.ndarray | None, precision: int) -> tuple[np.ndarray, np.ndarray]:
    """c rounded half away from zero at precision in float64, and where that is not certain to be the exact result:
    within the error of a half, at or above 2^50 (where the slack reaches 1; 2^46 when err is None), NaN or inf"""
    if not 0 <= precision <= 22:  # 10^precision is not a float64 exactly
        return c.astype(np.float64, copy=True), np.ones(c.shape, dtype=bool)
    unit = 10.0**precision
    with np.errstate(all="ignore"):
        y = np.abs(c)
        y *= unit  # |c| · 10^precision, within one rounding
        whole = np.floor(y)
        frac = y - whole  # exact below 2^52
        # the slack: c's own error, and a few ulps of y (an ulp is at most y · 2^-52) for the roundings of y
        # (err None: c is read at 15 significant digits, which moves it by up to 5e-15 of itself; 2^-46 is 1.4e-14)
        slack = y * 2.0**-46 if err is None else err * (2.0 * unit) + y * 2.0**-50
        undecided = ~(np.abs(frac - 0.5) > slack)
        whole += frac > 0.5
        whole /= unit  # a whole number below 2^50 over 10^precision, exact: the float nearest the rounded decimal
        rounded = np.copysign(whole, c, out=whole)
    return rounded, undecided


def _to_float(value: Decimal, precision: int) -> float:
    """value rounded half away from zero at precision, as the nearest float64 (±inf beyond its range)"""
    from decimal import ROUND_HALF_UP

    if not value.is_finite():
        return float(value)
    if value and value.adjusted() > _MAX_EXPONENT:
        return math.copysign(math.inf, value)
    return float(value.quantize(_unit(precision), rounding=ROUND_HALF_UP))


@lru_cache(maxsize=64)
def _unit(precision: int) -> Decimal:
    from decimal import Decimal

    return Decimal(1).scaleb(-precision)


@lru_cache(maxsize=64)
def _context(precision: int) -> Context:
    """where sums and products of float64 decimals are exact (their digits span under 1400 places), quantizing at
    precision fits, and a quotient is cut toward zero far below the rounding digit, which never moves it across a half"""
    from decimal import ROUND_DOWN, Context

    return Context(prec=max(2000, precision + 700), rounding=ROUND_DOWN, Emax=10**6, Emin=-10**6)
