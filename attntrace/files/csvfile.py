"""CSV matrices as people make them: commas, tabs (a spreadsheet's copy), semicolons, spaces or the full-width and
ideographic commas between values, full-width digits and signs, # comments, an optional header row."""

from __future__ import annotations

import math
import re

import numpy as np

from attntrace.errors import AttntraceError
from attntrace.escape import quoted, visible
from attntrace.files.values import array
from attntrace.language import N_, _
from attntrace.words import counted

_QUOTED_DECIMAL_COMMA = re.compile(r'"\s*[-+]?\d+,\d+\s*"')
_DECIMAL_COMMA = re.compile(r"[-+]?\d+,\d+")
SEPARATORS = {";": N_("semicolons (;)"), "，": N_("full-width commas (，)"), "、": N_("ideographic commas (、)"),
              ",": N_("commas"), "\t": N_("tabs"), " ": N_("spaces")}  # what the note calls each, with _()
WIDE = {  # what a cell may hold for an ASCII character, and what the note calls it (with _())
    **{chr(0xFF10 + d): (str(d), N_("full-width digits")) for d in range(10)},
    "．": (".", N_("． as a decimal point")), "。": (".", N_("。 as a decimal point")), "－": ("-", N_("－ as a minus sign")),
    "−": ("-", N_("− as a minus sign")), "＋": ("+", N_("＋ as a plus sign")), "ｅ": ("e", N_("ｅ as an exponent")),
    "Ｅ": ("E", N_("Ｅ as an exponent")), "\u3000": (" ", N_("ideographic spaces")),
}
FULL_WIDTH_COMMAS = N_("full-width commas (，) as commas")  # among commas: the note's words
_ASCII = str.maketrans({wide: ascii_ for wide, (ascii_, _) in WIDE.items()})


def parse(text: str, name: str, key: str, blanks: tuple[str, ...] = ()) -> tuple[np.ndarray, tuple[str, ...]]:
    """the matrix in a CSV text, and the notes worth a line (the separator if not commas, the characters read as
    ASCII, a first row read as a header); blanks: the cells (lower case) that an answer sheet leaves blank, read as NaN"""
    lines: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].translate(_ASCII).strip()
        if line:
            lines.append((number, line))
    if not lines:
        raise AttntraceError(_("{name} has no values (only blank lines or comments)").format(name=name))
    mixed = _mixed_commas([line for _, line in lines])
    if mixed:  # 1，2 on one line and 2,0 on another: one input method's commas and another's, the same separator
        lines = [(number, line.replace("，", ",")) for number, line in lines]
    separator = _separator("\n".join(line for _, line in lines))
    rows: list[list[str]] = []
    for number, line in lines:
        if separator == "," and _QUOTED_DECIMAL_COMMA.search(line):
            raise _decimal_commas(name, number)
        cells = line.split() if separator == " " else line.split(separator) if separator else [line]
        rows.append([cell.strip().strip('"').strip() for cell in cells])
        if separator != "," and any(_DECIMAL_COMMA.fullmatch(c) for c in rows[-1]):
            raise _decimal_commas(name, number)
    line_numbers = [number for number, _ in lines]
    notes = []
    words = [c for c in rows[0] if not _parses(c) and c.lower() not in blanks]
    if words and all(c.isprintable() for c in words) and not any(_number(c) for c in rows[0]):
        # a header names columns, with no number among them (1,a is a row of values with a typo); a control character
        # marks damaged data
        notes.append(_("{name}: row 1 ({header}) read as a header").format(name=name,
                                                                          header=visible(", ".join(rows[0])[:40])))
        rows, line_numbers = rows[1:], line_numbers[1:]
        if not rows:
            raise AttntraceError(_("{name} has a header but no values").format(name=name))
    if separator not in (None, ","):
        notes.insert(0, _("{name}: values read as separated by {separator}").format(
            name=name, separator=_(SEPARATORS[separator])))
    wide = _wide(text.splitlines(), line_numbers, [FULL_WIDTH_COMMAS] if mixed else [])
    if wide:
        notes.insert(0, _("{name}: read {wide}").format(name=name, wide=wide))
    return _matrix(rows, line_numbers, name, key, blanks, lines[0][0]), tuple(notes)


def _matrix(rows: list[list[str]], line_numbers: list[int], name: str, key: str, blanks: tuple[str, ...],
            first: int) -> np.ndarray:
    """the rows' cells as a float64 matrix, every cell a finite number or a blank (NaN); first: the file's first line
    of values, which a word makes no header when it holds a number too"""
    width = len(rows[0])
    values = []
    for number, row in zip(line_numbers, rows):
        if len(row) != width:
            raise AttntraceError(_("{name} line {number}: {key} has {values}, the first row has {width}").format(
                name=name, number=number, key=key, values=counted(len(row), "value"), width=width))
        try:
            values.append([math.nan if c.lower() in blanks else float(c) for c in row])
        except ValueError:
            bad = next(j for j, c in enumerate(row) if not _parses(c) and c.lower() not in blanks)
            said = (_("{name} line {number}, column {column}: expected a number, got {cell}; write a number there "
                      "(a first row holding a number is values, not column names)") if number == first else
                    _("{name} line {number}, column {column}: expected a number, got {cell}; write a number there"))
            raise AttntraceError(said.format(name=name, number=number, column=bad + 1, cell=quoted(row[bad]))) from None
    matrix = np.array(values, dtype=np.float64)
    left = np.array([[c.lower() in blanks for c in row] for row in rows], dtype=bool).reshape(matrix.shape)
    wrong = np.argwhere(~np.isfinite(matrix) & ~left)
    if wrong.size:  # nan or inf: named by line, like every other cell of the file, whether in row 1 or below
        i, j = (int(c) for c in wrong[0])
        cell = rows[i][j]
        written = visible(cell) if len(cell) <= 30 else str(matrix[i, j])
        raise AttntraceError(_("{name} line {number}, column {column} is {cell}; every value must be finite").format(
            name=name, number=line_numbers[i], column=j + 1, cell=written))
    return matrix if left.any() else array(matrix, f"{name}: {key}", 2)


def _separator(text: str) -> str | None:
    """what separates a text's values: the first of SEPARATORS in it, where tabs and spaces beside commas are padding
    (unless they separate numbers with decimal commas, 1,5, to be refused as such), or None for one value a line"""
    found = next((s for s in SEPARATORS if s in text), None)
    if found == "," and any(_spaced_decimal_commas(line) for line in text.split("\n")):
        return "\t" if "\t" in text else " "
    return found


def _spaced_decimal_commas(line: str) -> bool:
    """whether a line is numbers separated by tabs or spaces, one of them at least written with a decimal comma"""
    cells = line.split()
    return len(cells) > 1 and any(_DECIMAL_COMMA.fullmatch(c) for c in cells) and \
        all(_DECIMAL_COMMA.fullmatch(c) or _parses(c) for c in cells)


def _mixed_commas(lines: list[str]) -> bool:
    """whether the lines separate values with both full-width commas (，) and commas, each a separator: no line holding
    a full-width comma has a value written with a decimal comma (1,5，2,0 is refused as decimal commas)"""
    text = "\n".join(lines)
    if "，" not in text or "," not in text:
        return False
    return not any(_DECIMAL_COMMA.fullmatch(cell.strip()) for line in lines if "，" in line for cell in line.split("，"))


def _wide(lines: list[str], numbers: list[int], first: list[str]) -> str:
    """what the values' lines held in place of ASCII characters (first: what else was read so), said in a few words
    ("" when nothing)"""
    seen = {**dict.fromkeys(first), **{WIDE[c][1]: None for number in numbers for c in lines[number - 1].split("#", 1)[0]
                                       if c in WIDE}}
    said = [_(what) for what in seen]
    if len(said) < 2:
        return "".join(said)
    return _("{these} and {last}").format(these=_(", ").join(said[:-1]), last=said[-1])


def _decimal_commas(name: str, number: int) -> AttntraceError:
    return AttntraceError(_(
        "{name} line {number}: this looks like decimal commas (1,5 for 1.5); attntrace reads '.' for decimals "
        "(export the CSV with '.' as decimal separator)"
    ).format(name=name, number=number))


def _number(cell: str) -> bool:
    """a cell that is a number written in digits (nan and inf may be a column's name in a header)"""
    return _parses(cell) and any(c.isdigit() for c in cell)


def _parses(cell: str) -> bool:
    """a cell Python reads as a float: a number, or nan or inf (which are numbers, to be refused by their cell)"""
    try:
        float(cell)
    except ValueError:
        return False
    return True
