"""Marking a whole class: which paths are sheets and which the problem, and each sheet against its own problem."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from attntrace import language
from attntrace.core import intermediates
from attntrace.core.problem import Problem
from attntrace.errors import AttntraceError, ExitStatus
from attntrace.files import jsonfile, paths
from attntrace.files.problemfile import origin
from attntrace.files.text import decode, read_bytes
from attntrace.homework.assign import KEYS
from attntrace.homework.kinds import Marker, load
from attntrace.homework.results import Report, Rule
from attntrace.homework.sheet import TEXT_SUFFIXES, SheetError
from attntrace.language import _, speaking

SHEET_SUFFIXES = (".json", *TEXT_SUFFIXES)
NOT_SHEETS = ("problem.json", "key.json", "key.md", "worksheet.md", "worksheet.txt")  # what `assign` hands out
ANSWER_CSVS = tuple(f"{key}.csv" for key in intermediates.KEYS)


def is_problem(path: str) -> bool:
    """a problem file: a JSON object with x, an .npz, or a directory with x.csv or x.npy"""
    p = Path(path)
    found = "missing" if path == "-" else paths.kind(p)
    if found == "directory":
        return _has(p, "x.csv", "x.npy")
    if found != "file" or p.suffix.lower() not in (".npz", ".json"):
        return False
    if p.suffix.lower() == ".npz":
        return True
    try:  # NaN and Infinity kept: a problem holding one is still a problem, refused as such when it is read
        raw = read_bytes(p)
        if b'"x"' not in raw:  # no key x anywhere: a sheet, however big, is not parsed twice
            return False
        data = jsonfile.parse(decode(raw, path), path, literals=True)
    except AttntraceError:
        return False
    return isinstance(data, dict) and "x" in data


def _has(folder: Path, *names: str) -> bool:
    """whether the folder holds a file of any of these names (a folder so named, a student's, does not count)"""
    return any(paths.is_file(folder / name) for name in names)


def _is_csv_sheet(p: Path) -> bool:
    return _has(p, *ANSWER_CSVS)


def expand(path: str) -> list[str]:
    """a sheet, or every sheet in a class directory (and in its students' folders, one level down; not in the keys
    folder `assign` writes)"""
    p = Path(path)
    if path == "-" or not paths.is_dir(p) or _is_csv_sheet(p):
        return [path]
    found = []
    for child in _listed(p):
        if paths.is_dir(child):
            if _is_csv_sheet(child):
                found.append(str(child))
            elif child.name != KEYS and not is_problem(str(child)):
                found.extend(_student_folder(child))
        elif _sheet_file(child):
            found.append(str(child))
    if not found:
        raise AttntraceError(_("{path}: no answer sheets in this directory (.json, .md or .txt files)").format(path=path),
                             exit_code=ExitStatus.USAGE)
    return found


def _listed(folder: Path) -> list[Path]:
    """what the folder holds but hidden files, in order; a folder that cannot be listed is one clear error"""
    try:
        return [child for child in sorted(folder.iterdir()) if not child.name.startswith(".")]
    except OSError as e:
        raise AttntraceError(_("{path}: cannot be read ({reason}); check its permissions").format(
            path=folder, reason=e.strerror or e), exit_code=ExitStatus.USAGE) from None


def _student_folder(folder: Path) -> list[str]:
    """a student's sheets; with none, the worksheet they were handed (filled in place, or blank: not answered)"""
    sheets = [str(f) for f in _listed(folder) if _sheet_file(f)]
    if sheets:
        return sheets
    handed = [folder / name for name in ("worksheet.md", "worksheet.txt")]
    return [str(f) for f in handed if paths.is_file(f)][:1]


def _sheet_file(p: Path) -> bool:
    """a file named as a sheet; a link to nothing too, to be listed as a sheet that cannot be read"""
    return (p.suffix.lower() in SHEET_SUFFIXES and p.name not in NOT_SHEETS and not p.name.startswith(".")
            and paths.kind(p) in ("file", "missing"))


def split(paths: list[str], problem: str | None) -> tuple[str | None, list[str]]:
    """(the problem, the sheets): a positional path that holds a problem is the problem"""
    given = [path for path in paths if is_problem(path)]
    if problem is not None and given:
        raise AttntraceError(_("{path} is a problem, and so is {problem}; give one").format(path=given[0], problem=problem),
                             exit_code=ExitStatus.USAGE)
    if len(given) > 1:
        raise AttntraceError(_("{first} and {second} are both problems; give one, or put each problem.json beside its "
                               "sheets").format(first=given[0], second=given[1]), exit_code=ExitStatus.USAGE)
    listed = [path for path in paths if path not in given]
    if not listed:
        raise AttntraceError(_("no answer sheet given; attntrace check ANSWERS [PROBLEM]"), exit_code=ExitStatus.USAGE)
    found = list(dict.fromkeys(s for path in listed for s in expand(path)))  # a sheet named twice is marked once
    return (problem or (given[0] if given else None)), found


def beside(sheet: str) -> str | None:
    """the problem.json in a sheet's folder (or a CSV sheet's own directory), else in the folder above it; for a key in
    the keys folder `assign` writes (keys/<id>/key.json), the one in the student's folder (<id>/problem.json)"""
    if sheet == "-":
        return None
    p = Path(sheet)
    folder = p if paths.is_dir(p) else None
    candidates = [folder / "problem.json" if folder else None, p.parent / "problem.json", p.parent.parent / "problem.json"]
    if p.parent.parent.name == KEYS:
        candidates.append(p.parent.parent.parent / p.parent.name / "problem.json")
    return next((str(c) for c in candidates if c is not None and paths.kind(c) != "missing"), None)


@dataclass
class Marked:
    reports: list[Report] = field(default_factory=list)
    # (sheet, the one-line error in the chosen language, and in English for the JSON report: data, the same in any)
    unreadable: list[tuple[str, str, str]] = field(default_factory=list)


def mark(sheet_paths: list[str], problem: str | None, load_problem: Callable[[str | None], Problem], rule: Rule,
         keep_going: bool) -> Marked:
    """every sheet against the problem (or the problem.json beside it); keep_going: an unreadable sheet is listed"""
    markers: dict[str | None, Marker] = {}
    out = Marked()
    for path in sheet_paths:
        source = problem if problem is not None else beside(path)
        if source not in markers:
            markers[source] = Marker(load_problem(source), origin(source))
        marker = markers[source]
        try:
            out.reports.append(marker.mark(load(path, marker.problem), rule))
        except SheetError as e:
            if not keep_going:
                raise
            out.unreadable.append((path, str(e), _in_english(path, marker.problem, str(e))))
    return out


def _in_english(path: str, problem: Problem, error: str) -> str:
    """the error a sheet's reading gives, said in English (read again only when another language is chosen)"""
    if language.current() == "en":
        return error
    with speaking("en"):
        try:
            load(path, problem)
        except SheetError as e:
            return str(e)
    return error
