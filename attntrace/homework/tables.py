"""A filled online-softmax or decoding worksheet read back, as strictly as an eight-step sheet: the kind found by its
rules' sentence in any language attntrace prints, each table by its title, its cells read as the eight steps read them
(full-width digits and points, any minus sign), a cell that is no number said in a note and marked as not answered, and
a row too many refusing the sheet."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import NamedTuple

import numpy as np

from attntrace import language
from attntrace.homework.cells import cell_value, written_decimals
from attntrace.homework.instructions import spaceless, student, told_precision
from attntrace.homework.said import Said
from attntrace.homework.sheet import Sheet, SheetError
from attntrace.language import N_, PRINTED, _, speaking


class Reading:
    """one filled worksheet being read: its lines, the notes on cells that are no number, the decimals written"""

    def __init__(self, text: str, origin: str) -> None:
        self.lines = text.lstrip("\ufeff").splitlines()
        self.origin = origin
        self.user = language.current()  # a sheet is read in its own language, and refused in the user's
        self.notes: list[Said] = []
        self.decimals: list[int] = []

    def refuse(self, message: Callable[[], str]) -> None:
        """the sheet refused in one line, in the user's language"""
        with speaking(self.user):
            raise SheetError(message())

    @cached_property
    def starts(self) -> list[str]:
        """each line's first character past markdown's marks: only a line that starts as a title does is read as one"""
        return [line.lstrip("*# ")[:1] for line in self.lines]

    def at(self, title: str) -> int | None:
        """the line a table's title is on, or None"""
        wanted = spaceless(title)
        first = title.lstrip("*# ")[:1]
        return next((i for i, (start, line) in enumerate(zip(self.starts, self.lines))
                     if start == first and spaceless(line.strip("*# ")).startswith(wanted)), None)

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
            self.refuse(lambda: _("{table}: a row too many ({row}); the table has {rows} rows: {labels}").format(
                table=f'{self.origin}: "{title}"', row=" ".join(" ".join(data[rows]).split())[:40], rows=rows,
                labels=", ".join(self._labels(body, rows))))
        if len(data) < rows:
            self.refuse(lambda: _("{row} is missing; the table has {found} of its {rows} rows").format(
                row=f'{self.origin}: "{title}", row {len(data) + 1}', found=len(data), rows=rows))
        for i, row in enumerate(data):
            if len(row) > cols and any(text.strip() for text in row[cols:]):
                with speaking(self.user):
                    raise SheetError(_('{where}: a cell too many ("{text}"); the table has {columns} columns').format(
                        where=f'{self.origin}: "{title}", row {i + 1}', text=row[cols].strip()[:30], columns=cols))
        out = np.full((rows, cols), np.nan)
        for i, row in enumerate(data):
            for j, text in enumerate(row[:cols]):
                value = cell_value(text)
                if value is None:
                    self.notes.append(Said(N_("{what}; it is marked as not answered"), what=Said(
                        N_('{where}: "{text}" is not a number'), text=text[:30],
                        where=Said(N_('"{title}", row {row}, column {column}'), title=title, row=i + 1,
                                   column=j + 1))))
                    continue
                out[i, j] = value
                if np.isfinite(value):
                    self.decimals.append(written_decimals(text))
        return out

    def _labels(self, body: list[str], rows: int) -> list[str]:
        first = 2 if body and body[0].lstrip().startswith("|") else 1
        return [line.strip().strip("|").split("|")[0].strip() if "|" in line else line.split("  ")[0].strip()
                for line in body[first:first + rows]]

    def precision(self) -> int | None:
        """the decimals the instructions ask for, else the most cells were written with (ties: the larger)"""
        told = told_precision(self.lines)
        if told is not None:
            return told
        written = [d for d in self.decimals if d > 0]
        if not written:
            return None
        counts = np.bincount(written)
        return int(len(counts) - 1 - np.argmax(counts[::-1]))

    def student(self) -> str | None:
        return student(self.lines)


def block_size(found: str, reading: Reading) -> int:
    """the keys per block a sheet says it takes"""
    block = int(found)
    if block < 1:
        reading.refuse(lambda: _("{sheet}: block must be the keys per block, 1 or more; got {value}").format(
            sheet=reading.origin, value=block))
    return block


def another_problem(reading: Reading, titles: list[str], problem_name: str | None) -> None:
    """a sheet holding a page the problem has not (query 4 of a 3-token problem) answers another problem"""
    for title in titles:
        if reading.at(title) is not None:
            with speaking(reading.user):
                raise SheetError(_('{sheet}: this sheet has a page "{title}" that {problem} has not: it answers '
                                   "another problem; check it against the problem it answers").format(
                    sheet=reading.origin, title=title, problem=problem_name or _("the problem")))


def same_numbers(reading: Reading, title: str, values: np.ndarray, precision: int, problem_name: str | None) -> None:
    """a table of the numbers the handout gives (scores, values) holds this problem's, or the sheet answers another"""
    table = reading.table(title, *values.shape)
    if table is None:
        return
    with np.errstate(invalid="ignore"):
        off = np.isfinite(table) & ~((table == values) | (np.abs(table - values) <= 0.5 * 10.0 ** -precision + 1e-9))
    if off.any():
        i, j = (int(x) for x in np.argwhere(off)[0])
        reading.refuse(lambda: _('{sheet}: "{title}" gives {written} in row {row}, column {column}, where {problem} gives '
                           "{value}: this sheet answers another problem; check it against the problem it answers").format(
            sheet=reading.origin, title=title, written=f"{table[i, j]:g}", row=i + 1, column=j + 1,
            problem=problem_name or _("the problem"), value=f"{values[i, j]:g}"))


def nothing_found(reading: Reading, problem_name: str | None) -> None:
    """a worksheet of this kind none of whose tables this problem has answers another problem"""
    reading.refuse(lambda: _("{sheet}: none of the tables of {problem}'s worksheet is on this sheet: it answers another "
                       "problem; check it against the problem it answers").format(sheet=reading.origin,
                                                                                 problem=problem_name or _("the problem")))


def read_kind(text: str, origin: str, forms: Callable[[], Sequence[str]],
              read: Callable[[Reading, dict[str, str]], Sheet]) -> Sheet | None:
    """a filled worksheet of the kind whose rules say one of forms (each a sentence to fill with whole numbers), in
    any language attntrace prints, read in that language by read(reading, the numbers the rules give); None if the
    text is not of that kind"""
    reading = Reading(text, origin)
    flat = spaceless("".join(reading.lines))
    for lang in PRINTED:
        with speaking(lang):
            for form in forms():
                found = re.search(numbered(form), flat)
                if found is not None:
                    return read(reading, found.groupdict())
    return None


def numbered(form: str) -> str:
    """a sentence to fill in, as a pattern over a sheet's text without spaces: each field a whole number, a field
    said twice the same number"""
    pattern = re.escape(spaceless(form))
    for name in dict.fromkeys(re.findall(r"{(\w+)}", form)):
        field = re.escape("{" + name + "}")
        pattern = pattern.replace(field, f"(?P<{name}>\\d+)", 1).replace(field, f"(?P={name})")
    return pattern


class Page(NamedTuple):
    """a page of an online-softmax or decoding worksheet as it is read back: the tables of numbers the handout prints
    on it (titles and numbers) and the tables a student fills in (titles, rows and columns)"""

    given: tuple[tuple[str, np.ndarray], ...]
    asked: tuple[tuple[str, int, int], ...]


def filled_pages(reading: Reading, pages: Sequence[Page], precision: int, problem_name: str | None,
                 first: bool = False) -> list[list[np.ndarray | None]]:
    """each page's filled tables (None where a table is not on the sheet), once every table the handout prints is
    found to hold this problem's numbers; first: a page whose first table is not on the sheet is not read further"""
    for page in pages:
        for title, values in page.given:
            same_numbers(reading, title, values, precision, problem_name)
    out = []
    for page in pages:
        tables: list[np.ndarray | None] = []
        for title, rows, cols in page.asked:
            tables.append(None if first and tables and tables[0] is None else reading.table(title, rows, cols))
        out.append(tables)
    return out
