"""The cycle collector paused while a great many small objects are made (a step's tables, explain's lines): they hold
no cycles, and its passes over all of them as they pile up would cost as much again as making them."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """no cyclic collection inside the block (reference counting still frees everything); as it was after it"""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if not gc.get_freeze_count():  # what was made meanwhile joins the oldest generation at once, rather than
                gc.freeze()  # through a pass over all of it on the next allocation (unless someone else keeps objects
                gc.unfreeze()  # frozen, which unfreezing would undo)
            gc.enable()
