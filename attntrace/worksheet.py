"""Worksheets: the problem, then a table to fill in for each step; with the key, the hand-calculated answers."""

from __future__ import annotations

from typing import Any

from attntrace.contract import floats
from attntrace.trace import Trace

ANSWER_KEYS = ("q", "k", "v", "scores", "weights", "output")


def answer_sheet(t: Trace, blank: bool) -> dict[str, Any]:
    """an answer sheet in the --format json layout; blank = every cell null, for a student to fill in"""

    def cells(values: Any) -> Any:
        listed = floats(values)
        return [[None for _ in row] for row in listed] if blank else listed

    return {
        "query": t.query,
        "tokens": list(t.problem.labels),
        "heads": [{"head": a + 1, **{key: cells(getattr(h, key)) for key in ANSWER_KEYS}} for a, h in enumerate(t.heads)],
        "output": cells(t.output),
    }


def intro(t: Trace, precision: int, key: bool, markdown: bool) -> str:
    title = t.problem.name or "self-attention"
    scale = ("divide the scores by sqrt(d_k)" if t.problem.scale is True else "do not scale the scores"
             if t.problem.scale is False else f"divide the scores by {t.problem.scale:g}")
    which = f"input {t.query} only (steps 4 to 7)" if t.query is not None else "every input"
    lines = [
        f"{'# ' if markdown else ''}Worksheet: {title}{' · ANSWER KEY' if key else ''}",
        "",
        f"Compute self-attention for {which}. Round every intermediate to {precision} decimal"
        f"{'s' * (precision != 1)} and carry the rounded value into the next step; {scale}.",
        "",
    ]
    return "\n".join(lines) + "\n"
