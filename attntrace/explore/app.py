"""The explorer's screen, in Textual: the eight steps on the left, the current step's coloured tables in the middle, a
cell's arithmetic and the softmax at a temperature on the right, and a status line. A key asks the session for a
change, and the screen is drawn again from it."""

from __future__ import annotations

import gc
import re
import sys
import time
from bisect import bisect_right
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.console import Group
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Container, Horizontal, Vertical
from textual.filter import LineFilter
from textual.geometry import Region, Size
from textual.screen import ModalScreen, Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input, Static

from attntrace.cli.files import write_files
from attntrace.cli.terminal import ExitStatus
from attntrace.errors import AttntraceError
from attntrace.explore.drawing import SELECTED, CellKey, Drawer, Finish, Part, Stop, go_on, highlighted, watched
from attntrace.explore.state import STEPS, Cell, Session, typed
from attntrace.render.escape import visible
from attntrace.render.table import Look

HINT = "? keys · q quit"
KEYS = (
    ("→ ← (n p)", "next / previous step"),
    ("↓ ↑, 1-9", "the input that steps 4-7 follow"),
    ("h H", "next / previous head"),
    ("Tab, Shift+Tab", "next / previous cell"),
    ("Shift+arrows", "move between cells; a click selects one too"),
    ("Enter", "the selected cell's arithmetic, as explain writes it (again: hide it)"),
    ("e", "edit the selected cell of X or a weight; every later step is recomputed"),
    ("u", "undo the last change (an edit, s or m)"),
    ("s", "scaling on / off"),
    ("m", "the next masks: none, causal, window, padding, the problem's own"),
    ("+ -", "more / fewer decimals"),
    ("t", "the softmax of the followed input at a temperature T; [ and ] change T"),
    ("x", "save the screen as an SVG picture"),
    ("w", "write the problem, as edited, to a file"),
    ("PgUp PgDn", "scroll the step"),
    ("Esc", "close the side panel"),
    ("q", "quit; Ctrl-C ends with exit status 130"),
)
Key = Callable[[Session], str | None]  # what a key does to a session, and what it says
STEPS_WIDTH = 24  # the list of steps on the left
SIDE_WIDTH = 52  # the side panel, when open beside the main pane
SIDE_TEXT = SIDE_WIDTH - 5  # its text: less its edge, its padding and a scroll bar
MAIN_LEAST = 40  # the fewest columns the main pane's tables keep beside the panel; on a narrower screen it goes below
BUSY = 0.5  # seconds drawing ahead waits after a key, unless the screen is drawn sooner
SWITCH = 0.0005  # seconds a thread holds the interpreter while another waits: a key is read at once while drawing ahead


class Explorer(App[None]):
    """the explorer: one screen of the session, plus prompts and the keys"""

    CSS = f"""
    #body {{ height: 1fr; }}
    #steps {{ width: {STEPS_WIDTH}; height: 1fr; padding: 0 1; border-right: solid $panel-lighten-2; }}
    #panes {{ width: 1fr; height: 1fr; layout: horizontal; }}
    #panes.below {{ layout: vertical; }}
    #main {{ width: 1fr; height: 1fr; padding: 0 1; scrollbar-gutter: stable; }}
    #side {{ width: {SIDE_WIDTH}; height: 1fr; padding: 0 1; border-left: solid $panel-lighten-2; display: none;
             scrollbar-gutter: stable; }}
    #panes.below #side {{ width: 1fr; border-left: none; border-top: solid $panel-lighten-2; }}
    #side.open {{ display: block; }}
    #status {{ height: 2; padding: 0 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }}
    Prompt, Keys {{ align: center middle; }}
    #dialog {{ width: 72; max-width: 100%; height: auto; max-height: 100%; padding: 1 2; border: thick $accent;
               background: $surface; overflow-y: auto; }}
    #dialog > Static {{ width: 100%; }}
    """
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [Binding("ctrl+c", "interrupt", show=False, priority=True)]

    def __init__(self, session: Session, *, look: Look = Look(), folder: Path | None = None,
                 stem: str = "attntrace", draw_ahead: bool = True) -> None:
        super().__init__()
        self.switch = sys.getswitchinterval()  # as it was before the explorer
        self.draw_ahead = draw_ahead  # draw the other steps in a thread while the reader reads
        self.busy_until = 0.0  # drawing ahead waits until then: a key is being answered
        self.session = session
        self.look = look
        self.folder = Path.cwd() if folder is None else folder
        self.stem = re.sub(r"[^\w.-]+", "-", stem).strip("-.") or "attntrace"  # a file name's start, whatever the file

    def get_default_screen(self) -> Screen[Any]:
        return TraceScreen()

    def action_interrupt(self) -> None:
        self.exit(return_code=ExitStatus.ERROR_CTRL_C)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseDown)):
            self.busy_until = time.monotonic() + BUSY
        await super().on_event(event)

    def on_mount(self) -> None:
        sys.setswitchinterval(SWITCH)

    def on_unmount(self) -> None:
        sys.setswitchinterval(self.switch)
        gc.unfreeze()  # what is left of the explorer is garbage like any other

    def idle(self) -> None:
        """the screen answered the last key: drawing ahead may go on"""
        self.busy_until = 0.0
        kept()


def kept() -> None:
    """what has been drawn is kept for long, so the garbage collector is told to leave it be: it would otherwise walk
    every kept line now and then, for as long as a key would wait"""
    gc.collect(1)
    gc.freeze()


class TraceScreen(Screen[None]):
    """the steps, the current step's tables, the side panel and the status line; every key of the contract"""

    BINDINGS = [
        Binding("right,n", "step(1)", "next step"),
        Binding("left,p", "step(-1)", "previous step"),
        Binding("down", "input(1)", "next input"),
        Binding("up", "input(-1)", "previous input"),
        *(Binding(str(d), f"choose({d})", show=False) for d in range(1, 10)),
        Binding("h", "head(1)", "next head"),
        Binding("H", "head(-1)", "previous head"),
        Binding("tab", "tab(1)", "next cell"),
        Binding("shift+tab", "tab(-1)", "previous cell"),
        Binding("shift+right", "move(0, 1)", show=False),
        Binding("shift+left", "move(0, -1)", show=False),
        Binding("shift+down", "move(1, 0)", show=False),
        Binding("shift+up", "move(-1, 0)", show=False),
        Binding("enter", "explain", "arithmetic"),
        Binding("e", "edit", "edit"),
        Binding("u", "undo", "undo"),
        Binding("s", "scale", "scaling"),
        Binding("m", "mask", "masks"),
        Binding("plus,equals_sign", "precision(1)", "more decimals"),
        Binding("minus,underscore", "precision(-1)", "fewer decimals"),
        Binding("t", "temperature", "temperature"),
        Binding("left_square_bracket", "warmer(-1)", show=False),
        Binding("right_square_bracket", "warmer(1)", show=False),
        Binding("x", "picture", "save SVG"),
        Binding("w", "write", "write problem"),
        Binding("question_mark", "keys", "keys"),
        Binding("q", "quit", "quit"),
        Binding("escape", "close", show=False),
        Binding("pageup", "scroll(-1)", show=False),
        Binding("pagedown", "scroll(1)", show=False),
        Binding("ctrl+c", "app.interrupt", show=False),
    ]

    AUTO_FOCUS = None

    def __init__(self) -> None:
        super().__init__()
        self.message = HINT
        self.drawn = 0  # the screens drawn so far
        self.ahead = 0  # the generation of drawing ahead; a new one stops the last
        self.drawn_ahead: tuple[object, ...] | None = None  # what drawing ahead started from
        self.side: tuple[object, ...] = ()  # what the side panel shows
        self.again: Key | None = None  # the last key that changed the session, likely pressed again
        self.steps = Text()  # what the list of steps shows
        self.drawer = Drawer(self.explorer.look)

    @property
    def explorer(self) -> Explorer:
        assert isinstance(self.app, Explorer)
        return self.app

    @property
    def session(self) -> Session:
        return self.explorer.session

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            yield Static(id="steps")
            with Container(id="panes"):
                yield StepView(self.drawer, id="main")
                yield StepView(self.drawer, id="side")
        yield Static(id="status")

    async def on_mount(self) -> None:
        self.explorer.busy_until = time.monotonic() + BUSY  # the first screen before any drawing ahead
        await self.redraw()

    async def on_resize(self, event: events.Resize) -> None:
        await self.redraw()

    # drawing

    async def redraw(self) -> None:
        """draw what the session says; the widgets whose size cannot change are redrawn without a new layout, and those
        whose content did not change are left as they are"""
        s = self.session
        self.query_one("#side").set_class(s.explaining or s.tempered, "open")
        self.query_one("#panes").set_class(self._below(), "below")
        steps = self._steps()
        if steps != self.steps:
            self.steps = steps
            self.query_one("#steps", Static).update(steps, layout=False)
        width = self._width()
        parts = self._main(s, width, self.size.height)
        self.query_one("#main", StepView).show(parts, width, s.cell)
        side_width = self._side_width()
        side = self._side_key(s, side_width)
        if side != self.side:
            self.side = side
            self.query_one("#side", StepView).show(self._side(s, side_width), side_width, None)
        self.query_one("#status", Static).update(self._status(), layout=False)
        self.drawn += 1
        self.call_after_refresh(self.explorer.idle)
        if self.explorer.draw_ahead and (parts, width, side) != self.drawn_ahead:
            self.drawn_ahead = (parts, width, side)
            self._draw_ahead()

    def _main(self, s: Session, width: int, near: int, pause: Callable[[], None] = go_on) -> list[Part]:
        """the main pane's parts for session s: its current step, the tables in the first near lines laid out"""
        step, changed = watched(pause, lambda: (s.current(), s.changed()))
        return self.drawer.step(step, s.precision, width, changed, pause, near)

    def _status(self) -> Text:
        """the status line and the message line, a row each, cut with … to the screen's width; on the message line the
        selected cell's words give way to the message: they are cut first, and left out when little of them is left"""
        s, width = self.session, max(1, self.size.width - 2)
        room = width - cell_len(self.message) - 3
        cell = Text(s.cell_words())
        cell.truncate(room, overflow="ellipsis")
        message = f"{cell} · {self.message}" if room >= 12 else self.message
        rows = [Text(row) for row in (s.status(), message)]
        for row in rows:
            row.truncate(width, overflow="ellipsis")
        return Text("\n").join(rows)

    @staticmethod
    def _side_key(s: Session, width: int) -> tuple[object, ...]:
        """what the side panel shows for session s, width columns wide, depends on"""
        return (s.explaining and (id(s.problem), s.step, s.row, s.head, s.cell, s.precision, s.carry),
                s.tempered and (id(s.problem), s.row, s.head, s.temperature, s.precision, s.carry), width)

    def _below(self) -> bool:
        """the side panel goes below the main pane: beside it, it would leave the tables too few columns"""
        return self.size.width - STEPS_WIDTH - SIDE_WIDTH - 4 < MAIN_LEAST

    def _width(self, panel: bool | None = None) -> int:
        """the columns the tables may take in the main pane, with the side panel as it is, or open (True) or closed"""
        if panel is None:
            panel = self.session.explaining or self.session.tempered
        side = SIDE_WIDTH if panel and not self._below() else 0
        return max(20, self.size.width - STEPS_WIDTH - side - 4)

    def _side_width(self) -> int:
        """the columns the side panel's text may take: all the main pane's when it is below"""
        return max(20, self.size.width - STEPS_WIDTH - 4) if self._below() else SIDE_TEXT

    def _likely(self) -> tuple[list[Key], list[Key]]:
        """the keys a reader likely presses next, each as what it does to a session: all of them, the likeliest first
        (this screen, the last key again, the next step, Enter, t, ] and [, s, the next input, + and -, m, the previous
        input, h and H, the previous step, the other steps, nearest first), and those that open a step"""
        s = self.session
        others = sorted((n for n in range(1, len(STEPS) + 1) if abs(n - s.step) > 1),
                        key=lambda n: (abs(n - s.step), n < s.step))
        steps: list[Key] = [lambda v: None, lambda v: v.next_step(1), lambda v: v.next_step(-1),
                            *(lambda v, n=n: v.go(n) for n in others)]  # this one, the next, the previous, ...
        keys: list[Key] = [Session.toggle_explaining, Session.toggle_temperature, lambda v: v.warmer(1),
                           lambda v: v.warmer(-1), Session.toggle_scale, lambda v: v.next_input(1),
                           lambda v: v.more_precision(1), lambda v: v.more_precision(-1), Session.cycle_mask,
                           lambda v: v.next_input(-1)]
        if s.problem.dims.heads > 1:
            keys += [lambda v: v.next_head(1), lambda v: v.next_head(-1)]
        again = [] if self.again is None else [self.again]
        return [steps[0], *again, steps[1], *keys, *steps[2:]], steps

    def _draw_ahead(self) -> None:
        """draw in a thread, while the reader looks at this screen, what the likeliest keys would show (see _likely):
        for each, the screenful of the main pane it would show and its side panel, worked out on a copy of the session
        with the key pressed; then the rest of every step. The thread waits while a key is being answered, and stops
        when the screen asks for another drawing ahead"""
        s, explorer, drawer = self.session, self.explorer, self.drawer
        keys, steps = self._likely()
        screenful, top = self.size.height, int(self.query_one("#main", StepView).scroll_offset.y)
        widths = {panel: self._width(panel) for panel in (False, True)}
        side_width = self._side_width()
        self.ahead += 1
        ahead = self.ahead

        def pause() -> None:
            while ahead == self.ahead and time.monotonic() < explorer.busy_until:
                time.sleep(0.005)
            if ahead != self.ahead:
                raise Stop()

        def screen(v: Session, first: bool) -> None:
            """draw what the screen shows for session v: the main pane's first screenful (the rest, unless first), from
            where it is scrolled to when v keeps the step, and the side panel"""
            width = widths[v.explaining or v.tempered]
            start = top if v.step == s.step else 0
            line = 0
            for part in self._main(v, width, screenful, pause):
                shown = line < start + screenful and line + part.height > start
                if shown == first:
                    drawer.ahead(part, width, pause, shown=first)
                line += part.height
            if first and (v.explaining or v.tempered):
                for part in watched(pause, self._side, v, side_width):
                    drawer.ahead(part, side_width, pause, shown=True)

        def work() -> None:
            try:
                for first, pressed in ((True, keys), (False, steps)):  # the first screenful of each, then the rest
                    for key in pressed:  # of each step
                        pause()
                        v = s.ahead()
                        try:
                            watched(pause, key, v)
                            screen(v, first)
                        except AttntraceError:  # what the key cannot do, it says when pressed
                            pass
                        kept()  # what was drawn is kept for long: the collector is told to leave it be, as after a key
            except Stop:
                pass

        self.run_worker(work, thread=True, group="ahead", exclusive=True)

    def on_unmount(self) -> None:
        self.ahead += 1  # the thread drawing ahead stops at its next part

    def _steps(self) -> Text:
        out = Text()
        for number, name in enumerate(STEPS, start=1):
            line = Text(f"{number} {name}\n", style=Style(meta={"step": number}))
            if number == self.session.step:
                line.stylize(SELECTED)
            out.append_text(line)
        p = self.session.problem
        d = p.dims
        about = f"\n{visible(p.name or 'problem')}\nn = {d.n}, d_model = {d.d_model}\nd_k = {d.d_k}, d_v = {d.d_v}"
        out.append(about + (f", {d.heads} heads" if d.heads > 1 else ""), style="dim")
        return out

    def _side(self, s: Session, width: int) -> list[Part]:
        """the side panel for session s: the selected cell's arithmetic, and the softmax at a temperature; the same
        parts each time it shows the same"""
        return self.drawer.kept(("side", self._side_key(s, width)), s.problem, lambda: self._side_parts(s, width))

    def _side_parts(self, s: Session, width: int) -> list[Part]:
        drawer = self.drawer
        parts: list[Part] = []
        if s.explaining:
            parts.append(drawer.text(Text("the selected cell's arithmetic", style="bold underline"), width))
            parts.extend(drawer.text(Text(visible(line)), width) for line in s.arithmetic())
            parts.append(drawer.blank(width))
        if s.tempered:
            parts.append(drawer.text(Text("softmax at a temperature ([ and ] change T)", style="bold underline"), width))
            parts.extend(drawer.block(s.temperature_block(), -1, "", s.precision, width, None))
            parts.append(drawer.text(Text("T < 1 sharpens the row towards its largest score; T > 1 flattens it towards "
                                          "equal weights.", style="italic"), width))
        return parts

    # keys

    async def act(self, change: Callable[[], str | None]) -> None:
        """make a change; what it says, or why it cannot be made, goes on the status line"""
        try:
            said = change()
        except AttntraceError as e:
            said = f"! {e}"
        self.message = said or HINT
        await self.redraw()

    async def press(self, key: Key) -> None:
        """a key that does key to the session; drawing ahead draws it first from now on, as a key is often pressed again
        (→ to read on, s to compare, ] to warm further)"""
        self.again = key
        await self.act(lambda: key(self.session))

    async def action_step(self, delta: int) -> None:
        await self.press(lambda s: s.next_step(delta))

    async def action_input(self, delta: int) -> None:
        await self.press(lambda s: s.next_input(delta))

    async def action_choose(self, number: int) -> None:
        await self.press(lambda s: s.follow(number - 1))

    async def action_head(self, delta: int) -> None:
        await self.press(lambda s: s.next_head(delta))

    async def action_tab(self, delta: int) -> None:
        await self.press(lambda s: s.tab(delta))

    async def action_move(self, rows: int, cols: int) -> None:
        await self.press(lambda s: s.move(rows, cols))

    async def action_explain(self) -> None:
        await self.press(Session.toggle_explaining)

    async def action_undo(self) -> None:
        await self.press(Session.undo)

    async def action_scale(self) -> None:
        await self.press(Session.toggle_scale)

    async def action_mask(self) -> None:
        await self.press(Session.cycle_mask)

    async def action_precision(self, delta: int) -> None:
        await self.press(lambda s: s.more_precision(delta))

    async def action_temperature(self) -> None:
        await self.press(Session.toggle_temperature)

    async def action_warmer(self, delta: int) -> None:
        await self.press(lambda s: s.warmer(delta))

    async def action_close(self) -> None:
        def close() -> None:
            self.session.explaining = self.session.tempered = False

        await self.act(close)

    def action_scroll(self, pages: int) -> None:
        main = self.query_one("#main", StepView)
        (main.scroll_page_down if pages > 0 else main.scroll_page_up)(animate=False)

    def action_quit(self) -> None:
        self.app.exit(return_code=ExitStatus.SUCCESS)

    def action_keys(self) -> None:
        self.app.push_screen(Keys())

    async def action_edit(self) -> None:
        s = self.session
        try:
            _, block = s.editable()
        except AttntraceError as e:
            refused = f"! {e}"
            await self.act(lambda: refused)
            return
        c = s.cell
        assert c is not None
        value = float(block.values[c.row, c.col])
        question = f"{block.title}[{c.row + 1}, {c.col + 1}] is {typed(value)}. Type a new value and Enter (Esc keeps it):"

        async def answered(text: str | None) -> None:
            if text is not None:
                await self.act(lambda: s.edit(text))

        self.app.push_screen(Prompt(question, placeholder=typed(value)), answered)

    async def action_picture(self) -> None:
        explorer = self.explorer

        def save() -> str:
            path = _free(explorer.folder, f"{explorer.stem}-step{self.session.step}", ".svg")
            write_files({path: explorer.export_screenshot(title=self.session.problem.name or "attntrace")})
            return f"wrote {path}"

        await self.act(save)

    async def action_write(self) -> None:
        explorer = self.explorer
        default = _free(explorer.folder, f"{explorer.stem}-edited", ".json")

        async def answered(text: str | None) -> None:
            if text is not None:
                path = Path(text.strip()).expanduser()
                target = path if path.is_absolute() else explorer.folder / path

                def write() -> str:
                    write_files({target: self.session.problem_text()})
                    return f"wrote {target}; trace it with attntrace run {target}"

                await self.act(write)

        self.app.push_screen(Prompt("Write the problem, as edited, to this file (Enter; Esc cancels):", str(default)),
                             answered)

    async def on_click(self, event: events.Click) -> None:
        """a click on a cell selects it; a click on a step opens it"""
        meta = event.style.meta
        if "cell" in meta and meta["cell"][0] >= 0:  # the side panel's table has no place among the step's
            block, row, col = meta["cell"]
            await self.act(lambda: self.session.select(Cell(block, row, col)))
        elif "step" in meta:
            await self.act(lambda: self.session.go(meta["step"]))


class StepView(ScrollView):
    """the main pane: a step's parts, each drawn when a line of it is first on the screen, and the selected cell"""

    can_focus = False

    def __init__(self, drawer: Drawer, id: str) -> None:
        super().__init__(id=id)
        self.drawer = drawer
        self.parts: list[Part] = []
        self.starts: list[int] = []  # each part's first line
        self.width = 0
        self.selected: tuple[CellKey, int] | None = None  # the selected cell and its line
        self.redrawing = False  # the step is to be drawn again

    def show(self, parts: list[Part], width: int, cell: Cell | None) -> None:
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
        screen = self.screen
        if isinstance(screen, TraceScreen) and not self.redrawing:
            self.redrawing = True

            async def again() -> None:
                self.redrawing = False
                await screen.redraw()

            self.call_later(again)

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


class Prompt(ModalScreen[str | None]):
    """one line to type: a new number, or a file name"""

    BINDINGS = [Binding("escape", "cancel", show=False)]

    def __init__(self, question: str, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self.question, self.value, self.placeholder = question, value, placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(self.question))
            yield Input(self.value, placeholder=self.placeholder, id="answer")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value if event.value.strip() else None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class Keys(ModalScreen[None]):
    """the keys and what they do; any key closes it, but for the arrows and PgUp PgDn when the list is longer than the
    screen: they scroll it"""

    SCROLLS = {"up": (-1, False), "down": (1, False), "pageup": (-1, True), "pagedown": (1, True)}

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for keys, what in KEYS:
            table.add_row(keys, what)
        with Vertical(id="dialog"):
            yield Static(Group(Text("attntrace explore: the keys", style="bold underline"), Text(""), table))

    def on_key(self, event: events.Key) -> None:
        if event.key == "ctrl+c":
            return
        event.stop()
        dialog = self.query_one("#dialog")
        if event.key in self.SCROLLS and dialog.max_scroll_y > 0:
            lines, pages = self.SCROLLS[event.key]
            step = dialog.scrollable_content_region.height if pages else 1
            dialog.scroll_to(y=dialog.scroll_y + lines * step, animate=False)
        else:
            self.dismiss(None)

    def on_click(self, event: events.Click) -> None:
        self.dismiss(None)


def _free(folder: Path, stem: str, suffix: str) -> Path:
    """folder/stem.suffix, or with -2, -3, ... when that file exists"""
    path, count = folder / f"{stem}{suffix}", 1
    while path.exists():
        count += 1
        path = folder / f"{stem}-{count}{suffix}"
    return path


def explore(session: Session, *, look: Look = Look(), stem: str = "attntrace") -> int:
    """run the explorer in this terminal until q (0) or Ctrl-C (130)"""
    app = Explorer(session, look=look, stem=stem)
    app.run()
    return app.return_code or 0
