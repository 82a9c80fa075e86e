"""A marked sheet as text, as JSON, in Gradescope's results format; a class as a summary and a gradebook."""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from typing import Any

from rich.cells import cell_len

from attntrace import language
from attntrace.escape import spreadsheet, visible
from attntrace.homework.results import CONSEQUENCE, NOT_ANSWERED, RIGHT, VERDICTS, WRONG, Item, Report
from attntrace.homework.said import Said, joined, ngettext, number, said
from attntrace.language import N_, _
from attntrace.render.document import Document
from attntrace.views.describe import shown_name

MAX_CELLS = 6  # wrong cells listed per intermediate
NO_DIAGNOSIS = N_("none of the usual mistakes explains these numbers; compare the cells listed")
SOURCES = {"sheet": N_("as the sheet says"), "teacher": N_("as --precision says"),
           "digits": N_("inferred from the digits written"), "tolerance": N_("within the tolerance given")}


def cell_lines(item: Item) -> list[Said]:
    """each wrong cell: what was written, what was expected, by how much it is off (English as a str; said() for a
    person); each line is shown with visible(), for the labels in it"""
    lines = []
    for cell in item.off[:MAX_CELLS]:
        finite = math.isfinite(cell.given) and math.isfinite(cell.expected) and item.key != "decode_cache"  # a
        # position is right or not: by how much it is off says nothing
        details = [Said(N_("off by {difference}"), difference=number(abs(cell.given - cell.expected), cell.precision))
                   ] if finite else []
        details += [] if cell.carried is None else [Said(N_("{value} with the rounding carried"),
                                                         value=number(cell.carried, cell.precision))]
        given = Said(N_("masked")) if cell.given == float("-inf") else number(cell.given, cell.quoted)
        fields = {"cell": cell.name, "given": given,
                  "expected": number(cell.expected, cell.precision)}
        line = (Said(N_("{cell}: {given} written, {basis} give {expected}"), basis=cell.basis, **fields) if cell.basis
                else Said(N_("{cell}: left blank, expected {expected}"), **fields) if math.isnan(cell.given)
                else Said(N_("{cell}: {given} written, expected {expected}"), **fields))
        lines.append(Said(N_("{line} ({details})"), line=line, details=joined(details, N_("{first}; {second}")))
                     if details else line)
    if len(item.off) > MAX_CELLS:
        lines.append(ngettext("… and {n} more cell", "… and {n} more cells", len(item.off) - MAX_CELLS))
    return lines


def status(item: Item) -> Said:
    """an intermediate's verdict and its note (English as a str; said() for a person)"""
    if item.verdict == WRONG:
        off = Said(N_("WRONG: {off} of {written} off"), off=len(item.off),
                   written=ngettext("{n} written cell", "{n} written cells", item.written))
        return Said(N_("{first}; {second}"), first=off, second=item.note) if item.note else off
    if item.verdict == CONSEQUENCE:
        return Said(N_("consequence: {note}"), note=item.note)
    verdict = Said(VERDICTS[item.verdict])
    return Said(N_("{verdict} ({note})"), verdict=verdict, note=item.note) if item.note else verdict


def _points(value: float) -> str:
    return f"{value:g}"


def _padded(text: str, width: int) -> str:
    """text padded to width terminal columns (a Chinese character takes two)"""
    return text + " " * (width - cell_len(text))


def text(report: Report) -> str:
    """one marked sheet for a person, in the chosen language"""
    who = {"sheet": visible(report.sheet), "problem": visible(shown_name(report.problem) or "")}
    lines = [_("{sheet} ({student}) · {problem}").format(student=visible(report.student), **who) if report.student
             else _("{sheet} · {problem}").format(**who)]
    if report.precision_from == "tolerance":
        lines.append(_("marked within the tolerance given"))
    else:
        marked = {"places": said(ngettext("{n} decimal", "{n} decimals", report.precision)),
                  "source": _(SOURCES[report.precision_from])}
        lines.append(_("marked at {places}, {source}").format(**marked) if report.query is None else
                     _("marked at {places}, {source}; input {query} only").format(query=report.query, **marked))
    names = [visible(said(item.name)) for item in report.items]
    width = max(cell_len(name) for name in names)
    for item, name in zip(report.items, names):
        lines.append(_("step {step}  {name}  {status}").format(step=item.step, name=_padded(name, width),
                                                               status=visible(said(status(item)))))
        if item.verdict == WRONG:
            lines.extend("          " + visible(said(line)) for line in cell_lines(item))
    lines.extend(_("note: {note}").format(note=visible(said(note))) for note in report.notes)
    if report.diagnosis:
        lines.append(_("diagnosis: {diagnosis}").format(diagnosis=visible(said(report.diagnosis))))
    elif any(item.verdict == WRONG for item in report.items):
        lines.append(_("diagnosis: {diagnosis}").format(diagnosis=_(NO_DIAGNOSIS)))
    verdict = _("PASS") if report.passed else _("not passed")
    lines.append(_("score: {score} of {most} · {verdict}").format(score=_points(report.score),
                                                                  most=_points(report.max_score), verdict=verdict))
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
                       "expected": c.expected if math.isfinite(c.expected) else None,
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


def document(reports: list[Report], unreadable: list[tuple[str, str, str]], one: bool) -> Document:
    """what check shows: one sheet's report, or every sheet's and the class summary; as text or JSON"""
    if one:
        return Document(data=to_dict(reports[0]), plain=text(reports[0]))
    return Document(data={"sheets": [to_dict(r) for r in reports],
                          "unreadable": [{"sheet": s, "error": english} for s, _said, english in unreadable]},
                    plain="\n".join(text(r) for r in reports) + "\n" + summary(reports, unreadable))


def _column(item: Item) -> str:
    """an intermediate's column, the same in every language: what the class summary and the gradebook group by"""
    return "final output" if item.head is None else f"head {item.head} {item.key}"


BOM = "\ufeff"  # so that a spreadsheet (Excel on a Chinese Windows) reads the gradebook as UTF-8
HEADERS = (N_("sheet"), N_("student"), N_("score"), N_("max_score"), N_("diagnosis"))  # the gradebook's own columns


def gradebook(reports: list[Report], unreadable: list[tuple[str, str, str]]) -> str:
    """one row per sheet: score, max score, each intermediate's verdict and the diagnosis; for a person, in the chosen
    language (check --format json is the form a machine reads)"""
    columns: dict[str, str] = {}
    for report in reports:
        for item in report.items:
            columns.setdefault(_column(item), _step_title(item))
    sheet, student, score, most, diagnosis = map(_, HEADERS)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([sheet, student, score, most, *map(spreadsheet, columns.values()), diagnosis])
    for report in reports:
        verdicts = {_column(item): _gradebook_verdict(item) for item in report.items}
        writer.writerow([spreadsheet(report.sheet), spreadsheet(report.student or ""), _points(report.score),
                         _points(report.max_score), *(verdicts.get(c, "") for c in columns), spreadsheet(_diagnosis(report))])
    for sheet_path, error, _english in unreadable:
        writer.writerow([spreadsheet(sheet_path), "", "0", "", *("" for _unused in columns),
                         spreadsheet(_("cannot be read: {error}").format(error=error))])
    return BOM + buffer.getvalue()


def _gradebook_verdict(item: Item) -> str:
    """an intermediate's verdict, with how many of its cells were written when not all were ("right, 5 of 6 cells")"""
    verdict = _(VERDICTS[item.verdict])
    if item.verdict == NOT_ANSWERED or item.complete:
        return verdict
    return said(Said(N_("{verdict}, {given} of {cells}"), verdict=verdict, given=item.given,
                     cells=ngettext("{n} cell", "{n} cells", item.asked)))


def _diagnosis(report: Report) -> str:
    """the gradebook's diagnosis, in the chosen language"""
    if report.diagnosis:
        return str(said(report.diagnosis))
    return _(NO_DIAGNOSIS) if any(item.verdict == WRONG for item in report.items) else ""


COUNTS = {RIGHT: N_("{n} right"), CONSEQUENCE: N_("{n} consequence"), WRONG: N_("{n} wrong"),
          NOT_ANSWERED: N_("{n} not answered")}  # a class summary's count of each verdict


def _step_title(item: Item) -> str:
    """an intermediate as the class summary and the gradebook name it: in English by its head and key ("head 1
    scaled"), in any other language as the report names it, in words (缩放后的得分)"""
    if language.current() != "en":
        return visible(said(item.name))
    return "final output" if item.head is None else f"head {item.head} {item.key}"


def summary(reports: list[Report], unreadable: list[tuple[str, str, str]]) -> str:
    """how the class did per step, and the most common mistakes"""
    counts = {"n": len(reports), "passed": sum(r.passed for r in reports), "unreadable": len(unreadable)}
    lines = [said(ngettext("class: {n} sheet marked, {unreadable} could not be read; {passed} passed",
                           "class: {n} sheets marked, {unreadable} could not be read; {passed} passed", len(reports),
                           **counts) if unreadable else
                  ngettext("class: {n} sheet marked; {passed} passed", "class: {n} sheets marked; {passed} passed",
                           len(reports), **counts))]
    if reports:
        mean = f"{sum(r.score for r in reports) / len(reports):.2f}"
        lines.append(_("mean score: {mean} of {most}").format(mean=mean, most=_points(reports[0].max_score))
                     if len({r.max_score for r in reports}) == 1 else _("mean score: {mean}").format(mean=mean))
    per_step: dict[str, Counter[str]] = {}
    titles: dict[str, str] = {}
    for report in reports:
        for item in report.items:
            per_step.setdefault(_column(item), Counter())[item.verdict] += 1
            titles.setdefault(_column(item), _step_title(item))
    width = max((cell_len(title) for title in titles.values()), default=0)
    for column, verdicts in per_step.items():
        parts = [Said(COUNTS[v], n=verdicts[v]) for v in (RIGHT, CONSEQUENCE, WRONG, NOT_ANSWERED) if verdicts[v]]
        lines.append(f"  {_padded(titles[column], width)}  " + said(joined(parts, N_("{first}, {second}"))))
    mistakes = Counter(tag for report in reports for tag in report.mistakes)
    for tag, count in mistakes.most_common():
        lines.append(_("{count} of {sheets} marked: {mistake}").format(
            count=count, sheets=said(ngettext("{n} sheet", "{n} sheets", len(reports))), mistake=_(tag)))
    return "\n".join(lines) + "\n"
