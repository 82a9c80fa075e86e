"""The eight steps as a sheet kind: a sheet of Q … output marked cell by cell, and its first mistake named."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from attntrace.core.trace import Trace
from attntrace.homework.diagnosis import diagnose
from attntrace.homework.filled import parse
from attntrace.homework.marking import Work, asking, given_of, masked_cells
from attntrace.homework.results import Kind, Report, Rule, Traces, precision_of
from attntrace.homework.said import Said, ngettext
from attntrace.homework.sheet import Key, Sheet, SheetError
from attntrace.language import N_, _


def mark(traces: Traces, sheet: Sheet, rule: Rule) -> Report:
    """an eight-step sheet marked cell by cell, with follow-through from the student's own numbers"""
    n = traces.problem.dims.n
    if sheet.query is not None and not 1 <= sheet.query <= n:
        raise SheetError(_("{sheet}: query {query} is out of range; this problem has inputs 1 to {n}").format(
            sheet=sheet.origin, query=sheet.query, n=n))
    t = traces.traced(sheet.query)
    notes = list(sheet.notes)
    if sheet.problem is not None and traces.problem.name is not None and sheet.problem != traces.problem.name:
        notes.append(Said(N_('the sheet answers the problem "{answered}", and is marked against "{problem}"'),
                          answered=sheet.problem, problem=traces.problem.name))
    given = given_of(sheet, t, notes, traces.origin)
    precision, source = precision_of(sheet, rule)
    if "final" in rule.points and (None, "output") not in given:
        notes.append(Said(N_("points for the final output do not apply: with one head and no W_O it is the head's "
                             "output, which the points for output count")))
    work = Work(traces, t, asking(t, given, notes), precision, rule)
    own = None if rule.tolerance or rule.precision is None else precision_of(sheet, replace(rule, precision=None))[0]
    work.written = own
    with np.errstate(all="ignore"):  # a student's huge numbers overflow a redo: that is theirs to see, not a warning
        items = [item for item in work.mark_all() if not masked_cells(t, (item.head, item.key)).all()]
    report = Report(sheet.origin, traces.problem.name or traces.origin, precision, source, sheet.query, items,
                    follow_through=rule.follow_through, student=sheet.student, notes=notes)
    with np.errstate(all="ignore"):
        report.diagnosis, report.mistakes = diagnose(work, items)
    if own is not None and own < precision and report.mistakes in ((), ("rounded to fewer decimals",)):
        _fewer(traces, sheet, rule, own, report)
    report.notes.extend(_scaled_as_scores(sheet, t, given))
    return report


def _fewer(traces: Traces, sheet: Sheet, rule: Rule, own: int, report: Report) -> None:
    """a sheet written to fewer decimals than --precision asks for: every step is off by its rounding, which hides the
    mistake its numbers make at the decimals written; that mistake is named, then the rounding"""
    again = mark(traces, sheet, replace(rule, precision=own))
    if again.diagnosis is None:
        return
    rounding = Said(N_("the numbers were also rounded to {places}, not the {precision} --precision asks for"),
                    places=ngettext("{n} decimal", "{n} decimals", own), precision=report.precision)
    report.diagnosis = Said(N_("{mistake}; {rounding}"), mistake=again.diagnosis, rounding=rounding)
    report.mistakes = tuple(dict.fromkeys((*again.mistakes, "rounded to fewer decimals")))


def _scaled_as_scores(sheet: Sheet, t: Trace, given: dict[Key, np.ndarray]) -> list[Said]:
    """scaled scores written, where the problem neither scales nor masks (so they are the scores), that differ from
    the scores written: said, not marked"""
    out = []
    for (head, key), values in sheet.cells.items():
        scores = sheet.cells.get((head, "scores"))
        if key == "scaled" and (head, key) not in given and scores is not None and not np.array_equal(
                values, scores, equal_nan=True):
            out.append(
                Said(N_("this problem divides the scores by {divisor} and masks none, so the scaled scores are the "
                        "scores; those written differ and are not marked"), divisor=f"{t.divisor:g}")
                if head is None or len(t.heads) == 1 else
                Said(N_("this problem divides the scores by {divisor} and masks none, so the scaled scores are the "
                        "scores; those written for head {head} differ and are not marked"),
                     divisor=f"{t.divisor:g}", head=head))
    return out


KIND = Kind("steps", parse, lambda sheet: True, mark)  # the eight steps: any sheet of no other kind
