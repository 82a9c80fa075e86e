"""Worksheets: the problem, then a table to fill in for each step; with the key, the hand-calculated answers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attntrace.homework.sheet import Key
from attntrace.model import intermediates
from attntrace.model.contract import floats
from attntrace.model.trace import Trace
from attntrace.render.escape import markdown as markdown_text
from attntrace.render.escape import visible

if TYPE_CHECKING:
    from attntrace.render.document import Document

FORMATS = ("markdown", "plain", "json")


def asked(t: Trace) -> list[Key]:
    """what the problem asks for, in the order a student computes it: per head Q ... output, then the final output.

    scaled is asked whenever the problem scales, masks, biases or caps the scores; q and k turned by position whenever
    it has rope; with one head and no W_O the final output is the head's output, so it is asked once, as the head's.
    """
    p = t.problem
    skipped = set()
    if not (t.divisor != 1.0 or t.allowed is not None or p.alibi or p.softcap is not None):
        skipped.add("scaled")
    if p.rope is None:
        skipped |= {"q_rotated", "k_rotated"}
    keys: list[Key] = [(a, key) for a in range(1, len(t.heads) + 1) for key in intermediates.KEYS if key not in skipped]
    if len(t.heads) > 1 or t.problem.w_o is not None:
        keys.append((None, "output"))
    return keys


def answer_sheet(t: Trace, blank: bool, precision: int) -> dict[str, Any]:
    """an answer sheet in the --format json layout; blank = every cell null, for a student to fill in"""

    def cells(values: Any) -> Any:
        listed = floats(values)
        return [[None for _ in row] for row in listed] if blank else listed

    keys = asked(t)
    heads = [{"head": a, **{key: cells(getattr(h, key)) for key in intermediates.KEYS if (a, key) in keys}}
             for a, h in enumerate(t.heads, start=1)]
    return {"name": t.problem.name, **({"student": None} if blank else {}), "query": t.query, "precision": precision,
            "tokens": list(t.problem.labels), "heads": heads, "output": cells(t.output)}


NAME_LINE = "Name: ________________"  # where a student writes their name, read back by check


def intro(t: Trace, precision: int, key: bool, markdown: bool, student: str | None = None) -> str:
    """the worksheet's title, the student's name line (a blank to fill, or the student's own), and its instructions"""
    name = t.problem.name or "self-attention"
    title = markdown_text(name) if markdown else visible(name)  # a name is shown, never obeyed: no heading, no HTML
    scale = ("divide the scores by sqrt(d_k)" if t.problem.scale is True else "do not scale the scores"
             if t.problem.scale is False else f"divide the scores by {t.problem.scale:g}")
    which = f"input {t.query} only (steps 4 to 7)" if t.query is not None else "every input"
    setting = " ".join(settings(t))
    who = NAME_LINE if student is None else name_line(student, markdown)
    lines = [
        f"{'# ' if markdown else ''}Worksheet: {title}{' · ANSWER KEY' if key else ''}",
        "",
        *([] if key else [who, ""]),
        f"Compute self-attention for {which}. Round every intermediate to {precision} decimal"
        f"{'s' * (precision != 1)} and carry the rounded value into the next step; {scale}." + (f" {setting}" if setting else ""),
        "",
    ]
    return "\n".join(lines) + "\n"


def name_line(student: str, markdown: bool) -> str:
    """the Name line with the student's own name on it, shown and never obeyed"""
    return f"Name: {markdown_text(student) if markdown else visible(student)}"


def settings(t: Trace) -> list[str]:
    """the mask and the heads, in words, so a student knows them and a filled worksheet is read against them"""
    p, d = t.problem, t.dims
    out = []
    if p.mask:
        out.append("Mask: " + " and ".join(m.words() for m in p.mask) + ".")
    if d.heads > 1:
        out.append(f"Heads: {d.heads}, head a using its own block of {d.d_k} columns of W_Q and W_K and {d.d_v} of W_V"
                   + ("; then the heads' outputs side by side, times W_O." if p.w_o is not None else
                      "; the output is the heads' outputs side by side."))
    return out


def document(t: Trace, precision: int, key: bool, student: str | None = None) -> Document:
    """the worksheet: its instructions and tables (markdown or plain), and its JSON form, an answer sheet"""
    from attntrace.render.document import Document
    from attntrace.views.steps import worksheet_steps

    return Document(worksheet_steps(t), answer_sheet(t, blank=not key, precision=precision),
                    preface=lambda fmt: intro(t, precision, key, fmt == "markdown", student))


def render(t: Trace, precision: int, key: bool, fmt: str, student: str | None = None) -> str:
    """the worksheet as markdown, plain text or a JSON answer sheet; t is traced with the rounding carried; student: the
    name written on it (None: a blank line for one)"""
    from attntrace.render.document import Style
    from attntrace.render.document import render as render_document

    return "".join(render_document(document(t, precision, key, student), fmt,
                                   Style(precision, blank_from=None if key else 3)))
