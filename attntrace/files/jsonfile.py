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


def parse(text: str, name: str, literals: bool = False) -> Any:
    """the JSON value of text, or one error naming the line and column of what is wrong

    literals: keep NaN and Infinity as Literal values for the caller to refuse by cell, instead of refusing them here
    """
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=Literal if literals else _no_constant)
    except json.JSONDecodeError as e:
        raise AttntraceError(f"{name}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise AttntraceError(f"{name}: nested too deeply; a problem's matrices are lists of rows") from None
    except _Bad as e:
        raise AttntraceError(f"{name}: {e}") from None


def settings(path: Path, example: str) -> dict[str, Any]:
    """a directory's optional settings file: a JSON object, or nothing when the file is absent"""
    if not path.exists():
        return {}
    from attntrace.files.text import read_text

    parsed = parse(read_text(path), str(path))
    if not isinstance(parsed, dict):
        raise AttntraceError(f"{path}: the top level must be an object of settings, such as {example}")
    return parsed


class _Bad(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _Bad(f'key "{key}" appears twice; keep one')
        seen[key] = value
    return seen


def _no_constant(word: str) -> float:
    raise _Bad(f"{word} is not a number attntrace accepts; give a finite value")
