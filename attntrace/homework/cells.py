"""A cell of a filled worksheet read as its text: a number (full-width digits and points, any minus sign, a decimal
comma, a percentage), a blank, or masked; and the decimals it was written with."""

from __future__ import annotations

import math
import re
import unicodedata
from decimal import Decimal

from attntrace.files.csvfile import SEPARATORS, WIDE
from attntrace.homework.said import Said, joined
from attntrace.language import N_

NUMBER = re.compile(r"[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?")
SIGN_APART = re.compile(r"^([+-])\s+(?=[\d.,])")  # "- 0.76", typed with a space after the sign
TYPED = {**dict.fromkeys(map(ord, "\u2212\u2012\u2013\ufe63\uff0d"), "-"),  # minus signs a word processor types
         ord("\u3002"): "."}  # and the full stop a Chinese input method types for a decimal point: -0。07
MASKED = ("-inf", "-∞", "masked", "x", "—")
BLANK = ("", "?", "-", "n/a", "na")  # after TYPED, so an en dash is a blank too
COMMAS = N_("decimal commas read as decimal points")
PERCENTS = N_("percentages read as fractions (31% as 0.31)")


TYPED_WIDE = {**{c: WIDE[c][1] for c in WIDE if c not in "−－。"}, "、": SEPARATORS["、"], "，": SEPARATORS["，"]}
SEPARATED = re.compile(r"(?<=[、，])")  # numbers typed one after another with a Chinese comma between them


def wide_note(seen: set[str]) -> list[Said]:
    """one note naming the full-width forms a Chinese input method typed in the cells, read as their ASCII ones
    (a minus sign and 。 for a decimal point are read without a note, as any minus sign is)"""
    forms = list(dict.fromkeys(Said(TYPED_WIDE[c]) for c in TYPED_WIDE if c in seen))
    if not forms:
        return []
    return [Said(N_("read as typed by a Chinese input method: {forms}"), forms=joined(forms, N_("{first}, {second}")))]


def cell_value(text: str) -> float | None:
    """a cell of a filled table read as the eight steps read one: NaN when blank, -inf when masked, else the number
    (full-width digits and points, any minus sign, a decimal comma); None when it is no number"""
    cell = cell_text(text)
    if cell.strip("_").lower() in BLANK:
        return float("nan")
    if cell.lower() in MASKED:
        return float("-inf")
    if not NUMBER.fullmatch(cell):
        return None
    value = float(cell.replace(",", "."))
    return value if math.isfinite(value) else None


def number_in(text: str) -> float | None:
    """a printed number read back, or None when the cell holds none"""
    cell = cell_text(text)
    return float(cell.replace(",", ".")) if NUMBER.fullmatch(cell) else None


def norm(text: str) -> str:
    """text compared as a reader sees it: NFC, runs of spaces collapsed"""
    return " ".join(unicodedata.normalize("NFC", text).split())


def written_decimals(text: str) -> int:
    """the decimals a cell was written with, trailing zeros counted ("0.10": 2; "1.5e-3": 4)"""
    cell = cell_text(text).replace(",", ".").lower()
    percent = 2 if cell.endswith("%") else 0  # "31%" is 0.31: two decimals more than written
    mantissa, _, exponent = cell.rstrip("%").rstrip().partition("e")
    shown = len(mantissa.partition(".")[2]) + percent
    return max(0, shown - int(exponent)) if exponent.lstrip("+-").isdigit() else shown


def percentage(number: str) -> float:
    """a percentage as the fraction's float ("33.33" gives exactly float("0.3333")); inf when past a float64"""
    try:
        return float(Decimal(number).scaleb(-2))
    except ArithmeticError:  # an exponent past what decimal reckons with
        return math.inf


def cell_text(text: str) -> str:
    """a cell as read: NFKC, any minus sign as "-", and no space between a sign and its number"""
    cell = norm(unicodedata.normalize("NFKC", text.rstrip("、，"))).translate(TYPED)
    return SIGN_APART.sub(r"\1", cell)
