"""A step as the lines a terminal shows, drawn as render/table.py draws it (the same titles, tables and notes, in the
same colours), in parts: each table is drawn only when first shown and then kept, so that a screen of a large step
costs the lines on it, and a screen seen before costs nothing. A large matrix is even laid out only when one of its
tables is first shown: its height is foretold from a stand-in of a few rows, laid out as it would be. Every cell
carries its place, for a click, given to each line as it is first shown; the cells a change touched are marked."""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.color import Color
from textual.filter import LineFilter
from textual.strip import Strip

from attntrace.escape import visible
from attntrace.render.layout import cells as formatted
from attntrace.render.layout import shown
from attntrace.render.table import Look, console, tables
from attntrace.views.page import Block, Note, Step
from attntrace.views.text import width as width_of

SELECTED = Style(reverse=True, bold=True)
CHANGED = Style(bgcolor="dark_magenta", bold=True)
ABOVE, BELOW = 3, 1  # a table's lines above its first row (its edge, its header, the rule under it) and below its last
KEPT = 512  # steps and tables kept drawn; past that, those least lately asked for are dropped
LATER = 1024  # a matrix of at least this many shown cells is laid out when first shown, its height foretold

CellKey = tuple[int, int, int]  # (table among the step's tables, row, column), from 0
Place = tuple[CellKey, int, int, Text]  # a cell of a drawn table: its key, its line in the table, its column among
# the table's (the labels' is 0) and its text


@dataclass(eq=False)
class Part:
    """a piece of a step, one renderable: a heading, a note, a table's title, one of its tables, a blank line. A part
    of a matrix laid out later has no renderable yet, only its height, until it is settled"""

    renderable: RenderableType | None
    height: int
    cells: dict[CellKey, int] = field(default_factory=dict)  # each cell's line in the part
    lines: list[Strip] | None = None  # drawn when first needed, without the cells' places
    places: list[Place] | None = None  # a table's cells
    marks: dict[int, list[tuple[int, int, CellKey]]] | None = None  # the cells on each line: where they start and end
    shows: dict[int, Strip] = field(default_factory=dict)  # each line as shown, with its cells' places, finished
    finished: Finish | None = None  # how the lines in shows were finished
    later: Later | None = None  # the matrix this part is of, while it is not laid out


@dataclass(eq=False)
class Later:
    """a matrix whose parts are foretold: laid out when one of them is first needed"""

    block: Block
    k: int
    prefix: str
    precision: int
    width: int
    changed: np.ndarray | None
    foretold: list[Part]
    laid: dict[str, list[Part]] = field(default_factory=dict)  # its parts laid out: the first to lay them out gives
    # them to every thread (dict.setdefault is atomic)
    wrong: bool = False  # the matrix laid out differs from what was foretold: the step is to be drawn again


@dataclass(frozen=True)
class Finish:
    """what the screen does to a line before it shows it: the pane's own style under it, then the terminal's colour
    filters (Textual's line filters), and its styles written as the terminal's codes; done once a line, when first
    shown or drawn ahead, rather than each time the screen is drawn"""

    style: Style = Style()
    filters: tuple[LineFilter, ...] = ()
    background: Color = Color(0, 0, 0, 0)
    console: Console | None = None  # the screen's console, whose colours the codes are written in
    done: dict[Style | None, Style | None] = field(default_factory=dict, compare=False, repr=False)  # each style met
    # so far, finished

    def __call__(self, line: Strip, width: int) -> Strip:
        """the line width cells wide, with the pane's style under it and the filters applied: as Textual applies them,
        a segment at a time, but each style finished once (a table's lines have few)"""
        line = line.crop_extend(0, width, self.style)
        if not self.style and not self.filters:
            return line
        if any(control for _, _, control in line):  # none in a drawn line
            line = line.apply_style(self.style)
            for f in self.filters:
                line = line.apply_filter(f, self.background)
            return line
        done, out = self.done, []
        for text, style, _ in line:
            finished = done.get(style)
            if finished is None:
                finished = done.setdefault(style, self._finish(style))
            out.append(Segment(text, finished))
        return Strip(out, line.cell_length)

    def _finish(self, style: Style | None) -> Style | None:
        segment = Segment(" ", self.style + style)
        for f in self.filters:
            segment = f.apply([segment], self.background)[0]
        return segment.style

    def codes(self, line: Strip) -> None:
        """write the line's styles as the terminal's codes, which each style keeps"""
        if self.console is not None:
            line.render(self.console)


class Stop(Exception):
    """what was being drawn ahead is no longer wanted"""


def go_on() -> None:
    """drawing on the screen's own thread never pauses"""


class Drawer:
    """draws steps in parts and keeps what it drew. A thread may draw ahead meanwhile: it holds no lock (it may pause
    between any two parts or lines), so the two may draw the same part, and the first to finish gives it its lines"""

    def __init__(self, look: Look = Look()) -> None:
        self.look = look
        self.foretell = True  # until a foretold height proves wrong
        self.finish = Finish()  # what the screen does to a line before it shows it
        self._kept: OrderedDict[tuple[Any, ...], tuple[object, list[Part]]] = OrderedDict()
        self._local = threading.local()

    def kept(self, key: tuple[Any, ...], owner: object, make: Callable[[], list[Part]]) -> list[Part]:
        """the parts kept for key, made the first time: the same list each time (owner: what the ids in key are of)"""
        held = self._held(key, owner)
        if held is None:
            held = make()
            self._keep(key, owner, held)
        return held

    def _held(self, key: tuple[Any, ...], owner: object) -> list[Part] | None:
        held = self._kept.get(key)
        if held is None or held[0] is not owner:  # the entry holds owner, so no other can have its id meanwhile
            return None
        try:
            self._kept.move_to_end(key)
        except KeyError:  # dropped meanwhile by the other thread
            pass
        return held[1]

    def step(self, step: Step, precision: int, width: int, changed: list[np.ndarray | None],
             pause: Callable[[], None] = go_on, near: int = 0) -> list[Part]:
        """the step's parts, as render/table.py's render_step lays them out: its heading, then each item and a blank;
        the same list for the same step drawn the same way. pause is called before each table is laid out; a table
        that starts in the first near lines (those shown first) is laid out at once, never foretold"""
        key = ("step", id(step), precision, width, tuple(None if c is None else c.tobytes() for c in changed))
        held = self._held(key, step)
        if held is not None:
            return held
        parts = [self.text(Text(visible(step.heading), style="bold underline"), width), self.blank(width)]
        k = 0
        for item in step.items:
            if isinstance(item, Note):
                parts.append(self.text(Text(visible(item.text), style="italic"), width))
            else:
                pause()
                at = sum(part.height for part in parts)
                parts.extend(self.block(item, k, step.prefix, precision, width, changed[k], at < near))
                k += 1
            parts.append(self.blank(width))
        self._keep(key, step, parts)
        return parts

    def block(self, b: Block, k: int, prefix: str, precision: int, width: int, changed: np.ndarray | None,
              now: bool = False) -> list[Part]:
        """the k-th table of a step in parts, each cell carrying its place and the changed ones marked; a large one
        foretold, to be laid out when first needed, unless now"""
        key = (id(b), k, prefix, precision, width, None if changed is None else changed.tobytes())
        held = self._held(key, b)
        if held is not None:
            return held
        parts = self._foretold(b, k, prefix, precision, width, changed) if self.foretell and not now else None
        if parts is None:
            parts = self._laid_out(b, k, prefix, precision, width, changed)
        self._keep(key, b, parts)
        return parts

    def _laid_out(self, b: Block, k: int, prefix: str, precision: int, width: int,
                  changed: np.ndarray | None) -> list[Part]:
        drawn = tables(b, precision, prefix, width, self.look)
        places = _cells(b, drawn)
        parts: list[Part] = []
        for index, renderable in enumerate(drawn):
            if isinstance(renderable, Table):
                found: list[Place] = []
                for (r, c), (text, row, column) in places.get(index, {}).items():
                    if changed is not None and changed[r, c]:
                        text.stylize(CHANGED)
                    found.append(((k, r, c), ABOVE + row, column, text))
                parts.append(Part(renderable, ABOVE + renderable.row_count + BELOW,
                                  {key: line for key, line, _, _ in found}, places=found))
            else:
                parts.append(self.text(renderable, width))
        return parts

    def _foretold(self, b: Block, k: int, prefix: str, precision: int, width: int,
                  changed: np.ndarray | None) -> list[Part] | None:
        """the parts of a large matrix with their heights only, from a stand-in laid out as the matrix would be: as
        many rows, written with as many digits, under its widest label, each cell its widest number; None when the
        matrix is small, or hides rows"""
        count = len(b.rows)
        cols = shown(len(b.cols))[0]
        if count > len(shown(count)[0]) or count * len(cols) < LATER or not cols:
            return None
        few = 10 ** (len(str(count)) - 1)  # "[64 x 8]" in the title as "[10 x 8]": as wide
        texts = np.array(formatted(b.values, list(range(count)), cols, precision))
        at = np.unravel_index(int(np.argmax(np.char.str_len(texts))), texts.shape)
        label = max(b.rows, key=lambda r: width_of(visible(r)))
        stand_in = replace(b, rows=(label,) * few, values=np.full((few, len(b.cols)), b.values[at[0], cols[at[1]]]))
        parts = []
        for renderable in tables(stand_in, precision, prefix, width, self.look):
            if isinstance(renderable, Table):
                if renderable.row_count != few:
                    return None
                parts.append(Part(None, ABOVE + count + BELOW))
            else:
                parts.append(Part(None, self._height(renderable, width)))
        if not any(part.height == ABOVE + count + BELOW for part in parts):  # a matrix listed a cell a line
            return None
        later = Later(b, k, prefix, precision, width, changed, parts)
        for part in parts:
            part.later = later
        return parts

    def _height(self, renderable: RenderableType, width: int) -> int:
        """the lines a title or a note takes: a line each, when each fits, else as many as it is drawn in"""
        if isinstance(renderable, Text) and "\t" not in renderable.plain:
            lines = renderable.plain.split("\n")
            if all(cell_len(line) <= width for line in lines):
                return len(lines)
        return len(self._draw(renderable, width))

    def settle(self, part: Part) -> bool:
        """lay out the matrix a foretold part is of, if it is not yet; False when its heights were foretold wrong
        (then nothing more is foretold, nor kept: the step is to be drawn again)"""
        later = part.later
        if later is None or part.renderable is not None:
            return True
        if later.wrong:
            return False
        made = later.laid.get("parts")
        if made is None:
            made = self._laid_out(later.block, later.k, later.prefix, later.precision, later.width, later.changed)
            made = later.laid.setdefault("parts", made)
        if [p.height for p in made] != [p.height for p in later.foretold]:
            later.wrong, self.foretell = True, False
            self._kept.clear()
            return False
        for mine, real in zip(later.foretold, made):
            if mine.renderable is None:
                mine.cells, mine.places, mine.lines = real.cells, real.places, real.lines
                mine.renderable = real.renderable  # last: a part with its renderable has all the rest
        return True

    def _keep(self, key: tuple[Any, ...], owner: object, parts: list[Part]) -> None:
        while len(self._kept) >= KEPT:
            try:
                self._kept.popitem(last=False)
            except KeyError:  # emptied meanwhile by the other thread
                break
        self._kept[key] = (owner, parts)

    def lines(self, part: Part, width: int) -> list[Strip]:
        """the part's lines, drawn the first time they are asked for (without the cells' places)"""
        lines = part.lines
        if lines is None:
            if not self.settle(part):
                return [Strip.blank(width)] * part.height
            assert part.renderable is not None
            lines = part.lines
            if lines is None:
                lines = part.lines = self._draw(part.renderable, width)
        return lines

    def line(self, part: Part, at: int, width: int) -> Strip:
        """the part's line at, as shown: each cell on it carrying its place, finished as the screen finishes it"""
        finish = self.finish
        if part.finished is not finish:
            part.shows, part.finished = {}, finish
        shows = part.shows.get(at)
        if shows is not None:
            return shows
        lines = self.lines(part, width)
        if part.renderable is None:  # foretold wrong: the step is drawn again
            return Strip.blank(width)
        marks = self._marks(part, lines, width).get(at)
        lines = part.lines or lines  # drawn again, should the cells have been given their places as rich draws them
        shows = finish(lines[at] if at < len(lines) else Strip.blank(width), width)  # before the places: the
        if marks:  # lines' few styles are finished rather than each cell's own
            shows = _placed(shows, marks)
        finish.codes(shows)
        if part.finished is finish:
            part.shows[at] = shows
        return shows

    def _marks(self, part: Part, lines: list[Strip], width: int) -> dict[int, list[tuple[int, int, CellKey]]]:
        """where the table's cells are on its lines, as rich lays a table out whose columns are as wide as their
        widest cell and a space a side; when a cell is not found there, the cells are given their places as rich
        draws them, and the lines drawn again"""
        marks = part.marks
        if marks is not None:
            return marks
        table = part.renderable
        if not isinstance(table, Table) or not part.places:
            marks = part.marks = {}
            return marks
        starts, at = [], 1  # each column's first character on a line, after the table's left edge
        for column in table.columns:
            starts.append(at + 1)
            texts = [column.header, *column.cells]
            at += max(cell_len(t.plain if isinstance(t, Text) else str(t)) for t in texts) + 3
        found: dict[int, list[tuple[int, int, CellKey]]] = {}
        for key, row, place, cell in part.places:
            x, plain = starts[place], cell.plain
            text = lines[row].text if row < len(lines) else ""
            size = cell_len(plain)
            there = text[x:x + size] if text.isascii() else lines[row].crop(x, x + size).text
            if there != plain:
                return self._placed_by_rich(part, width)
            found.setdefault(row, []).append((x, x + size, key))
        part.marks = found
        return found

    def _placed_by_rich(self, part: Part, width: int) -> dict[int, list[tuple[int, int, CellKey]]]:
        assert part.places is not None and part.renderable is not None
        for key, _, _, cell in part.places:
            cell.stylize(Style(meta={"cell": key}))
        part.lines = self._draw(part.renderable, width)
        part.shows = {}
        part.marks = {}
        return part.marks

    def ahead(self, part: Part, width: int, pause: Callable[[], None], shown: bool = False) -> None:
        """draw the part's lines from another thread, calling pause after each line and every so often while its matrix
        is laid out (it may raise Stop); shown: each line as shown too"""
        if part.lines is None and not self._render(part, width, pause):
            return
        if shown:
            for at in range(part.height):
                self.line(part, at, width)
                pause()

    def _render(self, part: Part, width: int, pause: Callable[[], None]) -> bool:
        """draw the part's lines, laying its matrix out first if it is foretold; False when foretold wrong"""
        if not self.settle(part):
            return False
        assert part.renderable is not None
        own = self._console(width)
        lines = []
        rendered = own.render(part.renderable, own.options.update_width(width))
        for line in Segment.split_and_crop_lines(rendered, width, include_new_lines=False, pad=True):
            lines.append(Strip(line, width))
            pause()
        if part.lines is None:
            part.lines = lines
        return True

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


def _placed(line: Strip, marks: list[tuple[int, int, CellKey]]) -> Strip:
    """the line with each cell's characters carrying its place, as a Style's meta"""
    cuts = [at for start, stop, _ in marks for at in (start, stop)]
    pieces = list(Segment.divide(line, [*cuts, line.cell_length]))
    out = list(pieces[0])
    for (_, _, key), inside, after in zip(marks, pieces[1::2], pieces[2::2]):
        meta = Style(meta={"cell": key})
        out.extend(Segment(text, style + meta if style else meta, control) for text, style, control in inside)
        out.extend(after)
    return Strip(out, line.cell_length)


def _cells(b: Block, drawn: list[RenderableType]) -> dict[int, dict[tuple[int, int], tuple[Text, int, int]]]:
    """for each table render/table.py drew for the block (by its place among the drawn parts), the text of each shown
    cell (row, column of the block, from 0), the table row it is on and its column in the table: column runs in order,
    each table's first column the labels, and a marker where rows or columns are hidden"""
    rows, hidden_rows = shown(len(b.rows))
    cols, hidden_cols = shown(len(b.cols))
    row_at: list[int | None] = list(rows)
    col_at: list[int | None] = list(cols)
    if hidden_rows:
        row_at.insert(len(rows) // 2, None)
    if hidden_cols:
        col_at.insert(len(cols) // 2, None)
    out: dict[int, dict[tuple[int, int], tuple[Text, int, int]]] = {}
    columns = iter(col_at)
    for index, table in enumerate(drawn):
        if not isinstance(table, Table):
            continue
        found = out.setdefault(index, {})
        for place, column in enumerate(table.columns[1:], start=1):
            c = next(columns, None)
            if c is None:
                continue
            for row, (r, text) in enumerate(zip(row_at, column.cells)):
                if r is not None and isinstance(text, Text):
                    found[(r, c)] = (text, row, place)
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
