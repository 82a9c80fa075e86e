"""The online softmax for one input written out as a student would: every line of the recurrence, block by block, with
its numbers at the precision and its result, the running value rounded (so that each line can be redone by hand)."""

from __future__ import annotations

import math

import numpy as np

from attntrace.core.flash import Flash, Recurrence
from attntrace.language import _, ngettext
from attntrace.views.explain import head_words, num
from attntrace.views.page import Note, Section, Step

LONG = 8  # sums longer than this show their first 3 terms, a count, and the last term


def explain_flash_steps(f: Flash, precision: int) -> list[Step]:
    """the recurrence of a single-query flash, line by line: one step per block (and the sink), then O / ℓ"""
    t = f.trace
    row, heads = t.rows[0], len(f.heads)
    i = row + 1
    legend = Section(_("Online softmax for input {i}, line by line").format(i=i), (
        Note(ngettext("Each line writes its numbers at {p} decimal; its result is the running value, rounded to {p} "
                      "decimal (worked from the unrounded numbers).",
                      "Each line writes its numbers at {p} decimals; its result is the running value, rounded to {p} "
                      "decimals (worked from the unrounded numbers).", precision).format(p=precision)),
        Note(_("before block 1: m = -inf, ℓ = 0, O = 0")),
    ))
    steps: list[Step] = [legend]
    for b, (start, stop) in enumerate(f.bounds):
        notes = [n for a in range(heads)
                 for n in _block(f.heads[a], t.heads[a].v, b, start, stop, _prefix(f, a), precision)]
        steps.append(Section(_("block {number} (keys {keys}) for input {i}").format(
            number=b + 1, keys=_keys(start, stop), i=i), tuple(notes)))
    if any(h.sink is not None for h in f.heads):
        notes = [n for a in range(heads) for n in _sink(f.heads[a], _prefix(f, a), precision)]
        steps.append(Section(_("the sink logit for input {i}").format(i=i), tuple(notes)))
    notes = [n for a in range(heads) for n in _output(f.heads[a], _prefix(f, a), precision)]
    if t.problem.w_o is not None:
        notes.append(Note(_("the heads' outputs side by side go through W_O as in step 7 (attntrace explain shows "
                            "it)")))
    steps.append(Section(_("output {i} = O / ℓ").format(i=i), tuple(notes)))
    return steps


def _prefix(f: Flash, a: int) -> str:
    return head_words(a + 1) if len(f.heads) > 1 else ""


def _keys(start: int, stop: int) -> str:
    """a block's keys, from 1: "3" or "1-2" """
    return str(start + 1) if stop - start == 1 else f"{start + 1}-{stop}"


def written(value: float, precision: int) -> str:
    """a number as written: -inf as such, a negative one in brackets"""
    if value == -math.inf:
        return "-inf"
    text = num(value, precision)
    return f"({text})" if text.startswith("-") else text


def added(terms: list[str]) -> str:
    """terms added up in brackets, a long sum shortened to its first three terms, a count and its last"""
    if len(terms) > LONG:
        more = ngettext("… {n} more term …", "… {n} more terms …", len(terms) - 4).format(n=len(terms) - 4)
        terms = [*terms[:3], more, terms[-1]]
    return "(" + " + ".join(terms) + ")" if terms else "0"


def _block(h: Recurrence, v: np.ndarray, b: int, start: int, stop: int, head: str, p: int) -> list[Note]:
    """block b's lines for the one traced row (v: the head's values): its maximum, m, the rescale factor, each
    e^(s - m), ℓ and O"""
    s = h.scores[0, start:stop]
    m_old = h.m[0, b - 1] if b else -math.inf
    l_old = h.ell[0, b - 1] if b else 0.0
    o_old = h.o[0, b - 1] if b else np.zeros(h.o.shape[2])
    if h.skipped[0, b]:
        return [Note(_("{head}every key of the block is masked: skipped, m, ℓ and O unchanged").format(head=head))]
    seen = [k for k in range(len(s)) if s[k] != -math.inf]
    m_new, rescale = float(h.m[0, b]), float(h.rescale[0, b])
    scores = [written(s[k], p) for k in seen]
    lines = [f"{head}" + _("block max = max{scores} = {top}").format(
        scores="(" + ", ".join(scores) + ")", top=num(h.block_max[0, b], p)),
        f"{head}m = max(m_old, " + _("block max") + f") = max({written(m_old, p)}, {written(h.block_max[0, b], p)}) = "
        f"{num(m_new, p)}",
        f"{head}" + _("rescale") + f" = e^(m_old - m_new) = e^({written(m_old, p)} - {written(m_new, p)}) = {num(rescale, p)}"]
    e = h.exps[0, start:stop]  # each key's e^(s - m)
    for k in seen:
        lines.append(f"{head}e^(s{start + k + 1} - m) = e^({scores[seen.index(k)]} - {written(m_new, p)}) = {num(e[k], p)}")
    if len(seen) < len(s):
        lines.append(_("{head}the masked keys of the block add e^(-inf) = 0").format(head=head))
    powers = [f"e^({scores[n]} - {written(m_new, p)})" for n in range(len(seen))]
    lines.append(f"{head}ℓ = ℓ_old · " + _("rescale") + " + Σ e^(s - m) = "
                 f"{written(l_old, p)} · {written(rescale, p)} + {added(powers)} = {num(h.ell[0, b], p)}")
    for c in range(h.o.shape[2]):
        terms = [f"{written(e[k], p)}×{written(v[start + k, c], p)}" for k in seen]
        lines.append(f"{head}O[{c + 1}] = O_old[{c + 1}] · " + _("rescale") + f" + Σ e^(s - m) · v_j[{c + 1}] = "
                     f"{written(o_old[c], p)} · {written(rescale, p)} + {added(terms)} = {num(h.o[0, b, c], p)}")
    return [Note(line) for line in lines]


def _sink(h: Recurrence, head: str, p: int) -> list[Note]:
    """the sink logit's lines: it joins m and ℓ as one more score, with no value"""
    if h.sink is None:
        return []
    assert h.sink_m is not None and h.sink_rescale is not None and h.sink_sum is not None
    assert h.sink_ell is not None and h.sink_o is not None
    m_old, l_old, o_old = h.m[0, -1], h.ell[0, -1], h.o[0, -1]
    m_new, rescale = float(h.sink_m[0]), float(h.sink_rescale[0])
    old, new, sink = written(m_old, p), written(m_new, p), written(h.sink, p)
    lines = [f"{head}m = max(m_old, sink) = max({old}, {sink}) = {num(m_new, p)}",
             f"{head}" + _("rescale") + f" = e^(m_old - m_new) = e^({old} - {new}) = {num(rescale, p)}",
             f"{head}ℓ = ℓ_old · " + _("rescale") + " + e^(sink - m) = "
             f"{written(l_old, p)} · {written(rescale, p)} + e^({sink} - {new}) = {num(h.sink_ell[0], p)}"]
    for c in range(h.o.shape[2]):
        lines.append(f"{head}O[{c + 1}] = O_old[{c + 1}] · " + _("rescale") +
                     f" = {written(o_old[c], p)} · {written(rescale, p)} = {num(h.sink_o[0, c], p)}")
    return [Note(line) for line in lines]


def _output(h: Recurrence, head: str, p: int) -> list[Note]:
    """output = O / ℓ, column by column (0 when ℓ = 0: every key masked)"""
    ell, o = float(h.final_ell[0]), h.final_o[0]
    return [Note(f"{head}" + _("output[{column}]").format(column=c + 1) +
                 f" = O[{c + 1}] / ℓ = {written(o[c], p)} / {written(ell, p)} = {num(h.output[0, c], p)}")
            for c in range(len(o))]
