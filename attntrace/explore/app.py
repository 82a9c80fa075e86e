"""The explorer, in Textual: one screen of the session (screen.py) with its panes (stepview.py, panes.py), the keys
(keys.py), the dialogs on top (dialogs.py) and the files x and w write (saving.py)."""

from __future__ import annotations

import gc
import re
import sys
import time
from pathlib import Path
from typing import Any

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from attntrace.errors import AttntraceError, ExitStatus
from attntrace.explore.dialogs import Dialog
from attntrace.explore.screen import BUSY, SIDE_WIDTH, STEPS_WIDTH, TraceScreen, kept
from attntrace.explore.state import Session
from attntrace.language import _
from attntrace.render.table import Look

SWITCH = 0.0005  # seconds a thread holds the interpreter while another waits: a key is read at once while drawing ahead
STEM = 80  # the most characters of the problem file's name the names of the files x and w write start with


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
        self.set_class(look.ascii, "ascii")  # for the CSS, and for the scroll bars and the key list
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


def _app_wide(app: App[Any], key: str) -> bool:
    """whether key is one the app answers on every screen (Ctrl-C)"""
    return any(binding.priority and binding.key == key
               for binding in Binding.make_bindings([*app.BINDINGS, *App.BINDINGS]))


def explore(session: Session, *, look: Look = Look(), stem: str = "attntrace", opened: Path | None = None) -> int:
    """run the explorer in this terminal until q (0) or Ctrl-C (130)"""
    app = Explorer(session, look=look, stem=stem, opened=opened)
    app.run()
    return app.return_code or 0
