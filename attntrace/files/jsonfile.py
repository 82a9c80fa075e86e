"""Strict JSON: no NaN or Infinity, no duplicate keys, bounded depth (1e999 is caught with its cell)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from attntrace.errors import AttntraceError
from attntrace.escape import quoted
from attntrace.files.text import character_name, read_text, status
from attntrace.files.values import Literal
from attntrace.language import _

if TYPE_CHECKING:
    from pathlib import Path

_LONGEST_INT = 100  # digits: a longer integer is read as the float it becomes anyway (inf past 1e308), never as an int


def parse(text: str, name: str, literals: bool = False, member: Callable[[str, Any], Any] | None = None) -> Any:
    """the JSON value of text, or one error naming the line and column of what is wrong

    literals: keep NaN and Infinity as Literal values for the caller to refuse by cell, instead of refusing them here
    member: given each top-level key of a big text with its value when that value is a long list, read on its own,
    and returning what to keep instead (a matrix as an array): one long list is held as Python numbers at a time
    """
    if member is not None and len(text) >= SPLIT_FROM:
        value = _by_members(text, member)
        if value is not _UNSURE:
            return value
    value = _fast(text)
    return strict(text, name, literals) if value is _UNSURE else value


def strict(text: str, name: str, literals: bool = False) -> Any:
    """parse, by the standard library with every check in Python: slow, but it names what is wrong"""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_int=_integer,
                          parse_constant=Literal if literals else _no_constant)
    except json.JSONDecodeError as e:
        at, why = _mistake(text, e)
        line, column = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
        raise AttntraceError(_("{name}: invalid JSON at line {line} column {column}: {why}").format(
            name=name, line=line, column=column, why=why)) from None
    except RecursionError:
        raise AttntraceError(_("{name}: nested too deeply; a problem's matrices are lists of rows").format(
            name=name)) from None
    except _Bad as e:
        raise AttntraceError(f"{name}: {e}") from None


def _mistake(text: str, e: json.JSONDecodeError) -> tuple[int, str]:
    """where a text stops being JSON and why, in words for someone who wrote it by hand, from the parser's message"""
    at, rest, msg = e.pos, text[e.pos:], e.msg
    before = text[:at].rstrip()
    if rest.startswith(("//", "/*", "#")):
        return at, _("a comment; JSON allows no comments: delete it")
    if rest[:1] in ("]", "}") and before.endswith(","):
        return len(before) - 1, _('a comma before "{bracket}"; JSON allows no trailing comma: delete it').format(
            bracket=rest[0])
    if not rest.strip() and msg.startswith("Expecting"):
        return at, _("the text ends before the JSON does: a closing ] or } (or a value) is missing")
    if rest[:1] in ("“", "”", "‘", "’"):
        return at, _("{quote} is a curly quote; JSON puts strings and keys in straight double quotes (\")").format(
            quote=rest[0])
    if rest[:1] and not rest[0].isascii() and msg.startswith(("Expecting", "Extra data")):
        return at, _("{code} ({name}) where JSON reads only ASCII between values: delete it, or write it in "
                     "ASCII").format(code=f"U+{ord(rest[0]):04X}", name=character_name(rest[0]))
    python = next((word for word in ("True", "False", "None") if rest.startswith(word)), None)
    if python is not None:
        return at, _("{python} is Python; JSON writes {json}").format(
            python=python, json="null" if python == "None" else python.lower())
    if rest.startswith("'"):
        return at, _("JSON puts strings and keys in double quotes (\"), not single quotes (')")
    if msg.startswith("Expecting property name"):
        return at, _("expected a key in double quotes, such as \"x\"")
    if msg == "Expecting value" and rest[:1] in "+.":
        return at, _("a JSON number starts with a digit or -, such as 0.5 or -1 (not .5 or +1)")
    if msg == "Expecting value":
        return at, _("expected a value: a number, a string in double quotes, a list [...], an object {...}, true, false or null")
    start = at
    while start and text[start - 1] in _NUMBERISH:
        start -= 1
    if msg == "Expecting ',' delimiter" and start < at and text[start] in "-0123456789" and rest[:1] in _NUMBERISH:
        end = at
        while end < len(text) and text[end] in _NUMBERISH:
            end += 1
        return start, _("{number} is not a JSON number; write numbers such as 16, 0.5, -1 or 1e-3 (no hex, no "
                        "leading zero, a digit after the point)").format(number=quoted(text[start:end]))
    if msg == "Expecting ',' delimiter":
        return at, _("expected a comma (or the closing bracket) after the value before it")
    if msg == "Expecting ':' delimiter":
        return at, _("expected a colon (:) after the key")
    if msg == "Extra data" and rest[0] == "\0":
        return at, _("a NUL byte after the JSON; the file is damaged or not text: save it again as plain UTF-8")
    if msg == "Extra data":
        return at, _("more text after the JSON has ended; a file holds one object {...}: check its closing brackets")
    if msg.startswith("Unterminated string"):
        return at, _("a string is not closed: a \" is missing")
    if msg.startswith("Invalid control character"):
        return at, _("a line break, tab or control character inside a string: close the string, or write \\n or \\t")
    if msg.startswith("Invalid \\escape") or msg.startswith("Invalid \\uXXXX"):
        return at, _("a backslash starts an escape in a JSON string: write \\\\ for one backslash (or / in a path)")
    return at, msg


_NUMBERISH = frozenset("0123456789abcdefxABCDEFX.+-")
_UNSURE = object()
_DIGITS_AS_ZEROS = str.maketrans("0123456789.", "0000000000d")  # a decimal point as "d": digits after it are a fraction
_LONG_RUN = "0" * 19  # an integer of 19 digits or more may be past 64 bits: orjson reads it as a float, strict as an int
_DEEP = 200  # nesting that deep is left to strict, which refuses what is too deep


def _fast(text: str) -> Any:
    """text parsed by orjson when the result is sure to be strict's, else _UNSURE (then strict parses it, or explains)

    orjson refuses NaN, Infinity, 1e999, lone surrogates and what is not JSON, as strict does (strict then says why); it
    keeps the last of duplicate keys, so the colons of the text must all be accounted for by the parsed objects' keys,
    and it reads deeper than strict, so the brackets must all be accounted for by lists that were looked into.
    """
    if not _orjson_reads_exactly():
        return _UNSURE
    import orjson  # optional, and a heavy import: only for a big file

    digits = text.translate(_DIGITS_AS_ZEROS)
    long_integer = digits.count(_LONG_RUN) != digits.count("d" + _LONG_RUN)
    del digits
    if long_integer or "\\u003" in text or "\\u005" in text:  # an integer orjson reads as a float, or ":" or "["
        return _UNSURE  # written as an escape
    try:
        value = orjson.loads(text)
        accounted = _marks(value, 0)
    except (orjson.JSONDecodeError, RecursionError, _Deep):
        return _UNSURE
    return value if accounted == text.count(":") + text.count("[") else _UNSURE


SPLIT_FROM = 4 << 20  # characters: a shorter text is read whole
MEMBER_FROM = 1 << 20  # characters: a top-level list this long is read on its own
_MOST_QUOTES = 1 << 16  # a text with more strings is read whole
_VALUE_LIST = re.compile(r"[ \t\n\r]*:[ \t\n\r]*\[")  # a key's colon, then a list
_SENTINEL = "\\u0000"  # a string holding U+0000 stands for a list read apart: the text, with no backslash, has none


def _by_members(text: str, member: Callable[[str, Any], Any]) -> Any:
    """text read as its top-level object with each long list (MEMBER_FROM) read apart and given to member, else _UNSURE

    With no backslash in the text, every quote opens or closes a string, so the text after a key's closing quote up to
    the next quote is that key's value and what follows it. The rest of the text, each long list replaced by a string
    that cannot be written without a backslash, must read as an object holding those strings as its own values, and
    each list on its own: then the text is the object with the lists in their places, and every check of _fast holds
    for it as it holds for each part. A text that is mostly one list is read whole.
    """
    if "\\" in text or not text.lstrip().startswith("{") or not text.rstrip().endswith("}"):
        return _UNSURE
    quotes: list[int] = []
    at = text.find('"')
    while at >= 0 and len(quotes) <= _MOST_QUOTES:
        quotes.append(at)
        at = text.find('"', at + 1)
    if at >= 0 or len(quotes) % 2:
        return _UNSURE
    spans: list[tuple[int, int]] = []
    for number in range(1, len(quotes), 2):
        found = _VALUE_LIST.match(text, quotes[number] + 1)
        upto = quotes[number + 1] if number + 1 < len(quotes) else len(text)
        if found is None or upto - found.end() < MEMBER_FROM:
            continue
        near = max(found.end(), upto - 64)
        tail = text[near:upto].rstrip()  # the list's end, then "," before the next key or "}" at the end
        if not tail or tail[-1] != ("," if number + 1 < len(quotes) else "}"):
            return _UNSURE
        spans.append((found.end() - 1, near + len(tail[:-1].rstrip())))
    if not spans or max(end - start for start, end in spans) > len(text) // 2:
        return _UNSURE  # a list read apart is copied first: for most of the text, that costs more than it saves
    parts, done = [], 0
    for number, (start, end) in enumerate(spans):
        parts += [text[done:start], f'"{_SENTINEL}{number}"']
        done = end
    outline = _fast("".join([*parts, text[done:]]))
    if not isinstance(outline, dict):
        return _UNSURE
    keys = {value: key for key, value in outline.items() if isinstance(value, str) and value.startswith("\0")}
    if sorted(keys) != sorted(f"\0{number}" for number in range(len(spans))):
        return _UNSURE
    for number, (start, end) in enumerate(spans):
        value = _fast(text[start:end])
        if value is _UNSURE:
            return _UNSURE
        key = keys[f"\0{number}"]
        outline[key] = member(key, value)
        del value
    return outline


@cache
def _orjson_reads_exactly() -> bool:
    """whether orjson is there and reads numbers hard to round as Python does (checked once)"""
    try:
        import orjson  # optional, and a heavy import: only for a big file
    except ImportError:
        return False
    hard = ["2.4703282292062328e-324", "2.2250738585072011e-308", "1.7976931348623157e308", "9007199254740993", "1e23",
            "0.1000000000000000055511151231257827021181583404541015625", "7.038531e-26", "8.98846567431158e307",
            "-0.0", "1.00000000000000011102230246251565404236316680908203125", "5e-324", "123456789012345678"]
    return [repr(v) for v in orjson.loads("[" + ",".join(hard) + "]")] == [repr(json.loads(v)) for v in hard]


class _Deep(Exception):
    pass


def _marks(value: Any, depth: int) -> int:
    """the colons and opening brackets a JSON text of value holds when no key is repeated: one colon per key, one
    bracket per list, and those inside strings

    A list that starts with a number is taken as a row of numbers and not looked into. Should it hold a list, or an
    object with keys, after all, their marks go uncounted, the count falls short of the text's, and strict reads it.
    """
    if depth > _DEEP:
        raise _Deep()
    if isinstance(value, str):
        return value.count(":") + value.count("[")
    if isinstance(value, dict):
        return sum(1 + _marks(key, depth) + _marks(item, depth + 1) for key, item in value.items())
    if isinstance(value, list):
        if value and type(value[0]) in _SCALARS:
            return 1
        return 1 + sum(_marks(item, depth + 1) for item in value)
    return 0


_SCALARS = {int, float, bool, type(None)}


def settings(path: Path, example: str, literals: bool = False) -> dict[str, Any]:
    """a directory's optional settings file: a JSON object, or nothing when the file is absent"""
    if status(path) == "missing":
        return {}
    parsed = parse(read_text(path), str(path), literals)
    if not isinstance(parsed, dict):
        raise AttntraceError(_("{path}: the top level must be an object of settings, such as {example}").format(
            path=path, example=example))
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
            raise _Bad(_("key {key} appears twice; keep one").format(key=quoted(key)))
        seen[key] = value
    return seen


def _no_constant(word: str) -> float:
    raise _Bad(_("{word} is not a number attntrace accepts; give a finite value").format(word=word))

