"""What the tracing commands do once their options are read: read the problem with the command line's settings,
trace it, show its steps. Free of typer, so commands.py and quick.py call the same code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

from attntrace.cli.output import OutputOptions, show
from attntrace.cli.terminal import Environment
from attntrace.errors import AttntraceError, OutOfRange
from attntrace.language import _
from attntrace.render.document import Document

Matrices = dict[str, Optional[str]]  # --x, --w-q, --w-k, --w-v: a matrix file each, or None


def problem(file: str | None, env: Environment, matrices: Matrices | None = None,
            settings: dict[str, Any] | None = None) -> Any:
    """the problem in file (None: the built-in example) with the command line's matrices and settings in place"""
    from attntrace.core.problem import problem_error
    from attntrace.files.problemfile import origin, read
    from attntrace.files.settings import override

    matrices = matrices or {}
    read_problem, notes = read(file, matrices)
    for note in notes:
        env.message(_("note: {note}").format(note=note))
    try:
        return override(read_problem, **(settings or {}))
    except AttntraceError as e:  # the problem read fine: the options given do not fit it, a usage error
        error = problem_error(origin(file, matrices), e)
        if any(value is not None for value in (settings or {}).values()):
            error.exit_code = 2
        raise error from None


def traced(file: str | None, problem: Any, matrices: Matrices | None = None, **how: Any) -> Any:
    """the trace, or its error said about the file or the matrices given (an input out of range is the option's, said
    by guard)"""
    from attntrace.core.engine import trace
    from attntrace.core.problem import problem_error
    from attntrace.files.problemfile import origin
    from attntrace.memory import check_trace

    try:
        check_trace(problem, how.get("query"))
        return trace(problem, **how)
    except OutOfRange:
        raise
    except AttntraceError as e:
        raise problem_error(origin(file, matrices or {}), e) from None


def show_trace(env: Environment, t: Any, steps: Callable[[], Any], opts: OutputOptions, title: str | None = None) -> None:
    """a trace's steps, or its JSON form, after its warnings on stderr; the steps are made only when shown (the JSON
    form needs them only for an export); title: what a person reads above them (default the problem's name)"""
    from attntrace.views.describe import shown_name

    title = shown_name(t.problem.name) if title is None else title
    from attntrace.views.steps import warnings

    for warning in warnings(t):
        env.message(_("warning: {warning}").format(warning=warning))
    if opts.resolved_format(env) != "json":
        show(env, Document(steps(), title=title), opts)
        return
    from attntrace.core.contract import trace_form

    json_form = trace_form(t)  # the trace's own arrays, written a block of rows at a time
    exported = opts.export_svg is not None or opts.export_html is not None
    show(env, Document(steps() if exported else (), json_form, title=title), opts)


def run(env: Environment, file: str | None, opts: OutputOptions, matrices: Matrices | None = None,
        settings: dict[str, Any] | None = None, carry_rounding: bool = False) -> None:
    """`attntrace run`: the eight steps for every input"""
    from attntrace.views.steps import run_steps

    p = problem(file, env, matrices, settings)
    t = traced(file, p, matrices, carry_rounding=opts.precision if carry_rounding else None)
    show_trace(env, t, lambda: run_steps(t), opts)


def step(env: Environment, file: str | None, query: int, opts: OutputOptions, matrices: Matrices | None = None,
         settings: dict[str, Any] | None = None, carry_rounding: bool = False, explain: bool = False) -> None:
    """`attntrace step`: steps 4 to 7 for one input, or (explain) every cell's arithmetic"""
    p = problem(file, env, matrices, settings)
    t = traced(file, p, matrices, query=query, carry_rounding=opts.precision if carry_rounding else None)
    if explain:
        from attntrace.views.explain import explain_steps

        show_trace(env, t, lambda: explain_steps(t, opts.precision), opts)
    else:
        from attntrace.views.steps import step_steps

        show_trace(env, t, lambda: step_steps(t), opts)
