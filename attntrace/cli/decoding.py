"""What `attntrace decode` does once its options are read: read the problem, decode it against a KV cache, show the
steps or the JSON form."""

from __future__ import annotations

from typing import Any

from attntrace.cli.guard import worded
from attntrace.cli.output import OutputOptions, show
from attntrace.cli.terminal import Environment
from attntrace.errors import AttntraceError, OutOfRange
from attntrace.render.document import Document


def decode(env: Environment, file: str | None, window: int | None, sinks: int, position: int | None,
           opts: OutputOptions, explain: bool = False) -> None:
    """`attntrace decode`: each step of decoding the problem in file (None: the built-in example)"""
    from attntrace.cli.tracing import problem
    from attntrace.core.decode import decode as decoded
    from attntrace.core.problem import problem_error
    from attntrace.files.problemfile import origin
    from attntrace.memory import check_trace
    from attntrace.views.describe import shown_name

    p = problem(file, env)
    check_trace(p)  # each step's weights are kept, as a trace's are
    try:
        d = decoded(p, window=window, sinks=sinks, position=position)
    except OutOfRange:
        raise
    except AttntraceError as e:  # an option's value is the option's to name; the file's content, the file's
        raise (e if e.exit_code == 2 else problem_error(origin(file, {}), AttntraceError(worded(e)))) from None
    title = shown_name(p.name)
    if opts.resolved_format(env) == "json":
        from attntrace.render.decodeform import decode_form

        show(env, Document(data=decode_form(d), title=title), opts)
        return
    if explain:
        from attntrace.views.explain_decode import explain_decode_steps

        show(env, Document(explain_decode_steps(d, opts.precision), title=title), opts)
        return
    from attntrace.views.decode import decode_steps

    show(env, Document(decode_steps(d), title=title), opts)


def decodable(file: str | None, env: Environment, window: int | None, sinks: int) -> Any:
    """the problem in file, checked for decoding with its window and sinks (a bad fit said once, about the file)"""
    from attntrace.cli import tracing
    from attntrace.core.decode import check
    from attntrace.core.problem import problem_error
    from attntrace.files.problemfile import origin

    p = tracing.problem(file, env)
    try:
        check(p, window, sinks, None)
    except AttntraceError as e:
        raise (e if e.exit_code == 2 else problem_error(origin(file, {}), AttntraceError(worded(e)))) from None
    return p
