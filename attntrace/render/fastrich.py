"""A rich Table and Text drawn straight to the segments rich's own layout gives them, when nothing needs laying out.

rich measures, pads, wraps and crops every cell and line through its general machinery, which is most of the time of
a run with a thousand heads; our tables (every cell one line that fits) and titles (lines that fit) never need it.
Anything else is drawn by rich itself. Only rich's public API is used; tests/render/test_fastrich.py checks the drawing
against rich's own, and pyproject.toml keeps rich to the releases it passed on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from weakref import WeakKeyDictionary

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Span, Text

_AWKWARD = re.compile("[\t\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")  # what rich would expand, or break a line at
Runs = list[tuple[int, int, Style | None]]  # a cell's segments as (start, stop, style) in its text
_KNOWN: WeakKeyDictionary[Console, dict[tuple[object, ...], Runs]] = WeakKeyDictionary()  # each console's cells drawn
# so far, by length, style and spans
_KEPT = 10_000


class FastText(Text):
    """rich Text, drawn without wrapping when it is one line that fits"""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterable[Segment]:
        plain = self.plain
        if "\n" in plain or "\t" in plain or (self.justify or options.justify or "default") != "default" \
                or cell_len(plain) > options.max_width:
            yield from super().__rich_console__(console, options)
            return
        if console.color_system is None and not console.record:  # no style reaches the output
            yield Segment(plain)
            if self.end:
                yield Segment(self.end)
            return
        yield from _joined(self, plain).render(console, end=self.end)


class FastTable(Table):
    """a rich Table (its columns and cells as rich keeps them), drawn without measuring or wrapping cell by cell"""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        drawn = self._drawn(console, options)
        if drawn is None:
            yield from super().__rich_console__(console, options)
        else:
            yield from drawn

    def _simple(self) -> bool:
        """whether the table is one this draws: a box with edges and a header, padding of one space a side, no titles,
        footers, rules between rows or widths of its own; left-justified columns that never wrap"""
        return bool(self.box) and self.show_edge and self.show_header and not self.show_footer and not self.show_lines \
            and not self.leading and not self.expand and self.width is None and self.min_width is None \
            and not self.title and not self.caption and self.padding == (0, 1, 0, 1) and self.pad_edge \
            and not self.collapse_padding and bool(self.columns) \
            and not any(row.end_section for row in self.rows) \
            and all(c.justify == "left" and c.no_wrap and c.width is None and c.min_width is None
                    and c.max_width is None and c.ratio is None for c in self.columns)

    def _drawn(self, console: Console, options: ConsoleOptions) -> list[Segment] | None:
        """the table's segments, exactly as rich's Table gives them; None when it is not simple"""
        if not self._simple():
            return None
        columns = [[column.header, *column.cells] for column in self.columns]
        filled, widths = [], []
        for cells in columns:
            measured: list[tuple[str, int]] = []
            for cell in cells:
                found = _measured(cell)
                if found is None:
                    return None
                measured.append(found)
            width = max(size for _, size in measured) + 2  # as wide as its widest cell, and a space a side
            filled.append([f" {text}{' ' * (width - 1 - size)}" for text, size in measured])
            widths.append(width)
        if sum(widths) > options.max_width - len(widths) - 1 or min(widths) < 3:  # the edges and lines between
            return None  # rich would shrink the columns, or draw a column of empty cells blank
        assert self.box is not None
        get_style = console.get_style
        border = get_style(self.style or "") + get_style(self.border_style or "")
        box = self.box.substitute(options, safe=console.safe_box if self.safe_box is None else self.safe_box)
        edges = [(box.head_left, box.head_right, box.head_vertical), (box.mid_left, box.mid_right, box.mid_vertical),
                 (box.foot_left, box.foot_right, box.foot_vertical)]
        rows = list(zip(*filled))
        last = len(rows) - 1
        if console.color_system is None and not console.record:  # no style reaches the output: the table is its text
            lines = [box.get_top(widths)]
            for index, row in enumerate(rows):
                left, right, divider = edges[0 if index == 0 else (2 if index == last else 1)]
                lines.append(left + divider.join(row) + right)
                if index == 0:
                    lines.append(box.get_row(widths, "head", edge=True))
            lines.append(box.get_bottom(widths))
            return [Segment("\n".join(lines) + "\n", border)]
        padding = get_style("none")  # a Padding's own style, around each cell
        known = _KNOWN.setdefault(console, {})
        if len(known) > _KEPT:
            known.clear()
        new_line = Segment.line()
        out = [Segment(box.get_top(widths), border), new_line]
        header = get_style(self.header_style or "")
        styles = [(header + get_style(column.header_style), get_style(column.style or "")) for column in self.columns]
        for index, row in enumerate(rows):
            row_style = Style.null() if index == 0 else get_style(self.get_row_style(console, index - 1))
            opening, closing, between = (Segment(edge, border) for edge in edges[0 if index == 0 else (2 if index == last else 1)])
            if not between.text.strip():
                between = Segment(between.text, row_style.background_style + between.style)
            out.append(opening)
            for k, (text, cells, (head_style, column_style)) in enumerate(zip(row, columns, styles)):
                if k:
                    out.append(between)
                style = (head_style if index == 0 else column_style) + row_style
                cell = cells[index]
                assert isinstance(cell, (str, Text))
                key = (len(text), style, cell.style, *cell.spans) if isinstance(cell, Text) else (len(text), style)
                runs = known.get(key)
                if runs is None:
                    runs = known[key] = _runs(console, cell, text, style, padding)
                out.extend([Segment(text[start:stop], run_style) for start, stop, run_style in runs])
            out.append(closing)
            out.append(new_line)
            if index == 0:
                out.append(Segment(box.get_row(widths, "head", edge=True), border))
                out.append(new_line)
        out.append(Segment(box.get_bottom(widths), border))
        out.append(new_line)
        return out


def _measured(cell: object) -> tuple[str, int] | None:
    """the cell's text and its width on screen, or None when it is not one line of Text, nor an empty heading"""
    if isinstance(cell, str):
        return ("", 0) if cell == "" else None
    if not isinstance(cell, Text) or cell.justify not in (None, "left") or cell.no_wrap is False \
            or cell.end not in ("\n", ""):
        return None
    plain = cell.plain
    if plain.isascii() and plain.isprintable():
        return plain, len(plain)
    if _AWKWARD.search(plain):
        return None
    return plain, cell_len(plain)


def _joined(text: Text, plain: str) -> Text:
    """the line as rich joins the lines it wrapped: the text's own style becomes a span over it"""
    return Text(plain, end="", spans=[Span(0, len(plain), text.style), *text.spans] if text.style else list(text.spans))


def _runs(console: Console, cell: str | Text, text: str, style: Style, padding: Style) -> Runs:
    """a cell's segments as rich draws them, in " " + the cell's text filled out with spaces + " ": a space, the text
    (its own style a span over the spaces too) in its runs of style, and a space, all under the cell's style. The same
    for every cell of that length, style and spans, whatever its characters"""
    inner = _joined(cell, text[1:-1]) if isinstance(cell, Text) else Text(text[1:-1], end="")
    parts = [Segment(" ", padding), *inner.render(console), Segment(" ", padding)]
    if style:
        parts = [Segment(part, style + part_style) for part, part_style, _ in parts]
    runs, at = [], 0
    for part in parts:
        runs.append((at, at + len(part.text), part.style))
        at += len(part.text)
    return runs
