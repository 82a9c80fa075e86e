"""The one output seam: a document (steps and a JSON form) and the registry of formats that render it."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from attntrace.errors import AttntraceError
from attntrace.escape import comment, markdown, visible
from attntrace.language import _
from attntrace.render import plain
from attntrace.views.describe import shown_name
from attntrace.views.page import Step
from attntrace.views.text import width, wrapped
from attntrace.views.walkthrough import run_steps, step_steps

if TYPE_CHECKING:
    from attntrace.core.trace import Trace
    from attntrace.render.jsonform import Rows


@dataclass(frozen=True, eq=False)  # it holds arrays, which have no ==: one is equal only to itself
class Document:
    """what a command shows: its steps (every text format renders them) and, when it has one, its JSON form"""

    steps: Sequence[Step] = ()
    data: Any = None  # the JSON form; None: the document has none
    plain: str | None = None  # text already laid out (a report), shown instead of the steps in plain
    preface: Callable[[str], str] | None = None  # text before the steps, per format (a worksheet's instructions)
    title: str | None = None  # what the document shows (a problem's name): its first line, and its exports' title


@dataclass(frozen=True)
class Style:
    """how a document is laid out: decimals, colour and width (table only), and blank cells (worksheets)"""

    precision: int = 4
    colour: bool = False
    width: int = 100
    blank_from: int | None = None  # steps from this number on have empty cells
    ascii: bool = False  # table only: ASCII lines and bars, for terminals that draw box lines two columns wide


Renderer = Callable[[Document, Style], list[str]]


def _table(document: Document, style: Style) -> list[str]:
    from attntrace.render import table  # rich, a heavy import: only for a table

    pages = []
    for step in document.steps:
        buffer = io.StringIO()
        rendered = table.render_step(step, style.precision, style.width, table.Look(style.ascii))
        table.console(buffer, style.colour, style.width).print(rendered, crop=False)
        pages.append(buffer.getvalue())
    return pages


def _plain(document: Document, style: Style) -> list[str]:
    if document.plain is not None:
        return [document.plain]
    whole = document.preface is not None  # a worksheet: check reads its rows back by their labels
    return [plain.render_step(step, style.precision, _blank(step, style), whole) for step in document.steps]


def _markdown(document: Document, style: Style) -> list[str]:
    from attntrace.render import markdown as markdown_format  # each format's module waits until it is asked for

    return [markdown_format.render_step(step, style.precision, _blank(step, style)) for step in document.steps]


def _csv(document: Document, style: Style) -> list[str]:
    from attntrace.render import csvfmt

    return [csvfmt.render_step(step, style.precision) for step in document.steps]


def _json(document: Document, style: Style) -> list[str]:
    from attntrace.render.jsonform import dumps  # the JSON form: more than 2% of start-up

    return [dumps(document.data)]


def _blank(step: Step, style: Style) -> bool:
    return style.blank_from is not None and step.number >= style.blank_from


FORMATS: dict[str, Renderer] = {"table": _table, "plain": _plain, "json": _json, "csv": _csv, "markdown": _markdown}


def render(document: Document, fmt: str, style: Style) -> list[str]:
    """the document as pages of text in one of FORMATS"""
    if fmt == "json" and document.data is None:
        raise ValueError("this document has no JSON form")
    pages = FORMATS[fmt](document, style)
    if document.title and fmt != "json" and pages:
        pages = [_title(document.title, fmt, style) + pages[0], *pages[1:]]
    if document.preface is not None and fmt != "json":
        preface = document.preface(fmt)
        if fmt == "plain":
            preface = plain.fitted(preface)
        pages = [preface, *pages]
    return pages


def _title(title: str, fmt: str, style: Style) -> str:
    """a document's title line in a format: a heading above the first step"""
    if fmt == "markdown":  # a name's emphasis and code marks are shown as written, too
        return "# " + markdown(title).replace("*", "\\*").replace("_", "\\_").replace("`", "\\`") + "\n\n"
    if fmt == "csv":
        return f"{comment(title)}\n\n"
    text = visible(title)
    if fmt == "table" and style.colour:
        return f"\x1b[1m{text}\x1b[0m\n\n"
    if fmt == "plain":
        lines = wrapped(text, plain.WIDTH)
        return "\n".join(lines) + f"\n{'#' * max(map(width, lines))}\n\n"
    return f"{text}\n{'#' * width(text)}\n\n"


def stream(document: Document, fmt: str, style: Style) -> Iterator[str]:
    """render's text piece by piece: JSON and CSV a block of rows at a time, so a huge trace is never all in memory"""
    if fmt == "json" and document.data is None:
        raise ValueError("this document has no JSON form")
    if fmt not in ("json", "csv"):
        return iter(render(document, fmt, style))
    if fmt == "csv":
        return _gathered(_csv_pieces(document, style))
    from attntrace.render.jsonform import chunks

    return _gathered(chunks(document.data))


def json_pieces(document: Document) -> Iterator[str | Rows]:
    """the JSON text piece by piece, each block of rows formatted only when its text() is asked for"""
    if document.data is None:
        raise ValueError("this document has no JSON form")
    from attntrace.render.jsonform import pieces

    return pieces(document.data)


def _csv_pieces(document: Document, style: Style) -> Iterator[str]:
    if document.preface is not None:
        yield document.preface("csv")
    if document.title and document.steps:
        yield _title(document.title, "csv", style)
    for step in document.steps:
        from attntrace.render import csvfmt

        yield from csvfmt.stream_step(step, style.precision)


def _gathered(pieces: Iterator[str], size: int = 1 << 20) -> Iterator[str]:
    """small pieces joined into about `size` characters, so that each write is worth its call"""
    held: list[str] = []
    count = 0
    for piece in pieces:
        if len(piece) >= size:
            if held:
                yield "".join(held)
                held, count = [], 0
            yield piece
            continue
        held.append(piece)
        count += len(piece)
        if count >= size:
            yield "".join(held)
            held, count = [], 0
    if held:
        yield "".join(held)


EXPORT_WIDTH = 120


def recorder(steps: Sequence[Step], precision: int, title: str | None = None, palette: str = "terminal") -> Any:
    """a console that has printed the steps in colour (after the title, in bold), to be exported; palette: the
    heatmap's shades, for a page of known background ("light", "dark") or any ("terminal")"""
    from rich.text import Text  # rich, a heavy import: only for an export

    from attntrace.render import table

    console = table.console(io.StringIO(), True, EXPORT_WIDTH, record=True)
    if title:
        console.print(Text(visible(title), style="bold"), Text(""), crop=False)
    for step in steps:
        console.print(table.render_step(step, precision, EXPORT_WIDTH, table.Look(palette=palette)), crop=False)
    return console


def trace_document(t: Trace) -> Document:
    """a trace as `run` shows it (every input), or as `step` does (one input)"""
    from attntrace.render.jsonform import trace_form

    return Document(run_steps(t) if t.query is None else step_steps(t), trace_form(t), title=shown_name(t.problem.name))


def render_trace(t: Trace, fmt: str = "plain", precision: int = 4) -> str:
    """what `attntrace run FILE --format FMT` prints (or `step --input N`, for a one-input trace)"""
    if fmt not in FORMATS:
        raise AttntraceError(_('unknown format "{format}"; use {formats}').format(format=fmt, formats=", ".join(FORMATS)))
    return "".join(render(trace_document(t), fmt, Style(precision)))


def trace_html(t: Trace, precision: int = 4) -> str:
    """the coloured tables of the HTML export, for a notebook"""
    fragment = '<pre style="font-family:Menlo,\'DejaVu Sans Mono\',consolas,monospace;line-height:1.2">{code}</pre>'
    document = trace_document(t)
    return str(recorder(document.steps, precision, document.title).export_html(clear=False, inline_styles=True,
                                                                               code_format=fragment))
