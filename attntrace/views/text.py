"""Text as a terminal lays it out: columns by display width, so 我 and 😀 take two and a combining accent none."""

from __future__ import annotations

import re


def width(text: str) -> int:
    """the columns a terminal gives text, as the rich tables measure it: wide and full-width characters (我, 😀) two,
    combining and zero-width ones none, an emoji sequence (👨‍👩‍👧, ❤️, 👍🏽) as one emoji"""
    if text.isascii() or (text.isprintable() and max(text) < "\u0300"):  # Latin letters and signs (·, ×, é): one
        # column each, as the tables measure them
        return len(text)
    wide = _chinese(text)
    if wide is not None:  # Chinese sentences and labels: no need of rich, which costs a Chinese run start-up time
        return len(text) + wide
    from rich.cells import cell_len  # only for a label of other characters: it costs start-up time

    return cell_len(text)


def _chinese(text: str) -> int | None:
    """how many characters of text are wide, when each is printable ASCII, a Latin sign (·, ×, é) or a CJK character
    or full-width form that rich also gives two columns; None for any other"""
    wide = 0
    for ch in text:
        if " " <= ch < "\u0300" and ch != "\x7f" and not "\x80" <= ch < "\xa0" or "\u2010" <= ch <= "\u2027":
            continue  # one column: Latin letters and signs, dashes, quotes and ellipses
        if "\u3000" <= ch <= "\u3029" or "\u3400" <= ch <= "\u4dbf" or "\u4e00" <= ch <= "\u9fff" \
                or "\uff01" <= ch <= "\uff60" or "\uffe0" <= ch <= "\uffe6":
            wide += 1
            continue
        return None
    return wide


def left(text: str, columns: int) -> str:
    """text padded on the right to fill columns on screen"""
    return text + " " * max(0, columns - width(text))


def right(text: str, columns: int) -> str:
    """text padded on the left to fill columns on screen"""
    return " " * max(0, columns - width(text)) + text


def cut(text: str, columns: int, ellipsis: str = "…") -> str:
    """text that fits in columns on screen, its end replaced by an ellipsis when it is too long"""
    if width(text) <= columns:
        return text
    room = columns - width(ellipsis)
    kept = ""
    for ch in text:
        if width(kept + ch) > room:
            break
        kept += ch
    return kept + ellipsis


def lines(parts: list[str], columns: int, gap: str = "  ") -> list[str]:
    """parts joined on one line while they fit in columns, otherwise broken between them (never inside one)"""
    out: list[str] = []
    for part in parts:
        if out and width(out[-1] + gap + part) <= columns:
            out[-1] += gap + part
        else:
            out.append(part)
    return out


def fits(text: str, columns: int) -> bool:
    """whether text takes at most columns on screen; measured only when its UTF-8 length is more (a character takes
    at most as many columns as its bytes, so a label need not bring in rich to be measured)"""
    return len(text.encode("utf-8", "surrogatepass")) <= columns or width(text) <= columns


def wrapped(text: str, columns: int, indent: str = "") -> list[str]:
    """text broken into lines of at most columns on screen, each after the first after indent: at spaces, and in
    Chinese between its characters; a line ends where the text holds least (see _breaks), so that a list of numbers,
    a number and the word it goes with, or a formula is broken only when it is longer than a line; a word longer than
    a line is broken where the line ends"""
    if fits(text, columns):
        return [text]
    body = text.lstrip(" ")
    atoms, breaks = _breaks(body)
    sizes = [width(atom) for atom in atoms]
    out: list[str] = []
    lead = text[:len(text) - len(body)]  # what the line being filled starts with: the text's own indent, then indent
    start = 0
    while start < len(atoms):
        used = width(lead) + sizes[start]
        if used > columns and sizes[start]:  # a word longer than a line: as much as fits
            head = cut(atoms[start], columns - width(lead), "") or atoms[start][:1]
            out.append(lead + head)
            atoms[start] = atoms[start][len(head):]
            sizes[start] = width(atoms[start])
            lead = indent
            continue
        best: dict[int, int] = {}  # the furthest place the line may end, for each hold
        end = start
        while end + 1 < len(atoms):
            hold, spaced = breaks[end]
            best[hold] = end
            if used + spaced + sizes[end + 1] > columns:
                break
            used += spaced + sizes[end + 1]
            end += 1
        else:
            out.append(lead + _joined(atoms, breaks, start, len(atoms) - 1))
            break
        last = best[min(best)]
        out.append(lead + _joined(atoms, breaks, start, last))
        start, lead = last + 1, indent
    return [line.rstrip() for line in out]


def _joined(atoms: list[str], breaks: list[tuple[int, int]], first: int, last: int) -> str:
    """atoms first to last as written: a space where one was"""
    return "".join(atoms[k] + " " * breaks[k][1] for k in range(first, last)) + atoms[last]


FREE, FORMULA, WORDED, LISTED = 0, 1, 2, 3  # how firmly a place in a text holds it together (see _breaks)
OPERATORS = frozenset("· × + − - = / * ^ < > ≤ ≥ ≈ → ← … | Σ √ mod".split())  # a space beside one is inside a formula
_NUMBER_START = re.compile(r"[\[(（]*[-−+]?\d")
_NUMBER_END = re.compile(r"\d[\])）%]*[,，、;；:：]?$")
_NUMBER = re.compile(r"[\[(（]*[-−+]?\d[\d.,eE+−-]*[\])）%]*[,，、;；:：。]?$")
NO_START = "，。、；：！？）》」』”’…·"  # what never starts a line of Chinese text
NO_END = "（《「『“‘"  # what never ends one


def _breaks(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """text as the pieces a line may end between, and for each place between two pieces how firmly it holds them
    together and whether it is a space (dropped at a line's end): a space FREE, or FORMULA beside an operator or inside
    a formula's brackets (max(m_old, ...), W_O[:,4]; a word's opening bracket, of words or a list, is not one), WORDED
    between a number and the Chinese word it goes with ("步骤 5", "5 位"), LISTED between numbers (a list of them) and
    between an option and its number ("--precision 1"); between two characters of Chinese FREE, where Chinese text may
    break: beside a wide character, not before a closing mark nor after an opening one, nor against a Latin letter or
    digit (输出1)"""
    atoms: list[str] = []
    breaks: list[tuple[int, int]] = []
    depth = 0  # the formula's brackets opened and not closed
    words = text.split(" ")
    for k, word in enumerate(words):
        if k:
            breaks.append((max(_glue(words[k - 1], word), FORMULA if depth else FREE), 1))
        inner = word.lstrip("([")
        depth = max(0, depth + inner.count("(") + inner.count("[") - word.count(")") - word.count("]"))
        piece = 0
        if not word.isascii():
            named = _named(word)
            for i in range(len(word) - 1):
                ch, after = word[i], word[i + 1]
                if (width(ch) == 2 or width(after) == 2) and after not in NO_START and ch not in NO_END \
                        and not _latin(ch) and not _latin(after) and not (named[i] and named[i + 1]):
                    atoms.append(word[piece:i + 1])
                    breaks.append((FREE, 0))
                    piece = i + 1
        atoms.append(word[piece:])
    return atoms, breaks


def _named(word: str) -> list[bool]:
    """which characters of word belong to a run of Chinese written against a Latin letter or digit, as a name is
    (输出1[2]): never broken"""
    out = [False] * len(word)
    i = 0
    while i < len(word):
        j = i
        while j < len(word) and width(word[j]) == 2 and word[j] not in NO_START + NO_END:
            j += 1
        if j > i:
            if (i > 0 and _latin(word[i - 1])) or (j < len(word) and _latin(word[j])):
                out[i:j] = [True] * (j - i)
            i = j
        else:
            i += 1
    return out


def _latin(ch: str) -> bool:
    return ch == "_" or ch.isascii() and ch.isalnum()


def _glue(before: str, after: str) -> int:
    """how firmly the space between two words holds them on one line (see _breaks)"""
    if _NUMBER_START.match(after):
        if _NUMBER_END.search(before) or before.startswith("--"):
            return LISTED
        if width(before[-1:]) == 2:
            return WORDED
    if _NUMBER.match(before) and width(after[:1]) == 2:
        return WORDED
    return FORMULA if before in OPERATORS or after in OPERATORS else FREE
