"""A student's answer sheet, read strictly: the trace's JSON layout (any subset), a CSV directory, or a filled worksheet."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path
from typing import Any

import numpy as np

from attntrace.core import intermediates
from attntrace.errors import AttntraceError, ExitStatus
from attntrace.files import csvfile, jsonfile
from attntrace.files.text import read_text
from attntrace.homework.said import ngettext, said
from attntrace.language import N_, _

Key = tuple[int | None, str]  # (head from 1, or None for the final output; an intermediate's key)

# the keys of `--format json`, which a sheet may carry and which are not marked
_TRACE_KEYS = ("format", "name", "tokens", "source_tokens", "inputs", "config", "problem", "concat", "check", "warnings")
FLASH_KEYS = ("flash_m", "flash_l", "flash_o", "flash_output")  # a worksheet --flash answer sheet's, per head
DECODE_KEYS = ("decode_cache", "decode_weights", "decode_output")  # a worksheet --decode answer sheet's, per head
TOP_KEYS = ("heads", "output", "query", "precision", "student", *intermediates.KEYS[:-1], "weighted", "block",
            "window", "sinks", *_TRACE_KEYS)
HEAD_KEYS = ("head", "kv_head", "bias", *intermediates.KEYS, "sink_weight", "weighted")  # a trace's kv_head, bias
# and sink_weight: not answers
MAX_PRECISION = 12
TEXT_SUFFIXES = (".md", ".markdown", ".txt")
BLANKS = ("", "null", "?", "-", "n/a", "na", "____")  # a cell a CSV answer sheet leaves blank


class SheetError(AttntraceError):
    """an answer sheet that cannot be read: exit 2, as for a usage error"""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=ExitStatus.USAGE)


@dataclass(frozen=True)
class Sheet:
    """what a student handed in; in each matrix NaN is a cell left blank and -inf a cell written as masked"""

    origin: str  # the file, as named on the command line
    cells: dict[Key, np.ndarray]
    query: int | None = None  # one input's answers (the step --input N layout), from 1
    precision: int | None = None  # the decimals the sheet says the student rounded to
    student: str | None = None
    notes: tuple[str, ...] = ()
    heads: tuple[int, ...] = ()  # the head numbers the sheet names, answered or not
    problem: str | None = None  # the name of the problem the sheet says it answers (a JSON sheet's "name")
    block: int | None = None  # the keys per block of an online-softmax sheet (worksheet --flash); None: the eight steps
    decode: tuple[int | None, int] | None = None  # a decoding sheet's (worksheet --decode) window and sinks


SCAN_FROM = 1 << 20  # characters: a sheet this long is looked over row by row before it is read whole
SIZES = {"q": ("n", "d_k"), "k": ("m", "d_k"), "v": ("m", "d_v"), "q_rotated": ("n", "d_k"), "k_rotated": ("m", "d_k"),
         "scores": ("n", "m"), "scaled": ("n", "m"), "weights": ("n", "m"), "output": ("n", "d_v")}  # a head's tables
WORDS = {"n": N_("one per input"), "m": N_("one per key"), "d_k": "d_k", "d_v": "d_v", "d_out": "d_out"}  # with _()
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _rows_past(text: str, name: str, most: int, rows: str) -> None:
    """a big CSV table refused at its first row past the problem's (a header row may come first), before it is read"""
    count, at = 0, 0
    while at <= len(text):
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        if text[at:end].split("#", 1)[0].strip():
            count += 1
            if count > most + 1:
                raise SheetError(_("{name} has more than {rows}, expected {most}: {what}; this sheet answers another "
                                   "problem: check it against the problem it answers").format(
                    name=name, rows=said(ngettext("{n} row", "{n} rows", most)), most=most, what=_(WORDS[rows])))
        at = end + 1


class _Unsure(Exception):
    """the text is not laid out as the scan expects: it is read whole, which says what is wrong with it"""


def misfit(text: str, origin: str, d: Any) -> None:
    """a big sheet's tables looked over row by row before anything is read whole: the first row that cannot fit the
    problem (one too many, or of another width) refuses the sheet there, so a huge sheet of another problem costs no
    more than its first rows; a text laid out otherwise is left to the full reading, which names what is wrong"""
    scan = _Scan(text, origin, {"n": d.n, "m": d.m, "d_k": d.d_k, "d_v": d.d_v, "d_out": d.d_out}, d.heads)
    try:
        scan.object(lambda key: scan.table(None, key) if key in SIZES else scan.heads() if key == "heads" else scan.skip())
    except (_Unsure, ValueError, IndexError, RecursionError):
        return


class _Scan:
    """a walk over the text of a JSON sheet, its tables row by row, each row found by its brackets and counted by its
    commas (a row holding a string or a list is left to the full reading)"""

    def __init__(self, text: str, origin: str, sizes: dict[str, int], heads: int) -> None:
        self.text, self.origin, self.sizes, self.many, self.at = text, origin, sizes, heads > 1, 0
        self.most = heads

    def space(self) -> str:
        found = _SPACE.match(self.text, self.at)
        self.at = found.end() if found else self.at
        return self.text[self.at:self.at + 1]

    def expect(self, mark: str) -> None:
        if self.space() != mark:
            raise _Unsure()
        self.at += 1

    def items(self, close: str, each: Any) -> None:
        """the members of an object or the items of a list, up to its closing mark"""
        if self.space() == close:
            self.at += 1
            return
        while True:
            each()
            mark = self.space()
            self.at += 1
            if mark == close:
                return
            if mark != ",":
                raise _Unsure()

    def object(self, member: Any) -> None:
        def one() -> None:
            if self.space() != '"':
                raise _Unsure()
            key, self.at = _DECODER.raw_decode(self.text, self.at)
            self.expect(":")
            member(key)

        self.expect("{")
        self.items("}", one)

    def skip(self) -> None:
        self.space()
        _, self.at = _DECODER.raw_decode(self.text, self.at)

    def heads(self) -> None:
        count = [0]

        def one() -> None:
            count[0] += 1
            if count[0] > self.most:
                raise SheetError(_("{sheet}: head {head} is out of range; this problem has heads 1 to {heads}").format(
                    sheet=self.origin, head=count[0], heads=self.most))
            number = [count[0]]

            def member(key: str) -> None:
                if key == "head" and self.space().isdigit():
                    value, self.at = _DECODER.raw_decode(self.text, self.at)
                    number[0] = value if isinstance(value, int) else number[0]
                elif key in SIZES:
                    self.table(number[0], key)
                elif key in FLASH_KEYS + DECODE_KEYS:
                    self.rows(number[0], key)
                else:
                    self.skip()

            self.object(member)

        self.expect("[")
        self.items("]", one)

    def table(self, head: int | None, key: str) -> None:
        """a table's rows: refused at the first that cannot fit"""
        rows, cols = SIZES[key] if head is not None or key != "output" else ("n", "d_out")
        where = "output" if head is None and key == "output" else _("head {head} {key}").format(
            head=head or 1, key=key) if self.many else key
        most, width = self.sizes[rows], self.sizes[cols]
        self.expect("[")
        if self.space() != "[":  # a flat list is one row
            self.row(where, 1, width, cols)
            return
        count = [0]

        def one() -> None:
            count[0] += 1
            if count[0] > most:
                self.too_many(where, most, rows)
            self.expect("[")
            self.row(where, count[0], width, cols)

        self.items("]", one)

    def too_many(self, where: str, most: int, rows: str) -> None:
        """a table refused at its first row past the problem's"""
        raise SheetError(_("{name} has more than {rows}, expected {most}: {what}; this sheet answers another problem: "
                           "check it against the problem it answers").format(
            name=f"{self.origin}: {where}", rows=said(ngettext("{n} row", "{n} rows", most)), most=most,
            what=_(WORDS[rows])))

    def rows(self, head: int, key: str) -> None:
        """an online-softmax or decoding table: a row per query or step, refused at the first past the problem's"""
        most = self.sizes["n"]
        where = _("head {head} {key}").format(head=head, key=key)
        self.expect("[")
        count = [0]

        def one() -> None:
            count[0] += 1
            if count[0] > most:
                self.too_many(where, most, "n")
            self.skip()

        self.items("]", one)

    def row(self, where: str, number: int, width: int, cols: str) -> None:
        end = self.text.index("]", self.at)
        body = self.text[self.at:end]
        if any(mark in body for mark in '[{"'):
            raise _Unsure()
        values = body.count(",") + 1 if body.strip() else 0
        if values and values != width:
            raise SheetError(_("{name} row {row} has {values}, expected {width}: {what}; check it against the problem "
                               "it answers").format(name=f"{self.origin}: {where}", row=number, width=width,
                                                    values=said(ngettext("{n} value", "{n} values", values)),
                                                    what=_(WORDS[cols])))
        self.at = end + 1


def from_dir(p: Path, origin: str, problem: Any = None) -> Sheet:
    data: dict[str, Any] = {}
    for key in intermediates.KEYS:
        f = p / f"{key}.csv"
        if f.exists():
            text = read_text(f)
            if problem is not None and len(text) >= SCAN_FROM:
                rows = SIZES[key][0]
                _rows_past(text, str(f), problem.dims.n if rows == "n" else problem.dims.m, rows)
            values = csvfile.parse(text, str(f), key, BLANKS)[0].tolist()
            data[key] = [[None if v != v else v for v in row] for row in values]  # NaN: a cell left blank
    data.update(jsonfile.settings(p / "answers.json", '{"query": 2, "precision": 2}'))
    if not any(key in data for key in intermediates.KEYS):
        raise SheetError(_("{sheet}: no answers found; give any of {files}").format(
            sheet=origin, files=", ".join(k + ".csv" for k in intermediates.KEYS)))
    return from_dict(data, origin)


def from_dict(data: Any, origin: str) -> Sheet:
    """a sheet in the layout of --format json: heads[] of q ... output, the final output, and settings"""
    if not isinstance(data, dict):
        raise SheetError(_("{sheet}: an answer sheet is a JSON object, like the output of --format json").format(sheet=origin))
    for key in data:
        if key not in TOP_KEYS:
            raise SheetError(f"{origin}: {unknown(key, TOP_KEYS)}")
    cells: dict[Key, np.ndarray] = {}
    top = {k: data[k] for k in intermediates.KEYS[:-1] if data.get(k) is not None}
    for key, value in top.items():
        cells[(1, key)] = matrix(value, f"{origin}: {key}")
    heads = data.get("heads")
    numbers: list[int] = []
    if heads is not None:
        if not isinstance(heads, list):
            raise SheetError(_("{sheet}: heads must be a list of objects, one per head, such as {example}").format(
                sheet=origin, example='[{"head": 1, "q": [[...]]}]'))
        for index, head in enumerate(heads):
            number = _head(head, index, origin)
            where = _("{sheet}: head {head}").format(sheet=origin, head=number)
            if number in numbers:
                raise SheetError(_("{sheet}: head {head} is given twice; give each head once").format(sheet=origin,
                                                                                                       head=number))
            for key in head:
                if key not in HEAD_KEYS and key not in FLASH_KEYS + DECODE_KEYS:
                    raise SheetError(f"{where}: {unknown(key, HEAD_KEYS)}")
            numbers.append(number)
            for key in intermediates.KEYS:
                if head.get(key) is not None:
                    cells[(number, key)] = matrix(head[key], f"{where} {key}")
            for key in FLASH_KEYS:
                if head.get(key) is not None:
                    cells[(number, key)] = _stacked(head[key], f"{where} {key}") if key == "flash_o" else matrix(
                        head[key], f"{where} {key}")
            for key in DECODE_KEYS:
                if head.get(key) is not None:
                    cells[(number, key)] = _ragged(head[key], f"{where} {key}")
    if data.get("output") is not None:
        cells[(None, "output")] = matrix(data["output"], f"{origin}: output")
    named = data.get("name")
    block = data.get("block")
    if block is not None and (isinstance(block, bool) or not isinstance(block, int) or block < 1):
        raise SheetError(_("{sheet}: block must be the keys per block, 1 or more; got {value}").format(
            sheet=origin, value=_show(block)))
    decoding = any(key in DECODE_KEYS for _head_number, key in cells)
    flashing = any(key in FLASH_KEYS for _head_number, key in cells)
    eight = any(key not in FLASH_KEYS + DECODE_KEYS for _head_number, key in cells)
    kinds = [kind for kind, there in (("flash_*", flashing), ("decode_*", decoding), ("q … output", eight)) if there]
    if len(kinds) > 1:
        raise SheetError(_("{sheet}: a sheet answers one worksheet, and this one holds both {first} and {second}; "
                           "hand in each on a sheet of its own").format(sheet=origin, first=kinds[0], second=kinds[1]))
    if flashing and (data.get("window") is not None or data.get("sinks") is not None):
        raise SheetError(_('{sheet}: "window" and "sinks" belong to a decoding sheet, whose answers are decode_cache, '
                           "decode_weights and decode_output; remove them").format(sheet=origin))
    if flashing and block is None:
        raise SheetError(_("{sheet}: flash_m, flash_l, flash_o and flash_output answer an online-softmax worksheet; "
                           'give its "block", the keys per block').format(sheet=origin))
    if block is not None and not flashing and (decoding or eight):
        raise SheetError(_('{sheet}: "block" belongs to an online-softmax sheet, whose answers are flash_m, flash_l, '
                           'flash_o and flash_output; remove it').format(sheet=origin))
    window, sinks = data.get("window"), data.get("sinks", 0)
    for name, value, least in (("window", window, 1), ("sinks", sinks, 0)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
            raise SheetError(_("{sheet}: {key} must be a whole number of at least {least}; got {value}").format(
                sheet=origin, key=name, least=least, value=_show(value)))
    return Sheet(origin, cells, query=_query(data.get("query"), origin), precision=_precision(data.get("precision"), origin),
                 student=_student(data.get("student"), origin), heads=tuple(numbers),
                 problem=named if isinstance(named, str) else None, block=block,
                 decode=(window, sinks or 0) if decoding else None)


def _stacked(value: Any, where: str) -> np.ndarray:
    """flash_o: per query a matrix of blocks by d_v, stacked into one matrix of rows query by query"""
    if not isinstance(value, list) or not value:
        raise SheetError(_("{where} must be a matrix (a list of rows), got {value}").format(where=where, value=_show(value)))
    parts = [matrix(q, f"{where}[{i + 1}]") for i, q in enumerate(value)]
    if any(p.shape != parts[0].shape for p in parts):
        raise SheetError(_("{where}: every query needs a row per block, each of d_v numbers").format(where=where))
    return np.vstack(parts)


def _ragged(value: Any, where: str) -> np.ndarray:
    """a decoding sheet's list per step, each as long as that step's cache: NaN-padded into one matrix"""
    if not isinstance(value, list) or not value or not all(isinstance(r, list) and r for r in value):
        raise SheetError(_("{where} must be a matrix (a list of rows), got {value}").format(where=where, value=_show(value)))
    rows = [matrix([r], f"{where}[{i + 1}]")[0] for i, r in enumerate(value)]
    out = np.full((len(rows), max(len(r) for r in rows)), np.nan)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out


def _head(head: Any, index: int, origin: str) -> int:
    if not isinstance(head, dict):
        raise SheetError(_("{sheet}: heads[{index}] must be an object with q, k, v, scores, scaled, weights, output").format(
            sheet=origin, index=index + 1))
    number = head.get("head", index + 1)
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise SheetError(_("{sheet}: heads[{index}].head must be the head's number, from 1; got {value}").format(
            sheet=origin, index=index + 1, value=_show(number)))
    return number


def _query(value: Any, origin: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SheetError(_("{sheet}: query must be the number of the input answered, from 1; got {value}").format(
            sheet=origin, value=_show(value)))
    return value


def _precision(value: Any, origin: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_PRECISION:
        raise SheetError(_("{sheet}: precision must be the decimals rounded to, 0 to {most}; got {value}").format(
            sheet=origin, most=MAX_PRECISION, value=_show(value)))
    return value


def _student(value: Any, origin: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise SheetError(_("{sheet}: student must be a name or an id (a string); got {value}").format(sheet=origin,
                                                                                                  value=_show(value)))


def matrix(value: Any, where: str) -> np.ndarray:
    """a list of rows of numbers or nulls (a flat list is one row); NaN where null"""
    if isinstance(value, list) and value and not any(isinstance(r, (list, dict)) for r in value):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(r, list) for r in value):
        raise SheetError(_("{where} must be a matrix (a list of rows), got {value}").format(where=where, value=_show(value)))
    width = len(value[0])
    if not width:
        raise SheetError(_("{where} row 1 is empty; write the numbers you computed, or null for a blank cell").format(
            where=where))
    out = np.full((len(value), width), np.nan)
    for i, row in enumerate(value):
        if len(row) != width:
            raise SheetError(_("{where} row {row} has {values}, row 1 has {width}").format(
                where=where, row=i + 1, values=said(ngettext("{n} value", "{n} values", len(row))), width=width))
        for j, cell in enumerate(row):
            if cell is None:
                continue
            at = _("{where} row {row}, column {column}").format(where=where, row=i + 1, column=j + 1)
            if isinstance(cell, jsonfile.Literal):
                raise SheetError(_("{cell} is {word}; write the number you computed, or null for a blank").format(
                    cell=at, word=cell.word))
            if isinstance(cell, bool) or not isinstance(cell, (int, float)):
                raise SheetError(_("{cell}: expected a number or null (blank), got {value}").format(cell=at,
                                                                                                    value=_show(cell)))
            number = float(cell) if abs(cell) < 1e308 or isinstance(cell, float) else math.inf
            if not math.isfinite(number):
                raise SheetError(_("{cell}: {value} is too large for a float64; write the number you computed").format(
                    cell=at, value=_show(cell)))
            out[i, j] = number
    return out


def unknown(key: str, known: tuple[str, ...]) -> str:
    lowered = {k.lower(): k for k in known}
    guess = lowered.get(key.lower()) or next(iter(get_close_matches(key, known, n=1, cutoff=0.6)), None)
    hint = (_('did you mean "{guess}"?').format(guess=guess) if guess else
            _("an answer sheet holds {keys}").format(keys=", ".join(known[:8])))
    return _('unknown key "{key}"; {hint}').format(key=key, hint=hint)


def _show(value: Any) -> str:
    if isinstance(value, jsonfile.Literal):
        return value.word
    if isinstance(value, str):
        return f'"{value[:30]}"'
    if isinstance(value, (list, dict)):
        return _("a list") if isinstance(value, list) else _("an object")
    return "true" if value is True else "false" if value is False else "null" if value is None else str(value)[:30]
