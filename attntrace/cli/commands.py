"""The commands as typer reads them: each parses (its options named from cli/options.py), calls one library function
and hands the result to the output seam. Expected failures become one line on stderr in guard.py."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Optional

import click
import typer

from attntrace import __version__
from attntrace.cli import tracing
from attntrace.cli.clickwords import Command, Group
from attntrace.cli.helptext import COMMANDS, HELP
from attntrace.cli.options import (
    EXPORTS,
    FORMATS,
    HEAD,
    HEAD_SHOWN,
    MATRICES,
    PROBLEM,
    TRACED,
    Given,
    settings,
    takes,
)
from attntrace.cli.output import OutputOptions, show
from attntrace.cli.terminal import Environment
from attntrace.errors import AttntraceError
from attntrace.files.written import distinct
from attntrace.language import N_, _, ngettext
from attntrace.render.document import Document

__all__ = ["COMMANDS", "app", "build"]

SETTINGS: dict[str, Any] = dict(
    add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True, rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=N_("Trace transformer self-attention step by step, on real numbers."),
)
SIZE_FLAGS = {"tokens": "--tokens", "d_model": "--d-model", "d_k": "--d-k", "d_v": "--d-v", "heads": "--heads",
              "kv_heads": "--kv-heads"}


def _env() -> Environment:
    """the Environment main() was given"""
    context = click.get_current_context(silent=True)
    obj = context.find_root().obj if context is not None else None
    return obj if isinstance(obj, Environment) else Environment()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"attntrace {__version__}")
        raise typer.Exit()


def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help=N_("Print the version and exit."))] = False,
) -> None:
    """the app's own options (its help is SETTINGS')"""


def _sizes_given() -> str:
    """the size options given on the command line ("--tokens 100000000000: "), to name in an error they cause"""
    context = click.get_current_context()
    given = [f"{flag} {context.params[name]}" for name, flag in SIZE_FLAGS.items()
             if context.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE]
    return f"{' '.join(given)}: " if given else ""


def _problem(file: Optional[str], env: Environment, g: Given) -> Any:
    """the problem in file (None: the built-in example) with the command line's matrices and settings in place"""
    return tracing.problem(file, env, g.matrices(), g.settings())


def _traced(g: Given, query: Optional[int] = None, explain: bool = False) -> None:
    """run (query None), step or explain, with the options given"""
    distinct(g.outputs(), [g.file, *g.matrices().values()])
    if query is None:
        tracing.run(_env(), g.file, g.opts(), g.matrices(), g.settings(), g.carry_rounding)
    else:
        tracing.step(_env(), g.file, query, g.opts(), g.matrices(), g.settings(), g.carry_rounding, explain)


@takes("file:x", *TRACED)
def run(**given: Any) -> None:
    _traced(Given(given))


def explained(g: Given) -> None:
    """--explain writes words: refuse a format that cannot hold them, and (flash, decode) an --input missing"""
    if g.explain and g.fmt is not None and g.fmt not in FORMATS["explain"]:
        raise typer.BadParameter(_("'{format}' is not one of {choices}: the arithmetic is words (for every number, "
                                   "--format json without --explain)").format(
                                     format=g.fmt, choices=", ".join(repr(f) for f in FORMATS["explain"])),
                                 param_hint="'--format'")
    if g.explain and g.input_ is None:
        raise typer.BadParameter(_("--explain writes one input's arithmetic: give it with --input N"),
                                 param_hint="'--input'")


@takes("file:x", "input_", *TRACED, "explain")
def step(**given: Any) -> None:
    g = Given(given)
    explained(g)
    _traced(g, g.input_, g.explain)


@takes("file:x", "input_", "fmt:explain", *TRACED[1:])
def explain(**given: Any) -> None:
    g = Given(given)
    _traced(g, g.input_, explain=True)


@takes("file:x", "block", "input_:flash", "fmt", "precision", "output", "colour", "ascii_", *PROBLEM, *MATRICES,
       "explain")
def flash(**given: Any) -> None:
    from attntrace.cli.flashing import flash as online

    g = Given(given)
    explained(g)
    distinct(g.outputs(), [g.file, *g.matrices().values()])
    online(_env(), g)


@takes("name:experiment", "file", "fmt:experiment", "precision", "output", "colour", *EXPORTS)
def experiment(**given: Any) -> None:
    from attntrace.core import experiments
    from attntrace.views.describe import shown_name
    from attntrace.views.walkthrough import experiment_steps

    g = Given(given)
    if g.name not in experiments.NAMES:
        raise typer.BadParameter(_('"{name}" is not one of {names}').format(name=g.name, names=", ".join(
            experiments.NAMES)), param_hint="NAME")
    distinct(g.outputs(), [g.file])
    env = _env()
    problem = _problem(g.file, env, Given())
    show(env, Document(experiment_steps(experiments.run(g.name, problem)), title=shown_name(problem.name)), g.opts())


@takes("file:validate", *MATRICES)
def validate(**given: Any) -> None:
    from attntrace.files.problemfile import origin
    from attntrace.views.describe import describe

    g = Given(given)
    if g.file is None and not any(g.matrices().values()):
        raise click.UsageError(_("missing FILE: give a problem file (- for stdin), or its matrices with --x"))
    env = _env()
    env.write(describe(_problem(g.file, env, g), origin(g.file, g.matrices())))


def schema() -> None:
    from attntrace.core.schema import schema as problem_schema
    from attntrace.render.jsonform import dumps

    _env().write(dumps(problem_schema()))


SIZES = ("tokens", "d_model", "d_k", "d_v", "heads:sizes", "init")


@takes(*SIZES, "seed:new", "labels", "kv_heads", "rope", "alibi", "softcap", "sink", "scale:drawn",
       "output")
def new(**given: Any) -> None:
    from dataclasses import replace

    from attntrace.core.generate import notes, random_problem
    from attntrace.memory import fits_new
    from attntrace.render.jsonform import problem_to_dict

    g = Given(given)
    names = None if g.labels is None else tuple(t.strip() for t in g.labels.split(","))
    if names is not None and len(names) != g.tokens:
        raise AttntraceError(ngettext("--labels gives {n} label but --tokens is {tokens}",
                                      "--labels gives {n} labels but --tokens is {tokens}", len(names)).format(
                                          n=len(names), tokens=g.tokens), exit_code=2)
    try:
        problem = random_problem(n=g.tokens, d_model=g.d_model, d_k=g.d_k, d_v=g.d_v, heads=g.heads, init=g.init,
                                 seed=g.seed, tokens=names, kv_heads=g.kv_heads, rope=g.rope, alibi=g.alibi,
                                 softcap=g.softcap, sink=g.sink, fits=fits_new)
    except AttntraceError as e:
        raise AttntraceError(f"new: {_sizes_given()}{e}", exit_code=2) from None  # every size comes from an option
    if g.scale is not None:
        problem = replace(problem, scale=g.scale)
    env = _env()
    show(env, Document(data=problem_to_dict(problem)), OutputOptions(format="json", output=g.output))
    for note in notes(problem, g.init):
        env.message(_("note: {note}").format(note=note))


@takes("paths", "problem", "precision:check", "tolerance", "rtol", "atol", "points", "follow_through", "fmt:check",
       "gradescope", "gradebook", *PROBLEM)
def check(**given: Any) -> None:
    from attntrace.cli import checking

    env = _env()
    g = Given(given)
    with checking.trouble_is_2(env):
        checking.check(env, g, lambda source: _problem(source, env, g))


@takes("file", "key", "input_:worksheet", "flash:worksheet", "decode:worksheet", "sinks", "precision:worksheet",
       "fmt:worksheet", "output", *PROBLEM)
def worksheet(**given: Any) -> None:
    from attntrace.homework import flashsheet
    from attntrace.homework.worksheet import document

    g = Given(given)
    distinct({"-o": g.output}, [g.file])
    env = _env()
    opts = OutputOptions(format=g.fmt, precision=g.precision, output=g.output)
    if g.decode and (g.flash is not None or g.input_ is not None):
        raise typer.BadParameter(_("--decode works every step; leave out --flash and --input"), param_hint="--decode")
    if g.decode:
        from attntrace.cli import decoding
        from attntrace.homework import decodesheet

        show(env, decodesheet.document(decoding.decodable(g.file, env, g.window, g.sinks), g.window, g.sinks, g.precision,
                                       g.key), opts, blank_from=None if g.key else 0)
        return
    t = tracing.traced(g.file, _problem(g.file, env, g), query=g.input_, carry_rounding=g.precision)
    if g.flash is not None:
        show(env, flashsheet.document(t, g.flash, g.precision, g.key), opts, blank_from=None if g.key else 0)
        return
    show(env, document(t, g.precision, g.key), opts, blank_from=None if g.key else 3)


@takes("roster", "output:assign", "seed:assign", *SIZES, "mask:no-padding", "window", "scale:drawn", "precision:assign")
def assign(**given: Any) -> None:
    from attntrace.files import paths
    from attntrace.homework.assign import Design, places, problem_for, read_roster
    from attntrace.homework.assign import assign as write_class

    g = Given(given)
    masks = settings(mask=g.mask)["mask"]
    if g.window is not None and not masks:
        masks = ("window",)
    design = Design(tokens=g.tokens, d_model=g.d_model, d_k=g.d_k, d_v=g.d_v, heads=g.heads, init=g.init,
                    mask=tuple(m for m in (masks or ()) if m != "none"), window=g.window, scale=g.scale,
                    precision=g.precision)
    if str(g.output) in ("", "."):
        raise typer.BadParameter(_("give the class folder to write, such as -o class"), param_hint="--output")
    students = read_roster(g.roster)
    try:
        problem_for(design, g.seed, students[0])  # what the options ask for is refused as theirs, before a file is read
    except AttntraceError as e:
        raise AttntraceError(f"assign: {_sizes_given()}{str(e).removeprefix('assign: ')}", exit_code=2) from None
    paths.kind(g.output)  # a link loop is named as the folder given, before any of the paths inside it
    distinct([("-o", path) for s in students for path in places(g.output, s).values()], [g.roster])
    _env().message(write_class(students, g.output, design, g.seed).summary())


@takes("sentence", "layer", "head", "model:bert", *HEAD, "no_special:bert", *HEAD_SHOWN)
def bert(**given: Any) -> None:
    from attntrace.checkpoints.head import find

    g = Given(given)
    code = tracing.model_head(_env(), lambda: find(g.model, bert=True), "bert", g)
    if code:
        raise typer.Exit(code)


@takes("name:model", "sentence", "layer", "head", *HEAD, "no_special:model", *HEAD_SHOWN)
def model(**given: Any) -> None:
    from attntrace.checkpoints.head import find

    g = Given(given)
    code = tracing.model_head(_env(), lambda: find(g.name), None, g)
    if code:
        raise typer.Exit(code)


@takes("file:x", "input_:explore", "precision", "carry_rounding", *PROBLEM, *MATRICES, "ascii_")
def explore(**given: Any) -> None:
    from attntrace.files.problemfile import origin

    g = Given(given)
    env = _env()
    tracing.need_terminal(env, "attntrace run" if g.file is None else f"attntrace run {g.file}")
    problem = _problem(g.file, env, g)
    stem = "attntrace" if g.file is None or g.file == "-" else Path(g.file).stem
    code = tracing.explore(problem, g.precision, g.carry_rounding, g.input_, OutputOptions(ascii=g.ascii_).ascii_lines(),
                           stem, origin(g.file, g.matrices()), opened=None if g.file in (None, "-") else Path(g.file))
    if code:
        raise typer.Exit(code)


@takes("file", "window:decode", "sinks", "input_:decode", "fmt", "precision", "output", "colour", "ascii_", "explain")
def decode(**given: Any) -> None:
    from attntrace.cli.decoding import decode as decoding

    g = Given(given)
    explained(g)
    distinct(g.outputs(), [g.file])
    decoding(_env(), g.file, g.window, g.sinks, g.input_, g.opts(), g.explain)


def described(command: click.Command) -> None:
    """each argument of the command with the help its declaration gives it (typer 0.25 sets it before click 8.5's
    Argument, which takes a help of its own, sets it back to None)"""
    function = globals().get(command.name or "")
    signature = getattr(function, "__signature__", None)
    for param in command.params:
        if isinstance(param, click.Argument) and getattr(param, "help", None) is None and signature is not None:
            declared = signature.parameters.get(param.name or "")
            info = getattr(getattr(declared, "annotation", None), "__metadata__", [None])[0]
            param.help = getattr(info, "help", None)  # type: ignore[attr-defined]


def build(names: Sequence[str] | None = None) -> typer.Typer:
    """the app with the named commands (default: all); typer inspects every command's signature when it starts"""
    commands = globals()
    built = typer.Typer(cls=Group, **SETTINGS)
    built.callback()(_main)
    for name, (short, epilog) in COMMANDS.items():
        if names is None or name in names:
            built.command(name=name, help=HELP[name], short_help=short, epilog=epilog, cls=Command)(commands[name])
    return built


app = build()
