"""What `check` does: mark the sheets, write the files asked for, show the reports, and exit with the verdict (what
keeps it from marking is 2, never 1)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Optional

import typer

from attntrace.cli.guard import EXPECTED, failure
from attntrace.cli.output import OutputOptions, show
from attntrace.cli.terminal import Environment
from attntrace.errors import ExitStatus
from attntrace.files.written import distinct, write_files
from attntrace.homework import classroom
from attntrace.homework import report as reports
from attntrace.homework.marking import Rule
from attntrace.language import _
from attntrace.render.jsonform import dumps


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


def rule(precision: Optional[int], tolerance: Optional[float], rtol: Optional[float], atol: Optional[float],
         follow_through: bool, given_points: Optional[str]) -> Rule:
    """how the sheets are marked: at a precision or within a tolerance, with follow-through, the points of each step"""
    exact = rtol is not None or atol is not None
    if tolerance is not None and exact:
        raise typer.BadParameter(_("give --tolerance, or --rtol/--atol, not both"), param_hint="--tolerance")
    if precision is not None and (exact or tolerance is not None):
        raise typer.BadParameter(_("a tolerance replaces rounding at a precision; give one of them"),
                                 param_hint="--precision")
    return Rule(precision=precision, rtol=tolerance / 2 if tolerance is not None else rtol,
                atol=tolerance if tolerance is not None else atol, follow_through=follow_through,
                points=points(given_points))


def check(env: Environment, paths: list[str], problem: Optional[str], rule: Rule, fmt: str,
          gradescope: Optional[Path], gradebook: Optional[Path], problem_of: Callable[[Optional[str]], Any]) -> None:
    """mark the sheets, write the files asked for and show the reports; exit with the verdict"""
    problem_path, sheet_paths = classroom.split(paths, problem)
    if gradescope is not None and len(sheet_paths) > 1:
        raise typer.BadParameter(_("Gradescope's results.json is for one sheet; {n} were given (use --gradebook for a "
                                   "class)").format(n=len(sheet_paths)), param_hint="--gradescope")
    distinct({"--gradescope": gradescope, "--gradebook": gradebook},
             [*sheet_paths, problem_path, *(classroom.beside(s) for s in sheet_paths)])
    marked = classroom.mark(sheet_paths, problem_path, problem_of, rule, keep_going=len(sheet_paths) > 1)
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
             OutputOptions(format=fmt))
    except BrokenPipeError:  # a reader that has gone away (| head) has read enough; the verdict stands
        env.quiet_stdout()
    if verdict:
        raise typer.Exit(verdict)


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
