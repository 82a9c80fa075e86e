"""The command line as typer reads it: parse, call one library function, hand the result to the output seam.
Expected failures become one line on stderr in guard.py; the commonest lines are read by quick.py instead."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import click
import typer

from attntrace import __version__
from attntrace.cli import tracing
from attntrace.cli.guard import EXPECTED, attach_streams, fail, failure
from attntrace.cli.output import OutputOptions, show
from attntrace.cli.terminal import Environment
from attntrace.errors import AttntraceError, ExitStatus, OutOfRange
from attntrace.files.written import distinct, write_files
from attntrace.language import N_, _, ngettext
from attntrace.render.document import Document

SETTINGS: dict[str, Any] = dict(
    add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True, rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=N_("Trace transformer self-attention step by step, on real numbers."),
)


def main(args: Sequence[str] | None = None, env: Environment | None = None) -> int:
    """run the command line on args (default: sys.argv) with env (default: this process's terminal), read by typer"""
    if args is None:
        attach_streams()
    env = env or Environment()
    argv = list(sys.argv[1:] if args is None else args)
    try:
        return _typer_main(argv, env)
    except EXPECTED as e:
        return failure(env, e)


def _typer_main(argv: list[str], env: Environment) -> int:
    """typer's reading of the line; click's own exits and usage errors as exit statuses"""
    try:
        chosen = build(argv[:1]) if argv[:1] and argv[0] in COMMANDS else app  # building one command is 15x quicker
        command = typer.main.get_command(chosen)
        for each in [command, *getattr(command, "commands", {}).values()]:
            each.params.append(_lang_option())
            _translate_help(each)
        code = command.main(argv, prog_name="attntrace", standalone_mode=False, obj=env)
        return int(code or 0)
    except click.exceptions.Exit as e:
        return int(e.exit_code)
    except SystemExit:
        if type(sys.stdout).__name__.endswith("PacifyFlushWrapper"):  # click's own answer to a closed pipe (| head)
            return ExitStatus.SUCCESS
        raise
    except click.exceptions.Abort:
        return ExitStatus.ERROR_CTRL_C
    except click.exceptions.NoArgsIsHelpError as e:  # bare `attntrace`: its help, as --help prints it
        click.echo(e.ctx.get_help(), color=e.ctx.color)
        return ExitStatus.SUCCESS
    except click.UsageError as e:
        named = " ".join(["attntrace", *argv[:1]]) if argv[:1] and argv[0] in COMMANDS else "attntrace"
        return fail(env, with_hint(e.format_message(), e.ctx, named), e.exit_code)
    except click.ClickException as e:
        return fail(env, e.format_message(), e.exit_code)


def _lang_option() -> click.Option:
    """--lang on every command; cli.main has already read it (before anything is written), so it is only checked here"""
    from attntrace.language import LANGUAGES, N_

    return click.Option(["--lang"], type=click.Choice(LANGUAGES), expose_value=False, help=N_(
        "Language of what is written for a person (data is the same in both): en or zh; by default from "
        "ATTNTRACE_LANG, LC_ALL, LC_MESSAGES or LANG."))


def _translate_help(command: click.Command) -> None:
    """the help of a command and of its options in the chosen language, wrapped by display width: each text is written
    in English (marked with N_ for the catalogue) and looked up here, when the command line is read, whatever the
    language was at import"""
    from attntrace.cli.helpwidth import HelpContext
    from attntrace.language import current

    command.context_class = HelpContext
    if current() == "en":
        return
    for name in ("help", "short_help", "epilog"):
        text = getattr(command, name, None)
        if text:
            setattr(command, name, _paragraphs(text))
    for param in command.params:
        text = getattr(param, "help", None)
        if text:
            param.help = _paragraphs(text)  # type: ignore[attr-defined]


def _paragraphs(text: str) -> str:
    """a help text in the chosen language, each paragraph (each marked with N_ on its own) looked up"""
    return "\n\n".join(_(paragraph) for paragraph in text.split("\n\n"))


def with_hint(message: str, ctx: click.Context | None, named: str) -> str:
    """a usage error ending as click ends it, with where to read the help (of the command named when click's parser
    gives no context), in one line all the same"""
    if ctx is not None:
        if ctx.command.get_help_option(ctx) is None:
            return message
        named = ctx.command_path
    for click_words, plain in CLICK_WORDS:
        message = message.replace(click_words, plain)
    message = message.rstrip()
    if message.endswith((".", "。")):
        return _("{error} Try '{command} --help' for help.").format(error=message, command=named)
    return _("{error}. Try '{command} --help' for help.").format(error=message, command=named)


CLICK_WORDS = (("is not a valid integer range", "is not a whole number"), ("is not a valid integer", "is not a whole number"),
               ("is not a valid float range", "is not a number"), ("is not a valid float", "is not a number"))


def _env() -> Environment:
    """the Environment main() was given"""
    context = click.get_current_context(silent=True)
    obj = context.find_root().obj if context is not None else None
    return obj if isinstance(obj, Environment) else Environment()


# each command's --format choices: the formats of output.FORMATS its document supports
class RunFormat(str, Enum):
    """a trace: its steps, or its JSON form"""

    table = "table"
    plain = "plain"
    json = "json"
    csv = "csv"
    markdown = "markdown"


class TextFormat(str, Enum):
    """words and tables to read (explain): no JSON or CSV form"""

    table = "table"
    plain = "plain"
    markdown = "markdown"


class StepsFormat(str, Enum):
    """steps with no JSON form (experiments)"""

    table = "table"
    plain = "plain"
    csv = "csv"
    markdown = "markdown"


class SheetFormat(str, Enum):
    """a worksheet: its tables to fill in, or an answer sheet"""

    markdown = "markdown"
    plain = "plain"
    json = "json"


class ReportFormat(str, Enum):
    """a marked sheet"""

    plain = "plain"
    json = "json"


class Colour(str, Enum):
    auto = "auto"
    always = "always"
    never = "never"


class Theme(str, Enum):
    dark = "dark"
    light = "light"


def _no_padding(value: Optional[list[str]]) -> Optional[list[str]]:
    """--mask where padding is not the user's to give (a model's tokenizer decides it, or a drawn problem has none)"""
    if value is not None and any(m.strip() == "padding" for item in value for m in item.split(",")):
        raise typer.BadParameter(_("padding is not offered here; use causal, window or none"))
    return value


def _positive(value: Optional[float]) -> Optional[float]:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(_("{value} must be a positive, finite number").format(value=value))
    return value


def _version(value: bool) -> None:
    if value:
        typer.echo(f"attntrace {__version__}")
        raise typer.Exit()


def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help=N_("Print the version and exit."))] = False,
) -> None:
    """the app's own options (its help is SETTINGS')"""


FileArg = Annotated[Optional[str], typer.Argument(
    help=N_("Problem: a .json file (or the JSON of a trace, --format json), a directory of CSV files, an .npz, or - for "
         "JSON on stdin. Without it: the matrices given with --x, else the built-in worked example."),
    show_default=False)]
FormatOpt = Annotated[Optional[RunFormat], typer.Option(
    "--format", "-f", help=N_("table in a terminal, plain otherwise."), show_default=False)]
PrecisionOpt = Annotated[int, typer.Option("--precision", "-p", min=0, max=17, help=N_("Decimals shown."))]
CarryOpt = Annotated[bool, typer.Option(
    "--carry-rounding", help=N_("Round every intermediate to --precision and carry it on, as by hand."))]
PauseOpt = Annotated[bool, typer.Option("--pause/--no-pause", help=N_("Wait for Enter after each step (terminal only)."))]
ScaleOpt = Annotated[Optional[bool], typer.Option(
    "--scale/--no-scale", help=N_("Divide the scores by sqrt(d_k), or not. Default: the file's."), show_default=False)]
ScaleByOpt = Annotated[Optional[float], typer.Option(
    "--scale-by", callback=lambda v: _positive(v), help=N_("Divide the scores by this number."), show_default=False)]
MaskOpt = Annotated[Optional[list[str]], typer.Option(
    "--mask", help=N_("causal, window (with --window), padding (with --padding) or none; repeat or use commas."),
    show_default=False)]
MaskNoPaddingOpt = Annotated[Optional[list[str]], typer.Option(
    "--mask", help=N_("causal, window (with --window) or none; repeat or use commas."), show_default=False,
    callback=lambda value: _no_padding(value))]
WindowOpt = Annotated[Optional[int], typer.Option("--window", min=0, help=N_("Window mask: |i - j| <= W."),
                                                  show_default=False)]
HeadsOpt = Annotated[Optional[int], typer.Option("--heads", min=1, help=N_("Number of heads."), show_default=False)]
PaddingOpt = Annotated[Optional[str], typer.Option(
    "--padding", help=N_("Padding mask: the keys never attended, by number from 1: 3 or 3,4."), show_default=False)]
OutputOpt = Annotated[Optional[Path], typer.Option(
    "--output", "-o", dir_okay=False, help=N_("Write to this file (UTF-8, LF) instead of stdout."), show_default=False)]
ColourOpt = Annotated[Colour, typer.Option("--color", help=N_("Colour: auto (terminal without NO_COLOR), always, never."))]
XOpt = Annotated[Optional[str], typer.Option(
    "--x", help=N_("X from a .csv, .npy or .json file. Without FILE, the problem is the matrices given (a missing weight "
                "is the identity; scale true, no mask, one head)."), show_default=False)]
WqOpt = Annotated[Optional[str], typer.Option(
    "--w-q", help=N_("W_Q from a file. Without FILE and --x, it replaces the built-in example's (whose other settings "
                  "stay)."), show_default=False)]
WkOpt = Annotated[Optional[str], typer.Option("--w-k", help=N_("W_K from a file, as --w-q."), show_default=False)]
WvOpt = Annotated[Optional[str], typer.Option("--w-v", help=N_("W_V from a file, as --w-q."), show_default=False)]
SvgOpt = Annotated[Optional[Path], typer.Option(
    "--export-svg", dir_okay=False, help=N_("Also write the coloured tables as an SVG picture."), show_default=False)]
HtmlOpt = Annotated[Optional[Path], typer.Option(
    "--export-html", dir_okay=False, help=N_("Also write the coloured tables as an HTML page."), show_default=False)]
ThemeOpt = Annotated[Theme, typer.Option("--theme", help=N_("The exports' background: dark as a terminal, light for "
                                                         "handouts and paper."))]
AsciiOpt = Annotated[bool, typer.Option("--ascii", help=N_(
    "Draw tables with ASCII lines and bars, for terminals that draw box lines two columns wide (the default in "
    "Chinese; ATTNTRACE_ASCII=0 or 1 decides it in any language)."))]
# the sizes of a problem to draw (new, assign)
TokensOpt = Annotated[int, typer.Option("--tokens", "-n", min=1, help=N_("Number of inputs n."))]
DModelOpt = Annotated[int, typer.Option("--d-model", min=1, help=N_("Size of each input."))]
DkOpt = Annotated[Optional[int], typer.Option("--d-k", min=1, show_default=False, help=N_(
    "Size of queries and keys, every head's columns together. Default: 3 per head."))]
DvOpt = Annotated[Optional[int], typer.Option("--d-v", min=1, show_default=False, help=N_(
    "Size of values, every head's columns together. Default: 3 per head."))]
SizeHeadsOpt = Annotated[int, typer.Option("--heads", min=1, help=N_("Number of heads; must divide d_k and d_v."))]
DrawnScaleOpt = Annotated[Optional[bool], typer.Option(
    "--scale/--no-scale", help=N_("Divide the scores by sqrt(d_k), or not. Default: not for integers, else divide."),
    show_default=False)]
SIZE_FLAGS = {"tokens": "--tokens", "d_model": "--d-model", "d_k": "--d-k", "d_v": "--d-v", "heads": "--heads",
              "kv_heads": "--kv-heads"}


def _sizes_given() -> str:
    """the size options given on the command line ("--tokens 100000000000: "), to name in an error they cause"""
    context = click.get_current_context()
    given = [f"{flag} {context.params[name]}" for name, flag in SIZE_FLAGS.items()
             if context.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE]
    return f"{' '.join(given)}: " if given else ""


InitOpt = Annotated[str, typer.Option("--init", click_type=click.Choice(["integers", "normal", "xavier", "kaiming"]),
                                      help=N_("integers (small whole numbers to work by hand; not scaled), normal "
                                           "(N(0, 1/d_model)), xavier or kaiming (as networks start them): the last "
                                           "three give scaled scores of order 1."))]
InputOpt = Annotated[int, typer.Option("--input", "-i", help=N_("The input to trace, from 1."), show_default=False)]


def _problem(file: Optional[str], env: Environment, *, x: Optional[str] = None, w_q: Optional[str] = None,
             w_k: Optional[str] = None, w_v: Optional[str] = None, **settings: Any) -> Any:
    """the problem in file (None: the built-in example) with the command line's matrices and settings in place"""
    return tracing.problem(file, env, {"x": x, "w_q": w_q, "w_k": w_k, "w_v": w_v}, _settings(**settings))


def _settings(scale: Optional[bool] = None, scale_by: Optional[float] = None, mask: Optional[list[str]] = None,
              window: Optional[int] = None, heads: Optional[int] = None, padding: Optional[str] = None) -> dict[str, Any]:
    """the command line's overrides of a problem's settings (None keeps the file's)"""
    masks = None if mask is None else tuple(m.strip() for item in mask for m in item.split(",") if m.strip())
    return {"scale": scale_by if scale_by is not None else scale, "mask": masks, "window": window, "heads": heads,
            "padding": None if padding is None else _keys(padding)}


def _keys(text: str) -> tuple[int, ...]:
    """--padding's key numbers, "3,4" """
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise typer.BadParameter(_('"{text}" is not key numbers such as 3 or 3,4').format(text=text),
                                 param_hint="--padding") from None


def _options(fmt: Optional[Enum], precision: int, pause: bool = False, output: Optional[Path] = None,
             colour: Colour = Colour.auto, export_svg: Optional[Path] = None, export_html: Optional[Path] = None,
             theme: Theme = Theme.dark, ascii_: bool = False) -> OutputOptions:
    if theme is not Theme.dark and export_svg is None and export_html is None:
        raise typer.BadParameter(_("the theme is the exports' background: add --export-svg FILE or --export-html FILE"),
                                 param_hint="'--theme'")
    if output is not None and str(output) == "-":  # -o - is stdout, as for the other tools of a pipeline
        output = None
    return OutputOptions(None if fmt is None else str(fmt.value), precision, pause, output, colour.value, export_svg,
                         export_html, theme.value, ascii_)


def run(file: FileArg = None, fmt: FormatOpt = None, precision: PrecisionOpt = 4, carry_rounding: CarryOpt = False,
        pause: PauseOpt = False, scale: ScaleOpt = None, scale_by: ScaleByOpt = None, mask: MaskOpt = None,
        window: WindowOpt = None, heads: HeadsOpt = None, padding: PaddingOpt = None, output: OutputOpt = None,
        colour: ColourOpt = Colour.auto, x: XOpt = None, w_q: WqOpt = None, w_k: WkOpt = None, w_v: WvOpt = None,
        export_svg: SvgOpt = None, export_html: HtmlOpt = None, theme: ThemeOpt = Theme.dark, ascii_: AsciiOpt = False) -> None:
    """The eight steps for every input."""
    distinct({"-o": output, "--export-svg": export_svg, "--export-html": export_html}, [file, x, w_q, w_k, w_v])
    opts = _options(fmt, precision, pause, output, colour, export_svg, export_html, theme, ascii_)
    tracing.run(_env(), file, opts, {"x": x, "w_q": w_q, "w_k": w_k, "w_v": w_v},
                _settings(scale, scale_by, mask, window, heads, padding), carry_rounding)


def step(file: FileArg = None, input_: InputOpt = ..., fmt: FormatOpt = None,  # type: ignore[assignment]
         precision: PrecisionOpt = 4, carry_rounding: CarryOpt = False, pause: PauseOpt = False,
         scale: ScaleOpt = None, scale_by: ScaleByOpt = None, mask: MaskOpt = None, window: WindowOpt = None,
         heads: HeadsOpt = None, padding: PaddingOpt = None, output: OutputOpt = None,
         colour: ColourOpt = Colour.auto, x: XOpt = None,
         w_q: WqOpt = None, w_k: WkOpt = None, w_v: WvOpt = None, export_svg: SvgOpt = None,
         export_html: HtmlOpt = None, theme: ThemeOpt = Theme.dark, ascii_: AsciiOpt = False,
         explain: Annotated[bool, typer.Option("--explain", help=N_("Write out every cell's arithmetic."))] = False) -> None:
    """Steps 4 to 7 for one input, after a reminder of q, K and V."""
    if explain and fmt is not None and fmt.value not in {f.value for f in TextFormat}:
        raise typer.BadParameter(_("'{format}' is not one of {choices}: the arithmetic is words (for every number, "
                                   "--format json without --explain)").format(
                                     format=fmt.value, choices=", ".join(repr(f.value) for f in TextFormat)),
                                 param_hint="'--format'")
    distinct({"-o": output, "--export-svg": export_svg, "--export-html": export_html}, [file, x, w_q, w_k, w_v])
    opts = _options(fmt, precision, pause, output, colour, export_svg, export_html, theme, ascii_)
    tracing.step(_env(), file, input_, opts, {"x": x, "w_q": w_q, "w_k": w_k, "w_v": w_v},
                 _settings(scale, scale_by, mask, window, heads, padding), carry_rounding, explain)


def explain(file: FileArg = None, input_: InputOpt = ...,  # type: ignore[assignment]
            fmt: Annotated[Optional[TextFormat], typer.Option(
                "--format", "-f", help=N_("table in a terminal, plain otherwise."), show_default=False)] = None,
            precision: PrecisionOpt = 4, carry_rounding: CarryOpt = False, pause: PauseOpt = False,
            scale: ScaleOpt = None, scale_by: ScaleByOpt = None, mask: MaskOpt = None, window: WindowOpt = None,
            heads: HeadsOpt = None, padding: PaddingOpt = None, output: OutputOpt = None,
            colour: ColourOpt = Colour.auto, x: XOpt = None,
            w_q: WqOpt = None, w_k: WkOpt = None, w_v: WvOpt = None, export_svg: SvgOpt = None,
            export_html: HtmlOpt = None, theme: ThemeOpt = Theme.dark, ascii_: AsciiOpt = False) -> None:
    """Every cell's arithmetic for one input, as a student writes it (same as step --explain)."""
    step(file=file, input_=input_, fmt=None if fmt is None else RunFormat(fmt.value), precision=precision,
         carry_rounding=carry_rounding, pause=pause,
         scale=scale, scale_by=scale_by, mask=mask, window=window, heads=heads, padding=padding, output=output,
         colour=colour, x=x,
         w_q=w_q, w_k=w_k, w_v=w_v, export_svg=export_svg, export_html=export_html, theme=theme, ascii_=ascii_,
         explain=True)


def experiment(
    name: Annotated[str, typer.Argument(help=N_("symmetric, permute, similarity or temperature."))],
    file: FileArg = None,
    fmt: Annotated[Optional[StepsFormat], typer.Option("--format", "-f", help=N_("table in a terminal, plain otherwise."),
                                                       show_default=False)] = None,
    precision: PrecisionOpt = 4, output: OutputOpt = None,
    colour: ColourOpt = Colour.auto, export_svg: SvgOpt = None, export_html: HtmlOpt = None,
    theme: ThemeOpt = Theme.dark, ascii_: AsciiOpt = False,
) -> None:
    """Run one of four experiments on a problem: symmetric, permute, similarity or temperature."""
    from attntrace.core import experiments
    from attntrace.views.steps import experiment_steps

    if name not in experiments.NAMES:
        raise typer.BadParameter(_('"{name}" is not one of {names}').format(name=name, names=", ".join(experiments.NAMES)),
                                 param_hint="NAME")
    distinct({"-o": output, "--export-svg": export_svg, "--export-html": export_html}, [file])
    env = _env()
    problem = _problem(file, env)
    from attntrace.views.describe import shown_name

    show(env, Document(experiment_steps(experiments.run(name, problem)), title=shown_name(problem.name)),
         _options(fmt, precision, output=output, colour=colour, export_svg=export_svg, export_html=export_html,
                  theme=theme, ascii_=ascii_))


def validate(file: Annotated[Optional[str], typer.Argument(
                 help=N_("Problem: a .json file (or a trace from --format json), a directory of CSV files, an .npz, or - "
                      "for JSON on stdin. Without it, the matrices given with --x (and --w-q, --w-k, --w-v)."),
                 show_default=False)] = None,
             x: XOpt = None, w_q: WqOpt = None, w_k: WkOpt = None, w_v: WvOpt = None) -> None:
    """Check a problem and print its shapes, without computing anything."""
    from attntrace.files.problemfile import origin
    from attntrace.views.describe import describe

    matrices = {"x": x, "w_q": w_q, "w_k": w_k, "w_v": w_v}
    if file is None and not any(matrices.values()):
        raise click.UsageError(_("missing FILE: give a problem file (- for stdin), or its matrices with --x"))
    env = _env()
    problem = _problem(file, env, **matrices)
    env.write(describe(problem, origin(file, matrices)))


def schema() -> None:
    """Print the JSON Schema of a problem file."""
    from attntrace.core.contract import dumps
    from attntrace.core.schema import schema as problem_schema

    _env().write(dumps(problem_schema()))


def new(
    tokens: TokensOpt = 3, d_model: DModelOpt = 4,
    d_k: DkOpt = None, d_v: DvOpt = None,
    heads: SizeHeadsOpt = 1,
    init: InitOpt = "integers",
    seed: Annotated[Optional[int], typer.Option("--seed", min=0, help=N_("Random seed, for the same problem again."))] = None,
    labels: Annotated[Optional[str], typer.Option("--labels", help=N_('Token labels, comma-separated: "I,love,cats".'))] = None,
    kv_heads: Annotated[Optional[int], typer.Option("--kv-heads", min=1, show_default=False, help=N_(
        "Grouped-query attention: W_K and W_V hold this many key/value blocks (a divisor of --heads; 1: "
        "multi-query)."))] = None,
    rope: Annotated[bool, typer.Option("--rope", help=N_("Turn q and k by position (rotary embedding; each head's d_k "
                                                      "even, 4 by default)."))] = False,
    alibi: Annotated[bool, typer.Option("--alibi", help=N_("Add the ALiBi bias -slope · |i - j| to the scaled "
                                                        "scores."))] = False,
    softcap: Annotated[Optional[float], typer.Option("--softcap", callback=lambda v: _finite_positive(v), show_default=False,
                                                     help=N_("Soft-cap the scores: c · tanh(score / c)."))] = None,
    scale: DrawnScaleOpt = None,
    output: OutputOpt = None,
) -> None:
    """Write a ready-to-edit problem with random weights."""
    from dataclasses import replace

    from attntrace.core.contract import problem_to_dict
    from attntrace.core.generate import notes, random_problem

    names = None if labels is None else tuple(t.strip() for t in labels.split(","))
    if names is not None and len(names) != tokens:
        raise AttntraceError(ngettext("--labels gives {n} label but --tokens is {tokens}",
                                      "--labels gives {n} labels but --tokens is {tokens}", len(names)).format(
                                          n=len(names), tokens=tokens), exit_code=2)
    try:
        from attntrace.memory import fits_new

        problem = random_problem(n=tokens, d_model=d_model, d_k=d_k, d_v=d_v, heads=heads, init=init, seed=seed,
                                 tokens=names, kv_heads=kv_heads, rope=rope, alibi=alibi, softcap=softcap,
                                 fits=fits_new)
    except AttntraceError as e:
        raise AttntraceError(f"new: {_sizes_given()}{e}", exit_code=2) from None  # every size comes from an option
    if scale is not None:
        problem = replace(problem, scale=scale)
    env = _env()
    show(env, Document(data=problem_to_dict(problem)), OutputOptions(format="json", output=output))
    for note in notes(problem, init):
        env.message(_("note: {note}").format(note=note))


def _finite_positive(value: Optional[float]) -> Optional[float]:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(_("{value} must be a finite number above 0").format(value=value))
    return value


def check(
    paths: Annotated[list[str], typer.Argument(
        help=N_("Answer sheets: JSON in the --format json layout (any subset, or one input's), a directory of q.csv ... "
             "output.csv, a filled-in worksheet (.md or .txt), or a directory of sheets. A path holding a problem "
             "(JSON with x, or a CSV directory with x.csv) is the problem."), show_default=False)],
    problem: Annotated[Optional[str], typer.Option(
        "--problem", help=N_("The problem every sheet answers. Default: a problem among PATHS, else the problem.json "
                          "beside each sheet, else the built-in example."), show_default=False)] = None,
    precision: Annotated[Optional[int], typer.Option(
        "--precision", "-p", min=0, max=12, show_default=False,
        help=N_("The decimals students rounded to. Default: the sheet's, else inferred from the digits written."))] = None,
    tolerance: Annotated[Optional[float], typer.Option(
        "--tolerance", callback=_finite_positive, show_default=False,
        help=N_("Instead of rounding: a cell is right within tolerance · (1 + |expected| / 2)."))] = None,
    rtol: Annotated[Optional[float], typer.Option("--rtol", callback=_finite_positive, show_default=False,
                                                  help=N_("Relative tolerance, for exact work."))] = None,
    atol: Annotated[Optional[float], typer.Option("--atol", callback=_finite_positive, show_default=False,
                                                  help=N_("Absolute tolerance, for exact work."))] = None,
    points: Annotated[Optional[str], typer.Option(
        "--points", show_default=False, help=N_("Points per step, e.g. scores=2,weights=2 (keys q, k, v, scores, scaled, "
                                              "weights, output, final); 1 each by default."))] = None,
    follow_through: Annotated[bool, typer.Option(
        "--follow-through/--no-follow-through",
        help=N_("A step wrong only because of an earlier mistake earns its points."))] = True,
    fmt: Annotated[ReportFormat, typer.Option("--format", "-f", help=N_("plain or json."))] = ReportFormat.plain,
    gradescope: Annotated[Optional[Path], typer.Option("--gradescope", dir_okay=False, show_default=False,
                                                       help=N_("Also write Gradescope's results.json (one sheet)."))] = None,
    gradebook: Annotated[Optional[Path], typer.Option("--gradebook", dir_okay=False, show_default=False,
                                                      help=N_("Also write a CSV with one row per sheet."))] = None,
    scale: ScaleOpt = None, scale_by: ScaleByOpt = None, mask: MaskOpt = None, window: WindowOpt = None,
    heads: HeadsOpt = None, padding: PaddingOpt = None,
) -> None:
    """Mark answer sheets step by step at the students' precision and name the first mistake.

    Exit 0 when every intermediate asked for is written and right, 1 otherwise, 2 when a sheet, the problem or the
    report cannot be read or written.
    """
    env = _env()
    with _trouble_is_2(env):
        _check(env, paths, problem, fmt, precision, tolerance, rtol, atol, follow_through, points, gradescope,
               gradebook, scale, scale_by, mask, window, heads, padding)


@contextmanager
def _trouble_is_2(env: Environment) -> Iterator[None]:
    """check's exit status is its verdict: what keeps it from marking or reporting is 2, never 1 (not passed)"""
    try:
        yield
    except EXPECTED as e:
        if not isinstance(e, BrokenPipeError):
            with suppress(BrokenPipeError):  # stderr's reader gone: the line goes unread, the status stands
                failure(env, e)
        raise typer.Exit(ExitStatus.USAGE) from None


def _check(env: Environment, paths: list[str], problem: Optional[str], fmt: ReportFormat, precision: Optional[int],
           tolerance: Optional[float], rtol: Optional[float], atol: Optional[float], follow_through: bool,
           points: Optional[str], gradescope: Optional[Path], gradebook: Optional[Path], scale: ScaleOpt,
           scale_by: ScaleByOpt, mask: MaskOpt, window: WindowOpt, heads: HeadsOpt, padding: PaddingOpt) -> None:
    """mark the sheets, write the files asked for and show the reports; exit with the verdict"""
    from attntrace.core.contract import dumps
    from attntrace.homework import classroom
    from attntrace.homework import report as reports
    from attntrace.homework.marking import Rule

    exact = rtol is not None or atol is not None
    if tolerance is not None and exact:
        raise typer.BadParameter(_("give --tolerance, or --rtol/--atol, not both"), param_hint="--tolerance")
    if precision is not None and (exact or tolerance is not None):
        raise typer.BadParameter(_("a tolerance replaces rounding at a precision; give one of them"),
                                 param_hint="--precision")
    rule = Rule(precision=precision, rtol=tolerance / 2 if tolerance is not None else rtol,
                atol=tolerance if tolerance is not None else atol, follow_through=follow_through,
                points=_parse_points(points))
    problem_path, sheet_paths = classroom.split(paths, problem)
    if gradescope is not None and len(sheet_paths) > 1:
        raise typer.BadParameter(_("Gradescope's results.json is for one sheet; {n} were given (use --gradebook for a "
                                   "class)").format(n=len(sheet_paths)), param_hint="--gradescope")
    distinct({"--gradescope": gradescope, "--gradebook": gradebook},
             [*sheet_paths, problem_path, *(classroom.beside(s) for s in sheet_paths)])
    marked = classroom.mark(sheet_paths, problem_path, lambda source: _problem(
        source, env, scale=scale, scale_by=scale_by, mask=mask, window=window, heads=heads, padding=padding), rule,
        keep_going=len(sheet_paths) > 1)
    files: dict[Path, str] = {}
    if gradescope is not None and marked.reports:
        files[gradescope] = dumps(reports.gradescope(marked.reports[0]))
    if gradebook is not None:
        files[gradebook] = reports.gradebook(marked.reports, marked.unreadable)
    write_files(files)
    verdict = (ExitStatus.USAGE if marked.unreadable else ExitStatus.ERROR if not all(r.passed for r in marked.reports)
               else ExitStatus.SUCCESS)
    with suppress(BrokenPipeError):  # stderr's reader gone: the lines go unread, the verdict stands
        for _unused, error, _english in marked.unreadable:
            env.message(f"attntrace: {error}")
    try:
        show(env, reports.document(marked.reports, marked.unreadable, one=len(sheet_paths) == 1),
             OutputOptions(format=fmt.value))
    except BrokenPipeError:  # a reader that has gone away (| head) has read enough; the verdict stands
        env.quiet_stdout()
    if verdict:
        raise typer.Exit(verdict)


POINT_KEYS = ("q", "k", "v", "scores", "scaled", "weights", "output", "final")


def _parse_points(text: Optional[str]) -> dict[str, float]:
    """--points scores=2,weights=2"""
    if text is None:
        return {}
    out = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, _sign, value = part.partition("=")
        key = key.strip()
        if key in out:
            raise typer.BadParameter(_('"{key}" is given twice; give each step once').format(key=key), param_hint="--points")
        if key not in POINT_KEYS:
            raise typer.BadParameter(_('"{key}" is not a step; use {keys}').format(key=key, keys=", ".join(POINT_KEYS)),
                                     param_hint="--points")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not (math.isfinite(number) and number >= 0):
            raise typer.BadParameter(_('"{part}": give the points as a number of 0 or more, e.g. {key}=2').format(
                part=part, key=key), param_hint="--points")
        out[key] = number
    return out


def worksheet(
    file: FileArg = None,
    key: Annotated[bool, typer.Option("--key", help=N_("Fill in the answer key."))] = False,
    input_: Annotated[Optional[int], typer.Option("--input", "-i", help=N_("A worksheet for this input only."),
                                                  show_default=False)] = None,
    precision: Annotated[int, typer.Option("--precision", "-p", min=0, max=12,
                                           help=N_("The rounding students carry."))] = 2,
    fmt: Annotated[SheetFormat, typer.Option("--format", "-f", help=N_("markdown, plain, or json (an answer sheet: "
                                             "blank to fill in, or the key with --key)."))] = SheetFormat.markdown,
    output: OutputOpt = None,
    scale: ScaleOpt = None, scale_by: ScaleByOpt = None, mask: MaskOpt = None, window: WindowOpt = None,
    heads: HeadsOpt = None, padding: PaddingOpt = None,
) -> None:
    """An exercise: the problem, then a blank table for each step (with --key, the answers)."""
    from attntrace.homework.worksheet import document

    distinct({"-o": output}, [file])
    env = _env()
    problem = _problem(file, env, scale=scale, scale_by=scale_by, mask=mask, window=window, heads=heads,
                       padding=padding)
    t = tracing.traced(file, problem, query=input_, carry_rounding=precision)
    show(env, document(t, precision, key), OutputOptions(format=fmt.value, precision=precision, output=output),
         blank_from=None if key else 3)


def assign(
    roster: Annotated[str, typer.Argument(help=N_("Student ids: one a line, or a CSV with an id column."),
                                          show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", file_okay=False, show_default=False,
                                         help=N_("The class folder: one folder per student is written in it."))],
    seed: Annotated[int, typer.Option("--seed", show_default=False,
                                      help=N_("The class seed: the same roster and seed give the same problems."))],
    tokens: TokensOpt = 3, d_model: DModelOpt = 4, d_k: DkOpt = None, d_v: DvOpt = None, heads: SizeHeadsOpt = 1,
    init: InitOpt = "integers",
    mask: MaskNoPaddingOpt = None, window: WindowOpt = None,
    scale: DrawnScaleOpt = None,
    precision: Annotated[int, typer.Option("--precision", "-p", min=0, max=12,
                                           help=N_("The rounding the worksheets ask students to carry."))] = 2,
) -> None:
    """Write a different problem, worksheet and key for every student of a roster.

    The keys go apart, in the class folder's keys/ folder; a file already there (a worksheet filled in) is never
    replaced: a second run writes only what is missing, such as a new student's folder.
    """
    from attntrace.files import paths
    from attntrace.homework.assign import Design, places, problem_for, read_roster
    from attntrace.homework.assign import assign as write_class

    env = _env()
    masks = _settings(mask=mask)["mask"]
    if window is not None and not masks:
        masks = ("window",)
    design = Design(tokens=tokens, d_model=d_model, d_k=d_k, d_v=d_v, heads=heads, init=init,
                    mask=tuple(m for m in (masks or ()) if m != "none"), window=window, scale=scale, precision=precision)
    if str(output) in ("", "."):
        raise typer.BadParameter(_("give the class folder to write, such as -o class"), param_hint="--output")
    students = read_roster(roster)
    try:
        problem_for(design, seed, students[0])  # what the options ask for is refused as theirs, before a file is looked at
    except AttntraceError as e:
        raise AttntraceError(f"assign: {_sizes_given()}{str(e).removeprefix('assign: ')}", exit_code=2) from None
    paths.kind(output)  # a link loop is named as the folder given, before any of the paths inside it
    distinct([("-o", path) for s in students for path in places(output, s).values()], [roster])
    env.message(write_class(students, output, design, seed).summary())


# the options `model` and `bert` share
SentenceArg = Annotated[str, typer.Argument(help=N_("The sentence to run through the model."))]
LayerOpt = Annotated[int, typer.Option("--layer", "-l", help=N_("Layer, from 1."))]
HeadOpt = Annotated[int, typer.Option("--head", help=N_("Head, from 1."))]
TokenOpt = Annotated[Optional[int], typer.Option("--input", "-i", show_default=False,
                                                 help=N_("Trace this token only (steps 4 to 7), from 1."))]
ExtractOpt = Annotated[Optional[Path], typer.Option("--extract", dir_okay=False, show_default=False,
                                                    help=N_("Write this head as a problem file and stop."))]
WhoOpt = Annotated[bool, typer.Option("--who", help=N_("Only the compact view: each token's top 3 tokens."))]
AllHeadsOpt = Annotated[bool, typer.Option("--all-heads", help=N_("Summarise who attends to whom over every head of the "
                                                               "layer."))]
ExploreOpt = Annotated[bool, typer.Option("--explore", help=N_("Step through the head interactively (as attntrace "
                                                            "explore does a problem file)."))]


def bert(
    sentence: SentenceArg,
    layer: LayerOpt = 1,
    head: HeadOpt = 1,
    model: Annotated[Optional[Path], typer.Option("--model", file_okay=False, show_default=False,
                                                  help=N_("A Hugging Face BERT directory (config.json, model.safetensors, "
                                                       "tokenizer.json or vocab.txt). Default: all-MiniLM-L6-v2."))] = None,
    input_: TokenOpt = None, extract: ExtractOpt = None, who: WhoOpt = False, all_heads: AllHeadsOpt = False,
    explore_: ExploreOpt = False,
    no_special: Annotated[bool, typer.Option("--no-special", help=N_("Leave [CLS] and [SEP] out of the who-attends-to-whom "
                                                                  "lists; the weights stay the model's own (each line "
                                                                  "ends with its weight on them)."))] = False,
    fmt: FormatOpt = None, precision: PrecisionOpt = 4, carry_rounding: CarryOpt = False, pause: PauseOpt = False,
    scale: ScaleOpt = None, scale_by: ScaleByOpt = None, mask: MaskNoPaddingOpt = None, window: WindowOpt = None,
    output: OutputOpt = None, colour: ColourOpt = Colour.auto, export_svg: SvgOpt = None, export_html: HtmlOpt = None,
    theme: ThemeOpt = Theme.dark, ascii_: AsciiOpt = False,
) -> None:
    """Trace one head of a real BERT-family model on a sentence (numpy only; no torch, no network)."""
    from attntrace.checkpoints.bert.files import DEFAULT_NAME, default_model_dir
    from attntrace.checkpoints.locate import title

    _model_head(lambda: (default_model_dir(), DEFAULT_NAME) if model is None else (model, title(model, str(model))),
                "bert", sentence, layer, head, input_, extract, who, all_heads, no_special,
                _settings(scale=scale, scale_by=scale_by, mask=mask, window=window),
                _options(fmt, precision, pause, output, colour, export_svg, export_html, theme, ascii_), carry_rounding,
                explore_)


def model(
    name: Annotated[str, typer.Argument(
        metavar="MODEL", show_default=False,
        help=N_("A model's directory (config.json; model.safetensors, or shards with model.safetensors.index.json; "
             "tokenizer.json), the id of a model already in the local Hugging Face cache (never downloaded), or the "
             "name of a model an installed package ships (all-MiniLM-L6-v2)."))],
    sentence: SentenceArg,
    layer: LayerOpt = 1,
    head: HeadOpt = 1,
    input_: TokenOpt = None, extract: ExtractOpt = None, who: WhoOpt = False, all_heads: AllHeadsOpt = False,
    explore_: ExploreOpt = False,
    no_special: Annotated[bool, typer.Option("--no-special", help=N_("Leave the special tokens the tokenizer adds ([CLS], "
                                                                  "[SEP], <s>) out of the who-attends-to-whom lists; "
                                                                  "the weights stay the model's own."))] = False,
    fmt: FormatOpt = None, precision: PrecisionOpt = 4, carry_rounding: CarryOpt = False, pause: PauseOpt = False,
    scale: ScaleOpt = None, scale_by: ScaleByOpt = None, mask: MaskNoPaddingOpt = None, window: WindowOpt = None,
    output: OutputOpt = None, colour: ColourOpt = Colour.auto, export_svg: SvgOpt = None, export_html: HtmlOpt = None,
    theme: ThemeOpt = Theme.dark, ascii_: AsciiOpt = False,
) -> None:
    """Trace one head of a local Hugging Face model (BERT, GPT-2, Llama, Qwen2 or Mistral) on a sentence, in numpy
    (no torch, no network)."""
    from attntrace.checkpoints.locate import locate
    from attntrace.files.paths import resolved

    shown = str(Path(name)) if Path(name).name not in ("", ".", "..") else resolved(name).name  # titles say it

    def where() -> tuple[Path, str]:
        directory, titled = locate(name)
        return directory, shown if titled == name else titled

    _model_head(where, None, sentence, layer, head, input_, extract, who, all_heads, no_special,
                _settings(scale=scale, scale_by=scale_by, mask=mask, window=window),
                _options(fmt, precision, pause, output, colour, export_svg, export_html, theme, ascii_), carry_rounding,
                explore_)


def _model_head(where: Callable[[], tuple[Path, str]], model_type: Optional[str], sentence: str, layer: int,
                head: int, input_: Optional[int], extract: Optional[Path], who: bool, all_heads: bool, no_special: bool,
                settings: dict[str, Any], opts: OutputOptions, carry_rounding: bool, explore_: bool = False) -> None:
    """what `model` and `bert` do: run the sentence up to the layer in the model directory where() finds (with the name
    its traces are titled), then trace the head, summarise the layer, or extract the head"""
    from attntrace.checkpoints.session import entering
    from attntrace.checkpoints.tokenize import together, unknown_note
    from attntrace.core.contract import problem_to_dict
    from attntrace.core.engine import trace
    from attntrace.core.problem import problem_error
    from attntrace.files.settings import override
    from attntrace.views.steps import layer_summary_steps, run_steps, step_steps, who_steps

    if no_special and not all_heads and extract is not None:
        raise AttntraceError(_("--no-special is for the who-attends-to-whom lists, which --extract does not write; "
                               "drop one of them"), exit_code=2)
    if no_special and not all_heads and input_ is not None and not who:
        raise AttntraceError(_("--no-special is for the who-attends-to-whom lists, which --input shows only with "
                               "--who; add --who"), exit_code=2)
    if explore_ and (who or all_heads or extract is not None):
        raise AttntraceError(_("--explore steps through one head; drop --who, --all-heads and --extract"), exit_code=2)
    if explore_:
        _need_terminal(_env(), _("attntrace model (or bert) without --explore"))
    if who and opts.format in ("json", "csv"):
        raise AttntraceError(_("--who is a view to read, with no {FORMAT} form; for every weight, use --format "
                               "{format} without --who").format(FORMAT=opts.format.upper(), format=opts.format),
                             exit_code=2)
    directory, name = where()
    distinct({"--extract": extract, "-o": opts.output, "--export-svg": opts.export_svg,
              "--export-html": opts.export_html}, [directory])
    env = _env()
    with env.progress(_("loading {name} and running it up to layer {layer}…").format(name=name, layer=layer)):
        sentence_at = entering(directory, name, sentence, layer, head, model_type)
    encoding = sentence_at.encoding
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
    decimals = opts.precision if carry_rounding else None
    made = sentence_at.problem(None if all_heads else head)  # its errors name the model's own files
    shown = sentence_at.model.shown_title(layer, None if all_heads else head)  # problem.name is data, in English
    try:
        problem = override(made, **settings)
    except AttntraceError as e:
        raise problem_error(name, e) from None
    if explore_:
        whose = None if all_heads else _("layer {layer} · head {head}/{heads}").format(
            layer=layer, head=head, heads=sentence_at.model.heads)
        _explore(problem, opts.precision, carry_rounding, input_, opts.ascii_lines(), Path(name).name or "model", name, whose)
        return
    if all_heads:
        t = trace(problem)
        summary = layer_summary_steps(t, _("Who attends to whom · {name} · every head").format(name=shown),
                                      leave_out=leave_out)
        tracing.show_trace(env, t, lambda: summary, opts, shown)
        return
    if extract is not None:
        written = problem_to_dict(problem)  # with its rope, masks and biases: `run` traces it to the same numbers
        show(env, Document(data=written), OutputOptions(format="json", output=extract))
        env.message(ngettext("wrote {file}: {name}, {n} token; trace it with attntrace run {file}",
                             "wrote {file}: {name}, {n} tokens; trace it with attntrace run {file}",
                             len(encoding.tokens)).format(file=extract, name=problem.name, n=len(encoding.tokens)))
        return
    heading = _("Who attends to whom · {name}").format(name=shown)
    if input_ is not None:
        t = trace(problem, query=input_, carry_rounding=decimals)
        steps = who_steps(t, heading, leave_out=leave_out) if who else step_steps(t)
    else:
        t = trace(problem, carry_rounding=decimals)
        listed = who_steps(t, heading, leave_out=leave_out)
        steps = listed if who else [*run_steps(t), *listed]
    _show_head(env, t, steps, opts, head, shown)


def _show_head(env: Environment, t: Any, steps: Any, opts: OutputOptions, head: int, shown: str) -> None:
    """one head of a model, as tracing.show_trace shows a trace, its JSON naming the head by its number in the layer"""
    from attntrace.views.steps import warnings

    for warning in warnings(t):
        env.message(_("warning: {warning}").format(warning=warning))
    json_form = None
    if opts.resolved_format(env) == "json":
        from attntrace.core.contract import trace_form

        json_form = trace_form(t)  # written a block of rows at a time
        json_form["heads"][0]["head"] = head
    show(env, Document(steps, json_form, title=shown), opts)


def explore(file: FileArg = None,
            input_: Annotated[Optional[int], typer.Option("--input", "-i", help=N_("The input steps 4 to 7 follow first, "
                                                          "from 1."), show_default=False)] = None,
            precision: PrecisionOpt = 4, carry_rounding: CarryOpt = False, scale: ScaleOpt = None,
            scale_by: ScaleByOpt = None, mask: MaskOpt = None, window: WindowOpt = None, heads: HeadsOpt = None,
            padding: PaddingOpt = None, x: XOpt = None, w_q: WqOpt = None, w_k: WkOpt = None, w_v: WvOpt = None,
            ascii_: AsciiOpt = False) -> None:
    """Step through a trace in the terminal: go back, follow an input, see a cell's arithmetic, edit a number."""
    from attntrace.files.problemfile import origin

    env = _env()
    _need_terminal(env, "attntrace run" if file is None else f"attntrace run {file}")
    matrices = {"x": x, "w_q": w_q, "w_k": w_k, "w_v": w_v}
    problem = _problem(file, env, **matrices, scale=scale, scale_by=scale_by, mask=mask, window=window, heads=heads,
                       padding=padding)
    stem = "attntrace" if file is None or file == "-" else Path(file).stem
    _explore(problem, precision, carry_rounding, input_, OutputOptions(ascii=ascii_).ascii_lines(), stem,
             origin(file, matrices),
             opened=None if file is None or file == "-" else Path(file))


def _need_terminal(env: Environment, instead: str) -> None:
    if not (env.stdin_isatty and env.stdout_isatty):
        raise AttntraceError(_("explore needs a terminal for stdin and stdout; to print the trace instead, use "
                               "{command}").format(command=instead))


def _explore(problem: Any, precision: int, carry_rounding: bool, input_: Optional[int], ascii_: bool, stem: str,
             where: str, whose: Optional[str] = None, opened: Optional[Path] = None) -> None:
    """the explorer on a problem (a file's, or a model's head: whose says which), until it quits; opened: the file,
    which w overwrites only once asked"""
    from attntrace.core.problem import problem_error
    from attntrace.explore.state import Session
    from attntrace.render.table import Look

    try:
        session = Session(problem, precision=precision, carry=carry_rounding, row=(input_ or 1) - 1, whose=whose)
    except OutOfRange:
        raise
    except AttntraceError as e:
        raise problem_error(where, e) from None
    from attntrace.explore.app import explore as run_explorer  # Textual, only once there is a terminal to run in

    code = run_explorer(session, look=Look(ascii_), stem=stem, opened=opened)
    if code:
        raise typer.Exit(code)


# the paragraphs help ends with: each marked for the catalogue on its own (the CLI looks each up)
FILE_OR_X = N_("FILE is a problem: a .json file (or a trace written by --format json), a directory of CSV files (x.csv, "
               "w_q.csv, ...), an .npz, or - for JSON on stdin. Without it, the matrices given with --x, else the "
               'built-in worked example of the article "8 steps to self-attention".')
FILE = N_("FILE is a problem: a .json file (or a trace written by --format json), a directory of CSV files (x.csv, "
          "w_q.csv, ...), an .npz, or - for JSON on stdin. Without it, the built-in worked example of the article "
          '"8 steps to self-attention".')
FILE_AND_W = N_("FILE is a problem: a .json file (or a trace written by --format json), a directory of CSV files (x.csv, "
                "w_q.csv, ...), an .npz, or - for JSON on stdin. Without it, the matrices given with --x (and --w-q, "
                "--w-k, --w-v).")
EXPERIMENTS = N_("NAME is one of: symmetric (W_K used for queries too: every score matrix is symmetric), permute "
                 "(reordered inputs give the same outputs, reordered: no position information), similarity (cosine "
                 "similarity of the tokens' Q, K, V and outputs), temperature (softmax with and without the sqrt(d_k) "
                 "scaling).")

# each command: its line in `attntrace --help`, and what its own --help ends with
COMMANDS: dict[str, tuple[str, str]] = {
    'run': (N_("The eight steps for every input."),
            f"{FILE_OR_X}\n\n" + N_("Example: attntrace run samples/causal.json --precision 2 > answers.txt")),
    'step': (N_("Steps 4 to 7 for one input."),
             f"{FILE_OR_X}\n\n" + N_("Example: attntrace step samples/scaled.json --input 2")),
    'explain': (N_("Every cell's arithmetic for one input."),
                f"{FILE_OR_X}\n\n" + N_("Example: attntrace explain --input 1")),
    'experiment': (N_("Run one of four experiments on a problem."),
                   f"{EXPERIMENTS}\n\n{FILE}\n\n" + N_("Example: attntrace experiment symmetric samples/scaled.json")),
    'validate': (N_("Check a problem and print its shapes."),
                 f"{FILE_AND_W}\n\n" + N_("Example: attntrace validate samples/two_heads.json")),
    'schema': (N_("Print the JSON Schema of a problem file."), N_("Example: attntrace schema > attntrace.schema.json")),
    'new': (N_("Write a problem with random weights."),
            N_("Example: attntrace new --tokens 3 --d-model 4 --d-k 4 --d-v 4 --seed 1 -o homework.json")),
    'check': (N_("Mark answer sheets, step by step."),
              N_("Examples: attntrace check answers.json samples/scaled.json --gradescope results.json") + "\n\n"
              "attntrace check class/ --problem problem.json --gradebook grades.csv"),
    'worksheet': (N_("An exercise with a blank table for each step."),
                  f"{FILE}\n\n" + N_("Example: attntrace worksheet samples/scaled.json --input 2 --precision 2 --key")),
    'assign': (N_("A different problem, worksheet and key per student."),
               N_("Example: attntrace assign roster.txt --seed 7 --heads 2 --mask causal -o class")),
    'bert': (N_("Trace one head of a real BERT model."),
             N_('Example: attntrace bert "The animal didn\'t cross the street because it was too tired" --layer 5 '
                '--head 3 --who')),
    'model': (N_("Trace one head of a local Hugging Face model."),
              N_("MODEL is a directory (config.json, model.safetensors or its shards, tokenizer.json) or the id of a "
                 "model already in the local Hugging Face cache or in an installed package; nothing is downloaded.")
              + "\n\n" + N_('Example: attntrace model Qwen/Qwen2-0.5B "The animal didn\'t cross the street because it '
                             'was too tired" --layer 12 --head 3')),
    'explore': (N_("Step through a trace interactively and edit it."),
                f"{FILE_OR_X}\n\n" + N_("Keys: arrows or n/p step, up/down or 1-9 pick the input, Tab and Enter show a "
                                        "cell's arithmetic, e edits, u undoes, ? lists every key, q quits.") + "\n\n"
                + N_("Example: attntrace explore samples/scaled.json --input 2")),
}

# each command's own --help starts with (paragraphs looked up one by one, as the epilogs')
HELP = {
    'run': N_("The eight steps for every input."),
    'step': N_("Steps 4 to 7 for one input, after a reminder of q, K and V."),
    'explain': N_("Every cell's arithmetic for one input, as a student writes it (same as step --explain)."),
    'experiment': N_("Run one of four experiments on a problem: symmetric, permute, similarity or temperature."),
    'validate': N_("Check a problem and print its shapes, without computing anything."),
    'schema': N_("Print the JSON Schema of a problem file."),
    'new': N_("Write a ready-to-edit problem with random weights."),
    'check': N_("Mark answer sheets step by step at the students' precision and name the first mistake.") + "\n\n"
             + N_("Exit 0 when every intermediate asked for is written and right, 1 otherwise, 2 when a sheet, the "
                  "problem or the report cannot be read or written."),
    'worksheet': N_("An exercise: the problem, then a blank table for each step (with --key, the answers)."),
    'assign': N_("Write a different problem, worksheet and key for every student of a roster.") + "\n\n"
              + N_("The keys go apart, in the class folder's keys/ folder; a file already there (a worksheet filled in) "
                   "is never replaced: a second run writes only what is missing, such as a new student's folder."),
    'bert': N_("Trace one head of a real BERT-family model on a sentence (numpy only; no torch, no network)."),
    'model': N_("Trace one head of a local Hugging Face model (BERT, GPT-2, Llama, Qwen2 or Mistral) on a sentence, "
                "in numpy (no torch, no network)."),
    'explore': N_("Step through a trace in the terminal: go back, follow an input, see a cell's arithmetic, edit a "
                  "number."),
}


def build(names: Sequence[str] | None = None) -> typer.Typer:
    """the app with the named commands (default: all); typer inspects every command's signature when it starts"""
    commands = globals()
    built = typer.Typer(**SETTINGS)
    built.callback()(_main)
    for name, (short, epilog) in COMMANDS.items():
        if names is None or name in names:
            built.command(name=name, help=HELP[name], short_help=short, epilog=epilog)(commands[name])
    return built


app = build()
