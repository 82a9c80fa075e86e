"""Turning parsed values into float64 arrays, naming the key, row and column of anything wrong."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from attntrace.errors import AttntraceError
from attntrace.files.jsonfile import Literal
from attntrace.render.escape import visible
from attntrace.words import plural

_SURROGATE = re.compile("[\ud800-\udfff]")


def quoted(text: str, limit: int = 30) -> str:
    """text quoted for a message: at most limit characters, control characters and lone surrogates as escapes"""
    cut = text if len(text) <= limit else text[:limit] + "…"
    return f'"{visible(cut)}"'


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quoted(value) if len(value) < 30 else "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return repr(value)


_NUMBERS = {int, float}


def _number(value: Any, where: str, cell: str) -> float:
    """value as a float; where names it for a wrong kind (x[0][1] (row 1, column 2)), cell for a value not finite"""
    if isinstance(value, Literal):
        raise AttntraceError(f"{cell} is {value.word}; every value must be finite")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AttntraceError(f"{where}: expected a number, got {_kind(value)}")
    number = float(value) if isinstance(value, float) or abs(value) < 1e308 else math.inf
    if not math.isfinite(number):
        raise AttntraceError(f"{cell} is {number}; every value must be finite")
    return number


def surrogate(text: str, where: str) -> None:
    """refuse a string holding a lone surrogate (JSON can write "\ud800", but it is not text: nothing can print it)"""
    found = _SURROGATE.search(text)
    if found:
        raise AttntraceError(
            f"{where} holds a lone surrogate ({visible(found[0])}) at character {found.start() + 1}, which is not text; "
            "write the character itself, or both halves of its surrogate pair"
        )


def matrix(value: Any, key: str) -> np.ndarray:
    """a non-empty list of equal-length rows of finite numbers"""
    if not isinstance(value, list):
        raise AttntraceError(f"{key} must be a matrix (a list of rows), got {_kind(value)}")
    if not value:
        raise AttntraceError(f"{key} is empty; it needs at least one row")
    if not all(isinstance(row, list) for row in value):
        if all(not isinstance(row, (list, dict)) for row in value):
            raise AttntraceError(f"{key} is 1-D; write it as a list of rows, e.g. [[...]] for a single row")
        bad = next(i for i, row in enumerate(value) if not isinstance(row, list))
        raise AttntraceError(f"{key}[{bad}] (row {bad + 1}): expected a row (a list), got {_kind(value[bad])}")
    width = len(value[0])
    if width == 0:
        raise AttntraceError(f"{key} row 1 is empty")
    for i, row in enumerate(value):
        if len(row) != width:
            raise AttntraceError(f"{key} row {i + 1} has {plural(len(row), 'value')}, row 1 has {width}")
        if not set(map(type, row)) <= _NUMBERS:
            for j, cell in enumerate(row):
                if isinstance(cell, list):
                    raise AttntraceError(f"{key}[{i}][{j}]: expected a number, got a list ({key} must be 2-D)")
                _number(cell, f"{key}[{i}][{j}] (row {i + 1}, column {j + 1})", f"{key} row {i + 1}, column {j + 1}")
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
        raise AttntraceError(f"{key} is {m.shape[0]} x {m.shape[1]}; a bias is one list of numbers")
    if not isinstance(value, list):
        raise AttntraceError(f"{key} must be a list of numbers, got {_kind(value)}")
    if not value:
        raise AttntraceError(f"{key} is empty")
    return np.array([_number(v, f"{key}[{j}] (value {j + 1})", f"{key} value {j + 1}") for j, v in enumerate(value)],
                    dtype=np.float64)


def array(a: np.ndarray, key: str, ndim: int) -> np.ndarray:
    """check an array read from a binary file: numeric, finite and of the right rank"""
    if a.dtype.kind == "b":  # as a JSON file's true and false are refused, never read as 1 and 0
        raise AttntraceError(f"{key} has dtype bool (true/false); expected numbers: save it as float, 1.0 and 0.0")
    if a.dtype.kind not in "iuf":
        raise AttntraceError(f"{key} has dtype {a.dtype}; expected numbers")
    if ndim == 1 and a.ndim == 2 and 1 in a.shape:
        a = a.reshape(-1)
    if ndim == 2 and a.ndim == 1:
        raise AttntraceError(f"{key} is 1-D with {plural(a.shape[0], 'value')}; it must be 2-D (reshape it to (1, -1) or (-1, 1))")
    if a.ndim != ndim:
        raise AttntraceError(f"{key} has {a.ndim} dimensions; expected {ndim}")
    if a.size == 0:
        raise AttntraceError(f"{key} is empty")
    a = a.astype(np.float64)
    bad = np.argwhere(~np.isfinite(a))
    if bad.size:
        cell = [int(c) + 1 for c in bad[0]]
        where = f"row {cell[0]}, column {cell[1]}" if a.ndim == 2 else f"value {cell[0]}"
        raise AttntraceError(f"{key} {where} is {a[tuple(bad[0])]}; every value must be finite")
    return a


def labels(value: Any, key: str) -> tuple[str, ...]:
    """a list of labels: strings (numbers are read as their text), each of them text, checked for length by the Problem"""
    if not isinstance(value, list):
        raise AttntraceError(f"{key} must be a list of labels (strings), got {_kind(value)}")
    for i, t in enumerate(value):
        if isinstance(t, bool) or not isinstance(t, (str, int, float)):
            raise AttntraceError(f"{key}[{i}] (label {i + 1}): expected a string, got {_kind(t)}")
        if isinstance(t, str):
            surrogate(t, f"{key}[{i}] (label {i + 1})")
    return tuple(str(t) for t in value)


def flags(value: Any, key: str) -> tuple[bool, ...]:
    if not isinstance(value, list) or not all(isinstance(t, bool) for t in value):
        bad = next((j for j, t in enumerate(value) if not isinstance(t, bool)), None) if isinstance(value, list) else None
        where = f"{key}[{bad}]" if bad is not None else key
        got = _kind(value[bad]) if bad is not None and isinstance(value, list) else _kind(value)
        raise AttntraceError(f"{where}: expected true or false per key (true = padded), got {got}")
    return tuple(value)
