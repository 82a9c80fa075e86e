"""The explorer's dialogs: a box on top that takes its keys one by one as they are read — a line to type, a yes or no,
the list of keys."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from attntrace.escape import visible
from attntrace.explore.keys import ASCII_KEYS, KEYS
from attntrace.explore.stepview import plain_bars
from attntrace.language import _

R = TypeVar("R")


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
        ascii_ = self.app.has_class("ascii")  # the Explorer's class when it draws ASCII lines
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
