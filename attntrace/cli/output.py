"""The output options every showing command shares, and writing a rendered document to stdout or files."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from attntrace import language
from attntrace.cli.terminal import Environment, ascii_chosen
from attntrace.files.forked import Segments
from attntrace.render.document import Document, Style, json_pieces, render, stream
from attntrace.views.text import width

if TYPE_CHECKING:
    from pathlib import Path  # more than 2% of start-up, which a plain run does without

# the formats each command accepts (its --format choices); model, bert and step take run's
ACCEPTED = {
    "run": ("table", "plain", "json", "csv", "markdown"),  # a trace: its steps, or its JSON form
    "explain": ("table", "plain", "markdown"),  # words and tables to read: no JSON or CSV form
    "experiment": ("table", "plain", "csv", "markdown"),  # steps with no JSON form
    "worksheet": ("markdown", "plain", "json"),  # a worksheet: its tables to fill in, or an answer sheet
    "check": ("plain", "json"),  # a marked sheet
}


@dataclass(frozen=True)
class OutputOptions:
    """the output options every showing command shares: format, precision, colour, pausing, -o FILE, exports"""

    format: str | None = None  # None: table in a terminal, plain otherwise
    precision: int = 4
    pause: bool = False
    output: Path | None = None
    colour: str = "auto"  # --color: auto, always, never
    export_svg: Path | None = None
    export_html: Path | None = None
    theme: str = "dark"  # the exports' background: dark as a terminal, or light for handouts
    ascii: bool = False  # tables in ASCII lines and bars

    def ascii_lines(self) -> bool:
        """ASCII lines and bars: when asked for, and by default in Chinese, whose terminals often draw box lines, ·, ×
        and bar glyphs two columns wide (East Asian "ambiguous" width); ATTNTRACE_ASCII (1 or 0, yes or no...) settles it
        in any language"""
        chosen = ascii_chosen(os.environ)
        return self.ascii or chosen is True or chosen is None and language.current() != "en"

    def resolved_format(self, env: Environment) -> str:
        """the format asked for; without one, the tables in a terminal or with --color always (colour is the table's:
        the other formats are text for files and programs, never coloured), plain text otherwise"""
        if self.format is not None:
            return self.format
        return "table" if self.colour == "always" or env.stdout_isatty and self.output is None else "plain"


def show(env: Environment, document: Document, opts: OutputOptions, blank_from: int | None = None) -> None:
    """render the document as asked and write it (and its exports), pausing after each step when a person watches"""
    fmt = opts.resolved_format(env)
    to_file = opts.output is not None
    width = env.columns() if env.stdout_isatty and not to_file else 100
    style = Style(opts.precision, env.colour(opts.colour, to_file), width, blank_from, opts.ascii_lines())
    if opts.pause and env.can_pause(to_file):
        pages = render(document, fmt, style)
        _write_files(_exports(document, opts))
        screens = _paged(pages, env.rows() - 1, env.columns())
        for number, (screen, more) in enumerate(screens):
            env.write(screen)
            if number + 1 < len(screens) and not env.pause(more, style.ascii):
                return
        return
    text: Iterable[str] | Segments
    if fmt == "json":  # blocks of rows formatted as they are written, on two cores where that pays
        text = Segments.of(json_pieces(document))
    else:
        text = stream(document, fmt, style)  # CSV a block of rows at a time, never the whole text at once
    files: dict[Path, str | Iterable[str] | Segments] = {**_exports(document, opts)}
    if opts.output is not None:
        files[opts.output] = text
    _write_files(files)  # every file or none, before anything reaches stdout
    if opts.output is None:
        env.widen_pipe()
        if not isinstance(text, Iterable):
            env.write_segments(text)
            return
        for piece in text:
            env.write(piece)


def _write_files(files: Mapping[Path, str | Iterable[str] | Segments]) -> None:
    """the files asked for, if any (the file writer is imported only then)"""
    if files:
        from attntrace.files.written import write_files

        write_files(files)


def _exports(document: Document, opts: OutputOptions) -> dict[Path, str]:
    """the SVG and HTML exports asked for, if any (the export module is imported only then)"""
    if opts.export_svg is None and opts.export_html is None:
        return {}
    from attntrace.render.export import exports

    return exports(document.steps, opts.precision, opts.export_svg, opts.export_html, document.title, opts.theme)


def _paged(pages: list[str], rows: int, columns: int) -> list[tuple[str, bool]]:
    """the pages as screens (see _screens); the blank lines that end a page start the next one's first screen, so that
    they are written after the pause, on the prompt's row"""
    out: list[tuple[str, bool]] = []
    carried = ""
    for page in pages:
        body = page.rstrip("\n")
        out.extend(_screens(carried + body + "\n" * (page != body), rows, columns))
        carried = page[len(body) + 1:]
    if carried and out:
        out[-1] = (out[-1][0] + carried, False)
    return out


def _screens(page: str, rows: int, columns: int) -> list[tuple[str, bool]]:
    """a step's text in screens of at most rows rows of a terminal columns wide (the pause prompt takes one more), each
    ending at a blank line where one falls in its second half, so that a table is rarely cut; and whether the step goes
    on after each"""
    lines = page.splitlines(keepends=True)
    seen = [re.sub(r"\x1b\[[0-9;]*m", "", line).rstrip("\n") for line in lines]  # as the terminal shows it
    sizes = [max(1, -(-width(line) // columns)) for line in seen]  # a line wider than the terminal takes more rows
    out: list[tuple[str, bool]] = []
    start, rows = 0, max(rows, 1)
    while sum(sizes[start:]) > rows:
        stop, used = start, 0
        while used + sizes[stop] <= rows:
            used, stop = used + sizes[stop], stop + 1
        stop = max(stop, start + 1)  # a line taller than the screen has one to itself
        blank = [k for k in range(stop, start + (stop - start) // 2, -1) if not seen[k - 1].strip()]
        stop = blank[0] if blank else stop
        out.append(("".join(lines[start:stop]), True))
        start = stop
    return [*out, ("".join(lines[start:]), False)]
