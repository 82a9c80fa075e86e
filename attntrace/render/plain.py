"""Plain text: every number at the chosen precision, byte-identical on every machine and terminal."""

from __future__ import annotations

from attntrace.render.escape import visible
from attntrace.render.layout import cells, gap_head, hidden_line, runs, shown
from attntrace.views.page import Block, Note, Step
from attntrace.views.text import left, right, width

WIDTH = 80  # fixed, whatever the terminal: two students' files must diff cleanly


def render_step(step: Step, precision: int, blank: bool = False) -> str:
    """the step as text; blank leaves every cell to be answered empty, for a worksheet (what is given, such as rope's
    angles or an ALiBi bias, stays)"""
    heading = visible(step.heading)
    lines = [heading, "=" * width(heading), ""]
    for k, item in enumerate(step.items):
        lines.extend([visible(item.text)] if isinstance(item, Note) else
                     block(item, precision, step.prefix, blank and item.answer is not None))
        if not (isinstance(item, Note) and k + 1 < len(step.items) and isinstance(step.items[k + 1], Note)):
            lines.append("")
    return "\n".join(lines) + "\n"


def block(b: Block, precision: int, prefix: str, blank: bool = False) -> list[str]:
    rows, hidden_rows = shown(len(b.rows))
    cols, hidden_cols = shown(len(b.cols))
    texts = cells(b.values, rows, cols, precision)
    if blank:
        texts = [["_" * max(8, len(text)) for text in row] for row in texts]
    labels = [visible(b.rows[r]) for r in rows]
    heads = [visible(b.cols[c]) for c in cols]
    if hidden_cols:  # the gap marked where it is
        heads.insert(len(cols) // 2, gap_head(hidden_cols))
        texts = [[*row[:len(cols) // 2], "⋯", *row[len(cols) // 2:]] for row in texts]
    label_width = max(width(s) for s in labels)
    widths = [max(width(heads[k]), *(len(row[k]) for row in texts)) for k in range(len(heads))]
    lines = [f"{visible(prefix + b.title)}  [{len(b.rows)} x {len(b.cols)}]"]
    chunks = runs(widths, WIDTH - label_width, 2)
    for start, stop in chunks:
        if len(chunks) > 1:
            named = [h for k, h in enumerate(heads[start:stop], start) if not (hidden_cols and k == len(cols) // 2)]
            lines.append(f"(columns {named[0]} to {named[-1]})" if named else f"({heads[start]})")
        lines.append(_line(" " * label_width, heads[start:stop], widths[start:stop]))
        for k in range(len(rows)):
            if hidden_rows and k == len(rows) // 2:
                lines.append(hidden_line(hidden_rows, "row"))
            lines.append(_line(left(labels[k], label_width), texts[k][start:stop], widths[start:stop]))
    if hidden_cols:
        lines.append(hidden_line(hidden_cols, "column") + f" (shown: the first and last {len(cols) // 2})")
    return lines


def _line(label: str, cells: list[str], widths: list[int]) -> str:
    return (label + "".join("  " + right(cell, w) for cell, w in zip(cells, widths))).rstrip()
