"""Worksheets: the problem, then a table to fill in for each step; with the key, the hand-calculated answers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from attntrace import language
from attntrace.homework.sheet import Key
from attntrace.language import _, ngettext
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
    """the worksheet's title, the student's name line (a blank to fill, or the student's own), and its instructions:
    in the chosen language, and, when that is not English, then in the English sentence check reads (as it does the
    Name: line and the "Worksheet:" heading, which are the same in every language)"""
    name = t.problem.name or _("self-attention")
    title = markdown_text(name) if markdown else visible(name)  # a name is shown, never obeyed: no heading, no HTML
    # TRANSLATORS: keep "Worksheet:" as it is: attntrace check finds a worksheet by it
    heading = (_("Worksheet: {title} · ANSWER KEY") if key else _("Worksheet: {title}")).format(title=title)
    who = NAME_LINE if student is None else name_line(student, markdown)
    said = instructions(t, precision)
    with _in_english():
        read = instructions(t, precision)
    lines = [f"{'# ' if markdown else ''}{heading}", "", *([] if key else [who, ""]), said, ""]
    if said != read:
        lines += [_("(attntrace check reads the line below; leave it as it is)") if key else
                  _("(attntrace check reads the line below and the Name: line above; leave them as they are and write "
                    "your name after Name:)"), read, ""]
    return "\n".join(lines) + "\n"


def instructions(t: Trace, precision: int) -> str:
    """what to compute, the rounding, the scaling, and the mask and the heads, in one paragraph"""
    p = t.problem
    scale = (_("divide the scores by sqrt(d_k)") if p.scale is True else _("do not scale the scores")
             if p.scale is False else _("divide the scores by {divisor}").format(divisor=f"{p.scale:g}"))
    if t.query is None:
        text = ngettext("Compute self-attention for every input. Round every intermediate to {precision} decimal and "
                        "carry the rounded value into the next step; {scale}.",
                        "Compute self-attention for every input. Round every intermediate to {precision} decimals and "
                        "carry the rounded value into the next step; {scale}.", precision)
    else:
        text = ngettext("Compute self-attention for input {input} only (steps 4 to 7). Round every intermediate to "
                        "{precision} decimal and carry the rounded value into the next step; {scale}.",
                        "Compute self-attention for input {input} only (steps 4 to 7). Round every intermediate to "
                        "{precision} decimals and carry the rounded value into the next step; {scale}.", precision)
    out = text.format(input=t.query, precision=precision, scale=scale)
    for sentence in settings(t):
        # TRANSLATORS: two sentences, one after the other
        out = _("{first} {second}").format(first=out, second=sentence)
    return out


@contextmanager
def _in_english() -> Iterator[None]:
    """the sentence check reads is written in English whatever the language, as a problem file's keys are"""
    chosen = language.current()
    language.use("en")
    try:
        yield
    finally:
        language.use(chosen)


def name_line(student: str, markdown: bool) -> str:
    """the Name line with the student's own name on it, shown and never obeyed"""
    return f"Name: {markdown_text(student) if markdown else visible(student)}"


def settings(t: Trace) -> list[str]:
    """the mask and the heads, in words, so a student knows them and a filled worksheet is read against them"""
    p, d = t.problem, t.dims
    out = []
    if p.mask:
        words = [m.words() for m in p.mask]
        joined = words[0]
        for more in words[1:]:
            joined = _("{first} and {second}").format(first=joined, second=more)
        out.append(_("Mask: {masks}.").format(masks=joined))
    if d.heads > 1:
        out.append((_("Heads: {heads}, head a using its own block of {d_k} columns of W_Q and W_K and {d_v} of W_V; "
                      "then the heads' outputs side by side, times W_O.") if p.w_o is not None else
                    _("Heads: {heads}, head a using its own block of {d_k} columns of W_Q and W_K and {d_v} of W_V; "
                      "the output is the heads' outputs side by side.")).format(heads=d.heads, d_k=d.d_k, d_v=d.d_v))
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
