"""The maths: the problem, its masks and variants, the arithmetic, attention, the engine and its frozen trace."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import ModuleType

_MODULES = ("arithmetic", "attention", "decode", "engine", "experiments", "flash", "generate", "integers", "intermediates",
            "masks", "overflow", "problem", "schema", "trace", "variants", "who")


def __getattr__(name: str) -> ModuleType:
    """attntrace.core.masks and the rest, each imported when first named (a plain run needs few of them)"""
    if name in _MODULES:
        return import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
