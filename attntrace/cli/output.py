"""The output options every showing command shares, and writing a rendered document to stdout or files."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from attntrace.cli.terminal import Environment
from attntrace.render.document import Document, Style, json_pieces, render, stream

if TYPE_CHECKING:
    from pathlib import Path

    from attntrace.cli.forked import Segments


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

    def resolved_format(self, env: Environment) -> str:
        if self.format is not None:
            return self.format
        return "table" if env.stdout_isatty and self.output is None else "plain"


def show(env: Environment, document: Document, opts: OutputOptions, blank_from: int | None = None) -> None:
    """render the document as asked and write it (and its exports), pausing after each step when a person watches"""
    fmt = opts.resolved_format(env)
    to_file = opts.output is not None
    width = env.columns() if env.stdout_isatty and not to_file else 100
    style = Style(opts.precision, env.colour(opts.colour, to_file), width, blank_from, opts.ascii)
    if opts.pause and env.can_pause(to_file):
        pages = render(document, fmt, style)
        _write_files(_exports(document, opts))
        for number, page in enumerate(pages):
            env.write(page)
            if number + 1 < len(pages) and not env.pause():
                return
        return
    text: Iterable[str] | Segments
    if fmt == "json":  # blocks of rows formatted as they are written, on two cores where that pays
        from attntrace.cli.forked import Segments

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
    """the files asked for, if any (the file writer, and pathlib, are imported only then)"""
    if files:
        from attntrace.cli.files import write_files

        write_files(files)


def _exports(document: Document, opts: OutputOptions) -> dict[Path, str]:
    """the SVG and HTML exports asked for, if any (the export module is imported only then)"""
    if opts.export_svg is None and opts.export_html is None:
        return {}
    from attntrace.render.export import exports

    return exports(document.steps, opts.precision, opts.export_svg, opts.export_html, document.title, opts.theme)
