"""A problem's settings replaced by those given apart from its file: the command line's options, or a model trace's."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from attntrace.core import masks
from attntrace.core.problem import Problem
from attntrace.errors import AttntraceError, ExitStatus
from attntrace.language import _


def override(problem: Problem, *, scale: bool | float | None = None, mask: tuple[str, ...] | None = None,
             window: int | None = None, heads: int | None = None, padding: tuple[int, ...] | None = None) -> Problem:
    """the problem with the caller's settings in place of the file's (None keeps the file's); padding names the keys
    (from 1) that are padding"""
    changes: dict[str, Any] = {}
    if scale is not None:
        changes["scale"] = scale
    if mask is not None or window is not None or padding is not None:
        names = problem.masks if mask is None else mask
        flags = problem.padding if "padding" in names else None
        if padding is not None:
            m = len(problem.x if problem.source is None else problem.source)
            if not all(1 <= j <= m for j in padding):
                raise AttntraceError(_("padding names key {key}, but the keys are 1 to {m}").format(
                    key=next(j for j in padding if not 1 <= j <= m), m=m), exit_code=ExitStatus.USAGE)
            flags = tuple(j + 1 in padding for j in range(m))
        try:
            changes["mask"] = masks.from_names(names, window=window if window is not None else (
                problem.window if "window" in names else None), padding=flags)
        except AttntraceError as e:  # the caller's setting (an option's value) is wrong, not the file
            raise AttntraceError(str(e), exit_code=ExitStatus.USAGE) from None
    if heads is not None:
        changes["heads"] = heads
    return replace(problem, **changes) if changes else problem
