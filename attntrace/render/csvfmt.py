"""CSV: each block under a "# Step N · title" line, then a header row and one row per label. Titles and notes (the
# lines) are for a person, in their language; the header and the labels are data, the same in every language."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from attntrace.escape import comment, spreadsheet
from attntrace.render.layout import cells
from attntrace.views.page import Block, Note, Step

ROWS_AT_ONCE = 1 << 18  # cells formatted at a time


def render_step(step: Step, precision: int) -> str:
    return "".join(stream_step(step, precision))


def stream_step(step: Step, precision: int) -> Iterator[str]:
    """render_step's text, a block of rows at a time"""
    for item in step.items:
        if isinstance(item, Note):
            yield comment(item.text) + "\n"
        else:
            yield from _block(item, precision, step.prefix)
        yield "\n"


def _block(b: Block, precision: int, prefix: str) -> Iterator[str]:
    labels, columns = b.csv_rows, b.csv_cols
    yield comment(prefix + b.title) + "\n" + _line(["", *map(spreadsheet, columns)])
    every_col = list(range(len(columns)))
    step = max(1, ROWS_AT_ONCE // max(1, len(every_col)))
    for start in range(0, len(labels), step):
        rows = list(range(start, min(start + step, len(labels))))
        shown = cells(b.values, rows, every_col, precision)
        if every_col:  # numbers never need quoting: only the label is written by the csv module
            yield "".join(_line([spreadsheet(labels[r]), ""])[:-1] + ",".join(row) + "\n" for r, row in zip(rows, shown))
        else:
            yield "".join(_line([spreadsheet(labels[r])]) for r in rows)


def _line(fields: list[str]) -> str:
    """one CSV row as the csv module writes it"""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(fields)
    return out.getvalue()
