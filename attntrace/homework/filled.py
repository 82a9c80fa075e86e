"""A filled-in worksheet read back: its tables are found by regenerating the worksheet's own layout from the problem.

The worksheet (markdown or plain text, as `attntrace worksheet` printed it) is never guessed at from its formulas:
the titles, row labels and columns come from `worksheet_steps`, and each asked-for table is looked up by its title.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field

import numpy as np

from attntrace.errors import AttntraceError, OutOfRange
from attntrace.homework.sheet import MAX_PRECISION, Key, Sheet, SheetError
from attntrace.homework.worksheet import intro
from attntrace.model import intermediates
from attntrace.model.engine import trace
from attntrace.model.problem import Problem
from attntrace.model.trace import Trace
from attntrace.render.layout import MAX_SHOWN
from attntrace.views.page import Block
from attntrace.views.steps import worksheet_steps

MARKDOWN = re.compile(r"\s*#+\s*Worksheet:")  # the first line of a markdown worksheet; a plain one has no #
ASKS = re.compile(r"Compute self-attention for (?:every input|input (\d+) only)")
ROUNDS = re.compile(r"Round every intermediate to (\d+) decimals?")
SCALING = re.compile(r"into the next step; (.+?)\.(?:\s|$)")  # the end of the same sentence: how the scores are scaled
SETTINGS = (re.compile(r"Mask: (.+?)\.(?:\s|$)"), re.compile(r"Heads: (.+?)\.(?:\s|$)"))  # said when the problem has them
SHAPE = re.compile(r"\s*\[\s*\d+\s*[x×]\s*\d+\s*\]$")  # the "[3 x 3]" after a title
COLUMNS = re.compile(r"\(columns (.+) to (.+)\)")  # a plain table split into runs of columns
RULE = re.compile(r"\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?")  # markdown's |---|---:| line
NUMBER = re.compile(r"[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?")
MINUSES = dict.fromkeys(map(ord, "\u2212\u2012\u2013\ufe63\uff0d"), "-")  # minus signs a keyboard or a word processor types
MASKED = ("-inf", "-∞", "masked", "x", "—")
BLANK = ("", "?")
COMMAS = "decimal commas read as decimal points"
FIX_COUNT = "leave a blank cell as ____ and keep one cell per column"
FIX_CELL = "write a number such as -0.25, -inf for a masked cell, or leave ____ for a blank"


@dataclass
class _Answers:
    """the matrices being filled, which table wrote each cell first, and what is worth a note"""

    origin: str
    cells: dict[Key, np.ndarray]
    first: dict[tuple[Key, int, int], str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    commas: bool = False


@dataclass(frozen=True)
class _Table:
    """one asked-for block of the layout, with the name it goes by in messages"""

    block: Block
    title: str  # "Step 3 · Q = X · W_Q", as printed without its shape

    def at(self, origin: str, row: str | None = None, col: str | None = None) -> str:
        where = f'{origin}: "{self.title}"'
        return where + (f", row {row}" if row is not None else "") + (f", column {col}" if col is not None else "")


def parse(text: str, origin: str, problem: Problem | None) -> Sheet:
    """the answers in a worksheet; blank cells are NaN, cells written as masked -inf"""
    if problem is None:
        raise SheetError(f"{origin}: a worksheet is read against its problem; give the problem file too: "
                         f"attntrace check {origin} PROBLEM.json")
    lines, flat = text.lstrip("\ufeff").splitlines(), " ".join(text.split())
    query, precision = _settings(flat, origin)
    try:
        t = trace(problem, query=query, decimals=precision)
    except AttntraceError as e:
        reason = e.as_option("--input") if isinstance(e, OutOfRange) else str(e)
        raise SheetError(f"{origin}: this worksheet does not fit the problem: {reason}") from None
    _same_instructions(t, precision, flat, origin)
    tables = [_Table(item, _norm(step.prefix + item.title)) for step in worksheet_steps(t) for item in step.items
              if isinstance(item, Block) and item.answer is not None
              and item.answer[1] in intermediates.KEYS]  # step 6 is not marked
    answers = _Answers(origin, {key: np.full(_shape(t, key), np.nan) for key in _keys(tables)})
    found = _titles(lines)
    markdown = any(MARKDOWN.match(line) for line in lines)
    read = 0
    for table in tables:
        places = found.get(table.title)
        if not places:
            continue  # a table left out is not answered
        read += 1
        _fits(table, origin)
        rows = _rows(lines, places.pop(0), markdown, table, origin)
        _keep(answers, table, rows)
    if not read:
        raise SheetError(f"{origin}: none of the worksheet's tables was found (such as \"{tables[0].title}\"); is this "
                         "the worksheet of this problem, printed with the same --heads, --scale and --mask options?")
    notes = ([COMMAS] if answers.commas else []) + answers.notes
    return Sheet(origin, answers.cells, query=query, precision=precision, notes=tuple(notes))


def _settings(flat: str, origin: str) -> tuple[int | None, int]:
    """the input asked for and the rounding, from the worksheet's first paragraph"""
    asks, rounds = ASKS.search(flat), ROUNDS.search(flat)
    if asks is None or rounds is None:
        raise SheetError(f'{origin}: this does not look like an attntrace worksheet (no "Compute self-attention for ... '
                         'Round every intermediate to N decimals" paragraph); fill in what attntrace worksheet printed')
    precision = int(rounds[1])
    if precision > MAX_PRECISION:
        raise SheetError(f"{origin}: the worksheet rounds to {precision} decimals; at most {MAX_PRECISION} can be checked")
    return (int(asks[1]) if asks[1] else None), precision


def _same_instructions(t: Trace, precision: int, flat: str, origin: str) -> None:
    """a worksheet printed with another --scale, --mask or --heads than the problem's would be marked against other numbers"""
    mine = " ".join(intro(t, precision, False, False).split())
    theirs, ours = SCALING.search(flat), SCALING.search(mine)
    if theirs is not None and ours is not None and theirs[1] != ours[1]:
        raise SheetError(f'{origin}: the worksheet says "{theirs[1]}" but the problem it is checked against says "{ours[1]}"; '
                         "give the worksheet's problem file, with the --scale or --scale-by it was printed with")
    for pattern in SETTINGS:
        said, meant = pattern.search(flat), pattern.search(mine)
        if theirs is not None and (said and said[1]) != (meant and meant[1]):
            what = f'says "{said[0].strip()}"' if said else "names no " + pattern.pattern.split(":")[0].lower()
            wanted = f'"{meant[0].strip()}"' if meant else "none"
            raise SheetError(f"{origin}: the worksheet {what} but the problem it is checked against has {wanted}; give "
                             "the worksheet's problem file, with the --mask or --heads it was printed with")


def _keys(tables: list[_Table]) -> list[Key]:
    """the intermediates the tables ask for, in order"""
    keys: list[Key] = []
    for table in tables:
        assert table.block.answer is not None
        head, key, _ = table.block.answer
        if (head, key) not in keys:
            keys.append((head, key))
    return keys


def _shape(t: Trace, key: Key) -> tuple[int, ...]:
    """a sheet holds each intermediate at its full size, whichever tables of it were found"""
    head, step = key
    values = t.output if head is None else getattr(t.heads[head - 1], step)
    return tuple(values.shape)


def _norm(text: str) -> str:
    """text compared as a reader sees it: NFC, runs of spaces collapsed"""
    return " ".join(unicodedata.normalize("NFC", text).split())


def _title(line: str) -> str:
    """a line as a table title: markdown's ** and escapes and the [r x c] shape taken off"""
    text = line.strip()
    if text.startswith("**"):
        text = text.replace("**", "").replace("\\|", "|").replace("\\\\", "\\")
    return _norm(SHAPE.sub("", _norm(text)))


def _titles(lines: list[str]) -> dict[str, list[int]]:
    """each line's index under its title form, in order: a title printed twice is read in order"""
    out: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        if line.strip():
            out.setdefault(_title(line), []).append(i)
    return out


def _fits(table: _Table, origin: str) -> None:
    """the renderers hide the middle of a big matrix, and a hidden cell cannot be filled in"""
    b = table.block
    if len(b.rows) > MAX_SHOWN or len(b.cols) > MAX_SHOWN:
        raise SheetError(f"{table.at(origin)} has {len(b.rows)} x {len(b.cols)} cells, more than a worksheet shows "
                         f"({MAX_SHOWN} a side); answer such a problem with a JSON sheet (worksheet --format json)")


def _rows(lines: list[str], at: int, markdown: bool, table: _Table, origin: str) -> list[list[str]]:
    """the cell texts under the title on line at, row by row across every column"""
    i = _skip_blank(lines, at + 1)
    if markdown or lines[at].lstrip().startswith("**"):
        return _markdown_rows(lines, i, table, origin)
    return _plain_rows(lines, i, table, origin)


def _skip_blank(lines: list[str], i: int) -> int:
    """blank lines between a title and its table may be added or dropped"""
    while i < len(lines) and not lines[i].strip():
        i += 1
    return i


def _markdown_rows(lines: list[str], i: int, table: _Table, origin: str) -> list[list[str]]:
    """a pipe table: the header, the |---| rule, then one line per row, up to a blank line"""
    found = []
    while i < len(lines) and "|" in lines[i]:
        found.append(lines[i])
        i += 1
    labels = table.block.rows
    if not found:
        raise SheetError(f"{table.at(origin)}: no table under the title; keep the pipe table attntrace printed")
    if len(found) > 1 and RULE.fullmatch(found[1].strip()):
        body = found[2:]
    else:  # no rule: the header too may be gone
        body = found if _norm(_pipe_cells(found[0])[0]) == _norm(labels[0]) else found[1:]
    out = []
    for k, label in enumerate(labels):
        if k >= len(body):
            raise SheetError(f"{table.at(origin, label)} is missing; the table has {len(body)} of its {len(labels)} rows")
        cells = _pipe_cells(body[k])
        _label(cells[0], label, table, origin)
        out.append(_counted(cells[1:], len(table.block.cols), table, label, origin))
    if len(body) > len(labels):
        raise SheetError(f"{table.at(origin)}: a row too many ({_norm(body[len(labels)])[:40]}); the table has "
                         f"{len(labels)} rows: {', '.join(labels)}")
    return out


def _pipe_cells(line: str) -> list[str]:
    """a markdown row split at its unescaped pipes, \\| and \\\\ read back as | and \\"""
    text = line.strip()
    cells, cell, escaped = [], "", False
    for ch in text:
        if escaped:
            cell, escaped = cell + ch, False
        elif ch == "\\":
            escaped = True
        elif ch == "|":
            cells.append(cell)
            cell = ""
        else:
            cell += ch
    cells.append(cell)
    if text.startswith("|"):
        cells.pop(0)
    if len(cells) > 1 and cells[-1] == "" and text.endswith("|"):
        cells.pop()
    return [c.strip() for c in cells]


def _plain_rows(lines: list[str], i: int, table: _Table, origin: str) -> list[list[str]]:
    """plain text: runs of columns, each an optional "(columns a to b)" line, the column labels, one line per row"""
    b = table.block
    out: list[list[str]] = [[] for _ in b.rows]
    start = 0
    while start < len(b.cols):
        i = _skip_blank(lines, i)
        run = COLUMNS.fullmatch(_norm(lines[i])) if i < len(lines) else None
        if run is None and start:
            raise SheetError(f'{table.at(origin)}: expected "(columns {b.cols[start]} to ...)" before the rest of its '
                             "columns; keep the lines attntrace printed")
        if run is not None:
            i = _skip_blank(lines, i + 1)
        if i + 1 >= len(lines):
            raise SheetError(f"{table.at(origin)}: the table ends after its title; keep the column labels and the rows")
        stop = len(b.cols) if run is None else _run_stop(b, start, run, _cells_after(lines[i + 1], b.rows[0]), table, origin)
        i += 1  # the column labels
        for k, label in enumerate(b.rows):
            if i >= len(lines) or _cells_after(lines[i], label) is None:
                got = _norm(lines[i])[:40] if i < len(lines) else "the end of the file"
                raise SheetError(f'{table.at(origin, label)} is missing (found "{got}"); keep the line of column labels '
                                 "and every row, in order, with its label")
            out[k].extend(_counted(_cells_after(lines[i], label) or [], stop - start, table, label, origin))
            i += 1
        start = stop
    return out


def _cells_after(line: str, label: str) -> list[str] | None:
    """the whitespace-separated cells of a plain row, or None when the line is not that row"""
    text, name = _norm(line), _norm(label)
    if not name:
        return text.split()
    if text != name and not text.startswith(name + " "):
        return None
    return text[len(name):].split()


def _run_stop(b: Block, start: int, run: re.Match[str], first: list[str] | None, table: _Table, origin: str) -> int:
    """where a run of columns ends: at its last label, or, when labels repeat, where the first row's cells end"""
    if _norm(run[1]) != _norm(b.cols[start]):
        raise SheetError(f'{table.at(origin)}: "(columns {run[1]} to {run[2]})" should start at column {b.cols[start]}; '
                         "keep the column runs in the order attntrace printed them")
    stops = [stop for stop in range(start + 1, len(b.cols) + 1) if _norm(b.cols[stop - 1]) == _norm(run[2])]
    if not stops:
        raise SheetError(f'{table.at(origin)}: "(columns {run[1]} to {run[2]})" names no column of this table')
    counted = start + len(first) if first is not None else None
    return counted if counted in stops else stops[0]


def _label(found: str, label: str, table: _Table, origin: str) -> None:
    """rows are matched in order, so a label may repeat; one that differs means a row was moved or lost"""
    if _norm(found) != _norm(label):
        raise SheetError(f'{table.at(origin, label)}: found a row labelled "{found[:30]}"; keep every row, in order, '
                         "with its label")


def _counted(cells: list[str], width: int, table: _Table, label: str, origin: str) -> list[str]:
    """a cell deleted or split in two would shift every later cell into the wrong column"""
    if len(cells) != width:
        raise SheetError(f"{table.at(origin, label)} has {len(cells)} cells, the table has {width} columns; {FIX_COUNT}")
    return cells


def _keep(answers: _Answers, table: _Table, rows: list[list[str]]) -> None:
    """the cells of one table into the sheet: the first written value of a cell is kept"""
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
            if where not in answers.first:
                answers.first[where] = table.title
                matrix[r, c] = value
            elif matrix[r, c] != value:
                answers.notes.append(f'{table.at(answers.origin, label, col)}: {text} differs from the {_show(matrix[r, c])} '
                                     f'written in "{answers.first[where]}"; the first is kept')


def _value(text: str, answers: _Answers, table: _Table, label: str, col: str) -> float:
    """a cell: a number, blank (NaN) or masked (-inf); NFKC reads full-width digits as typed by a CJK input method"""
    cell = _norm(unicodedata.normalize("NFKC", text)).translate(MINUSES)
    if cell.strip("_") in BLANK:
        return float("nan")
    if cell.lower() in MASKED:
        return float("-inf")
    if not NUMBER.fullmatch(cell):
        raise SheetError(f'{table.at(answers.origin, label, col)}: "{text[:30]}" is not a number; {FIX_CELL}')
    value = float(cell.replace(",", "."))
    if not math.isfinite(value):
        raise SheetError(f'{table.at(answers.origin, label, col)}: "{text[:30]}" is too large; write the number you computed')
    answers.commas = answers.commas or "," in cell
    return value


def _show(value: float) -> str:
    """a kept value as the student wrote it, near enough, in a note"""
    return "-inf" if value == float("-inf") else f"{value:g}"
