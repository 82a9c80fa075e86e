"""CSV matrices: comma-separated numbers, # comments, an optional header row."""

from __future__ import annotations

import math
import re

import numpy as np

from attntrace.errors import AttntraceError
from attntrace.files.values import array, quoted
from attntrace.render.escape import visible
from attntrace.words import plural

_QUOTED_DECIMAL_COMMA = re.compile(r'"\s*[-+]?\d+,\d+\s*"')


def parse(text: str, name: str, key: str, blanks: tuple[str, ...] = ()) -> tuple[np.ndarray, str | None]:
    """the matrix in a CSV text, and a note if its first row was read as a header; blanks: the cells (lower case) that
    an answer sheet leaves blank, read as NaN"""
    rows: list[list[str]] = []
    line_numbers: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if ";" in line or _QUOTED_DECIMAL_COMMA.search(line):
            raise AttntraceError(
                f"{name} line {number}: this looks like decimal commas (1,5 for 1.5); "
                "attntrace reads ',' between values and '.' for decimals (export the CSV with '.' as decimal separator)"
            )
        rows.append([cell.strip().strip('"') for cell in line.split(",")])
        line_numbers.append(number)
    if not rows:
        raise AttntraceError(f"{name} has no values (only blank lines or comments)")
    note = None
    words = [c for c in rows[0] if not _parses(c) and c.lower() not in blanks]
    if words and all(c.isprintable() for c in words):  # a header names columns; a control character marks damaged data
        note = f"{name}: row 1 ({visible(', '.join(rows[0])[:40])}) read as a header"
        rows, line_numbers = rows[1:], line_numbers[1:]
        if not rows:
            raise AttntraceError(f"{name} has a header but no values")
    width = len(rows[0])
    values = []
    for number, row in zip(line_numbers, rows):
        if len(row) != width:
            raise AttntraceError(f"{name} line {number}: {key} has {plural(len(row), 'value')}, the first row has {width}")
        try:
            values.append([math.nan if c.lower() in blanks else float(c) for c in row])
        except ValueError:
            bad = next(j for j, c in enumerate(row) if not _parses(c) and c.lower() not in blanks)
            raise AttntraceError(f"{name} line {number}, column {bad + 1}: expected a number, got {quoted(row[bad])}") from None
    matrix = np.array(values, dtype=np.float64)
    left = np.array([[c.lower() in blanks for c in row] for row in rows], dtype=bool).reshape(matrix.shape)
    wrong = np.argwhere(~np.isfinite(matrix) & ~left)
    if wrong.size:  # nan or inf: named by line, like every other cell of the file, whether in row 1 or below
        i, j = (int(c) for c in wrong[0])
        cell = rows[i][j]
        written = visible(cell) if len(cell) <= 30 else str(matrix[i, j])
        raise AttntraceError(f"{name} line {line_numbers[i]}, column {j + 1} is {written}; every value must be finite")
    return (matrix if left.any() else array(matrix, f"{name}: {key}", 2)), note

def _parses(cell: str) -> bool:
    """a cell Python reads as a float: a number, or nan or inf (which are numbers, to be refused by their cell)"""
    try:
        float(cell)
    except ValueError:
        return False
    return True
