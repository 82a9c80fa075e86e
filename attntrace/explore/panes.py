"""The text of the explorer's panes beside the step: the list of steps, the side panel (a cell's arithmetic, the softmax
at a temperature, the online softmax, the decode step) and the status line."""

from __future__ import annotations

from rich.cells import cell_len, chop_cells, set_cell_size
from rich.style import Style
from rich.text import Text
from textual.geometry import Size

from attntrace.escape import visible
from attntrace.explore.drawing import SELECTED, Drawer, Part
from attntrace.explore.state import STEPS, Session
from attntrace.language import _, ngettext
from attntrace.views.describe import shown_name

STATUS_ROWS = 2  # the rows the status line, and the message line, each wrap onto at most (one on a low screen)
LOW = 16  # a screen with fewer rows than this keeps the status and the message to a row each


def steps_list(s: Session) -> Text:
    """the list of steps, the current one selected and each a click's target, and what the problem is"""
    out = Text()
    for number, name in enumerate(STEPS, start=1):
        line = Text(f"{number} {_(name)}\n", style=Style(meta={"step": number}))
        if number == s.step:
            line.stylize(SELECTED)
        out.append_text(line)
    p = s.problem
    d = p.dims
    name = visible(shown_name(p.name) or "") if p.name else _("problem")
    about = f"\n{name}\nn = {d.n}, d_model = {d.d_model}\nd_k = {d.d_k}, d_v = {d.d_v}"
    heads = ngettext(", {n} head", ", {n} heads", d.heads).format(n=d.heads)
    out.append(about + (heads if d.heads > 1 else ""), style="dim")
    return out


def side_key(s: Session, width: int) -> tuple[object, ...]:
    """what the side panel shows for session s, width columns wide, depends on"""
    return (s.explaining and (id(s.problem), s.step, s.row, s.head, s.cell, s.precision, s.carry_rounding),
            s.tempered and (id(s.problem), s.row, s.head, s.temperature, s.precision, s.carry_rounding),
            s.flashing and (id(s.problem), s.row, s.head, s.flash_block, s.precision),
            s.decoding and (id(s.problem), s.row, s.head, s.precision), width)


def side(drawer: Drawer, s: Session, width: int) -> list[Part]:
    """the side panel for session s: the selected cell's arithmetic, the softmax at a temperature, the online softmax
    and the decode step, as open; the same parts each time it shows the same"""
    return drawer.kept(("side", side_key(s, width)), s.problem, lambda: _side_parts(drawer, s, width))


def _side_parts(drawer: Drawer, s: Session, width: int) -> list[Part]:
    parts: list[Part] = []
    if s.explaining:
        parts.append(drawer.text(Text(_("the selected cell's arithmetic"), style="bold underline"), width))
        parts.extend(drawer.text(Text(visible(line)), width) for line in s.arithmetic())
        parts.append(drawer.blank(width))
    if s.tempered:
        parts.append(drawer.text(Text(_("softmax at a temperature ([ and ] change T)"), style="bold underline"),
                                 width))
        parts.extend(drawer.block(s.temperature_block(), -1, "", s.precision, width, None))
        parts.append(drawer.text(Text(_("T < 1 sharpens the row towards its largest score; T > 1 flattens it "
                                        "towards equal weights."), style="italic"), width))
    if s.flashing:
        heading, lines = s.flash_page()
        parts.append(drawer.text(Text(_("online softmax · {page} (b and B change the block)").format(
            page=visible(heading)), style="bold underline"), width))
        parts.extend(drawer.text(Text(visible(line)), width) for line in lines)
    if s.decoding:
        parts.append(drawer.text(Text(_("decode step {t}, against the KV cache").format(t=s.row + 1),
                                      style="bold underline"), width))
        parts.extend(drawer.text(Text(visible(line)), width) for line in s.decode_lines())
    return parts


def status(s: Session, message: str, size: Size, between: str, ellipsis: str) -> tuple[Text, tuple[int, int]]:
    """the status line and the message line, each wrapped to the screen's width onto STATUS_ROWS rows at most (a
    row on a low screen), the last cut with … should more be left; the status wraps between its parts. On the
    message line the selected cell's words give way to the message when both do not fit. With the rows each
    takes; size: the screen's, between: what goes between the status's parts, ellipsis: what ends a row cut short"""
    width = max(1, size.width - 2)
    most = 1 if size.height < LOW else STATUS_ROWS
    words = visible(message).split(" ")
    together = _wrapped([*visible(s.cell_words()).split(" "), between.strip(), *words], " ", width)
    rows = _cut(_wrapped([visible(part) for part in s.status_parts()], between, width), width, most, ellipsis)
    said = _cut(together if len(together) <= most else _wrapped(words, " ", width), width, most, ellipsis)
    return Text("\n".join(rows + said)), (len(rows), len(said))


def _wrapped(pieces: list[str], between: str, width: int) -> list[str]:
    """the pieces joined by between onto rows of at most width cells, a row broken between two pieces; a piece wider
    than a row (a long path) goes on from where the row is, on as many rows as it needs"""
    rows: list[str] = []
    for piece in pieces:
        if rows and (cell_len(rows[-1] + between + piece) <= width or cell_len(piece) > width):
            rows[-1:] = chop_cells(rows[-1] + between + piece, width)
        else:
            rows.extend(chop_cells(piece, width) or [""])
    return rows


def _cut(rows: list[str], width: int, most: int, ellipsis: str = "…") -> list[str]:
    """at most most rows, the last ending with the ellipsis when some were left out"""
    if len(rows) <= most:
        return rows
    last, size = rows[most - 1], len(ellipsis)
    kept = set_cell_size(last, width - size) if cell_len(last) + size > width else last + " "
    return [*rows[:most - 1], kept + ellipsis]
