"""Labels are shown, never obeyed: control and bidi characters become visible escapes.

Every renderer passes each text it did not write itself (a token, a problem's name, a title or note quoting them)
through one of these: `visible` for plain text and rich tables (and so the SVG and HTML exports), `markdown` for
markdown, `spreadsheet` for a CSV cell and `comment` for a CSV title or note line; `quoted` for a message.
"""

from __future__ import annotations

import csv
import re

# C0 and C1 controls (tab and newline included: a label is one line), the bidi marks, embeddings, overrides and isolates,
# the line and paragraph separators (str.splitlines breaks a line at them), lone surrogates (no UTF-8 can write them)
# and U+FFFE, U+FFFF (not characters, and not allowed in XML: an SVG holding one does not parse). Each is one that
# str.isprintable() refuses, so a printable text (nearly every label) is passed as it is, and the pattern is compiled
# (by re, once) only when a text needs it, which saves a plain run half a millisecond
_HIDDEN = "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]"

# a zero-width joiner that joins nothing: at the end of a text, or before a space, another joiner or a character
# escaped; or one beside anything but an emoji (z\u200dj), which terminals draw apart where rich measures one character
_EMOJI = "[\u2000-\u2bff\ufe0f\U0001f000-\U0001faff\U000e0020-\U000e007f]"  # what an emoji sequence joins
_LOOSE_JOINER = f"|\u200d(?=\\s|\u200d|$|{_HIDDEN})|(?<!{_EMOJI})\u200d|\u200d(?!{_EMOJI})"

_MARKDOWN = str.maketrans({"\\": "\\\\", "|": "\\|", "<": "&lt;", ">": "&gt;", "&": "&amp;"})

# what makes a spreadsheet read a cell as a formula; a tab or CR also starts one once stripped (OWASP "CSV injection")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?"


def visible(text: str) -> str:
    """text with every control or bidi character written as an escape such as \\x1b or \\u202e, and a zero-width
    joiner with nothing after it to join (it would join whatever follows the text, and so shift a column) or beside a
    character that is no emoji (terminals draw both characters, where a table would count one)"""
    if text.isprintable():
        return text
    return re.sub(_HIDDEN + _LOOSE_JOINER, lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else
                  f"\\u{ord(m[0]):04x}", text)


def quoted(text: str, limit: int = 30) -> str:
    """text quoted for a message: at most limit characters, control characters and lone surrogates as escapes"""
    cut = text if len(text) <= limit else text[:limit] + "…"
    return f'"{visible(cut)}"'


def markdown(text: str) -> str:
    """text for a markdown line or table cell: visible, with \\ and | escaped and <, > and & as entities (never HTML)"""
    return visible(text).translate(_MARKDOWN)


def spreadsheet(text: str) -> str:
    """a CSV text cell: visible, and after a ' when a spreadsheet would read it as a formula (some trim the spaces before
    it first); a number is left as it is"""
    return "'" * _runs(text) + visible(text)


def _runs(text: str) -> bool:
    """whether a spreadsheet would take this cell for a formula"""
    starts = text.startswith(FORMULA_START) or text.lstrip().startswith(FORMULA_START)
    return starts and not re.fullmatch(_NUMBER, text.strip(" "))


def comment(text: str) -> str:
    """a CSV line "# text" (a title or a note): as it is, unless a spreadsheet would find a formula cell in it (after a
    comma, say) or a quote opening a cell that would run on into the next lines; then quoted as one cell, which
    starts with # and so is never a formula"""
    line = "# " + visible(text)
    fields = next(csv.reader([line]))
    if ',"' not in line and not any(map(_runs, fields)):  # a quote right after a comma opens a quoted cell
        return line
    return '"' + line.replace('"', '""') + '"'
