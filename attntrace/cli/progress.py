"""The progress line of a model trace on stderr: layer k of L, drawn by rich's progress display once the trace has
taken more than a second, and gone when it ends."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import IO, Any

from attntrace.language import _

DELAY = 1.0  # seconds: a trace that ends sooner shows nothing


class LayerProgress:
    """tell() it (k, L) as layer k of the way to layer L is done; it draws nothing for the first DELAY seconds"""

    def __init__(self, stream: IO[str], no_color: bool, text: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.no_color, self.text, self.clock = stream, no_color, text, clock
        self.started = clock()
        self.shown: Any = None  # rich's Progress, once drawn
        self.task: Any = None

    def tell(self, done: int, total: int) -> None:
        said = _("layer {k} of {n}").format(k=min(done + 1, total), n=total)  # the layer now running
        if self.shown is None:
            if self.clock() - self.started < DELAY:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn
            from rich.table import Column

            console = Console(file=self.stream, no_color=self.no_color)
            self.shown = Progress(  # the layer before the text: a long folder name is what a narrow terminal cuts short
                BarColumn(bar_width=20),
                TextColumn("{task.fields[said]} · {task.description}", markup=False,  # a name's [ ] shown as typed
                           table_column=Column(no_wrap=True, overflow="ellipsis", ratio=1)),
                console=console, transient=True, expand=True)
            self.task = self.shown.add_task(self.text, total=total, said=said)
            self.shown.start()
        self.shown.update(self.task, completed=done, total=total, said=said)

    def stop(self) -> None:
        if self.shown is not None:
            self.shown.stop()
