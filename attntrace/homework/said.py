"""A marked sheet's words kept in two forms: the English a machine reads (JSON, the gradebook, Gradescope) and the
chosen language a person reads (check's report), from one catalogue message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from attntrace import language

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
