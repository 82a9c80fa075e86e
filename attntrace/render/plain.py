"""Plain text: every number at the chosen precision, byte-identical on every machine and terminal."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby
from typing import cast

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
    for is_note, run in groupby(step.items, key=lambda item: isinstance(item, Note)):
        if is_note:  # notes in a row are one paragraph
            lines.extend(_visible([note.text for note in cast(Iterator[Note], run)]))
            lines.append("")
            continue
        for item in cast(Iterator[Block], run):
            lines.extend(block(item, precision, step.prefix, blank and item.answer is not None))
            lines.append("")
    return "\n".join(lines) + "\n"


def _visible(texts: list[str]) -> list[str]:
    """visible() of each text; a text of printable characters alone has no control or bidi character to escape"""
    return texts if all(map(str.isprintable, texts)) else [visible(text) for text in texts]


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
    padded = [left(label, label_width) for label in labels]
    widths = [max(width(head), *map(len, column)) for head, column in zip(heads, zip(*texts))]  # a cell is ASCII
    # or ⋯, so its width is its length
    lines = [f"{visible(prefix + b.title)}  [{len(b.rows)} x {len(b.cols)}]"]
    chunks = runs(widths, WIDTH - label_width, 2)
    for start, stop in chunks:
        if len(chunks) > 1:
            named = [h for k, h in enumerate(heads[start:stop], start) if not (hidden_cols and k == len(cols) // 2)]
            lines.append(f"(columns {named[0]} to {named[-1]})" if named else f"({heads[start]})")
        lines.append((" " * label_width + "".join("  " + right(head, w) for head, w in
                                                  zip(heads[start:stop], widths[start:stop]))).rstrip())
        row = "".join(f"  %{w}s" for w in widths[start:stop])  # one % for a row's cells, right-aligned by length
        shown_rows = [(label + row % tuple(numbers[start:stop])).rstrip() for label, numbers in zip(padded, texts)]
        if hidden_rows:
            shown_rows.insert(len(rows) // 2, hidden_line(hidden_rows, "row"))
        lines.extend(shown_rows)
    if hidden_cols:
        lines.append(hidden_line(hidden_cols, "column") + f" (shown: the first and last {len(cols) // 2})")
    return lines
