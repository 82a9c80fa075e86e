"""A step as the lines a terminal shows, drawn as render/table.py draws it (the same titles, tables and notes, in the
same colours), in parts: each table is drawn only when first shown and then kept, so that a screen of a large step
costs the lines on it, and a screen seen before costs nothing. Every cell carries its place, for a click, and the cells
a change touched are marked."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rich.console import Console, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.strip import Strip

from attntrace.render.escape import visible
from attntrace.render.layout import shown
from attntrace.render.table import Look, console, tables
from attntrace.views.page import Block, Note, Step

SELECTED = Style(reverse=True, bold=True)
CHANGED = Style(bgcolor="dark_magenta", bold=True)
ABOVE, BELOW = 3, 1  # a table's lines above its first row (its edge, its header, the rule under it) and below its last
KEPT = 512  # tables kept drawn; more are dropped all at once

CellKey = tuple[int, int, int]  # (table among the step's tables, row, column), from 0


@dataclass(eq=False)
class Part:
    """a piece of a step, one renderable: a heading, a note, a table's title, one of its tables, a blank line"""

    renderable: RenderableType
    height: int
    cells: dict[CellKey, int] = field(default_factory=dict)  # each cell's line in the part
    lines: list[Strip] | None = None  # drawn when first needed


class Stop(Exception):
    """what was being drawn ahead is no longer wanted"""


def _go_on() -> None:
    """drawing on the screen's own thread never pauses"""


class Drawer:
    """draws steps in parts and keeps what it drew. A thread may draw ahead meanwhile: it holds no lock (it may pause
    anywhere), so the two may draw the same part, and the first to finish gives it its lines"""

    def __init__(self, look: Look = Look()) -> None:
        self.look = look
        self._kept: dict[tuple[Any, ...], tuple[object, list[Part]]] = {}
        self._local = threading.local()

    def step(self, step: Step, precision: int, width: int, changed: list[np.ndarray | None],
             pause: Callable[[], None] = _go_on) -> list[Part]:
        """the step's parts, as render/table.py's render_step lays them out: its heading, then each item and a blank;
        the same list for the same step drawn the same way. pause is called before each table is laid out"""
        key = ("step", id(step), precision, width, tuple(None if c is None else c.tobytes() for c in changed))
        held = self._kept.get(key)
        if held is not None and held[0] is step:
            return held[1]
        parts = [self.text(Text(visible(step.heading), style="bold underline"), width), self.blank(width)]
        k = 0
        for item in step.items:
            if isinstance(item, Note):
                parts.append(self.text(Text(visible(item.text), style="italic"), width))
            else:
                pause()
                parts.extend(self.block(item, k, step.prefix, precision, width, changed[k]))
                k += 1
            parts.append(self.blank(width))
        self._keep(key, step, parts)
        return parts

    def block(self, b: Block, k: int, prefix: str, precision: int, width: int, changed: np.ndarray | None) -> list[Part]:
        """the k-th table of a step in parts, each cell carrying its place and the changed ones marked"""
        key = (id(b), k, prefix, precision, width, None if changed is None else changed.tobytes())
        held = self._kept.get(key)
        if held is not None and held[0] is b:  # the entry holds b, so no other block can have its id meanwhile
            return held[1]
        drawn = tables(b, precision, prefix, width, self.look)
        places = _cells(b, drawn)
        parts: list[Part] = []
        for index, renderable in enumerate(drawn):
            if isinstance(renderable, Table):
                part = Part(renderable, ABOVE + renderable.row_count + BELOW)
                for (r, c), (text, row) in places.get(index, {}).items():
                    text.stylize(Style(meta={"cell": (k, r, c)}))
                    if changed is not None and changed[r, c]:
                        text.stylize(CHANGED)
                    part.cells[(k, r, c)] = ABOVE + row
                parts.append(part)
            else:
                parts.append(self.text(renderable, width))
        self._keep(key, b, parts)
        return parts

    def _keep(self, key: tuple[Any, ...], owner: object, parts: list[Part]) -> None:
        if len(self._kept) >= KEPT:
            self._kept.clear()
        self._kept[key] = (owner, parts)

    def lines(self, part: Part, width: int) -> list[Strip]:
        """the part's lines, drawn the first time they are asked for"""
        lines = part.lines
        if lines is None:
            lines = part.lines = self._draw(part.renderable, width)
        return lines

    def ahead(self, part: Part, width: int, pause: Callable[[], None]) -> None:
        """draw the part's lines from another thread, calling pause after each line (it may raise Stop)"""
        if part.lines is not None:
            return
        own = self._console(width)
        lines = []
        rendered = own.render(part.renderable, own.options.update_width(width))
        for line in Segment.split_and_crop_lines(rendered, width, include_new_lines=False, pad=True):
            lines.append(Strip(line, width))
            pause()
        if part.lines is None:
            part.lines = lines

    def _console(self, width: int) -> Console:
        """this thread's console, width columns wide"""
        own: Console | None = getattr(self._local, "console", None)
        if own is None or own.width != width:
            own = self._local.console = console(io.StringIO(), True, width)
        return own

    def _draw(self, renderable: RenderableType, width: int) -> list[Strip]:
        own = self._console(width)
        return [Strip(line, width) for line in own.render_lines(renderable, own.options.update_width(width), pad=True)]

    def text(self, text: RenderableType, width: int) -> Part:
        """a part drawn at once: a line or a few of words"""
        lines = self._draw(text, width)
        return Part(text, len(lines), lines=lines)

    def blank(self, width: int) -> Part:
        return self.text(Text(""), width)


def _cells(b: Block, drawn: list[RenderableType]) -> dict[int, dict[tuple[int, int], tuple[Text, int]]]:
    """for each table render/table.py drew for the block (by its place among the drawn parts), the text of each shown
    cell (row, column of the block, from 0) and the table row it is on: column runs in order, each table's first
    column the labels, and a marker where rows or columns are hidden"""
    rows, hidden_rows = shown(len(b.rows))
    cols, hidden_cols = shown(len(b.cols))
    row_at: list[int | None] = list(rows)
    col_at: list[int | None] = list(cols)
    if hidden_rows:
        row_at.insert(len(rows) // 2, None)
    if hidden_cols:
        col_at.insert(len(cols) // 2, None)
    out: dict[int, dict[tuple[int, int], tuple[Text, int]]] = {}
    columns = iter(col_at)
    for index, table in enumerate(drawn):
        if not isinstance(table, Table):
            continue
        found = out.setdefault(index, {})
        for column in table.columns[1:]:
            c = next(columns, None)
            if c is None:
                continue
            for row, (r, text) in enumerate(zip(row_at, column.cells)):
                if r is not None and isinstance(text, Text):
                    found[(r, c)] = (text, row)
    return out


def highlighted(line: Strip, cell: CellKey, style: Style = SELECTED) -> Strip:
    """the line with one cell's segments restyled"""
    out = []
    for segment in line:
        seg_style = segment.style
        if seg_style is not None and seg_style.meta.get("cell") == cell:
            segment = Segment(segment.text, seg_style + style, segment.control)
        out.append(segment)
    return Strip(out, line.cell_length)
