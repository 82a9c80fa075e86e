"""What the tracing commands do once their options are read: read the problem with the command line's settings,
trace it, show its steps. Free of typer, so commands.py and quick.py call the same code."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional

from attntrace.cli.output import OutputOptions, show
from attntrace.cli.terminal import Environment
from attntrace.errors import AttntraceError, OutOfRange
from attntrace.escape import visible
from attntrace.language import _, ngettext
from attntrace.render.document import Document

if TYPE_CHECKING:
    from pathlib import Path

    from attntrace.cli.options import Given

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


def show_trace(env: Environment, t: Any, steps: Callable[[], Any], opts: OutputOptions, title: str | None = None,
               head: int | None = None) -> None:
    """a trace's steps, or its JSON form, after its warnings on stderr; the steps are made only when shown (the JSON
    form needs them only for an export); title: what a person reads above them (default the problem's name); head: a
    model's head, its JSON naming it by its number in the layer"""
    from attntrace.views.describe import shown_name

    title = shown_name(t.problem.name) if title is None else title
    from attntrace.views.walkthrough import warnings

    for warning in warnings(t):
        env.message(_("warning: {warning}").format(warning=warning))
    if opts.resolved_format(env) != "json":
        show(env, Document(steps(), title=title), opts)
        return
    from attntrace.render.jsonform import trace_form

    json_form = trace_form(t)  # the trace's own arrays, written a block of rows at a time
    if head is not None:
        json_form["heads"][0]["head"] = head
    exported = opts.export_svg is not None or opts.export_html is not None
    show(env, Document(steps() if exported else (), json_form, title=title), opts)


def run(env: Environment, file: str | None, opts: OutputOptions, matrices: Matrices | None = None,
        settings: dict[str, Any] | None = None, carry_rounding: bool = False) -> None:
    """`attntrace run`: the eight steps for every input"""
    from attntrace.views.walkthrough import run_steps

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
        from attntrace.views.walkthrough import step_steps

        show_trace(env, t, lambda: step_steps(t), opts)


def model_head(env: Environment, where: Callable[[], tuple[Path, str]], model_type: Optional[str], g: Given) -> int:
    """what `model` and `bert` do: run the sentence up to the layer in the model directory where() finds (with the name
    its traces are titled), then trace the head, summarise the layer, extract the head or explore it; the exit status"""
    from attntrace.checkpoints.head import enter
    from attntrace.checkpoints.tokenize import together, unknown_note
    from attntrace.core.engine import trace
    from attntrace.files.written import distinct
    from attntrace.memory import check_trace
    from attntrace.views.walkthrough import layer_summary_steps, run_steps, step_steps, who_steps

    opts, all_heads = g.opts(), g.all_heads
    if g.no_special and not all_heads and g.extract is not None:
        raise AttntraceError(_("--no-special is for the who-attends-to-whom lists, which --extract does not write; "
                               "drop one of them"), exit_code=2)
    if g.no_special and not all_heads and g.input_ is not None and not g.who:
        raise AttntraceError(_("--no-special is for the who-attends-to-whom lists, which --input shows only with "
                               "--who; add --who"), exit_code=2)
    if g.explore_ and (g.who or all_heads or g.extract is not None):
        raise AttntraceError(_("--explore steps through one head; drop --who, --all-heads and --extract"), exit_code=2)
    if g.explore_:
        need_terminal(env, _("attntrace model (or bert) without --explore"))
    if g.who and opts.format in ("json", "csv"):
        raise AttntraceError(_("--who is a view to read, with no {FORMAT} form; for every weight, use --format "
                               "{format} without --who").format(FORMAT=opts.format.upper(), format=opts.format),
                             exit_code=2)
    from pathlib import Path

    found = where()
    distinct({"--extract": g.extract, **g.outputs()}, [found[0]])
    running = _("running {name} up to layer {layer}").format(name=visible(found[1]), layer=g.layer)
    with env.progress(running) as progress:
        opened = enter(found, g.sentence, g.layer, g.head, model_type, every=all_heads, float64=g.float64,
                       progress=progress)
    encoding, name = opened.entered.encoding, opened.name
    unknown = unknown_note(encoding)
    if unknown:
        env.message(_("note: {note}").format(note=unknown))
    leave_out = tuple(i for i, flag in enumerate(encoding.special) if flag) if g.no_special else ()
    if g.no_special and not leave_out:
        env.message(_("note: {name}'s tokenizer adds no special tokens; --no-special leaves nothing out").format(
            name=name))
    if leave_out and len(leave_out) == len(encoding.special):
        raise AttntraceError(_("--no-special would leave out every token: the sentence has none besides {tokens}").format(
            tokens=together(encoding.special_names)))
    problem, shown = opened.problem(**g.settings()), opened.title
    if g.explore_:
        whose = _("layer {layer} · head {head}/{heads}").format(layer=g.layer, head=g.head,
                                                                heads=opened.entered.model.heads)
        return explore(problem, opts.precision, g.carry_rounding, g.input_, opts.ascii_lines(),
                       Path(name).name or "model", name, whose)
    if all_heads:
        check_trace(problem)
        t = trace(problem)
        summary = layer_summary_steps(t, _("Who attends to whom · {name} · every head").format(name=shown),
                                      leave_out=leave_out)
        show_trace(env, t, lambda: summary, opts, shown)
        return 0
    if g.extract is not None:
        from attntrace.render.jsonform import problem_to_dict

        written = problem_to_dict(problem)  # with its rope, masks and biases: `run` traces it to the same numbers
        show(env, Document(data=written), OutputOptions(format="json", output=g.extract))
        env.message(ngettext("wrote {file}: {name}, {n} token; trace it with attntrace run {file}",
                             "wrote {file}: {name}, {n} tokens; trace it with attntrace run {file}",
                             len(encoding.tokens)).format(file=g.extract, name=problem.name, n=len(encoding.tokens)))
        return 0
    heading = _("Who attends to whom · {name}").format(name=shown)
    carry_rounding = opts.precision if g.carry_rounding else None
    check_trace(problem, g.input_)
    if g.input_ is not None:
        t = trace(problem, query=g.input_, carry_rounding=carry_rounding)
        steps = who_steps(t, heading, leave_out=leave_out) if g.who else step_steps(t)
    else:
        t = trace(problem, carry_rounding=carry_rounding)
        listed = who_steps(t, heading, leave_out=leave_out)
        if g.who:
            steps = listed
        elif summary_first(env, opts):
            specials = together(encoding.special_names) if any(encoding.special) and not leave_out else None
            steps = with_more(listed, specials)
        else:
            steps = [*run_steps(t), *listed]
    show_trace(env, t, lambda: steps, opts, shown, head=g.head)
    return 0


def summary_first(env: Environment, opts: OutputOptions) -> bool:
    """a model's head read in a terminal, no format asked for: who attends to whom, not the thousands of lines of
    every table; a pipe, a file, an export or a format asked for gets every step, as ever"""
    return (env.stdout_isatty and opts.format is None and opts.output is None and opts.export_svg is None
            and opts.export_html is None)


def with_more(listed: list[Any], specials: str | None) -> list[Any]:
    """the who-attends-to-whom lists, then a line saying how to get every step's tables (and, when the sentence has
    special tokens, how to leave them out)"""
    from dataclasses import replace

    from attntrace.views.page import Note

    more = [Note(""), Note(_("These are each token's three largest weights; add --format table for every step with all "
                             "its tables (a pipe or -o FILE gets them too)."))]
    if specials:
        more.append(Note(_("Add --no-special to leave {tokens} out of the lists.").format(tokens=specials)))
    *before, last = listed
    return [*before, replace(last, items=(*last.items, *more))]


def need_terminal(env: Environment, instead: str) -> None:
    if not (env.stdin_isatty and env.stdout_isatty):
        raise AttntraceError(_("explore needs a terminal for stdin and stdout; to print the trace instead, use "
                               "{command}").format(command=instead))


def explore(problem: Any, precision: int, carry_rounding: bool, input_: Optional[int], ascii_: bool, stem: str,
            where: str, whose: Optional[str] = None, opened: Optional[Path] = None) -> int:
    """the explorer on a problem (a file's, or a model's head: whose says which) until it quits; its exit status.
    opened: the file, which w overwrites only once asked"""
    from attntrace.core.problem import problem_error
    from attntrace.explore.state import Session
    from attntrace.render.table import Look

    try:
        session = Session(problem, precision=precision, carry_rounding=carry_rounding, row=(input_ or 1) - 1, whose=whose)
    except OutOfRange:
        raise
    except AttntraceError as e:
        raise problem_error(where, e) from None
    from attntrace.explore.app import explore as run_explorer  # Textual, only once there is a terminal to run in

    return int(run_explorer(session, look=Look(ascii_), stem=stem, opened=opened) or 0)
