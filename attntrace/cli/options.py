"""Every option of the command line declared once, and the commands' signatures made of them by name (`@takes`), as
typer reads them; what the options given say, gathered in one settings object (`Given`)."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Optional, TypeVar

import click
import typer

from attntrace.cli.clickwords import Choices
from attntrace.cli.helptext import EXPERIMENTS, FILE, FILE_AND_W, FILE_OR_X
from attntrace.cli.output import FORMATS, OutputOptions
from attntrace.core.arithmetic import MAX_PRECISION
from attntrace.language import N_, _

PROBLEM = ("scale", "scale_by", "mask", "window", "heads", "padding")  # a problem's settings, overridden
MATRICES = ("x", "w_q", "w_k", "w_v")  # a problem's matrices, from files
EXPORTS = ("export_svg", "export_html", "theme", "ascii_")
SHOWN = ("fmt", "precision", "carry_rounding", "pause")  # how a trace is shown (with "output", "colour" and EXPORTS)


def _no_padding(value: Optional[list[str]]) -> Optional[list[str]]:
    """--mask where padding is not the user's to give (a model's tokenizer decides it, or a drawn problem has none)"""
    if value is not None and any(m.strip() == "padding" for item in value for m in item.split(",")):
        raise typer.BadParameter(_("padding is not offered here; use causal, window or none"))
    return value


def _positive(value: Optional[float]) -> Optional[float]:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(_("{value} must be a positive, finite number").format(value=value))
    return value


def finite(value: Optional[float]) -> Optional[float]:
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(_("{value} must be a finite number").format(value=value))
    return value


def finite_positive(value: Optional[float]) -> Optional[float]:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(_("{value} must be a finite number above 0").format(value=value))
    return value


def _choice(*names: str) -> click.Choice:
    return Choices(names)


def _format(command: str) -> Any:
    return Annotated[Optional[str], typer.Option("--format", "-f", click_type=_choice(*FORMATS[command]), help=N_(
        "table in a terminal or with --color always, plain otherwise."), show_default=False)]


def _tolerance(option: str, help: str) -> Any:
    return Annotated[Optional[float], typer.Option(option, callback=finite_positive, show_default=False, help=help)]


def _written(option: str, help: str) -> Any:
    return Annotated[Optional[Path], typer.Option(option, dir_okay=False, show_default=False, help=help)]


A_FILE = N_("FILE")  # the placeholder of an option naming a file (click's own for a Path: FILE, 文件)
MASK_HELP = N_("causal, window (with --window) or none; repeat or use commas.")

# each option: its type and typer's reading of it, and its default; "name:variant" is a command's own variant of the
# option name (the keyword argument the command is given)
OPTIONS: dict[str, tuple[Any, Any]] = {
    "file": (Annotated[Optional[str], typer.Argument(help=FILE, show_default=False)], None),  # without --x
    "file:x": (Annotated[Optional[str], typer.Argument(help=FILE_OR_X, show_default=False)], None),  # with --x
    "fmt": (_format("run"), None),
    "fmt:explain": (_format("explain"), None),
    "fmt:experiment": (_format("experiment"), None),
    "precision": (Annotated[int, typer.Option("--precision", "-p", min=0, max=MAX_PRECISION, help=N_("Decimals shown."))], 4),
    "carry_rounding": (Annotated[bool, typer.Option("--carry-rounding", help=N_(
        "Round every intermediate to --precision and carry it on, as by hand."))], False),
    "pause": (Annotated[bool, typer.Option("--pause/--no-pause", help=N_(
        "Wait for Enter after each step (terminal only)."))], False),
    "scale": (Annotated[Optional[bool], typer.Option("--scale/--no-scale", show_default=False, help=N_(
        "Divide the scores by sqrt(d_k), or not. Default: the file's."))], None),
    "scale:model": (Annotated[Optional[bool], typer.Option("--scale/--no-scale", show_default=False, help=N_(
        "Divide the scores by sqrt(d_k), or not. Default: as the model does."))], None),
    "scale_by": (Annotated[Optional[float], typer.Option("--scale-by", callback=_positive, show_default=False,
                                                         help=N_("Divide the scores by this number."))], None),
    "mask": (Annotated[Optional[list[str]], typer.Option("--mask", show_default=False, help=N_(
        "causal, window (with --window), padding (with --padding) or none; repeat or use commas."))], None),
    "window": (Annotated[Optional[int], typer.Option("--window", min=0, help=N_("Window mask: |i - j| <= W."),
                                                     show_default=False)], None),
    "heads": (Annotated[Optional[int], typer.Option("--heads", min=1, help=N_("Number of heads."),
                                                    show_default=False)], None),
    "padding": (Annotated[Optional[str], typer.Option("--padding", show_default=False, help=N_(
        "Padding mask: the keys never attended, by number from 1: 3 or 3,4."))], None),
    "output": (Annotated[Optional[Path], typer.Option("--output", "-o", dir_okay=False, show_default=False, help=N_(
        "Write to this file (UTF-8, LF) instead of stdout."))], None),
    "colour": (Annotated[str, typer.Option("--color", click_type=_choice("auto", "always", "never"), help=N_(
        "Colour of the tables: auto (in a terminal, without NO_COLOR), always (the coloured tables through a pipe or "
        "into a file too), never. The other formats (plain, markdown, csv, json) never have colour."))], "auto"),
    "x": (Annotated[Optional[str], typer.Option("--x", metavar=A_FILE, show_default=False, help=N_(
        "X from a .csv, .npy or .json file. Without FILE, the problem is the matrices given (a missing weight is the "
        "identity; scale true, no mask, one head)."))], None),
    "w_q": (Annotated[Optional[str], typer.Option("--w-q", metavar=A_FILE, show_default=False, help=N_(
        "W_Q from a file. Without FILE and --x, it replaces the built-in example's (whose other settings stay)."))], None),
    "w_k": (Annotated[Optional[str], typer.Option("--w-k", metavar=A_FILE, help=N_("W_K from a file, as --w-q."),
                                                  show_default=False)], None),
    "w_v": (Annotated[Optional[str], typer.Option("--w-v", metavar=A_FILE, help=N_("W_V from a file, as --w-q."),
                                                  show_default=False)], None),
    "export_svg": (Annotated[Optional[Path], typer.Option("--export-svg", dir_okay=False, show_default=False, help=N_(
        "Also write the coloured tables as an SVG picture."))], None),
    "export_html": (Annotated[Optional[Path], typer.Option("--export-html", dir_okay=False, show_default=False, help=N_(
        "Also write the coloured tables as an HTML page."))], None),
    "theme": (Annotated[str, typer.Option("--theme", click_type=_choice("dark", "light"), help=N_(
        "The exports' background: dark as a terminal, light for handouts and paper."))], "dark"),
    "ascii_": (Annotated[bool, typer.Option("--ascii", help=N_(
        "Draw tables with ASCII lines and bars, for terminals that draw box lines two columns wide (the default in "
        "Chinese; ATTNTRACE_ASCII=0 or 1 decides it in any language)."))], False),
    "input_": (Annotated[int, typer.Option("--input", "-i", help=N_("The input to trace, from 1."), show_default=False)],
               ...),
    "explain": (Annotated[bool, typer.Option("--explain", help=N_("Write out every cell's arithmetic."))], False),
    # the sizes of a problem to draw (new, assign)
    "tokens": (Annotated[int, typer.Option("--tokens", "-n", min=1, help=N_("Number of inputs n."))], 3),
    "d_model": (Annotated[int, typer.Option("--d-model", min=1, help=N_("Size of each input."))], 4),
    "d_k": (Annotated[Optional[int], typer.Option("--d-k", min=1, show_default=False, help=N_(
        "Size of queries and keys, every head's columns together. Default: 3 per head."))], None),
    "d_v": (Annotated[Optional[int], typer.Option("--d-v", min=1, show_default=False, help=N_(
        "Size of values, every head's columns together. Default: 3 per head."))], None),
    "heads:sizes": (Annotated[int, typer.Option("--heads", min=1, help=N_(
        "Number of heads; must divide d_k and d_v."))], 1),
    "init": (Annotated[str, typer.Option("--init", click_type=_choice("integers", "normal", "xavier", "kaiming"),
                                         help=N_("integers (small whole numbers to work by hand; not scaled), normal "
                                                 "(N(0, 1/d_model)), xavier or kaiming (as networks start them): the "
                                                 "last three give scaled scores of order 1."))], "integers"),
    "scale:drawn": (Annotated[Optional[bool], typer.Option("--scale/--no-scale", show_default=False, help=N_(
        "Divide the scores by sqrt(d_k), or not. Default: not for integers, else divide."))], None),
    "mask:no-padding": (Annotated[Optional[list[str]], typer.Option("--mask", help=MASK_HELP, show_default=False,
                                                                    callback=_no_padding)], None),
    # a head of a model (model, bert)
    "sentence": (Annotated[str, typer.Argument(help=N_("The sentence to run through the model."))], ...),
    "layer": (Annotated[int, typer.Option("--layer", "-l", help=N_("Layer, from 1."))], 1),
    "head": (Annotated[int, typer.Option("--head", help=N_("Head, from 1."))], 1),
    "input_:token": (Annotated[Optional[int], typer.Option("--input", "-i", show_default=False, help=N_(
        "Trace this token only (steps 4 to 7), from 1."))], None),
    "extract": (Annotated[Optional[Path], typer.Option("--extract", dir_okay=False, show_default=False, help=N_(
        "Write this head as a problem file and stop."))], None),
    "who": (Annotated[bool, typer.Option("--who", help=N_("Only the compact view: each token's top 3 tokens."))], False),
    "all_heads": (Annotated[bool, typer.Option("--all-heads", help=N_(
        "Summarise who attends to whom over every head of the layer."))], False),
    "float64": (Annotated[bool, typer.Option("--float64", help=N_(
        "Multiply the weights of the layers before the traced one in float64 too (slower). A model of more than 300 "
        "million weights multiplies them in float32 by default, as transformers does; the traced layer is float64 "
        "always."))], False),
    "explore_": (Annotated[bool, typer.Option("--explore", help=N_(
        "Step through the head interactively (as attntrace explore does a problem file)."))], False),
    # each command's own
    "name:experiment": (Annotated[str, typer.Argument(help=EXPERIMENTS)], ...),
    "file:validate": (Annotated[Optional[str], typer.Argument(show_default=False, help=FILE_AND_W)], None),
    "seed:new": (Annotated[Optional[int], typer.Option("--seed", min=0, help=N_(
        "Random seed, for the same problem again."))], None),
    "labels": (Annotated[Optional[str], typer.Option("--labels", help=N_(
        'Token labels, comma-separated: "I,love,cats".'))], None),
    "kv_heads": (Annotated[Optional[int], typer.Option("--kv-heads", min=1, show_default=False, help=N_(
        "Grouped-query attention: W_K and W_V hold this many key/value blocks (a divisor of --heads; 1: "
        "multi-query)."))], None),
    "rope": (Annotated[bool, typer.Option("--rope", help=N_(
        "Turn q and k by position (rotary embedding; each head's d_k even, 4 by default)."))], False),
    "alibi": (Annotated[bool, typer.Option("--alibi", help=N_(
        "Add the ALiBi bias -slope · |i - j| to the scaled scores."))], False),
    "softcap": (Annotated[Optional[float], typer.Option("--softcap", callback=finite_positive, show_default=False,
                                                        help=N_("Soft-cap the scores: c · tanh(score / c)."))], None),
    "sink": (Annotated[Optional[float], typer.Option("--sink", callback=finite, show_default=False, help=N_(
        "A learned sink logit for every head: one more score in each row's softmax, with no value."))], None),
    "paths": (Annotated[list[str], typer.Argument(show_default=False, help=N_(
        "Answer sheets: JSON in the --format json layout (any subset, or one input's), a directory of q.csv ... "
        "output.csv, a filled-in worksheet (.md or .txt), or a directory of sheets. A path holding a problem (JSON "
        "with x, or a CSV directory with x.csv) is the problem."))], ...),
    "problem": (Annotated[Optional[str], typer.Option("--problem", metavar=A_FILE, show_default=False, help=N_(
        "The problem every sheet answers. Default: a problem among PATHS, else the problem.json beside each sheet, "
        "else the built-in example."))], None),
    "precision:check": (Annotated[Optional[int], typer.Option("--precision", "-p", min=0, max=12, show_default=False,
        help=N_("The decimals students rounded to. Default: the sheet's, else inferred from the digits written."))],
        None),
    "tolerance": (_tolerance("--tolerance", N_(
        "Instead of rounding: a cell is right within tolerance · (1 + |expected| / 2).")), None),
    "rtol": (_tolerance("--rtol", N_("Relative tolerance, for exact work.")), None),
    "atol": (_tolerance("--atol", N_("Absolute tolerance, for exact work.")), None),
    "points": (Annotated[Optional[str], typer.Option("--points", show_default=False, help=N_(
        "Points per step, e.g. scores=2,weights=2 (keys q, k, v, scores, scaled, weights, output, final); 1 each by "
        "default."))], None),
    "follow_through": (Annotated[bool, typer.Option("--follow-through/--no-follow-through", help=N_(
        "A step wrong only because of an earlier mistake earns its points."))], True),
    "fmt:check": (Annotated[str, typer.Option("--format", "-f", click_type=_choice(*FORMATS["check"]),
                                              help=N_("plain or json."))], "plain"),
    "gradescope": (_written("--gradescope", N_("Also write Gradescope's results.json (one sheet).")), None),
    "gradebook": (_written("--gradebook", N_("Also write a CSV with one row per sheet.")), None),
    "key": (Annotated[bool, typer.Option("--key", help=N_("Fill in the answer key."))], False),
    "input_:worksheet": (Annotated[Optional[int], typer.Option("--input", "-i", show_default=False, help=N_(
        "A worksheet for this input only."))], None),
    "precision:worksheet": (Annotated[int, typer.Option("--precision", "-p", min=0, max=12, help=N_(
        "The rounding students carry."))], 2),
    "fmt:worksheet": (Annotated[str, typer.Option("--format", "-f", click_type=_choice(*FORMATS["worksheet"]), help=N_(
        "markdown, plain, or json (an answer sheet: blank to fill in, or the key with --key)."))], "markdown"),
    "roster": (Annotated[str, typer.Argument(show_default=False, help=N_(
        "Student ids: one a line, or a CSV with an id column."))], ...),
    "output:assign": (Annotated[Path, typer.Option("--output", "-o", file_okay=False, show_default=False, help=N_(
        "The class folder: one folder per student is written in it."))], ...),
    "seed:assign": (Annotated[int, typer.Option("--seed", show_default=False, help=N_(
        "The class seed: the same roster and seed give the same problems."))], ...),
    "precision:assign": (Annotated[int, typer.Option("--precision", "-p", min=0, max=12, help=N_(
        "The rounding the worksheets ask students to carry."))], 2),
    "model:bert": (Annotated[Optional[Path], typer.Option("--model", file_okay=False, show_default=False, help=N_(
        "A Hugging Face BERT directory (config.json, model.safetensors, tokenizer.json or vocab.txt). Default: "
        "all-MiniLM-L6-v2."))], None),
    "no_special:bert": (Annotated[bool, typer.Option("--no-special", help=N_(
        "Leave [CLS] and [SEP] out of the who-attends-to-whom lists; the weights stay the model's own (each line ends "
        "with its weight on them)."))], False),
    "name:model": (Annotated[str, typer.Argument(metavar="MODEL", show_default=False, help=N_(
        "A model's directory (config.json; model.safetensors, or shards with model.safetensors.index.json; "
        "tokenizer.json), the id of a model already in the local Hugging Face cache (never downloaded), or the name "
        "of a model an installed package ships (all-MiniLM-L6-v2)."))], ...),
    "no_special:model": (Annotated[bool, typer.Option("--no-special", help=N_(
        "Leave the special tokens the tokenizer adds ([CLS], [SEP], <s>) out of the who-attends-to-whom lists; the "
        "weights stay the model's own."))], False),
    "block": (Annotated[Optional[int], typer.Option("--block", "-b", min=1, show_default=False, help=N_(
        "Keys per block, 1 or more (the last block may be shorter). Default: half the keys, rounded up: two blocks."))],
              None),
    "flash:worksheet": (Annotated[Optional[int], typer.Option("--flash", min=1, show_default=False, help=N_(
        "A worksheet of FlashAttention's online softmax, B keys per block: m, ℓ and O after each block, then O / ℓ."))],
                        None),
    "decode:worksheet": (Annotated[bool, typer.Option("--decode", help=N_(
        "A worksheet of decoding with a KV cache, with --window W and --sinks S: per step the positions cached, the "
        "weights and the output."))], False),
    "input_:flash": (Annotated[Optional[int], typer.Option("--input", "-i", show_default=False, help=N_(
        "Only this input's query, from 1."))], None),
    "input_:explore": (Annotated[Optional[int], typer.Option("--input", "-i", show_default=False, help=N_(
        "The input steps 4 to 7 follow first, from 1."))], None),
    "window:decode": (Annotated[Optional[int], typer.Option("--window", show_default=False, help=N_(
        "Keep the last W tokens in a rolling buffer of W slots: query t sees keys t - W + 1 … t."))], None),
    "sinks": (Annotated[int, typer.Option("--sinks", help=N_(
        "With --window: also keep tokens 1 … S for good (StreamingLLM's attention sinks)."))], 0),
    "input_:decode": (Annotated[Optional[int], typer.Option("--input", "-i", show_default=False, help=N_(
        "Show only the step that generates this token, from 1."))], None),
}
TRACED = (*SHOWN, *PROBLEM, "output", "colour", *MATRICES, *EXPORTS)  # run's, step's and explain's, in their order
HEAD = ("input_:token", "extract", "who", "all_heads", "float64", "explore_")  # model and bert's own, after the
# sentence and layer/head
HEAD_SHOWN = (*SHOWN, "scale:model", "scale_by", "mask:no-padding", "window", "output", "colour", *EXPORTS)

F = TypeVar("F", bound=Callable[..., Any])


def takes(*names: str) -> Callable[[F], F]:
    """the function's signature, as typer reads it: the options of OPTIONS named, in that order; the function is given
    them as keyword arguments"""

    def signed(function: F) -> F:
        params = []
        for key in names:
            kind, default = OPTIONS[key]
            params.append(inspect.Parameter(key.split(":")[0], inspect.Parameter.KEYWORD_ONLY,
                                            default=inspect.Parameter.empty if default is ... else default,
                                            annotation=kind))
        function.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
        function.__annotations__ = {p.name: p.annotation for p in params}
        return function

    return signed


@dataclass(frozen=True)
class Given:
    """what the options of a showing command say: the problem's settings and matrices, and how to show it"""

    values: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(name) from None

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    def matrices(self) -> dict[str, Optional[str]]:
        """--x, --w-q, --w-k, --w-v: a matrix file each, or None"""
        return {name: self.get(name) for name in MATRICES}

    def settings(self) -> dict[str, Any]:
        """the command line's overrides of a problem's settings (None keeps the file's)"""
        return settings(**{name: self.get(name) for name in PROBLEM})

    def outputs(self) -> dict[str, Optional[Path]]:
        """the files written, by the option that names them"""
        return {"-o": self.get("output"), "--export-svg": self.get("export_svg"),
                "--export-html": self.get("export_html")}

    def opts(self) -> OutputOptions:
        """the output options, checked"""
        export_svg, export_html, output = self.get("export_svg"), self.get("export_html"), self.get("output")
        if self.get("theme", "dark") != "dark" and export_svg is None and export_html is None:
            raise typer.BadParameter(_("the theme is the exports' background: add --export-svg FILE or --export-html "
                                       "FILE"), param_hint="'--theme'")
        if output is not None and str(output) == "-":  # -o - is stdout, as for the other tools of a pipeline
            output = None
        return OutputOptions(self.get("fmt"), self.get("precision", 4), self.get("pause", False), output,
                             self.get("colour", "auto"), export_svg, export_html, self.get("theme", "dark"),
                             self.get("ascii_", False))


def settings(scale: Optional[bool] = None, scale_by: Optional[float] = None, mask: Optional[list[str]] = None,
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


POINT_KEYS = ("q", "k", "v", "scores", "scaled", "weights", "output", "final")


def points(text: Optional[str]) -> dict[str, float]:
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
