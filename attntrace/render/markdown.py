"""Markdown: each block a titled pipe table, for worksheets, wikis and notebooks."""

from __future__ import annotations

from attntrace.escape import markdown as _escape
from attntrace.language import _
from attntrace.render.layout import cells, gap_head, hidden_line, shown
from attntrace.views.page import Block, Note, Step


def render_step(step: Step, precision: int, blank: bool = False) -> str:
    lines = [f"## {_escape(step.heading)}", ""]
    for k, item in enumerate(step.items):
        lines.extend([f"- {_escape(item.text)}"] if isinstance(item, Note) else
                     block(item, precision, step.prefix, blank and item.answer is not None))  # what is given stays
        if not (isinstance(item, Note) and k + 1 < len(step.items) and isinstance(step.items[k + 1], Note)):
            lines.append("")
    return "\n".join(lines) + "\n"


def block(b: Block, precision: int, prefix: str, blank: bool = False) -> list[str]:
    """a pipe table; blank leaves the cells empty for a worksheet"""
    rows, hidden_rows = shown(len(b.rows))
    cols, hidden_cols = shown(len(b.cols))
    lines = [f"**{_escape(prefix + b.title)}** [{len(b.rows)} x {len(b.cols)}]", ""]
    heads = [_escape(b.cols[c]) for c in cols]
    texts = cells(b.values, rows, cols, precision)
    if hidden_cols:  # the gap marked where it is
        heads.insert(len(cols) // 2, gap_head(hidden_cols))
        texts = [[*row[:len(cols) // 2], "⋯", *row[len(cols) // 2:]] for row in texts]
    lines.append("| | " + " | ".join(heads) + " |")
    lines.append("|---|" + "---:|" * len(heads))
    for k, r in enumerate(rows):
        if hidden_rows and k == len(rows) // 2:
            lines.append("| " + _("⋮ {n} hidden").format(n=hidden_rows) + " |" + " ⋮ |" * len(heads))
        row = ["   "] * len(heads) if blank else texts[k]
        lines.append(f"| {_escape(b.rows[r])} | " + " | ".join(row) + " |")
    for count, what in ((hidden_rows, "row"), (hidden_cols, "column")):
        if count:
            lines.extend(["", f"*{hidden_line(count, what)}*"])
    return lines
