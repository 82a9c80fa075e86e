"""Help wrapped by the columns a terminal gives each character, not by len(): a Chinese character takes two, so help
in Chinese wrapped by click's own formatter runs past the edge. English wraps to the same lines as click's."""

from __future__ import annotations

import re
from collections.abc import Iterable
from gettext import gettext

import click
from rich.cells import cell_len

_WIDE = "\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"  # CJK, Hangul, full-width forms
_CLOSING = "，。、；：？！）」』”’》])"  # what must not start a line
_OPENING = "（「『“‘《【"  # what must not end one
# a run of spaces; else a wide character, or a run of narrow ones, with the opening punctuation before it and the
# closing punctuation after it (a narrow [ or ( before a wide character too: [必需])
_O, _C = re.escape(_OPENING), re.escape(_CLOSING)
_PIECES = re.compile(rf"\s+|[^\s{_WIDE}]*[\[(][{_O}]*[{_WIDE}][{_C}]*|[{_O}]+[^\s{_WIDE}]+[{_C}]*|[{_O}]*[{_WIDE}][{_C}]*"
                     rf"|[^\s{_WIDE}]+[{_C}]*")


def _cut(piece: str, room: int) -> tuple[str, str]:
    """the longest start of piece that fits in room columns (at least one character), and the rest"""
    width = 0
    for i, char in enumerate(piece):
        width += cell_len(char)
        if width > room:
            return piece[:max(i, 1)], piece[max(i, 1):]
    return piece, ""


def fill(text: str, width: int, first: str = "", rest: str = "") -> str:
    """one paragraph in lines of at most width columns, the first starting with first, the others with rest; breaks
    at spaces, and between wide characters (never before their closing punctuation)"""
    lines: list[str] = []
    line, indent, space = first, first, False
    for piece in _PIECES.findall(text.expandtabs()):
        if piece.isspace():
            space = line != indent
            continue
        gap = " " if space else ""
        while piece:
            if cell_len(line + gap + piece) <= width:
                line, piece = line + gap + piece, ""
            elif line != indent:  # on a new line
                lines.append(line)
                line = indent = rest
            else:  # longer than a whole line: as much as fits on it
                head, piece = _cut(piece, max(width - cell_len(line), 1))
                lines.append(line + head)
                line = indent = rest
            gap = ""
        space = False
    if line != indent or not lines:
        lines.append(line)
    return "\n".join(lines)


def wrap(text: str, width: int, first: str = "", rest: str = "", paragraphs: bool = False) -> str:
    """click.formatting.wrap_text, measured in columns: paragraphs (blank lines between) each filled, keeping their
    indentation, and a paragraph after a line holding only \\b kept as written"""
    if not paragraphs:
        return fill(text, width, first, rest)
    out = []
    for block in re.split(r"\n[ \t]*\n", text.strip("\n")):
        block_lines = block.splitlines()
        if not block_lines:
            continue
        extra = " " * (cell_len(block_lines[0]) - cell_len(block_lines[0].lstrip()))
        if block_lines[0].strip() == "\b":
            out.append("\n".join(first + extra + line for line in block_lines[1:]))
        else:
            out.append(fill(" ".join(line.strip() for line in block_lines), width, first + extra, rest + extra))
    return "\n\n".join(out)


_EXTRA = re.compile(r"\[([^\[\]]*[\u4e00-\u9fff][^\[\]]*)\]$")  # what click adds after an option's help: [默认：4; 0<=x<=17]


def _full_width(extra: re.Match[str]) -> str:
    """click's [default: 4; 0<=x<=17] in Chinese, its pieces apart with a full-width semicolon"""
    return f"[{extra.group(1).replace('; ', '；')}]"


def _wide(*texts: str | None) -> bool:
    """whether any of texts holds a character two columns wide"""
    return any(cell_len(char) > 1 for text in texts if text for char in text)


class HelpFormatter(click.HelpFormatter):
    """click's help formatter, wrapping and aligning by display width (rich.cells.cell_len); text without a wide
    character is left to click, as it always was"""

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        if prefix is None:
            prefix = gettext("Usage:")
            prefix += "" if prefix.endswith("：") else " "  # a full-width colon has its space in it
        if not _wide(prog, args, prefix):
            return super().write_usage(prog, args, prefix)
        usage_prefix = f"{prefix:>{self.current_indent}}{prog} "
        text_width = self.width - self.current_indent
        if not args:
            self.write(usage_prefix.rstrip(" ") + "\n")
            return
        if text_width >= cell_len(usage_prefix) + 20:
            self.write(wrap(args, text_width, usage_prefix, " " * cell_len(usage_prefix)))
        else:
            indent = " " * (max(self.current_indent, cell_len(prefix)) + 4)
            self.write(usage_prefix + "\n" + wrap(args, text_width, indent, indent))
        self.write("\n")

    def write_heading(self, heading: str) -> None:
        """a section's heading, with a full-width colon after Chinese"""
        if not _wide(heading):
            return super().write_heading(heading)
        self.write(f"{'':>{self.current_indent}}{heading}：\n")

    def write_text(self, text: str) -> None:
        if not _wide(text):
            return super().write_text(text)
        indent = " " * self.current_indent
        self.write(wrap(text, self.width, indent, indent, paragraphs=True) + "\n")

    def write_dl(self, rows: Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        rows = list(rows)
        if not _wide(*(text for row in rows for text in row)):
            return super().write_dl(rows, col_max, col_spacing)
        rows = [(first, _EXTRA.sub(_full_width, second)) for first, second in rows]
        first_col = min(max((cell_len(first) for first, _ in rows), default=0), col_max) + col_spacing
        for first, second in rows:
            self.write(f"{'':>{self.current_indent}}{first}")
            if not second:
                self.write("\n")
                continue
            if cell_len(first) <= first_col - col_spacing:
                self.write(" " * (first_col - cell_len(first)))
            else:
                self.write("\n" + " " * (first_col + self.current_indent))
            lines = wrap(second, max(self.width - first_col - 2, 10), paragraphs=True).splitlines()
            self.write(f"{lines[0] if lines else ''}\n")
            for line in lines[1:]:
                self.write(f"{'':>{first_col + self.current_indent}}{line}\n")


class HelpContext(click.Context):
    """a context whose help is wrapped by display width"""

    formatter_class = HelpFormatter
