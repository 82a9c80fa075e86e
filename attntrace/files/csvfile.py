"""CSV matrices: comma-separated numbers, # comments, an optional header row."""

from __future__ import annotations

import re

import numpy as np

from attntrace.errors import AttntraceError
from attntrace.files.values import array

_QUOTED_DECIMAL_COMMA = re.compile(r'"\s*[-+]?\d+,\d+\s*"')


def parse(text: str, name: str, key: str) -> tuple[np.ndarray, str | None]:
    """the matrix in a CSV text, and a note if its first row was read as a header"""
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
    if not all(_is_number(c) for c in rows[0]):
        note = f"{name}: row 1 ({', '.join(rows[0])[:40]}) read as a header"
        rows, line_numbers = rows[1:], line_numbers[1:]
        if not rows:
            raise AttntraceError(f"{name} has a header but no values")
    width = len(rows[0])
    values = []
    for number, row in zip(line_numbers, rows):
        if len(row) != width:
            raise AttntraceError(f"{name} line {number}: {key} has {len(row)} values, the first row has {width}")
        try:
            values.append([float(c) for c in row])
        except ValueError:
            bad = next(j for j, c in enumerate(row) if not _is_number(c))
            raise AttntraceError(
                f'{name} line {number}, column {bad + 1}: expected a number, got "{row[bad]}"'
            ) from None
    return array(np.array(values, dtype=np.float64), f"{name}: {key}", 2), note


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return cell.strip().lower() not in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity", "+infinity")
