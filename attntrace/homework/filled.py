"""A filled-in worksheet read back: its tables are found by regenerating the worksheet's own layout from the problem.

The worksheet (markdown or plain text, as `attntrace worksheet` printed it) is never guessed at from its formulas:
the titles, row labels and columns come from `worksheet_steps`, and each asked-for table is looked up by its title.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np

from attntrace.core import intermediates
from attntrace.core.arithmetic import round_half_up
from attntrace.core.engine import trace
from attntrace.core.problem import Problem
from attntrace.core.trace import Trace
from attntrace.errors import AttntraceError, OutOfRange
from attntrace.homework.cells import (
    BLANK,
    COMMAS,
    MASKED,
    NUMBER,
    PERCENTS,
    TYPED_WIDE,
    cell_text,
    norm,
    number_in,
    percentage,
    wide_note,
    written_decimals,
)
from attntrace.homework.instructions import flattened, heading, read_instructions, same_instructions, settings_told, student
from attntrace.homework.layout import Table, fits_shown, other_titles, printed_block, retitle, rows_under, shown_cut, title_lines
from attntrace.homework.said import Said, ngettext, number, said
from attntrace.homework.sheet import Key, Sheet, SheetError
from attntrace.language import N_, _
from attntrace.views.page import Block
from attntrace.views.walkthrough import worksheet_steps

CHECKED = {"weighted": "w(i, j) · v_j", "concat": N_("the heads' outputs side by side")}  # read and checked, never marked
UNREAD_SHOWN = 5  # cells that are not numbers named one by one; past that, a count


@dataclass
class _Answers:
    """the matrices being filled, their true values, which table wrote each cell first and how, and what is worth a note"""

    origin: str
    cells: dict[Key, np.ndarray]
    truth: dict[Key, np.ndarray]
    precision: int
    first: dict[tuple[Key, int, int], tuple[str, str]] = field(default_factory=dict)
    notes: list[Said] = field(default_factory=list)
    commas: bool = False
    percents: bool = False
    unread: list[Said] = field(default_factory=list)  # cells that are not numbers, said where and what


def parse(text: str, origin: str, problem: Problem | None) -> Sheet:
    """the answers in a worksheet; blank cells are NaN, cells written as masked -inf"""
    if problem is None:
        raise SheetError(_("{sheet}: a worksheet is read against its problem; give the problem file too: attntrace check "
                           "{sheet} PROBLEM.json").format(sheet=origin))
    lines = text.lstrip("\ufeff").splitlines()
    flat, starts = flattened(lines)
    told = read_instructions(flat)
    query, precision = settings_told(told, origin)
    t = _traced(problem, query, precision, origin)
    same_instructions(t, precision, told[0], origin)
    pages = [(step.number, Table(printed_block(item), norm(step.prefix + item.title))) for step in worksheet_steps(t)
             for item in step.items if isinstance(item, Block)]
    blocks = [table for _number, table in pages]
    tables = [table for table in blocks if table.block.answer is not None
              and (table.block.answer[1] in intermediates.KEYS or table.block.answer[1] in CHECKED)]
    truth = {key: _values(t, key) for key in _keys([table for table in tables if _marked(table)])}
    answers = _Answers(origin, {key: np.full(values.shape, np.nan) for key, values in truth.items()}, truth, precision)
    aliases = other_titles(t, [table.title for table in blocks])
    found = title_lines(lines, aliases)
    markdown = any(line.lstrip().startswith("#") and heading(line) for line in lines)
    answers.notes.extend(retitle(lines, found, [table.title for table in blocks], {table.title for table in tables},
                                 markdown, aliases))
    read, wide = _read(answers, tables, lines, found, markdown)
    answers.notes.extend(_titled_twice(tables, found))
    given = [table for number, table in pages if table.block.answer is None and number in (1, 2)]
    answers.notes.extend(_same_problem(given, lines, found, markdown, precision, origin))
    if not read:
        raise SheetError(_('{sheet}: none of the worksheet\'s tables was found (such as "{title}"); is this the '
                           "worksheet of this problem, printed with the same --heads, --scale and --mask options?").format(
            sheet=origin, title=tables[0].title))
    notes = ([Said(COMMAS)] if answers.commas else []) + ([Said(PERCENTS)] if answers.percents else [])
    notes = wide_note(wide) + notes + _unread_notes(answers) + answers.notes
    named = lines[:bisect_right(starts, min(said.start for said in told)) - 1]  # the lines before the instructions
    return Sheet(origin, answers.cells, query=query, precision=precision, student=student(named), notes=tuple(notes))


def _traced(problem: Problem, query: int | None, precision: int, origin: str) -> Trace:
    """the problem traced with the rounding carried, as the worksheet asks; refused when the worksheet does not fit it"""
    try:
        return trace(problem, query=query, carry_rounding=precision)
    except AttntraceError as e:
        reason = e.as_option("--input") if isinstance(e, OutOfRange) else str(e)
        raise SheetError(_("{sheet}: this worksheet does not fit the problem: {reason}").format(sheet=origin,
                                                                                               reason=reason)) from None


def _read(answers: _Answers, tables: list[Table], lines: list[str], found: dict[str, list[int]],
          markdown: bool) -> tuple[int, set[str]]:
    """every asked-for table found into the answers, each checked table against the student's own numbers once the
    marked ones are read; how many tables were found, and the full-width characters typed in them"""
    read = 0
    checked = []
    wide: set[str] = set()
    for table in tables:
        places = found.get(table.title)
        if not places:
            continue  # a table left out is not answered
        read += 1
        fits_shown(table, answers.origin)
        rows = rows_under(lines, places.pop(0), markdown, table, answers.origin)
        wide.update(ch for row in rows for cell in row for ch in cell if ch in TYPED_WIDE)
        if _marked(table):
            _keep(answers, table, rows)
        else:
            checked.append((table, rows))
    for table, rows in checked:
        _check(answers, table, rows)
    return read, wide


def _titled_twice(tables: list[Table], found: dict[str, list[int]]) -> list[Said]:
    """a title left over once its table is read: a table retitled as another, whose numbers are not read"""
    return [Said(N_('the title "{title}" appears {times}; the first table under it is read, the others are not'),
                 title=title, times=ngettext("{n} time", "{n} times", len(found[title]) + 1))
            for title in dict.fromkeys(table.title for table in tables) if found.get(title)]


def _same_problem(given: list[Table], lines: list[str], found: dict[str, list[int]], markdown: bool, precision: int,
                  origin: str) -> list[Said]:
    """the problem's own tables (X and the weights, steps 1 and 2) as the worksheet prints them, against the problem:
    a worksheet of another problem (over half the cells of one of these tables differ) is refused, a number or two
    copied wrong is noted"""
    differ: list[tuple[str, str, str, str, float]] = []
    other = False
    for table in given:
        places = found.get(table.title)
        if not places or shown_cut(table):
            continue
        try:
            rows = rows_under(lines, places[0], markdown, table, origin)
        except SheetError:  # a problem table mangled or cut out: it says nothing either way
            continue
        b, cells, before = table.block, 0, len(differ)
        for k, texts in enumerate(rows):
            for c, text in enumerate(texts):
                written = number_in(text)
                if written is None:
                    continue
                cells += 1
                if abs(written - b.values[k, c]) > 0.5 * 10.0**-precision + 1e-9 * (1 + abs(b.values[k, c])):
                    differ.append((table.title, b.rows[k], b.cols[c], norm(text), b.values[k, c]))
        other = other or 2 * (len(differ) - before) > cells
    if not differ:
        return []
    title, row, col, text, value = differ[0]
    where = Said(N_('"{title}", row {row}, column {column} reads {written} where the problem has {value}'), title=title,
                 row=row, column=col, written=text, value=number(value, precision))
    if other:
        raise SheetError(_("{sheet}: this worksheet is not of this problem: {where} (and {more}); check it against the "
                           "problem it was printed from").format(
            sheet=origin, where=said(where), more=said(ngettext("{n} more cell", "{n} more cells", len(differ) - 1))))
    if len(differ) > 1:
        where = Said(N_("{where} (and {n} more)"), where=where, n=len(differ) - 1)
    return [Said(N_("{where}; it is marked against the problem"), where=where)]


def _unread_notes(answers: _Answers) -> list[Said]:
    """a note for each cell that is not a number (the first few, then how many more): each is marked as not answered"""
    shown = [Said(N_("{what}; it is marked as not answered"), what=what) for what in answers.unread[:UNREAD_SHOWN]]
    more = len(answers.unread) - UNREAD_SHOWN
    return shown + ([ngettext("{n} more cell that is not a number, marked as not answered",
                              "{n} more cells that are not a number, marked as not answered", more)] if more > 0 else [])


def _keys(tables: list[Table]) -> list[Key]:
    """the intermediates the tables ask for, in order"""
    keys: list[Key] = []
    for table in tables:
        assert table.block.answer is not None
        head, key, _ = table.block.answer
        if (head, key) not in keys:
            keys.append((head, key))
    return keys


def _marked(table: Table) -> bool:
    """the report's items are fixed: step 6 and a concatenation before W_O are checked, not marked"""
    assert table.block.answer is not None
    return table.block.answer[1] not in CHECKED


def _values(t: Trace, key: Key) -> np.ndarray:
    """an intermediate's carried values: a sheet holds it at full size, and a cell written twice is judged by it"""
    head, step = key
    return t.output if head is None else getattr(t.heads[head - 1], step)


def _keep(answers: _Answers, table: Table, rows: list[list[str]]) -> None:
    """the cells of one table into the sheet; a cell written twice goes to _twice"""
    assert table.block.answer is not None
    head, step, row = table.block.answer
    matrix = answers.cells[(head, step)]
    for k, texts in enumerate(rows):
        r = k if row is None else row
        for c, text in enumerate(texts):
            label, col = table.block.rows[k], table.block.cols[c]
            value = _value(text, answers, table, label, col)
            where = ((head, step), r, c)
            if np.isnan(value):
                continue
            if step == "weights" and value == -np.inf and answers.truth[(head, step)][r, c] == 0:
                value = 0.0  # "masked" written for the weight of a masked key: its weight, 0
            if where not in answers.first:
                answers.first[where] = (table.title, norm(text))
                matrix[r, c] = value
            elif matrix[r, c] != value:
                _twice(answers, where, value, norm(text), table.place(label, col))


def _twice(answers: _Answers, where: tuple[Key, int, int], value: float, text: str, place: Said) -> None:
    """a cell written twice, differently: the one farther from the true value is kept, so a contradiction is never rewarded"""
    key, r, c = where
    truth, matrix = answers.truth[key][r, c], answers.cells[key]
    if _off(value, truth) > _off(matrix[r, c], truth):
        matrix[r, c] = value
    title, before = answers.first[where]
    answers.notes.append(Said(N_('"{title}" and {place}: written twice, differently: {before} and {after}; the one off is '
                                 "marked"), title=title, place=place, before=before, after=text))


def _off(value: float, truth: float) -> float:
    """how far a written value is from the true one; a masked cell's truth is -inf, so any number is infinitely off"""
    return 0.0 if value == truth else abs(value - truth)


def _check(answers: _Answers, table: Table, rows: list[list[str]]) -> None:
    """a table that is not marked is still compared, and one note says when it is off: a cell is fine when it is the
    carried value at the worksheet's precision, or what the student's own numbers give (their weights times their V,
    their heads' outputs side by side) rounded to the decimals the cell was written with"""
    b = table.block
    assert b.answer is not None
    written = np.array([[_value(text, answers, table, b.rows[k], b.cols[c]) for c, text in enumerate(texts)]
                        for k, texts in enumerate(rows)], dtype=float)
    precision = np.array([[written_decimals(text) for text in texts] for texts in rows], dtype=float).reshape(written.shape)
    given = ~np.isnan(written)  # b.values: the carried trace's, t.weighted(head - 1, row) or t.concat
    same = np.isclose(round_half_up(written, answers.precision), round_half_up(b.values, answers.precision),
                      rtol=0, atol=1e-9)
    own = _own(answers, b)
    if own is not None:
        with np.errstate(invalid="ignore"):
            same |= np.abs(written - own) <= 0.5 * 10.0 ** -precision + 1e-9 * (1.0 + np.abs(np.nan_to_num(own)))
    wrong = int((given & ~same).sum())
    if wrong:
        answers.notes.append(ngettext('the table "{title}" has {n} cell that differs from {what}; it is not marked, '
                                      "but check it",
                                      'the table "{title}" has {n} cells that differ from {what}; it is not marked, '
                                      "but check it", wrong, n=wrong, title=table.title,
                                      what=Said(CHECKED[b.answer[1]])))


def _own(answers: _Answers, b: Block) -> np.ndarray | None:
    """what the student's own numbers give for a checked table: their w(i, j) times their v_j (step 6), or their heads'
    outputs side by side (the concatenation); NaN where they left a cell it needs blank; None when the sheet has none"""
    assert b.answer is not None
    head, key, row = b.answer
    if key == "weighted":
        w, v = answers.cells.get((head, "weights")), answers.cells.get((head, "v"))
        if w is None or v is None or row is None:
            return None
        with np.errstate(invalid="ignore"):
            return np.where(w[row][:, None] == 0, 0.0, w[row][:, None] * v)  # a zero weight (masked) gives 0
    heads = sorted(h for h, k in answers.cells if k == "output" and h is not None)
    outputs = [answers.cells[(h, "output")] for h in heads]
    if not outputs or row is None or sum(o.shape[1] for o in outputs) != b.values.shape[1]:
        return None
    return np.concatenate([o[row:row + 1] for o in outputs], axis=1)


def _value(text: str, answers: _Answers, table: Table, label: str, col: str) -> float:
    """a cell: a number, blank (NaN) or masked (-inf); NFKC reads full-width digits as typed by a CJK input method.
    "- 0.76" is -0.76 and "31%" is 0.31 (with a note); a cell that is no number at all is not answered, with a note"""
    cell = cell_text(text)
    if cell.strip("_").lower() in BLANK:
        return float("nan")
    if cell.lower() in MASKED:
        return float("-inf")
    percent = cell.endswith("%")
    number = cell[:-1].rstrip() if percent else cell
    where = table.place(label, col)
    if not NUMBER.fullmatch(number):
        return _unread(answers, Said(N_('{where}: "{text}" is not a number'), where=where, text=text[:30]))
    value = percentage(number.replace(",", ".")) if percent else float(number.replace(",", "."))
    if not math.isfinite(value):
        return _unread(answers, Said(N_('{where}: "{text}" is too large for a number'), where=where, text=text[:30]))
    answers.commas = answers.commas or "," in number
    answers.percents = answers.percents or percent
    return value


def _unread(answers: _Answers, what: Said) -> float:
    """a cell that cannot be read: not answered (NaN), and said in a note, so the rest of the sheet is still marked"""
    answers.unread.append(what)
    return float("nan")
