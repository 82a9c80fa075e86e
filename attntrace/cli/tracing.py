"""What the showing commands do once their options are read: read the problem with the command line's settings,
compute it (a trace, an online softmax, a decoding, a model's head), and show its page (pages.Page) after its
warnings.
Free of typer, so commands.py and quick.py call the same code."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Optional

from attntrace import pages
from attntrace.cli.guard import worded
from attntrace.cli.output import OutputOptions, show
from attntrace.cli.terminal import Environment
from attntrace.core.problem import Problem, problem_error
from attntrace.core.trace import Trace
from attntrace.errors import AttntraceError, ExitStatus, OutOfRange
from attntrace.escape import visible
from attntrace.files.problemfile import origin, read
from attntrace.files.settings import override
from attntrace.language import _, ngettext
from attntrace.memory import check_flash, check_trace
from attntrace.pages import DECODING, FLASH, TRACE, Kind
from attntrace.render.document import Document
from attntrace.views.page import Note, Step
from attntrace.views.walkthrough import layer_summary_steps, run_steps, step_steps, who_steps

if TYPE_CHECKING:
    from pathlib import Path  # more than 2% of start-up, which a plain run does without

    from attntrace.checkpoints.head import SentenceHead

Matrices = dict[str, Optional[str]]  # --x, --w-q, --w-k, --w-v: a matrix file each, or None


def problem(file: str | None, env: Environment, matrices: Matrices | None = None,
            settings: dict[str, Any] | None = None) -> Problem:
    """the problem in file (None: the built-in example) with the command line's matrices and settings in place"""
    matrices = matrices or {}
    read_problem, notes = read(file, matrices)
    for note in notes:
        env.message(_("note: {note}").format(note=note))
    try:
        return override(read_problem, **(settings or {}))
    except AttntraceError as e:  # the problem read fine: the options given do not fit it, a usage error
        error = problem_error(origin(file, matrices), e)
        if any(value is not None for value in (settings or {}).values()):
            error.exit_code = ExitStatus.USAGE
        raise error from None


def traced(file: str | None, p: Problem, matrices: Matrices | None = None, query: int | None = None,
           carry_rounding: int | None = None) -> Trace:
    """the trace, or its error said about the file or the matrices given (an input out of range is the option's, said
    by guard)"""
    try:
        return pages.traced(p, query, carry_rounding)
    except OutOfRange:
        raise
    except AttntraceError as e:
        raise problem_error(origin(file, matrices or {}), e) from None


def shown(env: Environment, work: pages.Work, kind: Kind, opts: OutputOptions, explain: bool = False,
          steps: Sequence[Step] | None = None, title: str | None = None, head: int | None = None) -> None:
    """the page of a trace, an online softmax or a decoding, after its warnings on stderr (see pages.Page)"""
    exported = opts.export_svg is not None or opts.export_html is not None
    page = pages.Page(work, kind, opts.resolved_format(env), opts.precision, explain=explain, exported=exported,
                      steps=steps, title=title, head=head)
    for warning in page.warnings:
        env.message(_("warning: {warning}").format(warning=warning))
    show(env, page.document, opts)


def run(env: Environment, file: str | None, opts: OutputOptions, matrices: Matrices | None = None,
        settings: dict[str, Any] | None = None, carry_rounding: int | None = None) -> None:
    """`attntrace run`: the eight steps for every input"""
    shown(env, traced(file, problem(file, env, matrices, settings), matrices, carry_rounding=carry_rounding), TRACE, opts)


def step(env: Environment, file: str | None, query: int, opts: OutputOptions, matrices: Matrices | None = None,
         settings: dict[str, Any] | None = None, carry_rounding: int | None = None, explain: bool = False) -> None:
    """`attntrace step`: steps 4 to 7 for one input, or (explain) every cell's arithmetic"""
    p = problem(file, env, matrices, settings)
    shown(env, traced(file, p, matrices, query, carry_rounding), TRACE, opts, explain)


def flash(env: Environment, file: str | None, block: int | None, query: int | None, opts: OutputOptions,
          matrices: Matrices, settings: dict[str, Any], explain: bool = False) -> None:
    """`attntrace flash`: every query's (or input i's) online softmax over blocks of --block keys"""
    from attntrace.core.flash import flash as online  # more than 2% of start-up, which a plain run does without

    p = problem(file, env, matrices, settings)
    check_flash(p, query, block, json=opts.resolved_format(env) == "json" and not explain)
    shown(env, online(traced(file, p, matrices, query), block), FLASH, opts, explain)


def decodable(file: str | None, env: Environment, window: int | None, sinks: int) -> Problem:
    """the problem in file, checked for decoding with its window and sinks (a bad fit said once, about the file)"""
    from attntrace.core.decode import check  # more than 2% of start-up, which a plain run does without

    p = problem(file, env)
    try:
        check(p, window, sinks, None)
    except AttntraceError as e:
        raise _about(file, e) from None
    return p


def decode(env: Environment, file: str | None, window: int | None, sinks: int, query: int | None,
           opts: OutputOptions, explain: bool = False) -> None:
    """`attntrace decode`: each step of decoding the problem in file (None: the built-in example)"""
    from attntrace.core.decode import decode as decoded  # more than 2% of start-up, which a plain run does without

    p = problem(file, env)
    check_trace(p)  # each step's weights are kept, as a trace's are
    try:
        d = decoded(p, window=window, sinks=sinks, position=query)
    except OutOfRange:
        raise
    except AttntraceError as e:
        raise _about(file, e) from None
    shown(env, d, DECODING, opts, explain)


def _about(file: str | None, e: AttntraceError) -> AttntraceError:
    """an option's value is the option's to name; the file's content, the file's"""
    return e if e.exit_code == ExitStatus.USAGE else problem_error(origin(file, {}), AttntraceError(worded(e)))


def model(env: Environment, model_name: str | Path | None, sentence: str, layer: int, head: int, opts: OutputOptions, *,
          bert: bool = False, query: int | None = None, extract: Path | None = None, who: bool = False,
          all_heads: bool = False, float64: bool = False, explore_: bool = False, no_special: bool = False,
          carry_rounding: int | None = None, settings: dict[str, Any] | None = None, outputs: dict[str, Path | None] | None = None
          ) -> int:
    """what `model` and `bert` do: run the sentence up to the layer of the model (bert: a BERT directory, None for the
    default one), then trace the head, summarise the layer, extract the head or explore it; the exit status"""
    from pathlib import Path  # imported already by a model's readers

    from attntrace.checkpoints.head import find, model_head
    from attntrace.checkpoints.tokenize import together, unknown_note
    from attntrace.files.written import distinct

    _head_usage(env, opts, query, extract, who, all_heads, explore_, no_special)
    found = find(model_name, bert)
    distinct({"--extract": extract, **(outputs or {})}, [found[0]])
    running = _("running {name} up to layer {layer}").format(name=visible(found[1]), layer=layer)
    whole = all_heads or extract is not None or explore_  # the head's problem, or the layer's, traced as it is
    with env.progress(running) as progress:
        got = model_head(None, sentence, layer, head, bert=bert, every=all_heads, float64=float64, found=found,
                         progress=progress, query=None if whole else query,
                         carry_rounding=None if whole else carry_rounding, **(settings or {}))
    encoding, name = got.opened.entered.encoding, got.opened.name
    unknown = unknown_note(encoding)
    if unknown:
        env.message(_("note: {note}").format(note=unknown))
    leave_out = tuple(i for i, flag in enumerate(encoding.special) if flag) if no_special else ()
    if no_special and not leave_out:
        env.message(_("note: {name}'s tokenizer adds no special tokens; --no-special leaves nothing out").format(
            name=name))
    if leave_out and len(leave_out) == len(encoding.special):
        raise AttntraceError(_("--no-special would leave out every token: the sentence has none besides {tokens}").format(
            tokens=together(encoding.special_names)))
    if explore_:
        whose = _("layer {layer} · head {head}/{heads}").format(layer=layer, head=head,
                                                                heads=got.opened.entered.model.heads)
        return explore(got.problem, opts.precision, carry_rounding, query, opts.ascii_lines(), Path(name).name or "model", name,
                       whose)
    if all_heads:
        summary = layer_summary_steps(got.trace, _("Who attends to whom · {name} · every head").format(name=got.title),
                                      leave_out=leave_out)
        shown(env, got.trace, TRACE, opts, steps=summary, title=got.title)
    elif extract is not None:
        _extract(env, got, extract)
    else:
        shown(env, got.trace, TRACE, opts, steps=_head_steps(env, got, opts, who, leave_out), title=got.title,
              head=head)
    return ExitStatus.SUCCESS


def _head_usage(env: Environment, opts: OutputOptions, query: int | None, extract: Path | None, who: bool,
                all_heads: bool, explore_: bool, no_special: bool) -> None:
    """the options of model and bert that do not go together, refused before the model is read"""
    if no_special and not all_heads and extract is not None:
        raise AttntraceError(_("--no-special is for the who-attends-to-whom lists, which --extract does not write; "
                               "drop one of them"), ExitStatus.USAGE)
    if no_special and not all_heads and query is not None and not who:
        raise AttntraceError(_("--no-special is for the who-attends-to-whom lists, which --input shows only with "
                               "--who; add --who"), ExitStatus.USAGE)
    if explore_ and (who or all_heads or extract is not None):
        raise AttntraceError(_("--explore steps through one head; drop --who, --all-heads and --extract"),
                             ExitStatus.USAGE)
    if explore_:
        need_terminal(env, _("attntrace model (or bert) without --explore"))
    if who and opts.format in ("json", "csv"):
        raise AttntraceError(_("--who is a view to read, with no {FORMAT} form; for every weight, use --format "
                               "{format} without --who").format(FORMAT=opts.format.upper(), format=opts.format),
                             ExitStatus.USAGE)


def _extract(env: Environment, got: SentenceHead, extract: Path) -> None:
    """the head written as a problem file, with its rope, masks and biases: `run` traces it to the same numbers"""
    from attntrace.render.jsonform import problem_to_dict

    show(env, Document(data=problem_to_dict(got.problem)), OutputOptions(format="json", output=extract))
    n = len(got.tokens)
    env.message(ngettext("wrote {file}: {name}, {n} token; trace it with attntrace run {file}",
                         "wrote {file}: {name}, {n} tokens; trace it with attntrace run {file}", n).format(
                             file=extract, name=got.problem.name, n=n))


def _head_steps(env: Environment, got: SentenceHead, opts: OutputOptions, who: bool, leave_out: tuple[int, ...]
                ) -> list[Step]:
    """a head's steps: who attends to whom (alone with --who, or first in a terminal), and every step's tables"""
    from attntrace.checkpoints.tokenize import together

    t, encoding = got.trace, got.opened.entered.encoding
    heading = _("Who attends to whom · {name}").format(name=got.title)
    if t.query is not None:
        return who_steps(t, heading, leave_out=leave_out) if who else step_steps(t)
    listed = who_steps(t, heading, leave_out=leave_out)
    if who:
        return listed
    if summary_first(env, opts):
        return with_more(listed, together(encoding.special_names) if any(encoding.special) and not leave_out else None)
    return [*run_steps(t), *listed]


def summary_first(env: Environment, opts: OutputOptions) -> bool:
    """a model's head read in a terminal, no format asked for: who attends to whom, not the thousands of lines of
    every table; a pipe, a file, an export or a format asked for gets every step, as ever"""
    return (env.stdout_isatty and opts.format is None and opts.output is None and opts.export_svg is None
            and opts.export_html is None)


def with_more(listed: list[Step], specials: str | None) -> list[Step]:
    """the who-attends-to-whom lists, then a line saying how to get every step's tables (and, when the sentence has
    special tokens, how to leave them out)"""
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


def explore(problem: Problem, precision: int, carry_rounding: int | None, query: int | None, ascii_: bool, stem: str,
            where: str, whose: Optional[str] = None, opened: Optional[Path] = None) -> int:
    """the explorer on a problem (a file's, or a model's head: whose says which) until it quits; its exit status.
    carry_rounding: the decimals carried at first (the explorer carries rounding at whatever precision it shows);
    opened: the file, which w overwrites only once asked"""
    from attntrace.explore.state import Session
    from attntrace.render.table import Look  # rich

    try:
        session = Session(problem, precision=precision, carry_rounding=carry_rounding is not None, row=(query or 1) - 1,
                          whose=whose)
    except OutOfRange:
        raise
    except AttntraceError as e:
        raise problem_error(where, e) from None
    from attntrace.explore.app import explore as run_explorer  # Textual, only once there is a terminal to run in

    return int(run_explorer(session, look=Look(ascii_), stem=stem, opened=opened) or 0)
