"""The commands as typer reads them: each takes its options, typed once in cli/options.py, calls one library function
and hands the result to the output seam. Expected failures become one line on stderr in guard.py."""

from __future__ import annotations

import typing
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Optional

import click
import typer

from attntrace import __version__
from attntrace.cli import tracing
from attntrace.cli.clickwords import Command, Group
from attntrace.cli.helptext import COMMANDS, HELP
from attntrace.cli.options import (
    DK,
    DV,
    WK,
    WQ,
    WV,
    Alibi,
    AllHeads,
    Ascii,
    Atol,
    BertModel,
    BertNoSpecial,
    Block,
    Carry,
    CheckFormat,
    CheckPrecision,
    ClassFolder,
    ClassPrecision,
    ClassSeed,
    Colour,
    DecodeInput,
    DecodeWindow,
    DModel,
    DrawnHeads,
    DrawnScale,
    ExperimentFormat,
    ExperimentName,
    Explain,
    ExplainFormat,
    Explore,
    ExploreInput,
    ExportHtml,
    ExportSvg,
    Extract,
    File,
    FileAndW,
    FileOrX,
    FlashInput,
    Float64,
    FollowThrough,
    Format,
    Gradebook,
    Gradescope,
    Head,
    Heads,
    Init,
    Input,
    Key,
    KvHeads,
    Labels,
    Layer,
    Mask,
    ModelName,
    ModelScale,
    NoSpecial,
    Output,
    Padding,
    Paths,
    Pause,
    Points,
    Precision,
    ProblemFile,
    Rope,
    Roster,
    Rtol,
    Scale,
    ScaleBy,
    Seed,
    Sentence,
    SheetDecode,
    SheetFlash,
    SheetFormat,
    SheetInput,
    SheetPrecision,
    Sink,
    Sinks,
    Softcap,
    Theme,
    TokenInput,
    Tokens,
    Tolerance,
    UnpaddedMask,
    Who,
    Window,
    X,
    matrices,
    output_options,
    rounding,
    settings,
)
from attntrace.cli.output import ACCEPTED, OutputOptions, show
from attntrace.cli.terminal import Environment
from attntrace.core import experiments
from attntrace.core.generate import notes, random_problem
from attntrace.core.schema import schema as problem_schema
from attntrace.errors import AttntraceError, ExitStatus
from attntrace.files import paths
from attntrace.files.problemfile import origin
from attntrace.files.written import distinct
from attntrace.language import N_, _, ngettext
from attntrace.memory import fits_new
from attntrace.render.document import Document
from attntrace.views.describe import describe, shown_name
from attntrace.views.walkthrough import experiment_steps

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


def _outputs(output: Optional[Path], export_svg: Optional[Path] = None, export_html: Optional[Path] = None
             ) -> dict[str, Optional[Path]]:
    """the files written, by the option that names them"""
    return {"-o": output, "--export-svg": export_svg, "--export-html": export_html}


def _explained(explain: bool, fmt: Optional[str], query: Optional[int]) -> None:
    """--explain writes words: refuse a format that cannot hold them, and (flash, decode) an --input missing"""
    if explain and fmt is not None and fmt not in ACCEPTED["explain"]:
        raise typer.BadParameter(_("'{format}' is not one of {choices}: the arithmetic is words (for every number, "
                                   "--format json without --explain)").format(
                                     format=fmt, choices=", ".join(repr(f) for f in ACCEPTED["explain"])),
                                 param_hint="'--format'")
    if explain and query is None:
        raise typer.BadParameter(_("--explain writes one input's arithmetic: give it with --input N"),
                                 param_hint="'--input'")


def run(file: FileOrX = None, fmt: Format = None, precision: Precision = 4, carry: Carry = False,
        pause: Pause = False, scale: Scale = None, scale_by: ScaleBy = None, mask: Mask = None, window: Window = None,
        heads: Heads = None, padding: Padding = None, output: Output = None, colour: Colour = "auto", x: X = None,
        w_q: WQ = None, w_k: WK = None, w_v: WV = None, export_svg: ExportSvg = None, export_html: ExportHtml = None,
        theme: Theme = "dark", ascii_: Ascii = False) -> None:
    given = matrices(x, w_q, w_k, w_v)
    distinct(_outputs(output, export_svg, export_html), [file, *given.values()])
    opts = output_options(fmt, precision, pause, output, colour, export_svg, export_html, theme, ascii_)
    tracing.run(_env(), file, opts, given, settings(scale, scale_by, mask, window, heads, padding),
                rounding(carry, precision))


def step(file: FileOrX = None, *, input_: Input, fmt: Format = None, precision: Precision = 4, carry: Carry = False,
         pause: Pause = False, scale: Scale = None, scale_by: ScaleBy = None, mask: Mask = None, window: Window = None,
         heads: Heads = None, padding: Padding = None, output: Output = None, colour: Colour = "auto", x: X = None,
         w_q: WQ = None, w_k: WK = None, w_v: WV = None, export_svg: ExportSvg = None, export_html: ExportHtml = None,
         theme: Theme = "dark", ascii_: Ascii = False, explain: Explain = False) -> None:
    _explained(explain, fmt, input_)
    given = matrices(x, w_q, w_k, w_v)
    distinct(_outputs(output, export_svg, export_html), [file, *given.values()])
    opts = output_options(fmt, precision, pause, output, colour, export_svg, export_html, theme, ascii_)
    tracing.step(_env(), file, input_, opts, given, settings(scale, scale_by, mask, window, heads, padding),
                 rounding(carry, precision), explain)


def explain(file: FileOrX = None, *, input_: Input, fmt: ExplainFormat = None, precision: Precision = 4,
            carry: Carry = False, pause: Pause = False, scale: Scale = None, scale_by: ScaleBy = None,
            mask: Mask = None, window: Window = None, heads: Heads = None, padding: Padding = None,
            output: Output = None, colour: Colour = "auto", x: X = None, w_q: WQ = None, w_k: WK = None,
            w_v: WV = None, export_svg: ExportSvg = None, export_html: ExportHtml = None, theme: Theme = "dark",
            ascii_: Ascii = False) -> None:
    given = matrices(x, w_q, w_k, w_v)
    distinct(_outputs(output, export_svg, export_html), [file, *given.values()])
    opts = output_options(fmt, precision, pause, output, colour, export_svg, export_html, theme, ascii_)
    tracing.step(_env(), file, input_, opts, given, settings(scale, scale_by, mask, window, heads, padding),
                 rounding(carry, precision), explain=True)


def flash(file: FileOrX = None, block: Block = None, input_: FlashInput = None, fmt: Format = None,
          precision: Precision = 4, output: Output = None, colour: Colour = "auto", ascii_: Ascii = False,
          scale: Scale = None, scale_by: ScaleBy = None, mask: Mask = None, window: Window = None, heads: Heads = None,
          padding: Padding = None, x: X = None, w_q: WQ = None, w_k: WK = None, w_v: WV = None,
          explain: Explain = False) -> None:
    _explained(explain, fmt, input_)
    given = matrices(x, w_q, w_k, w_v)
    distinct(_outputs(output), [file, *given.values()])
    opts = output_options(fmt, precision, output=output, colour=colour, ascii_=ascii_)
    tracing.flash(_env(), file, block, input_, opts, given, settings(scale, scale_by, mask, window, heads, padding),
                  explain)


def experiment(name: ExperimentName, file: File = None, fmt: ExperimentFormat = None, precision: Precision = 4,
               output: Output = None, colour: Colour = "auto", export_svg: ExportSvg = None,
               export_html: ExportHtml = None, theme: Theme = "dark", ascii_: Ascii = False) -> None:
    if name not in experiments.NAMES:
        raise typer.BadParameter(_('"{name}" is not one of {names}').format(name=name, names=", ".join(
            experiments.NAMES)), param_hint="NAME")
    distinct(_outputs(output, export_svg, export_html), [file])
    env = _env()
    problem = tracing.problem(file, env)
    steps = experiment_steps(experiments.run(name, problem))
    opts = output_options(fmt, precision, output=output, colour=colour, export_svg=export_svg,
                          export_html=export_html, theme=theme, ascii_=ascii_)
    show(env, Document(steps, title=shown_name(problem.name)), opts)


def validate(file: FileAndW = None, x: X = None, w_q: WQ = None, w_k: WK = None, w_v: WV = None) -> None:
    given = matrices(x, w_q, w_k, w_v)
    if file is None and not any(given.values()):
        raise click.UsageError(_("missing FILE: give a problem file (- for stdin), or its matrices with --x"))
    env = _env()
    env.write(describe(tracing.problem(file, env, given, settings()), origin(file, given)))


def schema() -> None:
    from attntrace.render.jsonform import dumps  # orjson

    _env().write(dumps(problem_schema()))


def new(tokens: Tokens = 3, d_model: DModel = 4, d_k: DK = None, d_v: DV = None, heads: DrawnHeads = 1,
        init: Init = "integers", seed: Seed = None, labels: Labels = None, kv_heads: KvHeads = None, rope: Rope = False,
        alibi: Alibi = False, softcap: Softcap = None, sink: Sink = None, scale: DrawnScale = None,
        output: Output = None) -> None:
    from attntrace.render.jsonform import problem_to_dict  # orjson

    names = None if labels is None else tuple(t.strip() for t in labels.split(","))
    if names is not None and len(names) != tokens:
        raise AttntraceError(ngettext("--labels gives {n} label but --tokens is {tokens}",
                                      "--labels gives {n} labels but --tokens is {tokens}", len(names)).format(
                                          n=len(names), tokens=tokens), ExitStatus.USAGE)
    try:
        problem = random_problem(n=tokens, d_model=d_model, d_k=d_k, d_v=d_v, heads=heads, init=init, seed=seed,
                                 tokens=names, kv_heads=kv_heads, rope=rope, alibi=alibi, softcap=softcap, sink=sink,
                                 fits=fits_new)
    except AttntraceError as e:  # every size comes from an option
        raise AttntraceError(f"new: {_sizes_given()}{e}", ExitStatus.USAGE) from None
    if scale is not None:
        problem = replace(problem, scale=scale)
    env = _env()
    show(env, Document(data=problem_to_dict(problem)), OutputOptions(format="json", output=output))
    for note in notes(problem, init):
        env.message(_("note: {note}").format(note=note))


def check(paths: Paths, problem: ProblemFile = None, precision: CheckPrecision = None, tolerance: Tolerance = None,
          rtol: Rtol = None, atol: Atol = None, points: Points = None, follow_through: FollowThrough = True,
          fmt: CheckFormat = "plain", gradescope: Gradescope = None, gradebook: Gradebook = None, scale: Scale = None,
          scale_by: ScaleBy = None, mask: Mask = None, window: Window = None, heads: Heads = None,
          padding: Padding = None) -> None:
    from attntrace.cli import checking  # the homework room

    env = _env()
    changes = settings(scale, scale_by, mask, window, heads, padding)
    with checking.trouble_is_2(env):
        rule = checking.rule(precision, tolerance, rtol, atol, follow_through, points)
        checking.check(env, paths, problem, rule, fmt, gradescope, gradebook,
                       lambda source: tracing.problem(source, env, {}, changes))


def worksheet(file: File = None, key: Key = False, input_: SheetInput = None, flash_block: SheetFlash = None,
              decoding: SheetDecode = False, sinks: Sinks = 0, precision: SheetPrecision = 2,
              fmt: SheetFormat = "markdown", output: Output = None, scale: Scale = None, scale_by: ScaleBy = None,
              mask: Mask = None, window: Window = None, heads: Heads = None, padding: Padding = None) -> None:
    from attntrace.homework import decodesheet, flashsheet  # the homework room
    from attntrace.homework.worksheet import document

    distinct({"-o": output}, [file])
    env = _env()
    opts = OutputOptions(format=fmt, precision=precision, output=output)
    if decoding and (flash_block is not None or input_ is not None):
        raise typer.BadParameter(_("--decode works every step; leave out --flash and --input"), param_hint="--decode")
    if decoding:
        show(env, decodesheet.document(tracing.decodable(file, env, window, sinks), window, sinks, precision, key),
             opts, blank_from=None if key else 0)
        return
    changes = settings(scale, scale_by, mask, window, heads, padding)
    t = tracing.traced(file, tracing.problem(file, env, {}, changes), query=input_, carry_rounding=precision)
    if flash_block is not None:
        show(env, flashsheet.document(t, flash_block, precision, key), opts, blank_from=None if key else 0)
        return
    show(env, document(t, precision, key), opts, blank_from=None if key else 3)


def assign(roster: Roster, output: ClassFolder, seed: ClassSeed, tokens: Tokens = 3, d_model: DModel = 4,
           d_k: DK = None, d_v: DV = None, heads: DrawnHeads = 1, init: Init = "integers", mask: UnpaddedMask = None,
           window: Window = None, scale: DrawnScale = None, precision: ClassPrecision = 2) -> None:
    from attntrace.homework.assign import Design, places, problem_for, read_roster  # the homework room
    from attntrace.homework.assign import assign as write_class

    masks = settings(mask=mask)["mask"]
    if window is not None and not masks:
        masks = ("window",)
    design = Design(tokens=tokens, d_model=d_model, d_k=d_k, d_v=d_v, heads=heads, init=init,
                    mask=tuple(m for m in (masks or ()) if m != "none"), window=window, scale=scale, precision=precision)
    if str(output) in ("", "."):
        raise typer.BadParameter(_("give the class folder to write, such as -o class"), param_hint="--output")
    students = read_roster(roster)
    try:
        problem_for(design, seed, students[0])  # what the options ask for is refused as theirs, before a file is read
    except AttntraceError as e:
        raise AttntraceError(f"assign: {_sizes_given()}{str(e).removeprefix('assign: ')}", ExitStatus.USAGE) from None
    paths.kind(output)  # a link loop is named as the folder given, before any of the paths inside it
    distinct([("-o", path) for s in students for path in places(output, s).values()], [roster])
    _env().message(write_class(students, output, design, seed).summary())


def bert(sentence: Sentence, layer: Layer = 1, head: Head = 1, model: BertModel = None, input_: TokenInput = None,
         extract: Extract = None, who: Who = False, all_heads: AllHeads = False, float64: Float64 = False,
         explore_: Explore = False, no_special: BertNoSpecial = False, fmt: Format = None, precision: Precision = 4,
         carry: Carry = False, pause: Pause = False, scale: ModelScale = None, scale_by: ScaleBy = None,
         mask: UnpaddedMask = None, window: Window = None, output: Output = None, colour: Colour = "auto",
         export_svg: ExportSvg = None, export_html: ExportHtml = None, theme: Theme = "dark",
         ascii_: Ascii = False) -> None:
    opts = output_options(fmt, precision, pause, output, colour, export_svg, export_html, theme, ascii_)
    code = tracing.model(_env(), model, sentence, layer, head, opts, bert=True, query=input_, extract=extract, who=who,
                         all_heads=all_heads, float64=float64, explore_=explore_, no_special=no_special,
                         carry_rounding=rounding(carry, precision), settings=settings(scale, scale_by, mask, window),
                         outputs=_outputs(output, export_svg, export_html))
    if code:
        raise typer.Exit(code)


def model(name: ModelName, sentence: Sentence, layer: Layer = 1, head: Head = 1, input_: TokenInput = None,
          extract: Extract = None, who: Who = False, all_heads: AllHeads = False, float64: Float64 = False,
          explore_: Explore = False, no_special: NoSpecial = False, fmt: Format = None, precision: Precision = 4,
          carry: Carry = False, pause: Pause = False, scale: ModelScale = None, scale_by: ScaleBy = None,
          mask: UnpaddedMask = None, window: Window = None, output: Output = None, colour: Colour = "auto",
          export_svg: ExportSvg = None, export_html: ExportHtml = None, theme: Theme = "dark",
          ascii_: Ascii = False) -> None:
    opts = output_options(fmt, precision, pause, output, colour, export_svg, export_html, theme, ascii_)
    code = tracing.model(_env(), name, sentence, layer, head, opts, query=input_, extract=extract, who=who,
                         all_heads=all_heads, float64=float64, explore_=explore_, no_special=no_special,
                         carry_rounding=rounding(carry, precision), settings=settings(scale, scale_by, mask, window),
                         outputs=_outputs(output, export_svg, export_html))
    if code:
        raise typer.Exit(code)


def explore(file: FileOrX = None, input_: ExploreInput = None, precision: Precision = 4, carry: Carry = False,
            scale: Scale = None, scale_by: ScaleBy = None, mask: Mask = None, window: Window = None,
            heads: Heads = None, padding: Padding = None, x: X = None, w_q: WQ = None, w_k: WK = None, w_v: WV = None,
            ascii_: Ascii = False) -> None:
    env = _env()
    tracing.need_terminal(env, "attntrace run" if file is None else f"attntrace run {file}")
    given = matrices(x, w_q, w_k, w_v)
    problem = tracing.problem(file, env, given, settings(scale, scale_by, mask, window, heads, padding))
    stem = "attntrace" if file is None or file == "-" else Path(file).stem
    code = tracing.explore(problem, precision, rounding(carry, precision), input_, OutputOptions(ascii=ascii_).ascii_lines(),
                           stem, origin(file, given), opened=None if file in (None, "-") else Path(file))
    if code:
        raise typer.Exit(code)


def decode(file: File = None, window: DecodeWindow = None, sinks: Sinks = 0, input_: DecodeInput = None,
           fmt: Format = None, precision: Precision = 4, output: Output = None, colour: Colour = "auto",
           ascii_: Ascii = False, explain: Explain = False) -> None:
    _explained(explain, fmt, input_)
    distinct(_outputs(output), [file])
    opts = output_options(fmt, precision, output=output, colour=colour, ascii_=ascii_)
    tracing.decode(_env(), file, window, sinks, input_, opts, explain)


def described(command: click.Command) -> None:
    """each argument of the command with the help its declaration gives it (typer 0.25 sets it before click 8.5's
    Argument, which takes a help of its own, sets it back to None)"""
    function = globals().get(command.name or "")
    hints = typing.get_type_hints(function, include_extras=True) if callable(function) else {}
    for param in command.params:
        if isinstance(param, click.Argument) and getattr(param, "help", None) is None:
            info = getattr(hints.get(param.name or ""), "__metadata__", [None])[0]
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
