"""Turning parsed values into float64 arrays, naming the key, row and column of anything wrong."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from attntrace.errors import AttntraceError
from attntrace.escape import quoted, visible
from attntrace.language import _
from attntrace.words import counted

_SURROGATE = re.compile("[\ud800-\udfff]")


class Literal:
    """NaN, Infinity or -Infinity where a number belongs, kept so that the cell holding it can be named"""

    def __init__(self, word: str) -> None:
        self.word = word

    def __repr__(self) -> str:
        return self.word


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quoted(value) if len(value) < 30 else _("a string")
    if isinstance(value, list):
        return _("a list")
    if isinstance(value, dict):
        return _("an object")
    return repr(value)


_NUMBERS = {int, float}


def _number(value: Any, where: str, cell: str) -> float:
    """value as a float; where names it for a wrong kind (x[0][1] (row 1, column 2)), cell for a value not finite"""
    if isinstance(value, Literal):
        raise AttntraceError(_("{cell} is {value}; every value must be finite").format(cell=cell, value=value.word))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AttntraceError(_("{where}: expected a number, got {kind}").format(where=where, kind=_kind(value)))
    number = float(value) if isinstance(value, float) or abs(value) < 1e308 else math.inf
    if not math.isfinite(number):
        raise AttntraceError(_("{cell} is {value}; every value must be finite").format(cell=cell, value=number))
    return number


def surrogate(text: str, where: str) -> None:
    """refuse a string holding a lone surrogate (JSON can write "\ud800", but it is not text: nothing can print it)"""
    found = _SURROGATE.search(text)
    if found:
        raise AttntraceError(_(
            "{where} holds a lone surrogate ({character}) at character {index}, which is not text; write the "
            "character itself, or both halves of its surrogate pair"
        ).format(where=where, character=visible(found[0]), index=found.start() + 1))


def matrix(value: Any, key: str) -> np.ndarray:
    """a non-empty list of equal-length rows of finite numbers"""
    if not isinstance(value, list):
        raise AttntraceError(_("{key} must be a matrix (a list of rows), got {kind}").format(key=key, kind=_kind(value)))
    if not value:
        raise AttntraceError(_("{key} is empty; it needs at least one row").format(key=key))
    if not all(isinstance(row, list) for row in value):
        if all(not isinstance(row, (list, dict)) for row in value):
            raise AttntraceError(_("{key} is 1-D; write it as a list of rows, e.g. [[...]] for a single row").format(
                key=key))
        bad = next(i for i, row in enumerate(value) if not isinstance(row, list))
        raise AttntraceError(_("{key}[{i}] (row {row}): expected a row (a list), got {kind}").format(
            key=key, i=bad, row=bad + 1, kind=_kind(value[bad])))
    width = len(value[0])
    if width == 0:
        raise AttntraceError(_("{key} row 1 is empty").format(key=key))
    for i, row in enumerate(value):
        if len(row) != width:
            raise AttntraceError(_("{key} row {row} has {values}, row 1 has {width}").format(
                key=key, row=i + 1, values=counted(len(row), "value"), width=width))
        if not set(map(type, row)) <= _NUMBERS:
            for j, cell in enumerate(row):
                if isinstance(cell, list):
                    raise AttntraceError(_("{key}[{i}][{j}]: expected a number, got a list ({key} must be 2-D)").format(
                        key=key, i=i, j=j))
                _number(cell, _("{key}[{i}][{j}] (row {row}, column {column})").format(
                    key=key, i=i, j=j, row=i + 1, column=j + 1), _cell(key, i, j))
    try:
        a = np.array(value, dtype=np.float64)
    except OverflowError:
        a = np.array([[float(c) if abs(c) < 1e308 else np.inf for c in row] for row in value])
    return array(a, key, 2)


def vector(value: Any, key: str) -> np.ndarray:
    """a non-empty list of finite numbers (a bias); a single row or column is accepted too"""
    if isinstance(value, list) and value and all(isinstance(r, list) for r in value):
        m = matrix(value, key)
        if 1 in m.shape:
            return m.reshape(-1)
        raise AttntraceError(_("{key} is {rows} x {columns}; a bias is one list of numbers").format(
            key=key, rows=m.shape[0], columns=m.shape[1]))
    if not isinstance(value, list):
        raise AttntraceError(_("{key} must be a list of numbers, got {kind}").format(key=key, kind=_kind(value)))
    if not value:
        raise AttntraceError(_("{key} is empty").format(key=key))
    return np.array([_number(v, _("{key}[{j}] (value {index})").format(key=key, j=j, index=j + 1), _cell(key, j))
                     for j, v in enumerate(value)], dtype=np.float64)


def _cell(key: str, i: int, j: int | None = None) -> str:
    """a cell of key (from 0) as a message names it: x row 1, column 2; b_q value 3"""
    if j is None:
        return _("{key} value {index}").format(key=key, index=i + 1)
    return _("{key} row {row}, column {column}").format(key=key, row=i + 1, column=j + 1)


def array(a: np.ndarray, key: str, ndim: int) -> np.ndarray:
    """check an array read from a binary file: numeric, finite and of the right rank"""
    if a.dtype.kind == "b":  # as a JSON file's true and false are refused, never read as 1 and 0
        raise AttntraceError(_("{key} has dtype bool (true/false); expected numbers: save it as float, 1.0 and "
                               "0.0").format(key=key))
    if a.dtype.kind not in "iuf":
        raise AttntraceError(_("{key} has dtype {dtype}; expected numbers").format(key=key, dtype=a.dtype))
    if ndim == 1 and a.ndim == 2 and 1 in a.shape:
        a = a.reshape(-1)
    if ndim == 2 and a.ndim == 1:
        raise AttntraceError(_("{key} is 1-D with {values}; it must be 2-D (reshape it to (1, -1) or (-1, 1))").format(
            key=key, values=counted(a.shape[0], "value")))
    if a.ndim != ndim:
        raise AttntraceError(_("{key} has {n} dimensions; expected {ndim}").format(key=key, n=a.ndim, ndim=ndim))
    if a.size == 0:
        raise AttntraceError(_("{key} is empty").format(key=key))
    a = a.astype(np.float64)
    bad = np.argwhere(~np.isfinite(a))
    if bad.size:
        cell = [int(c) for c in bad[0]]
        raise AttntraceError(_("{cell} is {value}; every value must be finite").format(
            cell=_cell(key, *cell), value=a[tuple(bad[0])]))
    return a


def labels(value: Any, key: str) -> tuple[str, ...]:
    """a list of labels: strings (numbers are read as their text), each of them text, checked for length by the Problem"""
    if not isinstance(value, list):
        raise AttntraceError(_("{key} must be a list of labels (strings), got {kind}").format(key=key, kind=_kind(value)))
    for i, t in enumerate(value):
        if isinstance(t, bool) or not isinstance(t, (str, int, float)):
            raise AttntraceError(_("{where}: expected a string, got {kind}").format(where=_label(key, i), kind=_kind(t)))
        if isinstance(t, str) and _SURROGATE.search(t):
            surrogate(t, _label(key, i))
    return tuple(str(t) for t in value)


def _label(key: str, i: int) -> str:
    return _("{key}[{i}] (label {label})").format(key=key, i=i, label=i + 1)


def flags(value: Any, key: str) -> tuple[bool, ...]:
    if not isinstance(value, list) or not all(isinstance(t, bool) for t in value):
        bad = next((j for j, t in enumerate(value) if not isinstance(t, bool)), None) if isinstance(value, list) else None
        where = f"{key}[{bad}]" if bad is not None else key
        got = _kind(value[bad]) if bad is not None and isinstance(value, list) else _kind(value)
        raise AttntraceError(_("{where}: expected true or false per key (true = padded), got {kind}").format(
            where=where, kind=got))
    return tuple(value)
