"""The commonest command lines, read without typer (which costs a third of a plain run's start-up): `run [FILE]` and
`step [FILE] --input N`, each with `--format F` and `--precision P` in any order. A line that is not exactly one of
these, help included, goes to typer; tests/cli/test_quick.py checks that both readings of a line give the same bytes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from attntrace.cli import tracing
from attntrace.cli.output import ACCEPTED, OutputOptions
from attntrace.cli.terminal import Environment
from attntrace.core.arithmetic import MAX_PRECISION
from attntrace.errors import ExitStatus

OPTIONS = {"--format": "format", "-f": "format", "--precision": "precision", "-p": "precision", "--input": "input",
           "-i": "input"}


def recognise(argv: Sequence[str]) -> Callable[[Environment], int] | None:
    """what the line asks for, ready to run, or None when typer should read it"""
    if not argv or argv[0] not in ("run", "step"):
        return None
    command, file, given = argv[0], None, {}
    words = iter(argv[1:])
    for word in words:
        if word in OPTIONS:
            name, value = OPTIONS[word], next(words, None)
            if value is None or name in given:
                return None
            given[name] = value
        elif word == "-" or not word.startswith("-"):
            if file is not None:
                return None
            file = word
        else:
            return None
    fmt, precision, query = given.get("format"), given.get("precision", "4"), given.get("input")
    if (fmt is not None and fmt not in ACCEPTED["run"]) or not _whole(precision) or int(precision) > MAX_PRECISION:
        return None
    if command == "run" and query is None:
        return lambda env: _traced(env, file, None, fmt, int(precision))
    if command == "step" and query is not None and _whole(query):
        return lambda env: _traced(env, file, int(query), fmt, int(precision))
    return None


def _whole(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _traced(env: Environment, file: str | None, query: int | None, fmt: str | None, precision: int) -> int:
    """run (query None) or step --input query, as typer's reading of the same line calls them"""
    if query is None:
        tracing.run(env, file, OutputOptions(fmt, precision))
    else:
        tracing.step(env, file, query, OutputOptions(fmt, precision))
    return ExitStatus.SUCCESS
