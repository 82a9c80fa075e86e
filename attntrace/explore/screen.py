"""The explorer's one screen: the eight steps on the left, the current step's coloured tables in the middle, the side
panel and the status line. A key asks the session for a change, and the screen is drawn again from it; meanwhile a
thread draws what the likeliest next keys would show."""

from __future__ import annotations

import gc
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol, cast

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Container, Horizontal
from textual.screen import Screen
from textual.widgets import Static

from attntrace.errors import AttntraceError, ExitStatus
from attntrace.escape import visible
from attntrace.explore import panes, saving
from attntrace.explore.dialogs import Confirm, Dialog, Keys, Prompt, R
from attntrace.explore.drawing import Drawer, Part, Stop, go_on
from attntrace.explore.keys import BINDINGS, HINT, Action, likely
from attntrace.explore.state import Selected, Session, typed
from attntrace.explore.stepview import StepView
from attntrace.files.written import write_files
from attntrace.language import _
from attntrace.render.table import Look

STEPS_WIDTH = 24  # the list of steps on the left
SIDE_WIDTH = 52  # the side panel, when open beside the main pane
SIDE_TEXT = SIDE_WIDTH - 5  # its text: less its edge, its padding and a scroll bar
MAIN_LEAST = 40  # the fewest columns the main pane's tables keep beside the panel; on a narrower screen it goes below
BUSY = 0.5  # seconds drawing ahead waits after a key, unless the screen is drawn sooner


class Host(Protocol):
    """what the screen reads of the app it is on (the Explorer)"""

    session: Session
    look: Look
    draw_ahead: bool  # draw the other steps in a thread while the reader reads
    busy_until: float  # drawing ahead waits until then: a key is being answered
    stem: str  # what the names of the files x and w write start with
    opened: Path | None  # the problem file, never overwritten without asking

    def here(self) -> Path: ...

    def idle(self) -> None: ...

    def export_screenshot(self, *, title: str | None = None) -> str: ...


def kept() -> None:
    """what has been drawn is kept for long, so the garbage collector is told to leave it be: it would otherwise walk
    every kept line now and then, for as long as a key would wait"""
    gc.collect(1)
    gc.freeze()


class TraceScreen(Screen[None]):
    """the steps, the current step's tables, the side panel and the status line; every key of the contract"""

    BINDINGS = BINDINGS  # no footer shows them: KEYS, translated, is what ? lists

    AUTO_FOCUS = None

    def __init__(self) -> None:
        super().__init__()
        self.between = " | " if self.explorer.look.ascii else " · "  # between the status line's parts
        self.message = self.hint()
        self.drawn = 0  # the screens drawn so far
        self.ahead = 0  # the generation of drawing ahead; a new one stops the last
        self.drawn_ahead: tuple[object, ...] | None = None  # what drawing ahead started from
        self.side: tuple[object, ...] = ()  # what the side panel shows
        self.again: Action | None = None  # the last key that changed the session, likely pressed again
        self.steps = Text()  # what the list of steps shows
        self.status_rows = (0, 0)  # the rows the status and the message take
        self.drawer = Drawer(self.explorer.look)

    @property
    def explorer(self) -> Host:
        return cast(Host, self.app)

    def hint(self) -> str:
        return _(HINT).replace(" · ", self.between)

    @property
    def session(self) -> Session:
        return self.explorer.session

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            yield Static(id="steps")
            with Container(id="panes"):
                yield StepView(self.drawer, id="main", redraw=self.redraw)
                yield StepView(self.drawer, id="side", redraw=self.redraw)
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
        self.query_one("#side").set_class(s.side_open, "open")
        self.query_one("#panes").set_class(self._below(), "below")
        steps = panes.steps_list(s)
        if steps != self.steps:
            self.steps = steps
            self.query_one("#steps", Static).update(steps, layout=False)
        width = self._width()
        parts = self._main(s, width, self.size.height)
        self.query_one("#main", StepView).show(parts, width, s.cell)
        side_width = self._side_width()
        side = panes.side_key(s, side_width)
        if side != self.side:
            self.side = side
            self.query_one("#side", StepView).show(panes.side(self.drawer, s, side_width), side_width, None)
        line, rows = panes.status(s, self.message, self.size, self.between, self.explorer.look.ellipsis)
        self.query_one("#status", Static).update(line, layout=sum(rows) != sum(self.status_rows))
        self.status_rows = rows
        self.drawn += 1
        self.call_after_refresh(self.explorer.idle)
        if self.explorer.draw_ahead and (parts, width, side) != self.drawn_ahead:
            self.drawn_ahead = (parts, width, side)
            self._draw_ahead()

    def _main(self, s: Session, width: int, near: int, pause: Callable[[], None] = go_on) -> list[Part]:
        """the main pane's parts for session s: its current step, the tables in the first near lines laid out"""
        step, changed = s.current(), s.changed()
        return self.drawer.step(step, s.precision, width, changed, pause, near)

    def _below(self) -> bool:
        """the side panel goes below the main pane: beside it, it would leave the tables too few columns"""
        return self.size.width - STEPS_WIDTH - SIDE_WIDTH - 4 < MAIN_LEAST

    def _width(self, panel: bool | None = None) -> int:
        """the columns the tables may take in the main pane, with the side panel as it is, or open (True) or closed"""
        if panel is None:
            panel = self.session.side_open
        side = SIDE_WIDTH if panel and not self._below() else 0
        return max(20, self.size.width - STEPS_WIDTH - side - 4)

    def _side_width(self) -> int:
        """the columns the side panel's text may take: all the main pane's when it is below"""
        return max(20, self.size.width - STEPS_WIDTH - 4) if self._below() else SIDE_TEXT

    def _draw_ahead(self) -> None:
        """draw in a thread, while the reader looks at this screen, what the likeliest keys would show (see likely):
        for each, the screenful of the main pane it would show and its side panel, worked out on a copy of the session
        with the key pressed; then the rest of every step. The thread waits while a key is being answered, and stops
        when the screen asks for another drawing ahead"""
        s, explorer, drawer = self.session, self.explorer, self.drawer
        keys, steps = likely(s, self.again)
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
            width = widths[v.side_open]
            start = top if v.step == s.step else 0
            line = 0
            for part in self._main(v, width, screenful, pause):
                shown = line < start + screenful and line + part.height > start
                if shown == first:
                    drawer.ahead(part, width, pause, shown=first)
                line += part.height
            if first and v.side_open:
                for part in panes.side(drawer, v, side_width):
                    drawer.ahead(part, side_width, pause, shown=True)

        def work() -> None:
            try:
                for first, pressed in ((True, keys), (False, steps)):  # the first screenful of each, then the rest
                    for key in pressed:  # of each step
                        pause()
                        v = s.ahead()
                        try:
                            key(v)
                            screen(v, first)
                        except AttntraceError:  # what the key cannot do, it says when pressed
                            pass
                        kept()  # what was drawn is kept for long: the collector is told to leave it be, as after a key
            except Stop:
                pass

        self.run_worker(work, thread=True, group="ahead", exclusive=True)

    def on_unmount(self) -> None:
        self.ahead += 1  # the thread drawing ahead stops at its next part

    # keys

    async def act(self, change: Callable[[], str | None]) -> None:
        """make a change; what it says, or why it cannot be made, goes on the status line"""
        try:
            said = change()
        except AttntraceError as e:
            said = f"! {e}"
        self.message = said or self.hint()
        await self.redraw()

    async def press(self, key: Action) -> None:
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

    async def action_flash(self) -> None:
        await self.press(Session.toggle_flash)

    async def action_block(self, delta: int) -> None:
        await self.press(lambda s: s.next_block(delta))

    async def action_decode(self) -> None:
        await self.press(Session.toggle_decoding)

    async def action_close(self) -> None:
        def close() -> None:
            s = self.session
            s.explaining = s.tempered = s.flashing = s.decoding = False

        await self.act(close)

    def action_scroll(self, pages: int) -> None:
        main = self.query_one("#main", StepView)
        (main.scroll_page_down if pages > 0 else main.scroll_page_up)(animate=False)

    def action_quit(self) -> None:
        self.app.exit(return_code=ExitStatus.SUCCESS)

    async def action_keys(self) -> None:
        await self.ask(Keys())

    async def ask(self, dialog: Dialog[R], answered: Callable[[R | None], Awaitable[None]] | None = None) -> None:
        """open a dialog on top before the next key is read: the keys typed right after the one that opened it go to
        it; its answer is taken before the key after the one that gave it"""
        dialog.then = answered
        await self.app.push_screen(dialog)
        dialog.focus_box()

    async def say(self, error: AttntraceError) -> None:
        await self.act(lambda: f"! {error}")

    async def action_edit(self) -> None:
        s = self.session
        try:
            _key, block = s.editable()
        except AttntraceError as e:
            await self.say(e)
            return
        c = s.cell
        assert c is not None
        value = float(block.values[c.row, c.col])
        question = _("{cell} is {value}. Type a new value and Enter (Esc keeps it):").format(
            cell=f"{block.title}[{c.row + 1}, {c.col + 1}]", value=typed(value))

        async def answered(text: str | None) -> None:
            if text is not None:
                await self.act(lambda: s.edit(text))

        await self.ask(Prompt(question, placeholder=typed(value)), answered)

    async def action_picture(self) -> None:
        explorer = self.explorer

        def save() -> str:
            path = saving.free(explorer.here(), f"{explorer.stem}-step{self.session.step}", ".svg")
            picture = explorer.export_screenshot(title=visible(self.session.problem.name or "attntrace"))
            saving.named(path, lambda: write_files({path: picture}))
            return _("wrote {path}").format(path=path)

        await self.act(save)

    async def action_write(self) -> None:
        """ask for a file name, then write the problem as edited; a file that exists (the problem opened, say) is
        overwritten only once y says so"""
        explorer = self.explorer
        try:
            folder = explorer.here()
        except AttntraceError as e:
            await self.say(e)
            return

        def write(target: Path) -> str:
            saving.named(target, lambda: write_files({target: self.session.problem_text()}))
            return _("wrote {path}; trace it with attntrace run {path}").format(path=target)

        async def confirmed(target: Path, yes: bool | None) -> None:
            if yes:
                await self.act(lambda: write(target))
            else:
                await self.act(lambda: _("kept {path} as it was; w again writes to another file").format(path=target))

        async def answered(text: str | None) -> None:
            if text is None:
                return
            try:
                target, question = saving.target(text, folder, explorer.opened)
            except AttntraceError as e:
                await self.say(e)
                return
            if question is None:
                await self.act(lambda: write(target))
            else:
                await self.ask(Confirm(question), lambda yes: confirmed(target, yes))

        default = saving.free(folder, f"{explorer.stem}-edited", ".json")
        await self.ask(Prompt(_("Write the problem, as edited, to this file in {folder} (Enter; Esc cancels):").format(
            folder=folder), default.name), answered)

    async def on_click(self, event: events.Click) -> None:
        """a click on a cell selects it; a click on a step opens it"""
        meta = event.style.meta
        if "cell" in meta and meta["cell"][0] >= 0:  # the side panel's table has no place among the step's
            block, row, col = meta["cell"]
            await self.act(lambda: self.session.select(Selected(block, row, col)))
        elif "step" in meta:
            await self.act(lambda: self.session.go(meta["step"]))
