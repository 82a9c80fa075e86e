"""Trace transformer self-attention step by step, on real numbers.

    >>> import attntrace
    >>> t = attntrace.trace(x=[[1, 0], [0, 1]], scale=False)
    >>> print(t.render())
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["AttntraceError", "Problem", "Trace", "decode", "flash", "load", "model_head", "trace"]


def __getattr__(name: str) -> Any:
    """the library's names, imported on first use so that `attntrace --version` stays quick"""
    if name in ("trace", "load", "model_head", "flash", "decode"):
        from attntrace import api

        return getattr(api, name)
    if name == "Problem":
        from attntrace.core.problem import Problem

        return Problem
    if name == "Trace":
        from attntrace.api import Trace

        return Trace
    if name == "core":  # attntrace.core.masks.Window(2), say
        import attntrace.core

        return attntrace.core
    if name == "AttntraceError":
        from attntrace.errors import AttntraceError

        return AttntraceError
    raise AttributeError(f"module 'attntrace' has no attribute {name!r}")
