"""Plain text: every number at the chosen precision, byte-identical on every machine and terminal."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby
from typing import cast

from attntrace.escape import visible
from attntrace.language import _
from attntrace.render.layout import cells, gap_head, hidden_line, runs, shown
from attntrace.views.page import Block, Note, Step
from attntrace.views.text import cut, fits, left, right, width, wrapped

WIDTH = 80  # fixed, whatever the terminal: two students' files must diff cleanly; no line is wider
INDENT = "  "  # before each line of a note or title after its first, so that a broken line reads as one
HEAD_KEPT = 12  # a column's head is cut no shorter than this (or its numbers) before a label is cut to make room


def render_step(step: Step, precision: int, blank: bool = False, whole: bool = False) -> str:
    """the step as text; blank leaves every cell to be answered empty, for a worksheet (what is given, such as rope's
    angles or an ALiBi bias, stays); whole keeps every label and head whole, as a worksheet that check reads back by
    them needs, even where a line is then wider than WIDTH"""
    heading = wrapped(visible(step.heading), WIDTH)
    lines = [*heading, "=" * max(map(width, heading)), ""]
    for is_note, run in groupby(step.items, key=lambda item: isinstance(item, Note)):
        if is_note:  # notes in a row are one paragraph
            for text in _visible([note.text for note in cast(Iterator[Note], run)]):
                lines.extend(wrapped(text, WIDTH, INDENT))
            lines.append("")
            continue
        for item in cast(Iterator[Block], run):
            lines.extend(block(item, precision, step.prefix, blank and item.answer is not None, whole))
            lines.append("")
    return "\n".join(lines) + "\n"


def _visible(texts: list[str]) -> list[str]:
    """visible() of each text; a text of printable characters alone has no control or bidi character to escape"""
    return texts if all(map(str.isprintable, texts)) else [visible(text) for text in texts]


def block(b: Block, precision: int, prefix: str, blank: bool = False, whole: bool = False) -> list[str]:
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
    digits = [max(map(len, column)) for column in zip(*texts)]  # a cell is ASCII or ⋯: its width is its length
    if not whole:
        labels, heads = _fitted(labels, heads, digits)
    fit = (lambda text: [text]) if whole else (lambda text: wrapped(text, WIDTH, INDENT))  # a worksheet's lines are
    # read back as they are
    label_width = max(width(s) for s in labels)
    padded = [left(label, label_width) for label in labels]
    widths = [max(width(head), n) for head, n in zip(heads, digits)]
    title, shape = visible(prefix + b.title), f"[{len(b.rows)} x {len(b.cols)}]"
    lines = [f"{title}  {shape}"] if whole else _title(title, shape)
    places = [str(c + 1) for c in cols]  # each column's place, for a range too wide in heads
    if hidden_cols:
        places.insert(len(cols) // 2, "")
    chunks = runs(widths, WIDTH - label_width, 2)
    for start, stop in chunks:
        if len(chunks) > 1:
            lines.extend(fit(_range(heads, places, start, stop, whole)))
        lines.append((" " * label_width + "".join("  " + right(head, w) for head, w in
                                                  zip(heads[start:stop], widths[start:stop]))).rstrip())
        row = "".join(f"  %{w}s" for w in widths[start:stop])  # one % for a row's cells, right-aligned by length
        shown_rows = [(label + row % tuple(numbers[start:stop])).rstrip() for label, numbers in zip(padded, texts)]
        if hidden_rows:
            shown_rows.insert(len(rows) // 2, hidden_line(hidden_rows, "row"))
        lines.extend(shown_rows)
    if hidden_cols:
        lines.extend(fit(_("{hidden} (shown: the first and last {n})").format(hidden=hidden_line(hidden_cols, "column"),
                                                                              n=len(cols) // 2)))
    return lines


def _fitted(labels: list[str], heads: list[str], numbers: list[int]) -> tuple[list[str], list[str]]:
    """labels and heads cut with an ellipsis where a line would be wider than WIDTH: first the labels, to leave each
    column its numbers and HEAD_KEPT of its head, then the heads; each further (a label to a fifth of the width, a
    head to HEAD_KEPT) when that saves a run of columns. A number is never cut"""
    columns = [max(width(head), n) for head, n in zip(heads, numbers)]
    kept = max((min(w, max(n, HEAD_KEPT)) for w, n in zip(columns, numbers)), default=0)
    room = max(WIDTH - 2 - kept, HEAD_KEPT)
    if max(width(s) for s in labels) > room:
        fewest = min((room, WIDTH // 5), key=lambda w: len(runs([min(c, max(WIDTH - 2 - w, n)) for c, n in
                                                                  zip(columns, numbers)], WIDTH - w, 2)))
        labels = [cut(label, fewest, "...") for label in labels]  # plain text is ASCII but for its labels: no "…"
    label_width = max(width(s) for s in labels)
    room = WIDTH - 2 - label_width
    if max(columns, default=0) > room:  # cut to the room, or further to HEAD_KEPT when that saves a run
        fewest = min((room, HEAD_KEPT), key=lambda w: len(runs([min(c, max(w, n)) for c, n in zip(columns, numbers)],
                                                                WIDTH - label_width, 2)))
        heads = [cut(head, max(fewest, n), "...") for head, n in zip(heads, numbers)]
    return labels, heads


def _title(title: str, shape: str) -> list[str]:
    """a block's title and shape, on as many lines as it takes; the shape is never broken"""
    line = f"{title}  {shape}"
    if fits(line, WIDTH):
        return [line]
    lines = wrapped(title, WIDTH, INDENT)
    if width(lines[-1]) + 2 + len(shape) <= WIDTH:
        lines[-1] += "  " + shape
    else:
        lines.append(INDENT + shape)
    return lines


def _range(heads: list[str], places: list[str], start: int, stop: int, whole: bool) -> str:
    """which columns a run of a split block holds: by their heads, or by their places when the heads are too wide (and
    not to be kept whole)"""
    named = [k for k in range(start, stop) if places[k]]  # not the gap's marker
    if not named:
        return f"({heads[start]})"
    text = _("(columns {first} to {last})").format(first=heads[named[0]], last=heads[named[-1]])
    if whole or width(text) <= WIDTH:
        return text
    return _("(columns {first} to {last})").format(first=places[named[0]], last=places[named[-1]])


def fitted(text: str) -> str:
    """text laid out elsewhere (a worksheet's instructions) with each line wider than WIDTH broken at spaces, its
    further lines indented past its own indent"""
    lines = text.split("\n")
    if all(fits(line, WIDTH) for line in lines):
        return text
    out = []
    for line in lines:
        indent = line[:len(line) - len(line.lstrip(" "))]
        out.extend(wrapped(line, WIDTH, indent + INDENT))
    return "\n".join(out)
