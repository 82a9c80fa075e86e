"""CSV: each block under a "# Step N · title" line, then a header row and one row per label."""

from __future__ import annotations

import csv
import io
from typing import Any

from attntrace.render.escape import comment, spreadsheet
from attntrace.render.layout import cells
from attntrace.views.page import Block, Note, Step


def render_step(step: Step, precision: int) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for item in step.items:
        if isinstance(item, Note):
            out.write(comment(item.text) + "\n")
        else:
            _block(writer, out, item, precision, step.prefix)
        out.write("\n")
    return out.getvalue()


def _block(writer: Any, out: io.StringIO, b: Block, precision: int, prefix: str) -> None:
    out.write(comment(prefix + b.title) + "\n")
    writer.writerow(["", *map(spreadsheet, b.cols)])
    every_row, every_col = list(range(len(b.rows))), list(range(len(b.cols)))
    for label, row in zip(b.rows, cells(b.values, every_row, every_col, precision)):
        writer.writerow([spreadsheet(label), *row])
