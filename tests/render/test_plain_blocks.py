"""Plain text lays a block out a row at a time; it must read exactly as laying it out a cell at a time does, for any
labels, sizes (columns split into runs, rows and columns hidden), precisions and blank worksheets."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attntrace.escape import visible
from attntrace.render import plain
from attntrace.render.layout import MAX_SHOWN, cells, gap_head, hidden_line, runs, shown
from attntrace.views.page import Block
from attntrace.views.text import left, right, width

LABELS = st.lists(st.sampled_from(["a", "x1", "我", "😀", "👨\u200d👩\u200d👧", "é", "e\u0301", "\x1b", "⋯", " "]),
                  min_size=1, max_size=5).map("".join)
NUMBERS = st.sampled_from([0.0, -0.0, 1.5, -2.25, 1e-9, -1e-9, 12345.678, -98765.4321, 0.5, 2.0, -np.inf, 1e12])


def cell_by_cell(b: Block, precision: int, prefix: str, blank: bool = False) -> list[str]:
    """the block laid out one cell at a time, each padded by its measured width: the reference"""
    rows, hidden_rows = shown(len(b.rows))
    cols, hidden_cols = shown(len(b.cols))
    texts = cells(b.values, rows, cols, precision)
    if blank:
        texts = [["_" * max(8, len(text)) for text in row] for row in texts]
    labels = [visible(b.rows[r]) for r in rows]
    heads = [visible(b.cols[c]) for c in cols]
    if hidden_cols:
        heads.insert(len(cols) // 2, gap_head(hidden_cols))
        texts = [[*row[:len(cols) // 2], "⋯", *row[len(cols) // 2:]] for row in texts]
    label_width = max(width(s) for s in labels)
    widths = [max(width(heads[k]), *(width(row[k]) for row in texts)) for k in range(len(heads))]
    lines = [f"{visible(prefix + b.title)}  [{len(b.rows)} x {len(b.cols)}]"]

    def line(label: str, items: list[str], sizes: list[int]) -> str:
        return (label + "".join("  " + right(item, w) for item, w in zip(items, sizes))).rstrip()

    chunks = runs(widths, plain.WIDTH - label_width, 2)
    for start, stop in chunks:
        if len(chunks) > 1:
            named = [h for k, h in enumerate(heads[start:stop], start) if not (hidden_cols and k == len(cols) // 2)]
            lines.append(f"(columns {named[0]} to {named[-1]})" if named else f"({heads[start]})")
        lines.append(line(" " * label_width, heads[start:stop], widths[start:stop]))
        for k in range(len(rows)):
            if hidden_rows and k == len(rows) // 2:
                lines.append(hidden_line(hidden_rows, "row"))
            lines.append(line(left(labels[k], label_width), texts[k][start:stop], widths[start:stop]))
    if hidden_cols:
        lines.append(hidden_line(hidden_cols, "column") + f" (shown: the first and last {len(cols) // 2})")
    return lines


@st.composite
def blocks(draw: st.DrawFn) -> Block:
    n = draw(st.sampled_from([1, 2, 5, MAX_SHOWN, MAX_SHOWN + 1, MAX_SHOWN + 7]))
    m = draw(st.sampled_from([1, 3, 9, MAX_SHOWN + 2]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    values = rng.choice(np.array([draw(NUMBERS) for _ in range(4)]), size=(n, m)) * rng.choice([1.0, 10.0], size=(n, m))
    labels = draw(st.lists(LABELS, min_size=3, max_size=3))
    heads = draw(st.lists(LABELS, min_size=3, max_size=3))
    return Block("T", "x", tuple(labels[i % 3] + str(i) for i in range(n)), tuple(heads[i % 3] * (1 + i % 4)
                                                                                   for i in range(m)), values)


@settings(max_examples=150, deadline=None)
@given(blocks(), st.integers(0, 6), st.booleans())
def test_a_block_laid_out_a_row_at_a_time_reads_as_laid_out_a_cell_at_a_time(block, precision, blank):
    assert plain.block(block, precision, "Step 3 · ", blank) == cell_by_cell(block, precision, "Step 3 · ", blank)
