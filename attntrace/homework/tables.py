"""The tables of a filled online-softmax or decoding worksheet read back, as strictly as an eight-step sheet: each found
by its title, its cells read as the eight steps read them (full-width digits and points, any minus sign), a cell that is
no number said in a note and marked as not answered, and a row too many refusing the sheet."""

from __future__ import annotations

from functools import cached_property

import numpy as np

from attntrace.homework import filled
from attntrace.homework.said import Said
from attntrace.homework.sheet import SheetError
from attntrace.language import N_, _


class Reading:
    """one filled worksheet being read: its lines, the notes on cells that are no number, the decimals written"""

    def __init__(self, text: str, origin: str) -> None:
        self.lines = text.lstrip("\ufeff").splitlines()
        self.origin = origin
        self.notes: list[Said] = []
        self.decimals: list[int] = []

    @cached_property
    def starts(self) -> list[str]:
        """each line's first character past markdown's marks: only a line that starts as a title does is read as one"""
        return [line.lstrip("*# ")[:1] for line in self.lines]

    def at(self, title: str) -> int | None:
        """the line a table's title is on, or None"""
        wanted = filled.spaceless(title)
        first = title.lstrip("*# ")[:1]
        return next((i for i, (start, line) in enumerate(zip(self.starts, self.lines))
                     if start == first and filled.spaceless(line.strip("*# ")).startswith(wanted)), None)

    def table(self, title: str, rows: int, cols: int) -> np.ndarray | None:
        """the numbers of the table under title (markdown or plain), NaN where blank; None if there is no such table"""
        at = self.at(title)
        if at is None:
            return None
        body: list[str] = []
        for i in range(at + 1, len(self.lines)):  # a header (and markdown's rule), the rows, and one more at most
            line = self.lines[i]
            if not line.strip():
                if body:
                    break
                continue
            body.append(line)
            if len(body) > rows + 2:
                break
        if body and body[0].lstrip().startswith("|"):
            data = [[c.strip() for c in line.strip().strip("|").split("|")][1:] for line in body[2:]
                    if line.strip().startswith("|")]
        else:
            data = [line.split()[-cols:] for line in body[1:]]
        if len(data) > rows:
            raise SheetError(_("{table}: a row too many ({row}); the table has {rows} rows: {labels}").format(
                table=f'{self.origin}: "{title}"', row=" ".join(" ".join(data[rows]).split())[:40], rows=rows,
                labels=", ".join(self._labels(body, rows))))
        out = np.full((rows, cols), np.nan)
        for i, row in enumerate(data):
            for j, text in enumerate(row[:cols]):
                value = filled.cell_value(text)
                if value is None:
                    self.notes.append(Said(N_("{what}; it is marked as not answered"), what=Said(
                        N_('{where}: "{text}" is not a number'), text=text[:30],
                        where=Said(N_('"{title}", row {row}, column {column}'), title=title, row=i + 1,
                                   column=j + 1))))
                    continue
                out[i, j] = value
                if np.isfinite(value):
                    self.decimals.append(filled.written_decimals(text))
        return out

    def _labels(self, body: list[str], rows: int) -> list[str]:
        first = 2 if body and body[0].lstrip().startswith("|") else 1
        return [line.strip().strip("|").split("|")[0].strip() if "|" in line else line.split("  ")[0].strip()
                for line in body[first:first + rows]]

    def precision(self) -> int | None:
        """the decimals the instructions ask for, else the most cells were written with (ties: the larger)"""
        told = filled.told_precision(self.lines)
        if told is not None:
            return told
        written = [d for d in self.decimals if d > 0]
        if not written:
            return None
        counts = np.bincount(written)
        return int(len(counts) - 1 - np.argmax(counts[::-1]))

    def student(self) -> str | None:
        return filled.student(self.lines)


def block_size(found: str, origin: str) -> int:
    """the keys per block a sheet says it takes"""
    block = int(found)
    if block < 1:
        raise SheetError(_("{sheet}: block must be the keys per block, 1 or more; got {value}").format(
            sheet=origin, value=block))
    return block


def another_problem(reading: Reading, titles: list[str], problem_name: str) -> None:
    """a sheet holding a page the problem has not (query 4 of a 3-token problem) answers another problem"""
    for title in titles:
        if reading.at(title) is not None:
            raise SheetError(_('{sheet}: this sheet has a page "{title}" that {problem} has not: it answers another '
                               "problem; check it against the problem it answers").format(
                sheet=reading.origin, title=title, problem=problem_name))
