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
            gc.enable()
