"""The kinds of worksheet, in the order a filled one is tried: a sheet handed in is read and marked by its kind."""

from __future__ import annotations

from pathlib import Path

from attntrace.core.problem import Problem
from attntrace.errors import AttntraceError
from attntrace.files import jsonfile
from attntrace.files.text import read_text
from attntrace.homework import decodesheet, flashsheet, stepsheet
from attntrace.homework.instructions import heading
from attntrace.homework.results import Kind, Report, Rule, Traces
from attntrace.homework.sheet import SCAN_FROM, TEXT_SUFFIXES, Sheet, SheetError, from_dict, from_dir, misfit
from attntrace.language import _

KINDS: tuple[Kind, ...] = (flashsheet.KIND, decodesheet.KIND, stepsheet.KIND)  # the eight steps last: any sheet is theirs


def kind_of(sheet: Sheet) -> Kind:
    """the kind of worksheet a sheet answers"""
    return next(kind for kind in KINDS if kind.holds(sheet))


class Marker(Traces):
    """marks sheets against one problem, each by its kind"""

    def mark(self, sheet: Sheet, rule: Rule) -> Report:
        return kind_of(sheet).mark(self, sheet, rule)


def load(path: str, problem: Problem | None = None) -> Sheet:
    """an answer sheet from JSON (or - for stdin), a directory of q.csv ... output.csv, or a filled-in worksheet

    problem: needed only to read a worksheet (.md or .txt), whose tables are found by their titles
    """
    p = Path(path)
    if path != "-" and not p.exists():
        raise SheetError(_("{path}: no such file or directory").format(path=path))
    try:
        if p.is_dir():
            return from_dir(p, path, problem)
        text = read_text(path)
        if p.suffix.lower() in TEXT_SUFFIXES and not text.lstrip("\ufeff \t\r\n").startswith("{") or _worksheet(text):
            return _filled(text, "stdin" if path == "-" else path, problem)
        if problem is not None and len(text) >= SCAN_FROM:
            misfit(text, path, problem.dims)
        return from_dict(jsonfile.parse(text, "stdin" if path == "-" else path, literals=True), path)
    except SheetError:
        raise
    except AttntraceError as e:
        raise SheetError(str(e)) from None


def _filled(text: str, origin: str, problem: Problem | None) -> Sheet:
    """a filled worksheet read by the first kind it is: the eight steps' reader, the last, reads any other text and
    says what is wrong with it"""
    return next(sheet for sheet in (kind.read(text, origin, problem) for kind in KINDS) if sheet is not None)


def _worksheet(text: str) -> bool:
    """whether a text of any name (or stdin) is a worksheet, by its first line: "Worksheet: ...", "练习单：..." or its
    heading in another language attntrace prints worksheets in, not JSON"""
    first = text.lstrip("\ufeff \t\r\n").split("\n", 1)[0]
    return not first.startswith(("{", "[")) and heading(first)
