"""The output options every tracing command shares: format, precision, colour, pausing and -o FILE."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from attntrace.terminal import Environment, write_file
from attntrace.view import Step


@dataclass(frozen=True)
class OutputOptions:
    format: str | None = None  # None: table in a terminal, plain otherwise
    precision: int = 4
    pause: bool = False
    output: Path | None = None
    color: str = "auto"
    export_svg: Path | None = None
    export_html: Path | None = None

    def resolved_format(self, env: Environment) -> str:
        if self.format is not None:
            return self.format
        return "table" if env.stdout_isatty and self.output is None else "plain"


def render_steps(steps: Sequence[Step], fmt: str, precision: int, colour: bool, width: int,
                 blank_from: int | None = None) -> list[str]:
    """each step as text in the given format; steps from blank_from on have empty cells (worksheets)"""
    if fmt == "table":
        from attntrace.render import table

        out = []
        for step in steps:
            buffer = io.StringIO()
            table.console(buffer, colour, width).print(table.render_step(step, precision, width))
            out.append(buffer.getvalue())
        return out
    if fmt == "csv":
        from attntrace.render import csvfmt

        return [csvfmt.render_step(step, precision) for step in steps]
    if fmt == "plain":
        from attntrace.render import plain as module
    else:
        from attntrace.render import markdown as module  # type: ignore[no-redef]
    return [module.render_step(step, precision, blank_from is not None and step.number >= blank_from) for step in steps]


def show_steps(env: Environment, steps: Sequence[Step], opts: OutputOptions) -> None:
    """write the steps, pausing after each one when a person is watching"""
    fmt = opts.resolved_format(env)
    to_file = opts.output is not None
    width = env.width if env.stdout_isatty and not to_file else 100
    pages = render_steps(steps, fmt, opts.precision, env.colour(opts.color, to_file), width)
    export(steps, opts)
    show_text(env, pages, opts)


EXPORT_WIDTH = 120


def export(steps: Sequence[Step], opts: OutputOptions) -> None:
    """the coloured tables as an SVG picture or an HTML page, exactly as a terminal would show them"""
    if opts.export_svg is None and opts.export_html is None:
        return
    from attntrace.render import table

    recorder = table.console(io.StringIO(), True, EXPORT_WIDTH, record=True)
    for step in steps:
        recorder.print(table.render_step(step, opts.precision, EXPORT_WIDTH))
    if opts.export_svg is not None:
        write_file(opts.export_svg, recorder.export_svg(title="attntrace", clear=False))
    if opts.export_html is not None:
        write_file(opts.export_html, recorder.export_html(clear=False))


def show_text(env: Environment, pages: Sequence[str], opts: OutputOptions) -> None:
    """write pages of text; all at once (never half-printed) unless pausing between them"""
    if opts.output is not None:
        write_file(opts.output, "".join(pages))
        return
    if not (opts.pause and env.can_pause(False)) or len(pages) < 2:
        env.write("".join(pages))
        return
    for number, page in enumerate(pages):
        env.write(page)
        if number + 1 < len(pages) and not env.pause():
            return
