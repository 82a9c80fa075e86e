"""Cells of the online-softmax and decoding sheets judged by the rules the eight steps are marked by.

A cell is right when it is the true value rounded half away from zero at its precision, or the key's value (the hand
calculation with the rounding carried), or, when the numbers it is worked from are right, the step worked from the
student's own numbers on any path the worksheet allows (each exponential, rescale factor or product rounded or not)
within half a unit of each rounded number carried into it. It is a consequence when it is that step worked from their
own numbers and one of those is wrong; wrong otherwise. A blank cell is not answered: never right.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from attntrace.core.arithmetic import round_half_up
from attntrace.homework import results
from attntrace.homework.results import Cell
from attntrace.homework.said import Said, ngettext
from attntrace.language import N_

BLANK, RIGHT, CONSEQUENCE, WRONG = 0, 1, 2, 3  # a cell's verdict
UNASKED = -1  # a cell that asks for nothing (a running maximum before any key is seen): left blank, or -inf
MOST = 12  # decimals a cell is rounded to at most, as the eight steps judge exact work
NOISE = 1e-10  # relative: how far a value worked in float64 may be from the same worked in decimal, at most


def half(precision: int) -> float:
    """half a unit of the last decimal written"""
    return 0.5 * 10.0 ** -min(precision, MOST)


def rounded(values: np.ndarray, precision: int) -> np.ndarray:
    with np.errstate(all="ignore"):
        return round_half_up(np.asarray(values, dtype=np.float64), min(precision, MOST))


def _tiny(values: np.ndarray) -> np.ndarray:
    return 1e-9 * (1.0 + np.abs(np.where(np.isfinite(values), values, 0.0)))


def equals_rounded(given: np.ndarray, values: Iterable[np.ndarray], precision: int) -> np.ndarray:
    """where given is one of values rounded at precision"""
    out = np.zeros(np.shape(given), dtype=bool)
    with np.errstate(all="ignore"):
        for value in values:
            r = rounded(value, precision)
            out |= np.isfinite(r) & (np.abs(given - np.where(np.isfinite(r), r, 0.0)) <= _tiny(r))
    return out


class Span:
    """what a cell may hold when worked from given numbers on every allowed path: the lowest and highest value, and
    the slack that half a unit of each rounded number carried into it allows"""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.lo = np.full(shape, np.inf)
        self.hi = np.full(shape, -np.inf)
        self.slack = np.zeros(shape)

    def add(self, values: np.ndarray) -> None:
        with np.errstate(invalid="ignore"):
            self.lo = np.fmin(self.lo, values)
            self.hi = np.fmax(self.hi, values)

    def holds(self, given: np.ndarray, precision: int) -> np.ndarray:
        """where given is within the span rounded at precision, give or take the slack"""
        with np.errstate(all="ignore"):  # a path's float64 noise never decides a rounding half
            lo = rounded(self.lo - NOISE * (1.0 + np.abs(self.lo)), precision)
            hi = rounded(self.hi + NOISE * (1.0 + np.abs(self.hi)), precision)
            room = self.slack + _tiny(np.fmax(np.abs(lo), np.abs(hi)))
            out = (given >= lo - room) & (given <= hi + room)
        return out & np.isfinite(lo) & np.isfinite(hi)

    @property
    def centre(self) -> np.ndarray:
        with np.errstate(all="ignore"):
            return (self.lo + self.hi) / 2


def verdicts(given: np.ndarray, truths: Iterable[np.ndarray], fits: np.ndarray, inputs_right: np.ndarray,
             precision: int) -> np.ndarray:
    """each cell's verdict: right (the truth or the key rounded, or the student's own right work), a consequence (their
    own work from a wrong number), wrong, or blank"""
    written = ~np.isnan(given)  # -inf (masked) is an answer too: where a number belongs, a wrong one
    true = equals_rounded(given, truths, precision)
    return np.where(~written, BLANK, np.where(true | (fits & inputs_right), RIGHT,
                                              np.where(fits, CONSEQUENCE, WRONG))).astype(int)


def ok(codes: np.ndarray) -> np.ndarray:
    """where a cell is right, blank or asks for nothing: what is worked from it may be right"""
    return (codes == RIGHT) | (codes == BLANK) | (codes == UNASKED)


def item(kind: type, head: int, key: str, name: Any, codes: np.ndarray, given: np.ndarray, expected: np.ndarray,
         precision: int, cell_name: Callable[[int, int], Any], own: Any) -> Any:
    """one marked item of a head from its cells' verdicts [rows, cols]: the wrong cells named, a consequence said to
    follow from the student's own numbers, and the cells left blank counted; None when no cell asks for anything"""
    asked = codes != UNASKED
    if not asked.any():  # every cell asks for nothing (no key seen yet anywhere): not an item at all
        return None
    written = np.isfinite(given) & asked
    judged = written | (codes == WRONG)  # a blank where a cache position belongs is wrong, not missing
    count = int(asked.sum())
    verdict = (results.NOT_ANSWERED if not written.any() else results.WRONG if (codes == WRONG).any() else
               results.CONSEQUENCE if (codes == CONSEQUENCE).any() else results.RIGHT)
    off = [Cell(int(i), int(j), cell_name(int(i), int(j)), float(given[i, j]), float(expected[i, j]), precision)
           for i, j in np.argwhere(codes == WRONG)]
    note: Any = ""
    if verdict == results.CONSEQUENCE:
        note = Said(_FOLLOWS, own=own)
    missing = count - int(judged.sum())
    if missing and verdict != results.NOT_ANSWERED:
        extra = Said(_MISSING, missing=missing, cells=ngettext("{n} cell", "{n} cells", count))
        note = Said(_BOTH, first=note, second=extra) if note else extra
    elif verdict == results.NOT_ANSWERED:
        note = Said(_NONE, cells=ngettext("{n} cell", "{n} cells", count))
    return kind(head, key, name, verdict, note=note, given=int(written.sum()), written=int(judged.sum()), asked=count,
                off=off)


# the eight steps' words, so that a report reads the same for every kind of sheet
_FOLLOWS = N_("follows from {own}")
_MISSING = N_("{missing} of {cells} not written")
_BOTH = N_("{first}; {second}")
_NONE = N_("none of its {cells} written")
