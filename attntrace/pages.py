"""From a problem to the page shown for it: the problem computed once its size is known to fit in memory, and the page
of what was computed (a trace, an online softmax, a decoding), its warnings said first. The command line and the
library's render() both take it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from attntrace.core.engine import trace
from attntrace.core.problem import Problem
from attntrace.core.trace import Trace
from attntrace.memory import check_trace
from attntrace.render.document import Document, Style, render
from attntrace.views.describe import shown_name
from attntrace.views.page import Step
from attntrace.views.walkthrough import run_steps, step_steps, warnings

if TYPE_CHECKING:
    from attntrace.core.decode import Decoded
    from attntrace.core.flash import Flash

Work = Any  # what a page shows: a Trace, a Flash or a Decoded, as its Kind says


def traced(problem: Problem, query: int | None = None, carry_rounding: int | None = None) -> Trace:
    """the trace of a problem, once its size is known to fit in memory; carry_rounding: the decimals every intermediate
    is rounded to and carried at (None: exact)"""
    check_trace(problem, query)
    return trace(problem, query=query, carry_rounding=carry_rounding)


@dataclass(frozen=True)
class Kind:
    """what a page shows of one kind of work: its steps, every cell's arithmetic, its JSON form, its problem, and the
    trace whose warnings are said before it"""

    steps: Callable[[Any], Sequence[Step]]
    explained: Callable[[Any, int], Sequence[Step]]
    form: Callable[[Any], Any]
    problem: Callable[[Any], Problem]
    traced: Callable[[Any], Trace | None]


# The views, the JSON forms and the arithmetic in words of the online softmax and decoding are imported when a page
# of them is made: the kernels and their views cost more than 2% of a plain run's start-up, decimal and orjson too.

def _explain_trace(t: Trace, precision: int) -> Sequence[Step]:
    from attntrace.views.explain import explain_steps

    return explain_steps(t, precision)


def _trace_form(t: Trace) -> Any:
    from attntrace.render.jsonform import trace_form

    return trace_form(t)  # the trace's own arrays, written a block of rows at a time


def _flash_steps(f: Flash) -> Sequence[Step]:
    from attntrace.views.flash import flash_steps

    return flash_steps(f)


def _explain_flash(f: Flash, precision: int) -> Sequence[Step]:
    from attntrace.views.explain_flash import explain_flash_steps

    return explain_flash_steps(f, precision)


def _flash_form(f: Flash) -> Any:
    from attntrace.render.flashform import flash_form

    return flash_form(f)


def _decode_steps(d: Decoded) -> Sequence[Step]:
    from attntrace.views.decode import decode_steps

    return decode_steps(d)


def _explain_decode(d: Decoded, precision: int) -> Sequence[Step]:
    from attntrace.views.explain_decode import explain_decode_steps

    return explain_decode_steps(d, precision)


def _decode_form(d: Decoded) -> Any:
    from attntrace.render.decodeform import decode_form

    return decode_form(d)


TRACE = Kind(lambda t: run_steps(t) if t.query is None else step_steps(t), _explain_trace, _trace_form,
             lambda t: t.problem, lambda t: t)
FLASH = Kind(_flash_steps, _explain_flash, _flash_form, lambda f: f.trace.problem, lambda f: f.trace)
DECODING = Kind(_decode_steps, _explain_decode, _decode_form, lambda d: d.problem, lambda d: None)


class Page:
    """what is shown for a trace, an online softmax or a decoding: the warnings said first, then the document (made
    once asked for, after the warnings are said)"""

    def __init__(self, work: Work, kind: Kind, fmt: str, precision: int = 4, *, explain: bool = False,
                 exported: bool = False, steps: Sequence[Step] | None = None, title: str | None = None,
                 head: int | None = None) -> None:
        """kind: what the work is (TRACE, FLASH, DECODING); fmt: the format it is rendered in; explain: every cell's
        arithmetic; exported: an SVG or HTML export is written too (the JSON form needs the steps only then); steps:
        these steps instead of the work's own; title: above the steps (default the problem's name); head: a model's
        head, which the JSON form names"""
        self.work, self.kind, self.fmt, self.precision = work, kind, fmt, precision
        self.explain, self.exported, self.steps, self.head = explain, exported, steps, head
        self.title = shown_name(kind.problem(work).name) if title is None else title
        warned = kind.traced(work)
        self.warnings = () if warned is None else tuple(warnings(warned))

    @cached_property
    def document(self) -> Document:
        """the steps, or the JSON form (with the steps only for an export)"""
        if self.fmt != "json":
            return Document(self._steps(), title=self.title)
        form = self.kind.form(self.work)
        if self.head is not None:
            form["heads"][0]["head"] = self.head
        return Document(self._steps() if self.exported else (), form, title=self.title)

    def _steps(self) -> Sequence[Step]:
        if self.steps is not None:
            return self.steps
        return self.kind.explained(self.work, self.precision) if self.explain else self.kind.steps(self.work)

    def text(self) -> str:
        """the page as one text (no colour, 100 columns), as the command line writes it to a pipe"""
        return "".join(render(self.document, self.fmt, Style(self.precision)))
