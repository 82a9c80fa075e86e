"""Strict JSON: no NaN or Infinity, no duplicate keys, bounded depth (1e999 is caught with its cell)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attntrace.errors import AttntraceError


class Literal:
    """NaN, Infinity or -Infinity where a number belongs, kept so that the cell holding it can be named"""

    def __init__(self, word: str) -> None:
        self.word = word

    def __repr__(self) -> str:
        return self.word


_LONGEST_INT = 100  # digits: a longer integer is read as the float it becomes anyway (inf past 1e308), never as an int


def parse(text: str, name: str, literals: bool = False) -> Any:
    """the JSON value of text, or one error naming the line and column of what is wrong

    literals: keep NaN and Infinity as Literal values for the caller to refuse by cell, instead of refusing them here
    """
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_int=_integer,
                          parse_constant=Literal if literals else _no_constant)
    except json.JSONDecodeError as e:
        raise AttntraceError(f"{name}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise AttntraceError(f"{name}: nested too deeply; a problem's matrices are lists of rows") from None
    except _Bad as e:
        raise AttntraceError(f"{name}: {e}") from None


def settings(path: Path, example: str, literals: bool = False) -> dict[str, Any]:
    """a directory's optional settings file: a JSON object, or nothing when the file is absent"""
    from attntrace.files.text import read_text, status

    if status(path) == "missing":
        return {}
    parsed = parse(read_text(path), str(path), literals)
    if not isinstance(parsed, dict):
        raise AttntraceError(f"{path}: the top level must be an object of settings, such as {example}")
    return parsed


def _integer(digits: str) -> int | float:
    """a JSON integer; past _LONGEST_INT digits the float it stands for (Python refuses to read 4300 digits as an int)"""
    return int(digits) if len(digits) <= _LONGEST_INT else float(digits)


class _Bad(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _Bad(f'key {_quoted(key)} appears twice; keep one')
        seen[key] = value
    return seen


def _no_constant(word: str) -> float:
    raise _Bad(f"{word} is not a number attntrace accepts; give a finite value")


def _quoted(text: str) -> str:
    from attntrace.files.values import quoted

    return quoted(text)
