"""A marked sheet as text, as JSON, in Gradescope's results format; a class as a summary and a gradebook."""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from attntrace.homework.marking import CONSEQUENCE, NOT_ANSWERED, RIGHT, WRONG, Item, Report
from attntrace.model.maths import round_half_up
from attntrace.render.escape import spreadsheet, visible
from attntrace.words import plural

if TYPE_CHECKING:
    from attntrace.render.document import Document

MAX_CELLS = 6  # wrong cells listed per intermediate
NO_DIAGNOSIS = "none of the usual mistakes explains these numbers; compare the cells listed"
SOURCES = {"sheet": "as the sheet says", "teacher": "as --precision says", "digits": "inferred from the digits written",
           "tolerance": "within the tolerance given"}


def number(value: float, places: int) -> str:
    """a cell as a teacher writes it: at its precision, never -0.00, and huge numbers in powers of ten"""
    if value != value:
        return "blank"
    if value == float("-inf"):
        return "masked (left blank)"
    if value == float("inf"):  # only ever a value computed from a student's own huge numbers
        return "a number past a float64's 1.8e308"
    if abs(value) >= 1e12:
        return f"{value:.3e}"
    places = min(places, 9)
    text = f"{float(round_half_up(np.float64(value), places)):.{places}f}"  # halves away from zero, as by hand
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def cell_lines(item: Item) -> list[str]:
    lines = []
    for cell in item.off[:MAX_CELLS]:
        finite = math.isfinite(cell.given) and math.isfinite(cell.expected)
        said = [f"off by {number(abs(cell.given - cell.expected), cell.decimals)}"] if finite else []
        said += [] if cell.carried is None else [f"{number(cell.carried, cell.decimals)} with the rounding carried"]
        expected = f"{cell.basis} give" if cell.basis else "expected"
        given = "masked" if cell.given == float("-inf") else number(cell.given, cell.quoted)
        lines.append(f"{visible(cell.name)}: {given} written, {expected} "
                     f"{number(cell.expected, cell.decimals)}" + (f" ({'; '.join(said)})" if said else ""))
    if len(item.off) > MAX_CELLS:
        lines.append(f"… and {len(item.off) - MAX_CELLS} more cell{'s' * (len(item.off) - MAX_CELLS > 1)}")
    return lines


def status(item: Item) -> str:
    note = f" ({item.note})" if item.note else ""
    if item.verdict == WRONG:
        return f"WRONG: {len(item.off)} of {plural(item.written, 'written cell')} off" + (f"; {item.note}" if item.note else "")
    if item.verdict == CONSEQUENCE:
        return f"consequence: {item.note}"
    return item.verdict + note


def _points(value: float) -> str:
    return f"{value:g}"


def text(report: Report) -> str:
    who = f" ({visible(report.student)})" if report.student else ""
    lines = [f"{visible(report.sheet)}{who} · {visible(report.problem)}"]
    if report.precision_from == "tolerance":
        lines.append("marked within the tolerance given")
    else:
        lines.append(f"marked at {report.precision} decimal{'s' * (report.precision != 1)}, {SOURCES[report.precision_from]}"
                     + (f"; input {report.query} only" if report.query is not None else ""))
    width = max(len(item.name) for item in report.items)
    for item in report.items:
        lines.append(f"step {item.step}  {item.name.ljust(width)}  {status(item)}")
        if item.verdict == WRONG:
            lines.extend("          " + line for line in cell_lines(item))
    lines.extend(f"note: {visible(note)}" for note in report.notes)
    if report.diagnosis:
        lines.append(f"diagnosis: {visible(report.diagnosis)}")
    elif any(item.verdict == WRONG for item in report.items):
        lines.append(f"diagnosis: {NO_DIAGNOSIS}")
    verdict = "PASS" if report.passed else "not passed"
    lines.append(f"score: {_points(report.score)} of {_points(report.max_score)} · {verdict}")
    return "\n".join(lines) + "\n"


def to_dict(report: Report) -> dict[str, Any]:
    """the documented JSON form of a marked sheet"""
    return {
        "sheet": report.sheet,
        "student": report.student,
        "problem": report.problem,
        "query": report.query,
        "precision": None if report.precision_from == "tolerance" else report.precision,
        "precision_from": report.precision_from,
        "passed": report.passed,
        "score": report.score,
        "max_score": report.max_score,
        "diagnosis": report.diagnosis,
        "mistakes": list(report.mistakes),
        "notes": report.notes,
        "items": [{
            "key": item.key, "head": item.head, "name": item.name, "step": item.step, "verdict": item.verdict,
            "note": item.note, "cells_written": item.given, "cells_asked": item.asked,
            "points": item.points if item.verdict == RIGHT or item.verdict == CONSEQUENCE and report.follow_through else 0.0,
            "max_points": item.max_points,
            "cells": [{"row": c.row + 1, "column": c.column + 1, "name": c.name,
                       "given": c.given if math.isfinite(c.given) else None,
                       "written_masked": c.given == float("-inf"),
                       "expected": None if c.expected == float("-inf") else c.expected,
                       "expected_from": "own" if c.basis else "problem", "expected_carried": c.carried}
                      for c in item.off],
        } for item in report.items],
    }


def gradescope(report: Report) -> dict[str, Any]:
    """Gradescope's results.json: one test per intermediate asked for"""
    tests = []
    for item in report.items:
        earned = item.verdict == RIGHT or item.verdict == CONSEQUENCE and report.follow_through
        lines = [status(item), *(cell_lines(item) if item.verdict == WRONG else [])]
        tests.append({"name": visible(f"step {item.step} · {item.name}"), "score": item.points if earned else 0.0,
                      "max_score": item.max_points, "status": "passed" if earned and item.complete else "failed",
                      "output": "\n".join(map(visible, lines))})  # each line shown, never obeyed; lines kept
    summary = visible(report.diagnosis or ("every intermediate right" if report.passed else ""))
    return {"score": report.score, "output": summary, "tests": tests}


def document(reports: list[Report], unreadable: list[tuple[str, str]], one: bool) -> Document:
    """what check shows: one sheet's report, or every sheet's and the class summary; as text or JSON"""
    from attntrace.render.document import Document

    if one:
        return Document(data=to_dict(reports[0]), plain=text(reports[0]))
    return Document(data={"sheets": [to_dict(r) for r in reports],
                          "unreadable": [{"sheet": s, "error": e} for s, e in unreadable]},
                    plain="\n".join(text(r) for r in reports) + "\n" + summary(reports, unreadable))


def _column(item: Item) -> str:
    return "final output" if item.head is None else f"head {item.head} {item.key}"


def gradebook(reports: list[Report], unreadable: list[tuple[str, str]]) -> str:
    """one row per sheet: score, max score, each intermediate's verdict and the diagnosis"""
    columns: list[str] = []
    for report in reports:
        for item in report.items:
            if _column(item) not in columns:
                columns.append(_column(item))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["sheet", "student", "score", "max_score", *columns, "diagnosis"])
    for report in reports:
        verdicts = {_column(item): _gradebook_verdict(item) for item in report.items}
        writer.writerow([spreadsheet(report.sheet), spreadsheet(report.student or ""), _points(report.score),
                         _points(report.max_score), *(verdicts.get(c, "") for c in columns), spreadsheet(_diagnosis(report))])
    for sheet, error in unreadable:
        writer.writerow([spreadsheet(sheet), "", "0", "", *("" for _ in columns), spreadsheet(f"cannot be read: {error}")])
    return buffer.getvalue()


def _gradebook_verdict(item: Item) -> str:
    """an intermediate's verdict, with how many of its cells were written when not all were ("right, 5 of 6 cells")"""
    if item.verdict == NOT_ANSWERED or item.complete:
        return item.verdict
    return f"{item.verdict}, {item.given} of {plural(item.asked, 'cell')}"


def _diagnosis(report: Report) -> str:
    if report.diagnosis:
        return report.diagnosis
    return NO_DIAGNOSIS if any(item.verdict == WRONG for item in report.items) else ""


def summary(reports: list[Report], unreadable: list[tuple[str, str]]) -> str:
    """how the class did per step, and the most common mistakes"""
    lines = [f"class: {len(reports)} sheet{'s' * (len(reports) != 1)} marked"
             + (f", {len(unreadable)} could not be read" if unreadable else "")
             + f"; {sum(r.passed for r in reports)} passed"]
    if reports:
        mean = sum(r.score for r in reports) / len(reports)
        lines.append(f"mean score: {mean:.2f} of {_points(reports[0].max_score)}"
                     if len({r.max_score for r in reports}) == 1 else f"mean score: {mean:.2f}")
    per_step: dict[str, Counter[str]] = {}
    for report in reports:
        for item in report.items:
            per_step.setdefault(_column(item), Counter())[item.verdict] += 1
    width = max((len(c) for c in per_step), default=0)
    for column, counts in per_step.items():
        parts = [f"{counts[v]} {v}" for v in (RIGHT, CONSEQUENCE, WRONG, NOT_ANSWERED) if counts[v]]
        lines.append(f"  {column.ljust(width)}  " + ", ".join(parts))
    mistakes = Counter(tag for report in reports for tag in report.mistakes)
    for tag, count in mistakes.most_common():
        lines.append(f"{count} of {plural(len(reports), 'sheet')} marked: {tag}")
    return "\n".join(lines) + "\n"
