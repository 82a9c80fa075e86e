"""A marked sheet's words kept in two forms: the English a machine reads (JSON, the gradebook, Gradescope) and the
chosen language a person reads (check's report), from one catalogue message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from attntrace import language
from attntrace.core.arithmetic import round_half_up
from attntrace.language import N_

T = TypeVar("T")


class Said(str):
    """a sentence whose str is its English, so that JSON and CSV carry the same text in every language; said() gives
    it in the chosen language from the catalogue message and fields it keeps (a field may be a Said too)"""

    message: str
    fields: dict[str, Any]
    forms: tuple[str, str, int] | None = None  # a count's singular, plural and number

    def __new__(cls, message: str, **fields: Any) -> Said:
        self = super().__new__(cls, message.format(**fields))
        self.message, self.fields = message, fields
        return self

    def said(self) -> str:
        message = language._(self.message) if self.forms is None else language.ngettext(*self.forms)
        return message.format(**{name: said(value) for name, value in self.fields.items()})


def ngettext(singular: str, plural: str, count: int, **fields: Any) -> Said:
    """gettext's plural message for count, as a Said; {n} is count with thousands separators, unless fields give it"""
    out = Said(singular if count == 1 else plural, **{"n": f"{count:,}", **fields})
    out.forms = (singular, plural, count)
    return out


def said(value: Any) -> Any:
    """a Said in the chosen language; anything else (a label, a number) as it is"""
    return value.said() if isinstance(value, Said) else value


def joined(parts: list[Any], pair: str) -> Any:
    """parts joined two at a time by pair ("{first}; {second}"): the first part alone when there is one, "" for none"""
    out = parts[0] if parts else ""
    for part in parts[1:]:
        out = Said(pair, first=out, second=part)
    return out


def in_every_language(make: Callable[[], T]) -> list[tuple[str, T]]:
    """make() in each language, the chosen one first, each with its language: what a text printed in any of them says"""
    chosen = language.current()
    out = []
    for other in (chosen, *(code for code in language.PRINTED if code != chosen)):
        with language.speaking(other):
            out.append((other, make()))
    return out


def number(value: float, precision: int) -> str:
    """a cell as a teacher writes it: at its precision, never -0.00, and huge numbers in powers of ten"""
    if value != value:
        return Said(N_("blank"))
    if value == float("-inf"):
        return Said(N_("masked (left blank)"))
    if value == float("inf"):  # only ever a value computed from a student's own huge numbers
        return Said(N_("a number past a float64's 1.8e308"))
    if abs(value) >= 1e12:
        return f"{value:.3e}"
    precision = min(precision, 9)
    text = f"{float(round_half_up(np.float64(value), precision)):.{precision}f}"  # halves away from zero, as by hand
    return text[1:] if text.startswith("-") and float(text) == 0 else text
