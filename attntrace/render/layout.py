"""Formatting numbers and choosing which rows and columns of a huge matrix are shown."""

from __future__ import annotations

import numpy as np

from attntrace.language import _, ngettext

MAX_SHOWN = 64  # a matrix with more rows or columns than this is elided in the middle
FEWEST_HIDDEN = 3  # a gap stands for at least this many rows or columns: its marker is as wide as two numbers


def cells(values: np.ndarray, rows: list[int], cols: list[int], precision: int) -> list[list[str]]:
    """the shown cells formatted at fixed decimals, a row at a time; -0 prints as 0 and a masked cell as -inf"""
    shown = part(values, rows, cols)
    if not cols:
        return [[] for _ in rows]
    line = "\0".join([f"%.{precision}f"] * len(cols))  # one % for the row: the same text as format(v, ".{p}f")
    out = [(line % tuple(row)).split("\0") for row in shown.tolist()]
    negative_zero = f"{-0.0:.{precision}f}"
    for i in np.flatnonzero((np.signbit(shown) & (shown >= -(10.0**-precision))).any(axis=1)):  # may round to -0
        out[i] = [c[1:] if c == negative_zero else c for c in out[i]]
    return out


def part(values: np.ndarray, rows: list[int], cols: list[int]) -> np.ndarray:
    """the shown rows and columns of a matrix (the matrix itself when it shows them all)"""
    if rows == list(range(values.shape[0])) and cols == list(range(values.shape[1])):
        return values
    return values[np.ix_(rows, cols)]


def shown(count: int, limit: int = MAX_SHOWN) -> tuple[list[int], int]:
    """the indices shown (the first and last limit/2 when FEWEST_HIDDEN or more would be hidden: a gap in place of one
    or two would save nothing) and how many are hidden"""
    if count < limit + FEWEST_HIDDEN:
        return list(range(count)), 0
    half = limit // 2
    return list(range(half)) + list(range(count - half, count)), count - limit


def gap_head(count: int) -> str:
    """the head of the column that stands, in a table, where count columns are hidden"""
    return _("⋯ {n} hidden ⋯").format(n=count)


def hidden_line(count: int, what: str) -> str:
    """the line after a table that hides count of its what ("row" or "column")"""
    if what == "row":
        return ngettext("… {n} row hidden; --format json shows all", "… {n} rows hidden; --format json shows all",
                        count).format(n=f"{count:,}")
    return ngettext("… {n} column hidden; --format json shows all", "… {n} columns hidden; --format json shows all",
                    count).format(n=f"{count:,}")


def runs(widths: list[int], room: int, gap: int) -> list[tuple[int, int]]:
    """split columns into [start, stop) runs that fit in room characters, each column taking gap + its width"""
    out, start, used = [], 0, 0
    for k, w in enumerate(widths):
        if used and used + gap + w > room:
            out.append((start, k))
            start, used = k, 0
        used += gap + w
    out.append((start, len(widths)))
    return out

