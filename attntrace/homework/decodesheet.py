"""Worksheets of decoding with a KV cache: per step t and head, the positions the cache holds, the weights of q_t over
them and the output; the key is worked by hand, each value written rounded and carried into the next."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from attntrace.core.arithmetic import round_half_up
from attntrace.core.attention import softmax
from attntrace.core.decode import Decoded, kept
from attntrace.core.decode import decode as decoded
from attntrace.core.problem import Problem
from attntrace.escape import visible
from attntrace.homework.marking import Item
from attntrace.homework.sheet import DECODE_KEYS, Key
from attntrace.language import N_, _
from attntrace.views.page import Block, Note, Step

if TYPE_CHECKING:
    from attntrace.render.document import Document


class Worked(NamedTuple):
    """one head's step t worked by hand: the positions cached (slot order), the weights and the output, rounded"""

    cache: tuple[int, ...]
    logits: np.ndarray  # [t] the rounded logits of q_t against every position 1 … t
    weights: np.ndarray
    output: np.ndarray


def works(problem: Problem, window: int | None, sinks: int, precision: int) -> tuple[Decoded, list[list[Worked]]]:
    """every head's every step, from the decoded logits (rounded) and values (rounded), rounding carried"""
    whole, cached = decoded(problem), decoded(problem, window, sinks)
    out = []
    for full, head in zip(whole.heads, cached.heads):
        v = round_half_up(full.v, precision)
        steps = []
        for every, step in zip(full.steps, head.steps):
            logits = round_half_up(every.scaled, precision)
            rows = np.array(step.cache) - 1
            weights = round_half_up(softmax(logits[rows], None, head.sink), precision)
            steps.append(Worked(step.cache, logits, weights, round_half_up(weights @ v[rows], precision)))
        out.append(steps)
    return cached, out


def answer_sheet(problem: Problem, window: int | None, sinks: int, blank: bool, precision: int) -> dict[str, Any]:
    """the JSON answer sheet: per head decode_cache, decode_weights (a list per step t, as long as the cache) and
    decode_output [t][d_v]; blank: every cell null"""
    _decoded, worked = works(problem, window, sinks, precision)

    def cells(rows: list[Any]) -> list[Any]:
        listed = [[float(x) if not isinstance(x, int) else x for x in row] for row in rows]
        return [[None for _ in row] for row in listed] if blank else listed

    heads = [{"head": a, "decode_cache": cells([list(w.cache) for w in steps]),
              "decode_weights": cells([w.weights.tolist() for w in steps]),
              "decode_output": cells([w.output.tolist() for w in steps])} for a, steps in enumerate(worked, start=1)]
    return {"name": problem.name, **({"student": None} if blank else {}), "precision": precision, "window": window,
            "sinks": sinks, "tokens": list(problem.labels), "heads": heads}


def steps(problem: Problem, window: int | None, sinks: int, precision: int) -> list[Step]:
    """a page per step t and head: q_t's logits against keys 1 … t and the values given; the cache, weights, output"""
    d, worked = works(problem, window, sinks, precision)
    labels = tuple(visible(label) for label in problem.labels)
    out = []
    for t in range(1, d.dims.n + 1):
        for a, (head, steps_) in enumerate(zip(d.heads, worked), start=1):
            w = steps_[t - 1]
            what = _what(t, a, len(d.heads))
            slots = tuple(_("slot {slot}").format(slot=i) for i in range(1, len(w.cache) + 1))
            d_v = head.v.shape[1]
            out.append(Step(0, what, (
                Block(_("{what}: logits of q_t against keys 1 … t").format(what=what), "scores", ("s",),
                      labels[:t], w.logits[None, :]),
                Block(_("{what}: values V").format(what=what), "v", labels[:t],
                      tuple(f"v[{c}]" for c in range(1, d_v + 1)), round_half_up(head.v[:t], precision)),
                Block(_(CACHE).format(what=what), "x", (_("position"),), slots,
                      np.array([w.cache], dtype=float), (a, "decode_cache", t - 1)),
                Block(_(WEIGHTS).format(what=what), "weights", ("w",), slots, w.weights[None, :],
                      (a, "decode_weights", t - 1)),
                Block(_(OUTPUT).format(what=what), "output", ("o",),
                      tuple(f"o[{c}]" for c in range(1, d_v + 1)), w.output[None, :], (a, "decode_output", t - 1)))))
    return out


WHOLE = N_("At step t, token t's k and v join the cache before its query is scored: query t sees keys 1 … t. Write "
           "the positions held, the softmax of q_t's logits over them, and Σ w·v.")
WINDOW = N_("At step t, token t's k and v join the cache before its query is scored; the cache keeps the last {window} "
            "(query t sees keys t − {window} + 1 … t), a new token taking the slot of the oldest. Write the positions "
            "held in slot order, the softmax of q_t's logits over them, and Σ w·v.")
SINKS = N_("At step t, token t's k and v join the cache before its query is scored; the cache keeps tokens 1 … {sinks} "
           "and the last {window} (query t sees keys t − {window} + 1 … t), a new token taking the slot of the oldest "
           "past the first {sinks}. Write the positions held in slot order, the softmax of q_t's logits over them, and "
           "Σ w·v.")
CACHE, WEIGHTS, OUTPUT = N_("{what}: positions the cache holds"), N_("{what}: weights"), N_("{what}: output")


def rules(window: int | None, sinks: int) -> str:
    """the convention of the cache, in words"""
    if window is None:
        return _(WHOLE)
    return _(WINDOW).format(window=window) if not sinks else _(SINKS).format(window=window, sinks=sinks)


def _what(t: int, head: int, heads: int) -> str:
    return _("step {t}, head {head}").format(t=t, head=head) if heads > 1 else _("step {t}").format(t=t)


def read(text: str, origin: str, problem: Any) -> Any:
    """a filled worksheet --decode, in any language attntrace prints, as a sheet; None if the text is not one"""
    import re

    from attntrace.homework import filled
    from attntrace.homework.flashsheet import _table
    from attntrace.homework.sheet import Sheet
    from attntrace.language import LANGUAGES, speaking

    lines = text.lstrip("\ufeff").splitlines()
    flat = filled._spaceless("".join(lines))
    for lang in LANGUAGES:
        with speaking(lang):
            for form in (SINKS, WINDOW, WHOLE):
                pattern = re.escape(filled._spaceless(_(form)))
                for name in ("window", "sinks"):
                    pattern = pattern.replace(re.escape("{" + name + "}"), f"(?P<{name}>\\d+)", 1).replace(
                        re.escape("{" + name + "}"), f"(?P={name})")
                found = re.search(pattern, flat)
                if found is None:
                    continue
                named = found.groupdict()
                window = int(named["window"]) if named.get("window") else None
                sinks = int(named["sinks"]) if named.get("sinks") else 0
                d = problem.dims
                cells: dict[Key, np.ndarray] = {}
                for a in range(1, d.heads + 1):
                    width = max(len(kept(t, window, sinks)) for t in range(1, d.n + 1))
                    got = {k: np.full((d.n, d.d_v if k == "decode_output" else width), np.nan) for k in DECODE_KEYS}
                    for t in range(1, d.n + 1):
                        what, c = _what(t, a, d.heads), len(kept(t, window, sinks))
                        for k, title, cols in (("decode_cache", CACHE, c), ("decode_weights", WEIGHTS, c),
                                               ("decode_output", OUTPUT, d.d_v)):
                            table = _table(lines, _(title).format(what=what), 1, cols)
                            if table is not None:
                                got[k][t - 1, :cols] = table[0]
                    cells.update({(a, k): v for k, v in got.items()})
                return Sheet(origin, cells, student=filled._student(lines), heads=tuple(range(1, d.heads + 1)),
                             decode=(window, sinks))
    return None


def document(problem: Problem, window: int | None, sinks: int, precision: int, key: bool,
             student: str | None = None) -> Document:
    """the worksheet of decoding: the problem's name and name line, the convention, and a page per step and head"""
    from attntrace.render.document import Document

    pages = steps(problem, window, sinks, precision)
    first = pages[0]
    pages[0] = Step(first.number, first.heading, (Note(rules(window, sinks), "text"), *first.items))
    return Document(pages, answer_sheet(problem, window, sinks, blank=not key, precision=precision),
                    preface=lambda fmt: _preface(problem, key, fmt == "markdown", student))


def _preface(problem: Problem, key: bool, markdown: bool, student: str | None) -> str:
    from attntrace.escape import markdown as markdown_text
    from attntrace.homework.worksheet import HEADING, KEY_HEADING, name_line

    name = problem.name or _("self-attention")
    title = markdown_text(name) if markdown else visible(name)
    heading = (_(KEY_HEADING) if key else _(HEADING)).format(title=title)
    lines = [f"{'# ' if markdown else ''}{heading}", "", *([] if key else [name_line(student, markdown), ""])]
    return "\n".join(lines) + "\n"


NAMES = {"decode_cache": N_("positions the cache holds"), "decode_weights": N_("weights over the cache"),
         "decode_output": N_("output at each step")}


class _Item(Item):
    """a decoding item: the cache is step 3's keys, the weights step 6's, the output step 7's"""

    @property
    def step(self) -> int:
        return {"decode_cache": 3, "decode_weights": 6}.get(self.key, 7)


def mark(marker: Any, sheet: Any, rule: Any) -> Any:
    """a decoding sheet marked cell by cell: the cache exactly, the weights and output right at the precision or a
    consequence of the student's own cache and weights; the first classic mistake named"""
    from attntrace.homework.flashsheet import _Cells, judged_items
    from attntrace.homework.marking import Report, _precision
    from attntrace.homework.said import Said

    window, sinks = sheet.decode
    precision, source = _precision(sheet, rule)
    d, worked = works(marker.problem, window, sinks, precision)
    items: list[Item] = []
    diagnosis: tuple[str, dict[str, Any]] | None = None
    mistakes: tuple[str, ...] = ()
    for a, (head, steps_) in enumerate(zip(d.heads, worked), start=1):
        v = round_half_up(head.v, precision)
        judged = {k: _Cells() for k in DECODE_KEYS}
        given = {k: sheet.cells.get((a, k), np.full((0, 0), np.nan)) for k in DECODE_KEYS}
        for t, w in enumerate(steps_, start=1):
            cache = _row(given["decode_cache"], t - 1, len(w.cache))
            ok_cache = all([judged["decode_cache"].judge(t - 1, j, cache[j], w.cache[j], np.nan, 0)
                            for j in range(len(w.cache))])
            whole = given["decode_cache"][t - 1] if t - 1 < len(given["decode_cache"]) else cache
            theirs = [int(x) for x in whole if np.isfinite(x) and 1 <= x <= t and x == int(x)]
            if diagnosis is None and theirs and (not ok_cache or set(theirs) != set(w.cache)):
                diagnosis, mistakes = _named(set(theirs), t, window, sinks)
            own_rows = np.array(theirs if len(theirs) == len(w.cache) else w.cache, dtype=int) - 1
            own_w = softmax(w.logits[own_rows], None, head.sink)
            weights = _row(given["decode_weights"], t - 1, len(w.cache))
            for j in range(len(w.cache)):
                judged["decode_weights"].judge(t - 1, j, weights[j], w.weights[j], own_w[j], precision)
            used = np.where(np.isfinite(weights), weights, round_half_up(own_w, precision))
            own_o = used @ v[own_rows]
            output = _row(given["decode_output"], t - 1, len(w.output))
            if diagnosis is None and head.sink is not None and _sink_valued(output, own_o, used, v, precision):
                diagnosis, mistakes = (N_("the sink was given a value: it joins the softmax's denominator but takes "
                                          "no value, so output {t} is Σ_j w(t,j) · v_j over the cache alone"),
                                       {"t": t}), ("sink given a value",)
            for c in range(len(w.output)):
                judged["decode_output"].judge(t - 1, c, output[c], w.output[c], own_o[c], precision)
        items += judged_items(judged, DECODE_KEYS, NAMES, _Item, a, precision)
    report = Report(sheet.origin, marker.problem.name or marker.origin, precision, source, None, items,
                    follow_through=rule.follow_through, student=sheet.student, notes=list(sheet.notes))
    report.diagnosis = None if diagnosis is None else Said(diagnosis[0], **diagnosis[1])
    report.mistakes = mistakes
    return report


def _sink_valued(output: np.ndarray, own: np.ndarray, weights: np.ndarray, v: np.ndarray, precision: int) -> bool:
    """whether the output written is the student's own weighted sum plus the sink's weight (the rest of 1) times the
    value of token 1, the sink tokens of StreamingLLM carry, where the right sum does not fit"""
    written = np.isfinite(output)
    if not written.any():
        return False
    unit = 0.5 * 10.0 ** -precision * (len(weights) + 2)
    valued = own + (1.0 - float(np.sum(weights))) * v[0]
    fits = np.abs(output - valued) <= unit
    right = np.abs(output - own) <= unit
    return bool(fits[written].all() and not right[written].all())


def _row(cells: np.ndarray, i: int, width: int) -> np.ndarray:
    """row i of the student's cells, NaN-padded or cut to width"""
    out = np.full(width, np.nan)
    if i < cells.shape[0]:
        n = min(width, cells.shape[1])
        out[:n] = cells[i, :n]
    return out


def _named(theirs: set[int], t: int, window: int | None, sinks: int) -> tuple[tuple[str, dict[str, Any]] | None,
                                                                             tuple[str, ...]]:
    """the classic mistake a wrong cache proves: the new token left out, or the window one too long or too short"""
    right = set(kept(t, window, sinks))
    if t not in theirs and theirs <= right | ({t - window} if window else set()):
        return (N_("the new token was left out of its own cache: at step {t} its k and v join the cache before "
                   "its query is scored, so query {t} sees key {t}"), {"t": t}), ("new token left out",)
    if window is not None:
        for other in (window - 1, window + 1):
            if other >= 1 and theirs == set(kept(t, other, sinks)) != right:
                return (N_("the window is off by one: with a window of {window}, query {t} sees keys {first} … {t} "
                           "({window} keys), not {count}"),
                        {"window": window, "t": t, "first": t - window + 1, "count": other}), ("window off by one",)
    return None, ()
