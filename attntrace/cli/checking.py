"""What `check` does: mark the sheets, write the files asked for, show the reports, and exit with the verdict (what
keeps it from marking is 2, never 1)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Optional

import typer

from attntrace.cli.guard import EXPECTED, failure
from attntrace.cli.options import Given, points
from attntrace.cli.output import OutputOptions, show
from attntrace.cli.terminal import Environment
from attntrace.errors import ExitStatus
from attntrace.files.written import distinct, write_files
from attntrace.language import _


@contextmanager
def trouble_is_2(env: Environment) -> Iterator[None]:
    """check's exit status is its verdict: what keeps it from marking or reporting is 2, never 1 (not passed)"""
    try:
        yield
    except EXPECTED as e:
        if not isinstance(e, BrokenPipeError):
            with suppress(BrokenPipeError):  # stderr's reader gone: the line goes unread, the status stands
                failure(env, e)
        raise typer.Exit(ExitStatus.USAGE) from None


def check(env: Environment, g: Given, problem_of: Callable[[Optional[str]], Any]) -> None:
    """mark the sheets, write the files asked for and show the reports; exit with the verdict"""
    from attntrace.homework import classroom
    from attntrace.homework import report as reports
    from attntrace.homework.marking import Rule
    from attntrace.render.jsonform import dumps

    exact = g.rtol is not None or g.atol is not None
    if g.tolerance is not None and exact:
        raise typer.BadParameter(_("give --tolerance, or --rtol/--atol, not both"), param_hint="--tolerance")
    if g.precision is not None and (exact or g.tolerance is not None):
        raise typer.BadParameter(_("a tolerance replaces rounding at a precision; give one of them"),
                                 param_hint="--precision")
    rule = Rule(precision=g.precision, rtol=g.tolerance / 2 if g.tolerance is not None else g.rtol,
                atol=g.tolerance if g.tolerance is not None else g.atol, follow_through=g.follow_through,
                points=points(g.points))
    problem_path, sheet_paths = classroom.split(g.paths, g.problem)
    if g.gradescope is not None and len(sheet_paths) > 1:
        raise typer.BadParameter(_("Gradescope's results.json is for one sheet; {n} were given (use --gradebook for a "
                                   "class)").format(n=len(sheet_paths)), param_hint="--gradescope")
    distinct({"--gradescope": g.gradescope, "--gradebook": g.gradebook},
             [*sheet_paths, problem_path, *(classroom.beside(s) for s in sheet_paths)])
    marked = classroom.mark(sheet_paths, problem_path, problem_of, rule,
                            keep_going=len(sheet_paths) > 1)
    files: dict[Path, str] = {}
    if g.gradescope is not None and marked.reports:
        files[g.gradescope] = dumps(reports.gradescope(marked.reports[0]))
    if g.gradebook is not None:
        files[g.gradebook] = reports.gradebook(marked.reports, marked.unreadable)
    write_files(files)
    verdict = (ExitStatus.USAGE if marked.unreadable else ExitStatus.ERROR if not all(r.passed for r in marked.reports)
               else ExitStatus.SUCCESS)
    with suppress(BrokenPipeError):  # stderr's reader gone: the lines go unread, the verdict stands
        for _unused, error, _english in marked.unreadable:
            env.message(f"attntrace: {error}")
    try:
        show(env, reports.document(marked.reports, marked.unreadable, one=len(sheet_paths) == 1),
             OutputOptions(format=g.fmt))
    except BrokenPipeError:  # a reader that has gone away (| head) has read enough; the verdict stands
        env.quiet_stdout()
    if verdict:
        raise typer.Exit(verdict)
