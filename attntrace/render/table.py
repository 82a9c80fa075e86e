"""Rich tables in colour, after the seed article's figures: inputs green, Q red, K orange, V purple.

Every table fits the width it is given: a long label is cut with an ellipsis, columns go into blocks that fit, and
when not even one number fits beside a label the block is listed one cell per line. A number is never cut.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np
from rich import box
from rich.color import Color
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.style import Style
from rich.text import Span, Text

from attntrace.collector import paused
from attntrace.escape import visible
from attntrace.language import N_, _, ngettext
from attntrace.render.fastrich import FastTable, FastText
from attntrace.render.layout import cells, gap_head, hidden_line, part, runs, shown
from attntrace.views.page import Block, Note, Step
from attntrace.views.text import cut, lines, right, wrapped
from attntrace.views.text import width as width_of

COLOURS = {
    "x": "green", "w": "grey70", "q": "red", "k": "dark_orange", "v": "medium_purple",
    "scores": "dodger_blue1", "weights": "dodger_blue1", "weighted": "yellow", "output": "green4",
}
BARS = "▁▂▃▄▅▆▇█"  # the heatmap's bars: a weight against the largest in its row
ASCII_BARS = ".:-=+*#@"
LEGEND = N_("heatmap: bar and shade = the weight against its row's largest, from the least to the largest: {bars}")
PALETTES = {  # the shade of a weight from none (low) to its row's largest (high), with the digits' colour on each
    "terminal": ((88, 88, 88), (25, 110, 230), "#ffffff", "#ffffff"),  # grey to blue at a like lightness: a
    # terminal's background, dark or light, is unknown, so neither end may be it
    "light": ((240, 243, 248), (25, 110, 230), "#000000", "#ffffff"),  # paper: white to blue, the larger the darker
    "dark": ((38, 42, 48), (40, 130, 255), "#ffffff", "#ffffff"),  # a dark page: near-black to blue, the larger the
    # brighter
}
EDGE, GAP = 4, 3  # columns a table takes beyond its cells: its edges and the label's padding; then each column's
_UNBOLD = Style(bold=False)  # a head's padding, apart from the head


@dataclass(frozen=True)
class Look:
    """how the tables are drawn: box lines and bars in Unicode, or in ASCII for terminals that draw those wide"""

    ascii: bool = False
    palette: str = "terminal"  # the heatmap's shades: for a terminal of any background, or a light or dark page

    @property
    def box(self) -> box.Box:
        return box.ASCII if self.ascii else box.SIMPLE_HEAVY

    @property
    def bars(self) -> str:
        return ASCII_BARS if self.ascii else BARS

    @property
    def ellipsis(self) -> str:
        return "..." if self.ascii else "…"


def render_step(step: Step, precision: int, width: int, look: Look = Look()) -> RenderableType:
    parts: list[RenderableType] = [FastText(visible(step.heading), style="bold underline"), FastText("")]
    with paused():
        for k, item in enumerate(step.items):
            if isinstance(item, Note):
                parts.append(FastText("\n".join(wrapped(visible(item.text), width)), style="italic"))  # broken
                # where plain text breaks it, never inside a list of numbers or a formula
            else:
                parts.extend(tables(item, precision, step.prefix, width, look))
            if not (isinstance(item, Note) and k + 1 < len(step.items) and isinstance(step.items[k + 1], Note)):
                parts.append(FastText(""))  # notes in a row are one paragraph, as in plain text
    return _Step(*parts)


class _Step(Group):
    """a step's parts, drawn with the cycle collector paused"""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        with paused():
            yield from super().__rich_console__(console, options)


@dataclass(frozen=True)
class _Column:
    head: str
    cells: list[str]  # already padded to one width, so that digits line up whatever follows them
    values: list[float] | None  # the weights behind a heatmap column's cells; None: no shading (or a gap marker)

    @cached_property
    def width(self) -> int:
        """its cells' width on screen: the digits, and a space and a bar after them in a heatmap"""
        return width_of(self.cells[0]) + (2 if self.values is not None else 0)


def tables(b: Block, precision: int, prefix: str, width: int, look: Look = Look()) -> list[RenderableType]:
    """the block as titled tables, one per run of columns that fits the width; gaps in a huge matrix are marked"""
    rows, hidden_rows = shown(len(b.rows))
    cols, hidden_cols = shown(len(b.cols))
    colour = COLOURS[b.kind]
    heat = b.kind == "weights"
    texts = cells(b.values, rows, cols, precision)
    shown_values = part(b.values, rows, cols)
    number_width = max(len(t) for row in texts for t in row)
    columns = [_column(visible(b.cols[c]), [row[k] for row in texts], shown_values[:, k] if heat else None,
                       number_width) for k, c in enumerate(cols)]
    if hidden_cols:
        marker = gap_head(hidden_cols)
        columns.insert(len(cols) // 2, _Column(marker, ["⋯".rjust(width_of(marker))] * len(rows), None))
    top = np.max(np.where(np.isfinite(shown_values), shown_values, 0.0), axis=1).tolist() if heat else None
    places = [str(c + 1) for c in cols]  # each shown column's place in the matrix, for a range too long in labels
    if hidden_cols:
        places.insert(len(cols) // 2, "⋯")
    labels = [visible(b.rows[r]) for r in rows]
    gap_row = len(rows) // 2 if hidden_rows else None
    if gap_row is not None:
        labels.insert(gap_row, _("⋮ {n} hidden").format(n=hidden_rows))
    widest = max(width_of(c.head) for c in columns)
    widest = max(min(widest, max(number_width + 2, 12)), number_width + (2 if heat else 0))
    label_room = min(max(8, width // 3), width - EDGE - GAP - widest)
    title = [visible(prefix + b.title), f"[{len(b.rows)} x {len(b.cols)}]"]
    out: list[RenderableType] = []
    if label_room < 2:
        out.extend(_listed(b, title, labels, columns, gap_row, width, colour, top, look))
    else:
        bars = [c.width - width_of(c.cells[0]) for c in columns]  # a heatmap cell's space and bar after its digits
        heads = [cut(c.head, max(c.width, 12, number_width + 2) - bar, look.ellipsis) for c, bar in zip(columns, bars)]
        widths = [max(width_of(h) + bar, c.width) for h, c, bar in zip(heads, columns, bars)]  # a head ends where
        # its digits do, before the bar
        label_width, chunks = _label_and_runs(labels, widths, label_room, width)
        labels = [cut(s, label_width, look.ellipsis) for s in labels]
        for start, stop in chunks:
            parts = title + ([_range(heads, places, start, stop, width)] if len(chunks) > 1 else [])
            out.append(FastText("\n".join(lines(parts, width)), style=f"bold {colour}"))
            table = FastTable(box=look.box, header_style=colour, show_edge=True)
            table.add_column("", style="bold", no_wrap=True)
            for k in range(start, stop):
                digits = widths[k] - bars[k]  # a head ends where digits do
                pad = " " * (digits - width_of(heads[k]))  # apart from the head (a style of its own), as a cell's
                table.add_column(_assembled(pad, _UNBOLD, heads[k], ""), justify="left", no_wrap=True)
            drawn = [_cells(columns[i], widths[i], colour, top, look) for i in range(start, stop)]
            for k, label in enumerate(labels):
                if k == gap_row:
                    table.add_row(Text(label), *[Text(right("⋮", widths[i])) for i in range(start, stop)])
                    continue
                r = k - (gap_row is not None and k > gap_row)
                table.add_row(Text(label), *[column[r] for column in drawn])
            out.append(table)
    if heat:
        out.append(FastText("\n".join(wrapped(_(LEGEND).format(bars=look.bars), width)), style="italic"))
    out.extend(FastText(hidden_line(count, what), style="italic")
               for count, what in ((hidden_rows, "row"), (hidden_cols, "column")) if count)
    return out


def _label_and_runs(labels: list[str], widths: list[int], room: int, width: int) -> tuple[int, list[tuple[int, int]]]:
    """the labels' width and the runs of columns: the widest labels that fit, unless cutting them further (to a fifth
    of the width) saves a run of columns"""
    widest = max(width_of(s) for s in labels)
    best: tuple[int, list[tuple[int, int]]] | None = None
    for label_width in (min(widest, room), min(widest, room, max(8, width // 5))):
        chunks = runs(widths, width - label_width - EDGE, GAP)
        if best is None or len(chunks) < len(best[1]):
            best = (label_width, chunks)
    assert best is not None
    return best


def _range(heads: list[str], places: list[str], start: int, stop: int, width: int) -> str:
    """which columns a table of a split block holds: by their heads, or by their places when the heads are too long;
    a run across the gap of a huge matrix names both sides"""
    real = [k for k in range(start, stop) if places[k] != "⋯"]  # a run that starts or ends at the gap marker
    if not real:
        return f"({heads[start]})"
    gap = next((k for k in range(start, stop) if places[k] == "⋯"), None)
    sides = [real] if gap is None or gap in (start, stop - 1) else [[k for k in real if k < gap],
                                                                     [k for k in real if k > gap]]

    def said(names: list[str]) -> str:
        spans = [f"{names[side[0]]}" if len(side) == 1 else
                 _("{first} to {last}").format(first=names[side[0]], last=names[side[-1]]) for side in sides]
        both = spans[0] if len(spans) == 1 else _("{first} and {second}").format(first=spans[0], second=spans[1])
        return ngettext("(column {columns})", "(columns {columns})", len(real)).format(columns=both)

    named = said(heads)
    return named if width_of(named) <= width else said(places)


def _column(head: str, texts: list[str], values: np.ndarray | None, number_width: int) -> _Column:
    return _Column(head, [t.rjust(number_width) for t in texts], None if values is None else values.tolist())  # the
    # numbers are ASCII


def _cells(column: _Column, column_width: int, colour: str, top: list[float] | None, look: Look) -> list[Text]:
    """the column's numbers, each after the spaces that right-align it; those are apart, so a picture places the digits
    where they are"""
    if column.values is None or top is None:
        out = []
        for cell in column.cells:
            digits = cell.lstrip(" ")  # a number, or ⋯: a column a character
            pad = column_width - len(digits)
            out.append(Text(" " * pad + digits, tab_size=8, spans=[Span(pad, pad + len(digits), colour)] if digits else []))
        return out
    return [_heat_cell(digits.lstrip(" "), weight, row_top, column_width, look)
            for digits, weight, row_top in zip(column.cells, column.values, top)]


def _heat_cell(digits: str, weight: float, top: float, column_width: int, look: Look) -> Text:
    """a weight in its shade, with a bar for its share of its row's largest; none for a weight shown as zero"""
    share = _share(weight, top)
    heat, background = _shades(share, look.palette)
    bar = " " if not digits.strip("-0.") else look.bars[round(share * (len(look.bars) - 1))]
    return _assembled(" " * (column_width - width_of(digits) - 1 - width_of(bar)), background, f"{digits} {bar}", heat)


def _assembled(first: str, first_style: str | Style, second: str, second_style: str | Style) -> Text:
    """Text.assemble((first, first_style), (second, second_style)) at once: two pieces of text with no control
    characters, each a span of its style when it has one"""
    spans = [Span(start, stop, style) for start, stop, style in ((0, len(first), first_style),
                                                                 (len(first), len(first) + len(second), second_style))
             if stop > start and style]
    return Text(first + second, tab_size=8, spans=spans)


def _share(weight: float, top: float) -> float:
    """the weight against the largest in its row, from 0 to 1"""
    return 0.0 if top <= 0 or not math.isfinite(weight) else min(max(weight / top, 0.0), 1.0)


def _heat(share: float, palette: str = "terminal") -> Style:
    """the palette's low shade to its high one as the weight grows: in a terminal grey to blue with white digits,
    which reads the same on a dark screen and a white one"""
    return _shades(share, palette)[0]


def _shades(share: float, palette: str) -> tuple[Style, Style]:
    """_heat's style, and its background alone (for the spaces before the digits)"""
    low, high, low_text, high_text = PALETTES[palette]
    return _shade(tuple(int(a + (b - a) * share) for a, b in zip(low, high)), low_text if share < 0.5 else high_text)


@lru_cache(maxsize=4096)
def _shade(rgb: tuple[int, ...], text: str) -> tuple[Style, Style]:
    bg = Color.from_rgb(*rgb)
    return Style(bgcolor=bg, color=text), Style(bgcolor=bg)


def _listed(b: Block, title: list[str], labels: list[str], columns: list[_Column], gap_row: int | None, width: int,
            colour: str, top: np.ndarray | None, look: Look) -> list[RenderableType]:
    """the block one cell per line, for a width where not even one number fits beside its label"""
    out: list[RenderableType] = [Text("\n".join(lines(title, width)), style=f"bold {colour}")]
    named = all(width_of(f" {c.head}: {c.cells[0]}") <= width for c in columns)
    for k, label in enumerate(labels):
        out.append(Text(cut(label, width, look.ellipsis), style="bold"))
        if k == gap_row:
            continue
        r = k - (gap_row is not None and k > gap_row)
        out.extend(Text(f" {c.head}: {c.cells[r]}" if named else c.cells[r].strip(), style=colour, no_wrap=True,
                        overflow="ignore") for c in columns)
    return out


def console(file, colour: bool, width: int, record: bool = False) -> Console:  # type: ignore[no-untyped-def]
    """a console whose look depends only on our arguments, never on COLUMNS, TERM or NO_COLOR"""
    return Console(file=file, width=width, color_system="truecolor" if colour else None, force_terminal=colour,
                   no_color=not colour, highlight=False, emoji=False, markup=False, record=record,
                   legacy_windows=False, soft_wrap=False)
