"""Worksheets: the problem, then a table to fill in for each step; with the key, the hand-calculated answers."""

from __future__ import annotations

from typing import Any, NamedTuple

from attntrace.core import intermediates
from attntrace.core.problem import Problem
from attntrace.core.trace import Trace
from attntrace.escape import markdown as markdown_text
from attntrace.escape import visible
from attntrace.homework.sheet import Key
from attntrace.language import N_, _, ngettext
from attntrace.render.document import Document, Style
from attntrace.render.document import render as render_document
from attntrace.render.jsonform import floats
from attntrace.views.describe import shown_name
from attntrace.views.walkthrough import worksheet_steps


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


BLANK_NAME = "________________"  # where a student writes their name, read back by check


def intro(t: Trace, precision: int, key: bool, markdown: bool, student: str | None = None) -> str:
    """the worksheet's title, the student's name line (a blank to fill, or the student's own), and its instructions,
    all in the chosen language: check reads them back in any language, by the words of printed()"""
    lines = [*heading_lines(t.problem, key, markdown, student), instructions(t, precision), ""]
    return "\n".join(lines) + "\n"


def heading_lines(problem: Problem, key: bool, markdown: bool, student: str | None = None) -> list[str]:
    """a worksheet's title (the key's, or the sheet's), a blank line, and on a sheet the name line and a blank line"""
    name = shown_name(problem.name) or _("self-attention")
    title = markdown_text(name) if markdown else visible(name)  # a name is shown, never obeyed: no heading, no HTML
    heading = (_(KEY_HEADING) if key else _(HEADING)).format(title=title)
    return [f"{'# ' if markdown else ''}{heading}", "", *([] if key else [name_line(student, markdown), ""])]


# TRANSLATORS: attntrace check finds a worksheet by what comes before {title}, in any language
HEADING = N_("Worksheet: {title}")
# TRANSLATORS: start it as "Worksheet: {title}" is translated: attntrace check finds a worksheet by it
KEY_HEADING = N_("Worksheet: {title} · ANSWER KEY")
# TRANSLATORS: attntrace check reads the student's name after what comes before {name}, in any language
NAME = N_("Name: {name}")


def instructions(t: Trace, precision: int) -> str:
    """what to compute, the rounding, the scaling, and the mask and the heads, in one paragraph"""
    p = t.problem
    scale = (_("divide the scores by sqrt(d_k)") if p.scale is True else _("do not scale the scores")
             if p.scale is False else _("divide the scores by {divisor}").format(divisor=f"{p.scale:g}"))
    out = asks(t.query, precision).format(input=t.query, precision=precision, scale=scale)
    for sentence in settings(t):
        # TRANSLATORS: two sentences, one after the other
        out = _("{first} {second}").format(first=out, second=sentence)
    return out


def asks(query: int | None, precision: int) -> str:
    """the instruction sentence to fill in: every input, or input {input} only; {precision} and {scale}"""
    if query is None:
        return ngettext("Compute self-attention for every input. Round every intermediate to {precision} decimal and "
                        "carry the rounded value into the next step; {scale}.",
                        "Compute self-attention for every input. Round every intermediate to {precision} decimals and "
                        "carry the rounded value into the next step; {scale}.", precision)
    return ngettext("Compute self-attention for input {input} only (steps 4 to 7). Round every intermediate to "
                    "{precision} decimal and carry the rounded value into the next step; {scale}.",
                    "Compute self-attention for input {input} only (steps 4 to 7). Round every intermediate to "
                    "{precision} decimals and carry the rounded value into the next step; {scale}.", precision)


class Printed(NamedTuple):
    """a worksheet's fixed words in one language, each to fill in: what check reads a worksheet back by"""

    headings: tuple[str, str]  # the worksheet's and the key's
    name: str
    asks: tuple[str, ...]  # every input or one, one decimal or more
    mask: str
    heads: tuple[str, str]  # with W_O and without


def printed() -> Printed:
    """the fixed words of a worksheet printed in the chosen language"""
    forms = dict.fromkeys(asks(query, precision) for query in (None, 1) for precision in (1, 2))
    return Printed((_(HEADING), _(KEY_HEADING)), _(NAME), tuple(forms), _(MASK), (_(HEADS_W_O), _(HEADS)))


def name_line(student: str | None, markdown: bool) -> str:
    """the Name line: a blank for the student's name, or their own name, shown and never obeyed"""
    name = BLANK_NAME if student is None else markdown_text(student) if markdown else visible(student)
    return _(NAME).format(name=name)


MASK = N_("Mask: {masks}.")
HEADS_W_O = N_("Heads: {heads}, head a using its own block of {d_k} columns of W_Q and W_K and {d_v} of W_V; then the "
               "heads' outputs side by side, times W_O.")
HEADS = N_("Heads: {heads}, head a using its own block of {d_k} columns of W_Q and W_K and {d_v} of W_V; the output "
           "is the heads' outputs side by side.")


def settings(t: Trace) -> list[str]:
    """the mask and the heads, in words, so a student knows them and a filled worksheet is read against them"""
    p, d = t.problem, t.dims
    out = []
    if p.mask:
        words = [m.words() for m in p.mask]
        joined = words[0]
        for more in words[1:]:
            joined = _("{first} and {second}").format(first=joined, second=more)
        out.append(_(MASK).format(masks=joined))
    if d.heads > 1:
        out.append(_(HEADS_W_O if p.w_o is not None else HEADS).format(heads=d.heads, d_k=d.d_k, d_v=d.d_v))
    return out


def document(t: Trace, precision: int, key: bool, student: str | None = None) -> Document:
    """the worksheet: its instructions and tables (markdown or plain), and its JSON form, an answer sheet"""
    return Document(worksheet_steps(t), answer_sheet(t, blank=not key, precision=precision),
                    preface=lambda fmt: intro(t, precision, key, fmt == "markdown", student))


def render(t: Trace, precision: int, key: bool, fmt: str, student: str | None = None) -> str:
    """the worksheet as markdown, plain text or a JSON answer sheet; t is traced with the rounding carried; student: the
    name written on it (None: a blank line for one)"""
    return "".join(render_document(document(t, precision, key, student), fmt,
                                   Style(precision, blank_from=None if key else 3)))
