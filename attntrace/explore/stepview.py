"""The explorer's panes: a step's parts drawn a line at a time as they scroll into view, with the selected cell."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Awaitable, Callable, Sequence

from textual import events
from textual.filter import LineFilter
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBarRender
from textual.strip import Strip
from textual.widget import Widget

from attntrace.explore.drawing import CellKey, Drawer, Finish, Part, highlighted
from attntrace.explore.state import Selected


class StepView(ScrollView):
    """the main pane: a step's parts, each drawn when a line of it is first on the screen, and the selected cell"""

    can_focus = False

    def __init__(self, drawer: Drawer, id: str, redraw: Callable[[], Awaitable[None]]) -> None:
        """redraw: draws the step again (the screen's)"""
        super().__init__(id=id)
        self.drawer = drawer
        self.redraw = redraw
        self.parts: list[Part] = []
        self.starts: list[int] = []  # each part's first line
        self.width = 0
        self.selected: tuple[CellKey, int] | None = None  # the selected cell and its line
        self.redrawing = False  # the step is to be drawn again

    def show(self, parts: list[Part], width: int, cell: Selected | None) -> None:
        """show the parts; when only the selected cell moved, only its old and new lines are drawn again"""
        same = parts is self.parts and width == self.width
        before = self.selected
        if not same:
            self.parts, self.width = parts, width
            self.starts, line = [], 0
            for part in parts:
                self.starts.append(line)
                line += part.height
            self.virtual_size = Size(width, line)
        self.selected = None
        if cell is not None:
            key = (cell.block, cell.row, cell.col)
            for part in parts:  # the selected cell's table laid out, if it was only foretold
                if part.later is not None and part.later.k == cell.block and not self.drawer.settle(part):
                    self.stale()
            found = next(((start, part.cells[key]) for start, part in zip(self.starts, parts) if key in part.cells), None)
            if found is not None:
                self.selected = (key, found[0] + found[1])
        self.keep_selected()
        if not same:
            self.refresh()
        elif before != self.selected:
            for moved in (before, self.selected):
                if moved is not None:
                    self.refresh_lines(moved[1])

    def stale(self) -> None:
        """a table's height was foretold wrong: the step is drawn again, every table laid out as it is drawn"""
        if not self.redrawing:
            self.redrawing = True

            async def again() -> None:
                self.redrawing = False
                await self.redraw()

            self.call_later(again)

    def on_mount(self) -> None:
        plain_bars(self)

    def keep_selected(self) -> None:
        """scroll the selected cell's line into view"""
        if self.selected is not None:
            self.scroll_to_region(Region(0, self.selected[1], 1, 1), animate=False, immediate=True)

    def on_resize(self, event: events.Resize) -> None:
        """the pane took another size (the side panel opened or closed, or the terminal changed): the selected cell
        stays in view"""
        self.keep_selected()

    def render_lines(self, crop: Region) -> list[Strip]:
        finish = Finish(self.rich_style, tuple(self.app.get_line_filters()), self.background_colors[1], self.app.console)
        if finish != self.drawer.finish:  # the lines kept finished the old way are finished again as they are shown
            self.drawer.finish = finish
        return super().render_lines(crop)

    def get_line_filters(self) -> Sequence[LineFilter]:
        """none: the drawer's Finish has applied them to each line, once"""
        return ()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        line = scroll_y + y
        width = self.scrollable_content_region.width
        finish = self.drawer.finish
        if not self.parts or line >= self.starts[-1] + self.parts[-1].height:
            return finish(Strip.blank(width), width)
        index = bisect_right(self.starts, line) - 1
        part = self.parts[index]
        strip = self.drawer.line(part, line - self.starts[index], self.width)
        if part.later is not None and part.later.wrong:
            self.stale()
        if self.selected is not None and self.selected[1] == line:
            strip = highlighted(strip, self.selected[0])
        if scroll_x or strip.cell_length != width:
            strip = strip.crop(scroll_x, scroll_x + width)
            if strip.cell_length < width:
                strip = Strip.join([strip, finish(Strip.blank(width - strip.cell_length), width - strip.cell_length)])
        return strip


class AsciiBars(ScrollBarRender):
    """a scroll bar drawn in blanks alone: the block characters of its thumb's ends are two columns wide in many
    Chinese terminals"""

    VERTICAL_BARS = [" "] * len(ScrollBarRender.VERTICAL_BARS)
    HORIZONTAL_BARS = [" "] * len(ScrollBarRender.HORIZONTAL_BARS)


def plain_bars(widget: Widget) -> None:
    """the widget's scroll bars without block characters, when the explorer draws ASCII lines"""
    if widget.app.has_class("ascii"):  # the Explorer's class when it draws ASCII lines
        for bar in (widget.vertical_scrollbar, widget.horizontal_scrollbar):
            bar.renderer = AsciiBars  # type: ignore[misc]  # Textual's way to draw one widget's bars otherwise
