"""Every option of the command line declared once, as a typed alias each command names in its signature (typer's way
of sharing options), and what the options given say: a problem's settings and matrices, the output options."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from attntrace.cli.clickwords import Choices
from attntrace.cli.helptext import EXPERIMENTS, FILE, FILE_AND_W, FILE_OR_X
from attntrace.cli.output import ACCEPTED, OutputOptions
from attntrace.cli.tracing import Matrices
from attntrace.core.arithmetic import MAX_PRECISION
from attntrace.language import N_, _


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


A_FILE = N_("FILE")  # the placeholder of an option naming a file (click's own for a Path: FILE, 文件)
FORMAT_HELP = N_("table in a terminal or with --color always, plain otherwise.")
MASK_HELP = N_("causal, window (with --window) or none; repeat or use commas.")

# a problem, and the command line's changes to it
File = Annotated[Optional[str], typer.Argument(help=FILE, show_default=False)]
FileOrX = Annotated[Optional[str], typer.Argument(help=FILE_OR_X, show_default=False)]
FileAndW = Annotated[Optional[str], typer.Argument(show_default=False, help=FILE_AND_W)]
X = Annotated[Optional[str], typer.Option("--x", metavar=A_FILE, show_default=False, help=N_(
    "X from a .csv, .npy or .json file. Without FILE, the problem is the matrices given (a missing weight is the "
    "identity; scale true, no mask, one head)."))]
WQ = Annotated[Optional[str], typer.Option("--w-q", metavar=A_FILE, show_default=False, help=N_(
    "W_Q from a file. Without FILE and --x, it replaces the built-in example's (whose other settings stay)."))]
WK = Annotated[Optional[str], typer.Option("--w-k", metavar=A_FILE, help=N_("W_K from a file, as --w-q."),
    show_default=False)]
WV = Annotated[Optional[str], typer.Option("--w-v", metavar=A_FILE, help=N_("W_V from a file, as --w-q."),
    show_default=False)]
Scale = Annotated[Optional[bool], typer.Option("--scale/--no-scale", show_default=False, help=N_(
    "Divide the scores by sqrt(d_k), or not. Default: the file's."))]
ScaleBy = Annotated[Optional[float], typer.Option("--scale-by", callback=_positive, show_default=False,
    help=N_("Divide the scores by this number."))]
Mask = Annotated[Optional[list[str]], typer.Option("--mask", show_default=False, help=N_(
    "causal, window (with --window), padding (with --padding) or none; repeat or use commas."))]
Window = Annotated[Optional[int], typer.Option("--window", min=0, help=N_("Window mask: |i - j| <= W."),
    show_default=False)]
Heads = Annotated[Optional[int], typer.Option("--heads", min=1, help=N_("Number of heads."),
    show_default=False)]
Padding = Annotated[Optional[str], typer.Option("--padding", show_default=False, help=N_(
    "Padding mask: the keys never attended, by number from 1: 3 or 3,4."))]

# how a trace is shown, and where
Format = Annotated[Optional[str], typer.Option("--format", "-f", click_type=Choices(ACCEPTED["run"]),
                                                  help=FORMAT_HELP, show_default=False)]
ExplainFormat = Annotated[Optional[str], typer.Option("--format", "-f", click_type=Choices(ACCEPTED["explain"]),
                                                  help=FORMAT_HELP, show_default=False)]
ExperimentFormat = Annotated[Optional[str], typer.Option("--format", "-f", click_type=Choices(ACCEPTED["experiment"]),
                                                  help=FORMAT_HELP, show_default=False)]
Precision = Annotated[int, typer.Option("--precision", "-p", min=0, max=MAX_PRECISION, help=N_("Decimals shown."))]
Carry = Annotated[bool, typer.Option("--carry-rounding", help=N_(
    "Round every intermediate to --precision and carry it on, as by hand."))]
Pause = Annotated[bool, typer.Option("--pause/--no-pause", help=N_(
    "Wait for Enter after each step (terminal only)."))]
Output = Annotated[Optional[Path], typer.Option("--output", "-o", dir_okay=False, show_default=False, help=N_(
    "Write to this file (UTF-8, LF) instead of stdout."))]
Colour = Annotated[str, typer.Option("--color", click_type=Choices(("auto", "always", "never")), help=N_(
    "Colour of the tables: auto (in a terminal, without NO_COLOR), always (the coloured tables through a pipe or "
    "into a file too), never. The other formats (plain, markdown, csv, json) never have colour."))]
ExportSvg = Annotated[Optional[Path], typer.Option("--export-svg", dir_okay=False, show_default=False, help=N_(
    "Also write the coloured tables as an SVG picture."))]
ExportHtml = Annotated[Optional[Path], typer.Option("--export-html", dir_okay=False, show_default=False, help=N_(
    "Also write the coloured tables as an HTML page."))]
Theme = Annotated[str, typer.Option("--theme", click_type=Choices(("dark", "light")), help=N_(
    "The exports' background: dark as a terminal, light for handouts and paper."))]
Ascii = Annotated[bool, typer.Option("--ascii", help=N_(
    "Draw tables with ASCII lines and bars, for terminals that draw box lines two columns wide (the default in "
    "Chinese; ATTNTRACE_ASCII=0 or 1 decides it in any language)."))]

# the input traced, and each command's own
Input = Annotated[int, typer.Option("--input", "-i", help=N_("The input to trace, from 1."), show_default=False)]
Explain = Annotated[bool, typer.Option("--explain", help=N_("Write out every cell's arithmetic."))]
FlashInput = Annotated[Optional[int], typer.Option("--input", "-i", show_default=False, help=N_(
    "Only this input's query, from 1."))]
ExploreInput = Annotated[Optional[int], typer.Option("--input", "-i", show_default=False, help=N_(
    "The input steps 4 to 7 follow first, from 1."))]
Block = Annotated[Optional[int], typer.Option("--block", "-b", min=1, show_default=False, help=N_(
    "Keys per block, 1 or more (the last block may be shorter). Default: half the keys, rounded up: two blocks."))]
DecodeWindow = Annotated[Optional[int], typer.Option("--window", show_default=False, help=N_(
    "Keep the last W tokens in a rolling buffer of W slots: query t sees keys t - W + 1 … t."))]
Sinks = Annotated[int, typer.Option("--sinks", help=N_(
    "With --window: also keep tokens 1 … S for good (StreamingLLM's attention sinks)."))]
DecodeInput = Annotated[Optional[int], typer.Option("--input", "-i", show_default=False, help=N_(
    "Show only the step that generates this token, from 1."))]
ExperimentName = Annotated[str, typer.Argument(help=EXPERIMENTS)]

# the sizes and variants of a problem to draw (new, assign)
Tokens = Annotated[int, typer.Option("--tokens", "-n", min=1, help=N_("Number of inputs n."))]
DModel = Annotated[int, typer.Option("--d-model", min=1, help=N_("Size of each input."))]
DK = Annotated[Optional[int], typer.Option("--d-k", min=1, show_default=False, help=N_(
    "Size of queries and keys, every head's columns together. Default: 3 per head."))]
DV = Annotated[Optional[int], typer.Option("--d-v", min=1, show_default=False, help=N_(
    "Size of values, every head's columns together. Default: 3 per head."))]
DrawnHeads = Annotated[int, typer.Option("--heads", min=1, help=N_(
    "Number of heads; must divide d_k and d_v."))]
Init = Annotated[str, typer.Option("--init", click_type=Choices(("integers", "normal", "xavier", "kaiming")),
    help=N_("integers (small whole numbers to work by hand; not scaled), normal "
    "(N(0, 1/d_model)), xavier or kaiming (as networks start them): the "
    "last three give scaled scores of order 1."))]
DrawnScale = Annotated[Optional[bool], typer.Option("--scale/--no-scale", show_default=False, help=N_(
    "Divide the scores by sqrt(d_k), or not. Default: not for integers, else divide."))]
UnpaddedMask = Annotated[Optional[list[str]], typer.Option("--mask", help=MASK_HELP, show_default=False,
    callback=_no_padding)]
Seed = Annotated[Optional[int], typer.Option("--seed", min=0, help=N_(
    "Random seed, for the same problem again."))]
Labels = Annotated[Optional[str], typer.Option("--labels", help=N_(
    'Token labels, comma-separated: "I,love,cats".'))]
KvHeads = Annotated[Optional[int], typer.Option("--kv-heads", min=1, show_default=False, help=N_(
    "Grouped-query attention: W_K and W_V hold this many key/value blocks (a divisor of --heads; 1: "
    "multi-query)."))]
Rope = Annotated[bool, typer.Option("--rope", help=N_(
    "Turn q and k by position (rotary embedding; each head's d_k even, 4 by default)."))]
Alibi = Annotated[bool, typer.Option("--alibi", help=N_(
    "Add the ALiBi bias -slope · |i - j| to the scaled scores."))]
Softcap = Annotated[Optional[float], typer.Option("--softcap", callback=finite_positive, show_default=False,
    help=N_("Soft-cap the scores: c · tanh(score / c)."))]
Sink = Annotated[Optional[float], typer.Option("--sink", callback=finite, show_default=False, help=N_(
    "A learned sink logit for every head: one more score in each row's softmax, with no value."))]

# a head of a model (model, bert)
ModelName = Annotated[str, typer.Argument(metavar="MODEL", show_default=False, help=N_(
    "A model's directory (config.json; model.safetensors, or shards with model.safetensors.index.json; "
    "tokenizer.json), the id of a model already in the local Hugging Face cache (never downloaded), or the name "
    "of a model an installed package ships (all-MiniLM-L6-v2)."))]
BertModel = Annotated[Optional[Path], typer.Option("--model", file_okay=False, show_default=False, help=N_(
    "A Hugging Face BERT directory (config.json, model.safetensors, tokenizer.json or vocab.txt). Default: "
    "all-MiniLM-L6-v2."))]
Sentence = Annotated[str, typer.Argument(help=N_("The sentence to run through the model."))]
Layer = Annotated[int, typer.Option("--layer", "-l", help=N_("Layer, from 1."))]
Head = Annotated[int, typer.Option("--head", help=N_("Head, from 1."))]
TokenInput = Annotated[Optional[int], typer.Option("--input", "-i", show_default=False, help=N_(
    "Trace this token only (steps 4 to 7), from 1."))]
Extract = Annotated[Optional[Path], typer.Option("--extract", dir_okay=False, show_default=False, help=N_(
    "Write this head as a problem file and stop."))]
Who = Annotated[bool, typer.Option("--who", help=N_("Only the compact view: each token's top 3 tokens."))]
AllHeads = Annotated[bool, typer.Option("--all-heads", help=N_(
    "Summarise who attends to whom over every head of the layer."))]
Float64 = Annotated[bool, typer.Option("--float64", help=N_(
    "Multiply the weights of the layers before the traced one in float64 too (slower). A model of more than 300 "
    "million weights multiplies them in float32 by default, as transformers does; the traced layer is float64 "
    "always."))]
Explore = Annotated[bool, typer.Option("--explore", help=N_(
    "Step through the head interactively (as attntrace explore does a problem file)."))]
ModelScale = Annotated[Optional[bool], typer.Option("--scale/--no-scale", show_default=False, help=N_(
    "Divide the scores by sqrt(d_k), or not. Default: as the model does."))]
NoSpecial = Annotated[bool, typer.Option("--no-special", help=N_(
    "Leave the special tokens the tokenizer adds ([CLS], [SEP], <s>) out of the who-attends-to-whom lists; the "
    "weights stay the model's own."))]
BertNoSpecial = Annotated[bool, typer.Option("--no-special", help=N_(
    "Leave [CLS] and [SEP] out of the who-attends-to-whom lists; the weights stay the model's own (each line ends "
    "with its weight on them)."))]

# marking (check)
Paths = Annotated[list[str], typer.Argument(show_default=False, help=N_(
    "Answer sheets: JSON in the --format json layout (any subset, or one input's), a directory of q.csv ... "
    "output.csv, a filled-in worksheet (.md or .txt), or a directory of sheets. A path holding a problem (JSON "
    "with x, or a CSV directory with x.csv) is the problem."))]
ProblemFile = Annotated[Optional[str], typer.Option("--problem", metavar=A_FILE, show_default=False, help=N_(
    "The problem every sheet answers. Default: a problem among PATHS, else the problem.json beside each sheet, "
    "else the built-in example."))]
CheckPrecision = Annotated[Optional[int], typer.Option("--precision", "-p", min=0, max=12, show_default=False,
    help=N_("The decimals students rounded to. Default: the sheet's, else inferred from the digits written."))]
Tolerance = Annotated[Optional[float], typer.Option("--tolerance", callback=finite_positive, show_default=False, help=N_(
    "Instead of rounding: a cell is right within tolerance · (1 + |expected| / 2)."))]
Rtol = Annotated[Optional[float], typer.Option("--rtol", callback=finite_positive, show_default=False, help=N_(
    "Relative tolerance, for exact work."))]
Atol = Annotated[Optional[float], typer.Option("--atol", callback=finite_positive, show_default=False, help=N_(
    "Absolute tolerance, for exact work."))]
Points = Annotated[Optional[str], typer.Option("--points", show_default=False, help=N_(
    "Points per step, e.g. scores=2,weights=2 (keys q, k, v, scores, scaled, weights, output, final); 1 each by "
    "default."))]
FollowThrough = Annotated[bool, typer.Option("--follow-through/--no-follow-through", help=N_(
    "A step wrong only because of an earlier mistake earns its points."))]
CheckFormat = Annotated[str, typer.Option("--format", "-f", click_type=Choices(ACCEPTED["check"]),
    help=N_("plain or json."))]
Gradescope = Annotated[Optional[Path], typer.Option("--gradescope", dir_okay=False, show_default=False, help=N_(
    "Also write Gradescope's results.json (one sheet)."))]
Gradebook = Annotated[Optional[Path], typer.Option("--gradebook", dir_okay=False, show_default=False, help=N_(
    "Also write a CSV with one row per sheet."))]

# worksheets and a class (worksheet, assign)
Key = Annotated[bool, typer.Option("--key", help=N_("Fill in the answer key."))]
SheetInput = Annotated[Optional[int], typer.Option("--input", "-i", show_default=False, help=N_(
    "A worksheet for this input only."))]
SheetFlash = Annotated[Optional[int], typer.Option("--flash", min=1, show_default=False, help=N_(
    "A worksheet of FlashAttention's online softmax, B keys per block: m, ℓ and O after each block, then O / ℓ."))]
SheetDecode = Annotated[bool, typer.Option("--decode", help=N_(
    "A worksheet of decoding with a KV cache, with --window W and --sinks S: per step the positions cached, the "
    "weights and the output."))]
SheetPrecision = Annotated[int, typer.Option("--precision", "-p", min=0, max=12, help=N_(
    "The rounding students carry."))]
SheetFormat = Annotated[str, typer.Option("--format", "-f", click_type=Choices(ACCEPTED["worksheet"]), help=N_(
    "markdown, plain, or json (an answer sheet: blank to fill in, or the key with --key)."))]
Roster = Annotated[str, typer.Argument(show_default=False, help=N_(
    "Student ids: one a line, or a CSV with an id column."))]
ClassFolder = Annotated[Path, typer.Option("--output", "-o", file_okay=False, show_default=False, help=N_(
    "The class folder: one folder per student is written in it."))]
ClassSeed = Annotated[int, typer.Option("--seed", show_default=False, help=N_(
    "The class seed: the same roster and seed give the same problems."))]
ClassPrecision = Annotated[int, typer.Option("--precision", "-p", min=0, max=12, help=N_(
    "The rounding the worksheets ask students to carry."))]


def matrices(x: Optional[str], w_q: Optional[str], w_k: Optional[str], w_v: Optional[str]) -> Matrices:
    """--x, --w-q, --w-k, --w-v: a matrix file each, or None"""
    return {"x": x, "w_q": w_q, "w_k": w_k, "w_v": w_v}


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


def output_options(fmt: Optional[str] = None, precision: int = 4, pause: bool = False, output: Optional[Path] = None,
                   colour: str = "auto", export_svg: Optional[Path] = None, export_html: Optional[Path] = None,
                   theme: str = "dark", ascii_: bool = False) -> OutputOptions:
    """the output options given, checked (-o - is stdout, as for the other tools of a pipeline)"""
    if theme != "dark" and export_svg is None and export_html is None:
        raise typer.BadParameter(_("the theme is the exports' background: add --export-svg FILE or --export-html "
                                   "FILE"), param_hint="'--theme'")
    return OutputOptions(fmt, precision, pause, None if output is not None and str(output) == "-" else output, colour,
                         export_svg, export_html, theme, ascii_)


def rounding(carry: bool, precision: int) -> Optional[int]:
    """the decimals every intermediate is rounded to and carried at (--carry-rounding), or None: exact"""
    return precision if carry else None
