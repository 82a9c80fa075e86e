"""A check report as text, as JSON, and in Gradescope's autograder results format."""

from __future__ import annotations

from typing import Any

from attntrace.check import Item, Report

MAX_CELLS = 6  # wrong cells listed per intermediate


def _cell_lines(item: Item, precision: int) -> list[str]:
    lines = []
    for i, j, given, expected in item.cells[:MAX_CELLS]:
        shown_given = "blank" if given != given else f"{given:.{precision}f}"
        shown_expected = "masked (blank)" if expected == float("-inf") else f"{expected:.{precision}f}"
        off = "" if given != given or expected == float("-inf") else f" (off by {abs(given - expected):.{precision}f})"
        lines.append(f"      row {i + 1}, column {j + 1}: {shown_given} given, expected {shown_expected}{off}")
    if len(item.cells) > MAX_CELLS:
        lines.append(f"      … and {len(item.cells) - MAX_CELLS} more cells")
    return lines


def _status(item: Item) -> str:
    if item.verdict == "right":
        return "right" + (f" ({item.note})" if item.note else "")
    if item.verdict == "consequence":
        return f"off, as a consequence: {item.note}"
    return f"WRONG: {len(item.cells)} of {item.given.size} cells off"


def text(report: Report, precision: int) -> str:
    lines = []
    width = max(len(item.name) for item in report.items)
    first_wrong = True
    for item in report.items:
        lines.append(f"step {item.step}  {item.name.ljust(width)}  {_status(item)}")
        if item.verdict == "wrong" and first_wrong:
            lines.extend(_cell_lines(item, precision))
            first_wrong = False
    if report.rounding is not None:
        lines.append(f"note: your numbers follow rounding carried at {report.rounding} decimals; that counts as right")
    if report.diagnosis:
        lines.append(f"diagnosis: {report.diagnosis}")
    elif not report.passed:
        lines.append("diagnosis: none of the usual mistakes explains these numbers; compare the cells above")
    right = sum(item.verdict == "right" for item in report.items)
    lines.append(f"result: {right} of {len(report.items)} intermediates right" + (" · PASS" if report.passed else ""))
    return "\n".join(lines) + "\n"


def to_dict(report: Report) -> dict[str, Any]:
    return {
        "passed": report.passed,
        "query": report.query,
        "rounding": report.rounding,
        "diagnosis": report.diagnosis,
        "items": [{"name": item.name, "step": item.step, "head": None if item.head is None else item.head + 1,
                   "key": item.key, "verdict": item.verdict, "note": item.note,
                   "cells": [{"row": i + 1, "column": j + 1, "given": g if g == g else None,
                              "expected": e if e != float("-inf") else None} for i, j, g, e in item.cells]}
                  for item in report.items],
    }


def gradescope(report: Report, precision: int) -> dict[str, Any]:
    """Gradescope's results.json: one test per checked intermediate, a point each"""
    tests = []
    for item in report.items:
        right = item.verdict == "right"
        output = _status(item)
        if item.verdict == "wrong":
            output += "\n" + "\n".join(line.strip() for line in _cell_lines(item, precision))
        tests.append({"name": f"step {item.step} · {item.name}", "score": 1.0 if right else 0.0, "max_score": 1.0,
                      "status": "passed" if right else "failed", "output": output})
    summary = report.diagnosis or ("all intermediates right" if report.passed else "")
    score = sum(1.0 for item in report.items if item.verdict == "right")
    return {"score": score, "output": summary, "tests": tests}
