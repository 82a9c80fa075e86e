"""The explorer's screen, in Textual: the eight steps on the left, the current step's coloured tables in the middle, a
cell's arithmetic and the softmax at a temperature on the right, and a status line. A key asks the session for a
change, and the screen is drawn again from it."""

from __future__ import annotations

import gc
import os
import re
import sys
import time
from bisect import bisect_right
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from rich.cells import cell_len, chop_cells, set_cell_size
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
from textual.scrollbar import ScrollBarRender
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Input, Static

from attntrace.errors import AttntraceError, ExitStatus
from attntrace.escape import visible
from attntrace.explore.drawing import SELECTED, CellKey, Drawer, Finish, Part, Stop, go_on, highlighted
from attntrace.explore.state import STEPS, Selected, Session, typed
from attntrace.files.paths import kind
from attntrace.files.written import write_files
from attntrace.language import N_, _, ngettext
from attntrace.render.table import Look
from attntrace.views.describe import shown_name

HINT = N_("? keys · q quit")  # translated where it is shown, as are the keys' words
KEYS = (
    ("→ ← (n p)", N_("next / previous step")),
    ("↓ ↑, 1-9", N_("the input that steps 4-7 follow")),
    ("h H", N_("next / previous head")),
    ("Tab, Shift+Tab", N_("next / previous cell")),
    (N_("Shift+arrows"), N_("move between cells; a click selects one too")),
    ("Enter", N_("the selected cell's arithmetic; again hides it")),
    ("e", N_("edit a cell of X or a weight; later steps are recomputed")),
    ("u", N_("undo the last change (an edit, s or m)")),
    ("s", N_("scaling on / off")),
    ("m", N_("next mask: none, causal, window, padding, the problem's own")),
    ("+ -", N_("more / fewer decimals")),
    ("t", N_("softmax at a temperature T; [ and ] change T")),
    ("f, b B", N_("FlashAttention's online softmax; b and B change the block")),
    ("d", N_("the decode step of the followed input, with its KV cache")),
    ("x", N_("save the screen as an SVG picture")),
    ("w", N_("write the problem, as edited, to a file")),
    ("PgUp PgDn", N_("scroll the step")),
    ("Esc", N_("close the side panel")),
    ("q", N_("quit; Ctrl-C ends with exit status 130")),
)  # each a row of the key list, which fits a screen of 80 x 24 whole
ASCII_KEYS = {"→ ← (n p)": N_("Right Left, n p"), "↓ ↑, 1-9": N_("Down Up, 1-9")}  # the arrows are two columns
# wide in many Chinese terminals: with ASCII lines, the keys are named in words
Action = Callable[[Session], str | None]  # what a key does to a session, and what it says
STEPS_WIDTH = 24  # the list of steps on the left
SIDE_WIDTH = 52  # the side panel, when open beside the main pane
SIDE_TEXT = SIDE_WIDTH - 5  # its text: less its edge, its padding and a scroll bar
MAIN_LEAST = 40  # the fewest columns the main pane's tables keep beside the panel; on a narrower screen it goes below
BUSY = 0.5  # seconds drawing ahead waits after a key, unless the screen is drawn sooner
SWITCH = 0.0005  # seconds a thread holds the interpreter while another waits: a key is read at once while drawing ahead
STATUS_ROWS = 2  # the rows the status line, and the message line, each wrap onto at most (one on a low screen)
LOW = 16  # a screen with fewer rows than this keeps the status and the message to a row each
STEM = 80  # the most characters of the problem file's name the names of the files x and w write start with
R = TypeVar("R")


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
    #status {{ height: auto; padding: 0 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }}
    Dialog {{ align: center middle; }}
    #dialog {{ width: 72; max-width: 100%; height: auto; max-height: 100%; padding: 1 2; border: thick $accent;
               background: $surface; overflow-y: auto; }}
    #dialog > Static {{ width: 100%; }}
    #dialog.keys {{ width: 80; padding: 0 1; }}
    Explorer.ascii #steps {{ border-right: ascii $panel-lighten-2; }}
    Explorer.ascii #side {{ border-left: ascii $panel-lighten-2; }}
    Explorer.ascii #panes.below #side {{ border-left: none; border-top: ascii $panel-lighten-2; }}
    Explorer.ascii #dialog {{ border: ascii $accent; }}
    Explorer.ascii Answer {{ border: ascii $border-blurred; }}
    Explorer.ascii Answer:focus {{ border: ascii $border; }}
    """  # with ASCII lines, no box-drawing or block character: Chinese terminals often draw those two columns wide
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [Binding("ctrl+c", "interrupt", show=False, priority=True)]

    def __init__(self, session: Session, *, look: Look = Look(), folder: Path | None = None,
                 stem: str = "attntrace", draw_ahead: bool = True, opened: Path | None = None) -> None:
        """folder: where x and w write (default: the current folder); opened: the problem file, never overwritten
        without asking"""
        super().__init__()
        self.switch = sys.getswitchinterval()  # as it was before the explorer
        self.draw_ahead = draw_ahead  # draw the other steps in a thread while the reader reads
        self.busy_until = 0.0  # drawing ahead waits until then: a key is being answered
        self.session = session
        self.look = look
        self.set_class(look.ascii, "ascii")
        self.folder = folder
        self.opened = opened
        self.stem = re.sub(r"[^\w.-]+", "-", stem)[:STEM].strip("-.") or "attntrace"  # a file name's start, whatever
        # the file

    def here(self) -> Path:
        """the folder x and w write to: the one given, else the current one, which may have been removed meanwhile"""
        if self.folder is not None:
            return self.folder
        try:
            return Path.cwd()
        except OSError:
            raise AttntraceError(_("the current folder no longer exists; give w a full path, or quit and start "
                                   "again in another folder")) from None

    def get_default_screen(self) -> Screen[Any]:
        return TraceScreen()

    def action_interrupt(self) -> None:
        self.exit(return_code=ExitStatus.ERROR_CTRL_C)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseDown)):
            self.busy_until = time.monotonic() + BUSY
        if isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded and isinstance(self.screen, Dialog):
            dialog = self.screen
            if isinstance(event, events.Paste):
                await dialog.pasted(event.text)
                return
            if not _app_wide(self, event.key):
                await dialog.typed(event)
                return
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


def first(*bindings: Binding) -> list[Binding | tuple[str, str] | tuple[str, str, str]]:
    """the bindings, each answered as the app reads its key, before the next key is read. Textual hands a key to the
    widget focused when the key is read but looks its binding up only once the key is handled, on the screen then on
    top: a key that opens a prompt would leave the keys typed right after it (a paste, a burst over a slow link) to
    the screen below, where they are lost"""
    return [replace(binding, priority=True) for binding in bindings]


class TraceScreen(Screen[None]):
    """the steps, the current step's tables, the side panel and the status line; every key of the contract"""

    BINDINGS = first(  # no footer shows them: KEYS, translated, is what ? lists
        Binding("right,n", "step(1)", show=False),
        Binding("left,p", "step(-1)", show=False),
        Binding("down", "input(1)", show=False),
        Binding("up", "input(-1)", show=False),
        *(Binding(str(d), f"choose({d})", show=False) for d in range(1, 10)),
        Binding("h", "head(1)", show=False),
        Binding("H", "head(-1)", show=False),
        Binding("tab", "tab(1)", show=False),
        Binding("shift+tab", "tab(-1)", show=False),
        Binding("shift+right", "move(0, 1)", show=False),
        Binding("shift+left", "move(0, -1)", show=False),
        Binding("shift+down", "move(1, 0)", show=False),
        Binding("shift+up", "move(-1, 0)", show=False),
        Binding("enter", "explain", show=False),
        Binding("e", "edit", show=False),
        Binding("u", "undo", show=False),
        Binding("s", "scale", show=False),
        Binding("m", "mask", show=False),
        Binding("plus,equals_sign", "precision(1)", show=False),
        Binding("minus,underscore", "precision(-1)", show=False),
        Binding("t", "temperature", show=False),
        Binding("left_square_bracket", "warmer(-1)", show=False),
        Binding("right_square_bracket", "warmer(1)", show=False),
        Binding("f", "flash", show=False),
        Binding("b", "block(1)", show=False),
        Binding("B", "block(-1)", show=False),
        Binding("d", "decode", show=False),
        Binding("x", "picture", show=False),
        Binding("w", "write", show=False),
        Binding("question_mark", "keys", show=False),
        Binding("q", "quit", show=False),
        Binding("escape", "close", show=False),
        Binding("pageup", "scroll(-1)", show=False),
        Binding("pagedown", "scroll(1)", show=False),
        Binding("ctrl+c", "app.interrupt", show=False),
    )

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
    def explorer(self) -> Explorer:
        assert isinstance(self.app, Explorer)
        return self.app

    def hint(self) -> str:
        return _(HINT).replace(" · ", self.between)

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
        self.query_one("#side").set_class(s.side_open, "open")
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
        status, rows = self._status()
        self.query_one("#status", Static).update(status, layout=sum(rows) != sum(self.status_rows))
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

    def _status(self) -> tuple[Text, tuple[int, int]]:
        """the status line and the message line, each wrapped to the screen's width onto STATUS_ROWS rows at most (a
        row on a low screen), the last cut with … should more be left; the status wraps between its parts. On the
        message line the selected cell's words give way to the message when both do not fit. With the rows each
        takes"""
        s, width, between = self.session, max(1, self.size.width - 2), self.between
        most = 1 if self.size.height < LOW else STATUS_ROWS
        ellipsis = self.explorer.look.ellipsis
        message = visible(self.message).split(" ")
        together = _wrapped([*visible(s.cell_words()).split(" "), between.strip(), *message], " ", width)
        rows = _cut(_wrapped([visible(part) for part in s.status_parts()], between, width), width, most, ellipsis)
        said = _cut(together if len(together) <= most else _wrapped(message, " ", width), width, most, ellipsis)
        return Text("\n".join(rows + said)), (len(rows), len(said))

    @staticmethod
    def _side_key(s: Session, width: int) -> tuple[object, ...]:
        """what the side panel shows for session s, width columns wide, depends on"""
        return (s.explaining and (id(s.problem), s.step, s.row, s.head, s.cell, s.precision, s.carry_rounding),
                s.tempered and (id(s.problem), s.row, s.head, s.temperature, s.precision, s.carry_rounding),
                s.flashing and (id(s.problem), s.row, s.head, s.flash_block, s.precision),
                s.decoding and (id(s.problem), s.row, s.head, s.precision), width)

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

    def _likely(self) -> tuple[list[Action], list[Action]]:
        """the keys a reader likely presses next, each as what it does to a session: all of them, the likeliest first
        (this screen, the last key again, the next step, Enter, t, ] and [, s, the next input, + and -, m, the previous
        input, h and H, the previous step, the other steps, nearest first), and those that open a step"""
        s = self.session
        others = sorted((n for n in range(1, len(STEPS) + 1) if abs(n - s.step) > 1),
                        key=lambda n: (abs(n - s.step), n < s.step))
        steps: list[Action] = [lambda v: None, lambda v: v.next_step(1), lambda v: v.next_step(-1),
                            *(lambda v, n=n: v.go(n) for n in others)]  # this one, the next, the previous, ...
        keys: list[Action] = [Session.toggle_explaining, Session.toggle_temperature, lambda v: v.warmer(1),
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
            width = widths[v.side_open]
            start = top if v.step == s.step else 0
            line = 0
            for part in self._main(v, width, screenful, pause):
                shown = line < start + screenful and line + part.height > start
                if shown == first:
                    drawer.ahead(part, width, pause, shown=first)
                line += part.height
            if first and v.side_open:
                for part in self._side(v, side_width):
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

    def _steps(self) -> Text:
        out = Text()
        for number, name in enumerate(STEPS, start=1):
            line = Text(f"{number} {_(name)}\n", style=Style(meta={"step": number}))
            if number == self.session.step:
                line.stylize(SELECTED)
            out.append_text(line)
        p = self.session.problem
        d = p.dims
        name = visible(shown_name(p.name) or "") if p.name else _("problem")
        about = f"\n{name}\nn = {d.n}, d_model = {d.d_model}\nd_k = {d.d_k}, d_v = {d.d_v}"
        heads = ngettext(", {n} head", ", {n} heads", d.heads).format(n=d.heads)
        out.append(about + (heads if d.heads > 1 else ""), style="dim")
        return out

    def _side(self, s: Session, width: int) -> list[Part]:
        """the side panel for session s: the selected cell's arithmetic, and the softmax at a temperature; the same
        parts each time it shows the same"""
        return self.drawer.kept(("side", self._side_key(s, width)), s.problem, lambda: self._side_parts(s, width))

    def _side_parts(self, s: Session, width: int) -> list[Part]:
        drawer = self.drawer
        parts: list[Part] = []
        if s.explaining:
            parts.append(drawer.text(Text(_("the selected cell's arithmetic"), style="bold underline"), width))
            parts.extend(drawer.text(Text(visible(line)), width) for line in s.arithmetic())
            parts.append(drawer.blank(width))
        if s.tempered:
            parts.append(drawer.text(Text(_("softmax at a temperature ([ and ] change T)"), style="bold underline"),
                                     width))
            parts.extend(drawer.block(s.temperature_block(), -1, "", s.precision, width, None))
            parts.append(drawer.text(Text(_("T < 1 sharpens the row towards its largest score; T > 1 flattens it "
                                            "towards equal weights."), style="italic"), width))
        if s.flashing:
            heading, lines = s.flash_page()
            parts.append(drawer.text(Text(_("online softmax · {page} (b and B change the block)").format(
                page=visible(heading)), style="bold underline"), width))
            parts.extend(drawer.text(Text(visible(line)), width) for line in lines)
        if s.decoding:
            parts.append(drawer.text(Text(_("decode step {t}, against the KV cache").format(t=s.row + 1),
                                          style="bold underline"), width))
            parts.extend(drawer.text(Text(visible(line)), width) for line in s.decode_lines())
        return parts

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
            path = _free(explorer.here(), f"{explorer.stem}-step{self.session.step}", ".svg")
            picture = explorer.export_screenshot(title=visible(self.session.problem.name or "attntrace"))
            _named(path, lambda: write_files({path: picture}))
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
            _named(target, lambda: write_files({target: self.session.problem_text()}))
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
                target, question = _target(text, folder, explorer.opened)
            except AttntraceError as e:
                await self.say(e)
                return
            if question is None:
                await self.act(lambda: write(target))
            else:
                await self.ask(Confirm(question), lambda yes: confirmed(target, yes))

        default = _free(folder, f"{explorer.stem}-edited", ".json")
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
        screen = self.screen
        if isinstance(screen, TraceScreen) and not self.redrawing:
            self.redrawing = True

            async def again() -> None:
                self.redrawing = False
                await screen.redraw()

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
    app = widget.app
    if isinstance(app, Explorer) and app.look.ascii:
        for bar in (widget.vertical_scrollbar, widget.horizontal_scrollbar):
            bar.renderer = AsciiBars  # type: ignore[misc]  # Textual's way to draw one widget's bars otherwise


class Box(Vertical):
    """a dialog's box, which scrolls when its words are longer than the screen"""

    def on_mount(self) -> None:
        plain_bars(self)


class Dialog(ModalScreen[R]):
    """a box on top, answered once, whose keys the app hands it one by one as it reads them (see Explorer.on_event).

    Textual gives a key to the widget focused when the key is read, and runs the key's binding once the key has gone
    back up to the app, behind the keys read meanwhile: in one burst (a paste, keys a slow link held back), a box
    would put in 4.5 before deleting with the Backspace typed first, and the keys typed after Enter would go to the
    closed box. Here each key acts, and an answer is taken and the box closed, before the next key is read."""

    answered = False
    then: Callable[[R | None], Awaitable[None]] | None = None  # what takes the answer

    async def answer(self, result: R | None) -> None:
        """close the box and give its answer, once: a key typed right after the one that answered cannot again"""
        if self.answered or not self.is_current:  # answered, or the app is ending
            return
        self.answered = True
        await self.app.pop_screen()
        if self.then is not None:
            await self.then(result)

    def focus_box(self) -> None:
        """the box to type in, if any, shows its cursor"""
        for box in self.query(Answer):
            self.set_focus(box)

    async def typed(self, event: events.Key) -> None:
        """a key read while the box is on top"""

    async def pasted(self, text: str) -> None:
        """a paste (a terminal that marks pastes) while the box is on top"""

    def on_click(self, event: events.Click) -> None:
        """a click beside the box answers nothing, as Esc does"""
        if event.widget is self:
            self.app.call_later(self.answer, None)


class Answer(Input):
    """a line to type, where a control or bidi character, typed or pasted, is shown as its escape and never obeyed"""

    def insert_text_at_cursor(self, text: str) -> None:
        super().insert_text_at_cursor(visible(text))

    def replace(self, text: str, start: int, end: int) -> None:
        super().replace(visible(text), start, end)

    def put(self, text: str) -> None:
        """text typed or pasted: in place of what is selected (the name offered, at first), or at the cursor"""
        if self.selection.is_empty:
            self.insert_text_at_cursor(text)
        else:
            self.replace(text, *self.selection)


class Prompt(Dialog[str]):
    """one line to type: a new number, or a file name; Enter gives it, Esc gives nothing"""

    def __init__(self, question: str, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self.question, self.value, self.placeholder = question, value, placeholder

    def compose(self) -> ComposeResult:
        with Box(id="dialog"):
            yield Static(Text(visible(self.question)))
            yield Answer(visible(self.value), placeholder=visible(self.placeholder), id="answer")

    async def typed(self, event: events.Key) -> None:
        box = self.query_one(Answer)
        if event.key == "enter":
            await self.answer(box.value if box.value.strip() else None)
        elif event.key == "escape":
            await self.answer(None)
        elif event.is_printable:
            assert event.character is not None
            box.put(event.character)
        else:  # Backspace, Delete, the arrows, Home, End, Ctrl-U...: as the box's own bindings say
            bound = self.active_bindings.get(event.key)
            if bound is not None and bound.node is box and bound.enabled:
                await self.app.run_action(bound.binding.action, box)

    async def pasted(self, text: str) -> None:
        lines = text.splitlines()
        if lines:
            self.query_one(Answer).put(lines[0])


class Confirm(Dialog[bool]):
    """a question that y answers yes and any other key no"""

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Box(id="dialog"):
            yield Static(Text(visible(self.question)))

    async def typed(self, event: events.Key) -> None:
        await self.answer(event.key == "y")


class Keys(Dialog[None]):
    """the keys and what they do; any key closes it, but for the arrows and PgUp PgDn when the list is longer than the
    screen: they scroll it"""

    SCROLLS = {"up": (-1, False), "down": (1, False), "pageup": (-1, True), "pagedown": (1, True)}

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=False, padding=(0, 2, 0, 0), pad_edge=False)
        table.add_column(style="bold", no_wrap=True)
        table.add_column(overflow="fold")  # a line of Chinese, without spaces to break at, is broken where it ends
        ascii_ = isinstance(self.app, Explorer) and self.app.look.ascii
        for keys, what in KEYS:
            table.add_row(_(ASCII_KEYS.get(keys, keys) if ascii_ else keys), _(what))
        with Box(id="dialog", classes="keys"):
            yield Static(Group(Text(_("attntrace explore: the keys"), style="bold underline"), Text(""), table))

    async def typed(self, event: events.Key) -> None:
        dialog = self.query_one("#dialog")
        if event.key in self.SCROLLS and dialog.max_scroll_y > 0:
            lines, pages = self.SCROLLS[event.key]
            step = dialog.scrollable_content_region.height if pages else 1
            dialog.scroll_to(y=dialog.scroll_y + lines * step, animate=False)
        else:
            await self.answer(None)

    def on_click(self, event: events.Click) -> None:
        self.app.call_later(self.answer, None)


def _app_wide(app: App[Any], key: str) -> bool:
    """whether key is one the app answers on every screen (Ctrl-C)"""
    return any(binding.priority and binding.key == key
               for binding in Binding.make_bindings([*app.BINDINGS, *App.BINDINGS]))


def _wrapped(pieces: list[str], between: str, width: int) -> list[str]:
    """the pieces joined by between onto rows of at most width cells, a row broken between two pieces; a piece wider
    than a row (a long path) goes on from where the row is, on as many rows as it needs"""
    rows: list[str] = []
    for piece in pieces:
        if rows and (cell_len(rows[-1] + between + piece) <= width or cell_len(piece) > width):
            rows[-1:] = chop_cells(rows[-1] + between + piece, width)
        else:
            rows.extend(chop_cells(piece, width) or [""])
    return rows


def _cut(rows: list[str], width: int, most: int, ellipsis: str = "…") -> list[str]:
    """at most most rows, the last ending with the ellipsis when some were left out"""
    if len(rows) <= most:
        return rows
    last, size = rows[most - 1], len(ellipsis)
    kept = set_cell_size(last, width - size) if cell_len(last) + size > width else last + " "
    return [*rows[:most - 1], kept + ellipsis]


def _target(text: str, folder: Path, opened: Path | None) -> tuple[Path, str | None]:
    """the file w writes for the name typed (relative to folder), and, when it exists, the question to ask before it is
    overwritten (it may be the problem file opened); a name that cannot be written is one clear error"""
    name = text.strip()
    try:
        path = Path(name).expanduser()
    except RuntimeError:  # no home folder for ~ (HOME unset, and no such user)
        raise AttntraceError(_("{name} names no home folder here (is HOME set?); give the file's full path").format(
            name=name.split('/')[0])) from None
    target = path if path.is_absolute() else folder / path
    found = _named(target, lambda: kind(target))
    if found == "directory":
        raise AttntraceError(_("{path}: is a folder; give a file name").format(path=_short(target)))
    if found == "other":
        raise AttntraceError(_("{path}: is a device or a pipe, not a file; give a file name").format(path=_short(target)))
    if found == "missing":
        if _named(target.parent, lambda: kind(target.parent)) != "directory":
            raise AttntraceError(_("{path}: no such folder; create it, or give another folder").format(
                path=_short(target.parent)))
        return target, None
    if not _named(target, lambda: os.stat(target).st_mode) & 0o222:  # even for root, whom os.access lets write
        raise AttntraceError(_("{path}: is read-only; give another name").format(path=_short(target)))
    if opened is not None and _same(target, opened):
        return target, _("{path} is the problem file this explorer opened. Overwrite it with the problem as edited? y "
                         "overwrites it; any other key keeps it.").format(path=target)
    return target, _("{path} exists. Overwrite it with the problem as edited? y overwrites it; any other key keeps "
                     "it.").format(path=target)


def _named(path: Path, look: Callable[[], R]) -> R:
    """look at (or write) path; an error names it shortened, so that the reason fits on the message line"""
    try:
        return look()
    except AttntraceError as e:
        raise AttntraceError(str(e).replace(str(path), str(_short(path))), e.exit_code) from None
    except (OSError, ValueError) as e:
        raise AttntraceError(_("{path}: cannot write it: {reason}").format(
            path=_short(path), reason=getattr(e, 'strerror', None) or e)) from None


def _short(path: Path, most: int = 60) -> str:
    """a long path shown by its start and its end, most columns wide at most (a Chinese character takes two)"""
    text = str(path)
    if cell_len(text) <= most:
        return text
    return f"{_within(text, most // 2 - 1)}…{_within(text[::-1], most // 2)[::-1]}"


def _within(text: str, columns: int) -> str:
    """the start of text that takes at most columns"""
    used = 0
    for at, character in enumerate(text):
        used += cell_len(character)
        if used > columns:
            return text[:at]
    return text


def _same(path: Path, other: Path) -> bool:
    """whether two paths are the same file (a link, a hard link or another spelling of it)"""
    try:
        return os.path.samefile(path, other)
    except (OSError, ValueError):
        return False


def _free(folder: Path, stem: str, suffix: str) -> Path:
    """folder/stem.suffix, or with -2, -3, ... when that name is taken: by a file, a folder or a link, even a broken
    one or a loop (os.path.lexists looks at the name alone, and never fails)"""
    path, count = folder / f"{stem}{suffix}", 1
    while os.path.lexists(path):
        count += 1
        path = folder / f"{stem}-{count}{suffix}"
    return path


def explore(session: Session, *, look: Look = Look(), stem: str = "attntrace", opened: Path | None = None) -> int:
    """run the explorer in this terminal until q (0) or Ctrl-C (130)"""
    app = Explorer(session, look=look, stem=stem, opened=opened)
    app.run()
    return app.return_code or 0
