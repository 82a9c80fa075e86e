"""A worksheet's fixed words read back in any language it is printed in: its heading, the student's name line, and
the instructions (the input asked for, the rounding, the scaling, the mask and the heads)."""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass
from functools import cache

from attntrace import language
from attntrace.core.trace import Trace
from attntrace.homework.said import in_every_language
from attntrace.homework.sheet import MAX_PRECISION, SheetError
from attntrace.homework.worksheet import instructions, printed
from attntrace.language import N_, _, speaking


def student(lines: list[str]) -> str | None:
    """the name written on the worksheet's name line ("Name:", "姓名：" in any language), given the lines before its
    instructions; None when left blank"""
    name = _reading(language.current())[2]
    for line in lines:
        found = name.fullmatch(unicodedata.normalize("NFKC", line))  # "Name：李明" with a full-width colon too
        if found:
            text = " ".join(found[1].replace("\\", "").strip("_* \t").split())
            return text or None
    return None


def told_precision(lines: list[str]) -> int | None:
    """the decimals a worksheet's instructions ask for, in any language it is printed in; None without them"""
    told = read_instructions(flattened(lines)[0])
    return told[0].precision if told else None


@dataclass(frozen=True)
class _Sentences:
    """a worksheet's instruction sentences in one language, as patterns"""

    language: str
    asks: tuple[re.Pattern[str], ...]
    mask: re.Pattern[str]
    heads: tuple[re.Pattern[str], ...]


@dataclass(frozen=True)
class Told:
    """what a worksheet's instructions say, read in the language of the words that matched"""

    language: str
    start: int  # where the paragraph starts in the flat text
    query: int | None
    precision: int
    scale: str  # as written
    settings: tuple[str | None, str | None]  # the mask's and the heads' sentences, as written; None when not said


NUMBERED = ("precision", "input", "heads", "d_k", "d_v")  # the fields of the instructions that are numbers


@cache
def _reading(chosen: str) -> tuple[list[_Sentences], tuple[str, ...], re.Pattern[str]]:
    """a worksheet's words in every language, the chosen one first, from the catalogue it is printed by: its
    instruction sentences, what its heading starts with ("Worksheet:", "练习单:", NFKC and without spaces), and its
    name line ("**Name:** Li Wei", "姓名：李明")"""
    sentences, headings, names = [], [], []
    for code, words in in_every_language(printed):
        sentences.append(_Sentences(code, tuple(re.compile(_pattern(form)) for form in words.asks),
                                    re.compile(r"\s*" + _pattern(words.mask)),
                                    tuple(re.compile(r"\s*" + _pattern(form)) for form in words.heads)))
        headings += [spaceless(form.split("{", 1)[0]) for form in words.headings]
        names.append(re.escape(spaceless(words.name.split("{", 1)[0]).rstrip(":")))
    name = re.compile(r"\s*\**\s*(?:" + "|".join(dict.fromkeys(names)) + r")\s*:\s*\**\s*(.*?)\s*", re.IGNORECASE)
    return sentences, tuple(dict.fromkeys(headings)), name


def spaceless(text: str) -> str:
    """text as a heading's or name line's words are compared: NFKC (a full-width colon is a colon), no spaces"""
    return "".join(unicodedata.normalize("NFKC", text).split())


def heading(line: str) -> bool:
    """whether a line is a worksheet's heading ("# Worksheet: ...", "练习单：...") in any language"""
    words = spaceless(line.lstrip().lstrip("#"))
    return words.startswith(_reading(language.current())[1])


def _pattern(form: str) -> str:
    """a sentence to fill in as a regular expression: its words with any whitespace between any two characters (plain
    text wraps a long line, even inside Chinese), each number field a group of digits, each other field the shortest
    text up to the words after it (an ASCII full stop only where a space or the end follows, as in "by 2.5.")"""
    out, loose = [], False
    for literal, name, _spec, _conversion in string.Formatter().parse(form):
        for ch in literal:
            if not ch.isspace():
                out.append(r"\.(?=\s|$)" if ch == "." and loose else re.escape(ch))
                loose = False
        if name is not None:
            out.append(rf"(?P<{name}>\d+)" if name in NUMBERED else rf"(?P<{name}>.+?)")
            loose = name not in NUMBERED
    return r"\s*".join(out)


def flattened(lines: list[str]) -> tuple[str, list[int]]:
    """the text with every run of whitespace one space, as its sentences are searched, and where each line starts in it"""
    words, starts, at = [], [], 0
    for line in lines:
        starts.append(at)
        flat = " ".join(line.split())
        if flat:
            words.append(flat)
            at += len(flat) + 1
    return " ".join(words), starts


def read_instructions(flat: str) -> list[Told]:
    """the instructions in each language they are written in, the chosen one first: a worksheet printed in any
    language, or in Chinese with the English sentence after it (as worksheets once were), is read the same"""
    out: list[Told] = []
    for sentences in _reading(language.current())[0]:
        found = next((m for m in (pattern.search(flat) for pattern in sentences.asks) if m is not None), None)
        if found is None or any(told.start == found.start() for told in out):  # one paragraph read in two languages
            continue
        mask = sentences.mask.match(flat, found.end())
        at = mask.end() if mask else found.end()
        heads = next((m for m in (pattern.match(flat, at) for pattern in sentences.heads) if m is not None), None)
        fields = found.groupdict()
        out.append(Told(sentences.language, found.start(), int(fields["input"]) if fields.get("input") else None,
                         int(fields["precision"]), fields["scale"],
                         (mask[0].strip() if mask else None, heads[0].strip() if heads else None)))
    return out


def settings_told(told: list[Told], origin: str) -> tuple[int | None, int]:
    """the input asked for and the rounding, from the worksheet's instructions"""
    if not told:
        raise SheetError(_('{sheet}: this does not look like an attntrace worksheet (no "Compute self-attention for ... '
                           'Round every intermediate to N decimals" paragraph); fill in what attntrace worksheet '
                           "printed").format(sheet=origin))
    precision = told[0].precision
    if precision > MAX_PRECISION:
        raise SheetError(_("{sheet}: the worksheet rounds to {precision} decimals; at most {most} can be checked").format(
            sheet=origin, precision=precision, most=MAX_PRECISION))
    return told[0].query, precision


def same_instructions(t: Trace, precision: int, theirs: Told, origin: str) -> None:
    """a worksheet printed with another --scale, --mask or --heads than the problem's would be marked against other
    numbers; compared in the language the worksheet is written in"""
    with speaking(theirs.language):
        ours = next(told for told in read_instructions(" ".join(instructions(t, precision).split()))
                    if told.language == theirs.language)
    if spaceless(theirs.scale) != spaceless(ours.scale):
        raise SheetError(_('{sheet}: the worksheet says "{theirs}" but the problem it is checked against says "{ours}"; '
                           "give the worksheet's problem file, with the --scale or --scale-by it was printed with").format(
            sheet=origin, theirs=theirs.scale, ours=ours.scale))
    for found, meant, none in zip(theirs.settings, ours.settings, (N_("names no mask"), N_("names no heads"))):
        if spaceless(found or "") != spaceless(meant or ""):
            what = _('says "{sentence}"').format(sentence=found) if found else _(none)
            wanted = _('"{sentence}"').format(sentence=meant) if meant else _("none")
            raise SheetError(_("{sheet}: the worksheet {what} but the problem it is checked against has {wanted}; give "
                               "the worksheet's problem file, with the --mask or --heads it was printed with").format(
                sheet=origin, what=what, wanted=wanted))
