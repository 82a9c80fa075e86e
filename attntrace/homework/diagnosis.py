"""Naming the first mistake on a sheet: the usual wrong convention its numbers follow, in plain words."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attntrace.core.arithmetic import round_half_up
from attntrace.core.trace import Trace
from attntrace.homework.marking import Work, cell_name
from attntrace.homework.redo import recompute
from attntrace.homework.results import EXACT_FROM, WRONG, Item, close, rounds_to, written_precision
from attntrace.homework.said import Said, joined, ngettext, number
from attntrace.homework.sheet import Key
from attntrace.language import N_

ROUNDED = N_("rounded to fewer decimals")  # a mistake's tag


@dataclass(frozen=True)
class Mistake:
    """a usual wrong convention: the intermediates it changes (where it shows first), its tag (English, for a class
    summary and JSON) and its sentence for a problem; redo.recompute(work, key, variant) works a step its way"""

    variant: str
    steps: tuple[str, ...]  # "final": the final output
    tag: str
    sentence: Callable[[Trace, str], Said]  # from the trace and the intermediate it shows in


def _dk(t: Trace) -> str:
    return f"√d_k = √{t.dims.d_k} = {math.sqrt(t.dims.d_k):.4g}"


def _causal(t: Trace) -> bool:
    return "causal" in t.problem.masks and len(t.problem.masks) == 1


def _said(message: str) -> Callable[[Trace, str], Said]:
    """a sentence with no field"""
    return lambda t, step: Said(message)


def _rope_pairs(t: Trace, step: str) -> Said:
    rope = t.problem.rope
    other = Said(N_("2i - 1 with 2i") if rope is not None and rope.pairs == "half" else N_("i with i + d_k/2"))
    return Said(N_("the pairs were mixed up: {which} was turned with dimension {pairs} paired"), which=step[0].upper(),
                pairs=other)


def _from_one(t: Trace, step: str) -> Said:
    rope = t.problem.rope
    first = (Said(N_("the first input is at position 0")) if rope is None or rope.positions is None
             else Said(N_("p is the position the problem gives")))
    return Said(N_("the positions were counted from 1: {which} was turned by (p + 1) · ω, but {first}"),
                which=step[0].upper(), first=first)


def _kv_block(t: Trace, step: str) -> Said:
    d, letter = t.dims, step.upper()
    rule = (Said(N_("head a reads block ⌊(a-1) / {share}⌋ + 1 of W_{letter}: the query heads that share a block are "
                    "next to each other"), share=d.heads // d.kv_heads, letter=letter)
            if d.kv_heads < d.heads else Said(N_("head a reads its own columns of W_{letter}"), letter=letter))
    return Said(N_("{letter} was taken from another head's block of W_{letter}: {rule}"), letter=letter, rule=rule)


SCALING = ("scaled", "weights")  # a wrong scaling, mask, bias or cap shows in the scaled scores, or in the weights
MISTAKES = (  # in the order each intermediate's are tried
    *(Mistake("transposed", (step,), tag, lambda t, step: Said(N_("W_{letter} was transposed: {letter} = X · "
                                                                   "W_{letter}^T"), letter=step.upper()))
      for step, tag in (("q", N_("W_Q transposed")), ("k", N_("W_K transposed")), ("v", N_("W_V transposed")))),
    Mistake("w_k", ("q",), N_("K used where Q belongs"), _said(N_("K was used where Q belongs: Q was computed with W_K"))),
    Mistake("q_block", ("q",), N_("another head's columns"), lambda t, step: Said(N_(
        "Q was taken from another head's columns of W_Q: head a reads columns (a - 1) · {d_k} + 1 to a · {d_k} (the "
        "heads were mixed up)"), d_k=t.dims.d_k)),
    Mistake("w_q", ("k",), N_("Q used where K belongs"), _said(N_("Q was used where K belongs: K was computed with W_Q"))),
    Mistake("interleaved", ("q", "k", "v"), N_("heads interleaved"), lambda t, step: Said(N_(
        "the heads were split as interleaved columns (every {nth} column) instead of contiguous blocks"),
        nth=_ordinal(t.dims.heads))),
    Mistake("kv_block", ("k", "v"), N_("wrong key/value block"), _kv_block),
    Mistake("unrotated", ("q_rotated", "k_rotated"), N_("rotation forgotten"), lambda t, step: Said(N_(
        "the rotation was forgotten: {which} was not turned by position"), which=step[0].upper())),
    Mistake("pairs", ("q_rotated", "k_rotated"), N_("rope pairs mixed up"), _rope_pairs),
    Mistake("backwards", ("q_rotated", "k_rotated"), N_("rotation the wrong way"), lambda t, step: Said(N_(
        "{which} was turned the wrong way: by -p · ω instead of p · ω (the sines' signs swapped)"),
        which=step[0].upper())),
    Mistake("from_one", ("q_rotated", "k_rotated"), N_("positions counted from 1"), _from_one),
    Mistake("degrees", ("q_rotated", "k_rotated"), N_("angles in degrees"), _said(N_(
        "the angles p · ω were taken as degrees; cos and sin take them in radians (a calculator left in degree mode)"))),
    Mistake("unrotated", ("scores",), N_("rotation forgotten"), _said(N_(
        "the rotation was forgotten: the scores are q · k of Q and K as projected, not as turned by position"))),
    Mistake("kq", ("scores",), N_("Q and K swapped"), _said(N_(
        "Q and K were swapped: the scores are K Q^T, the transpose of Q K^T"))),
    Mistake("kk", ("scores",), N_("K used where Q belongs"), _said(N_(
        "K was used where Q belongs: the scores are K K^T"))),
    Mistake("columns", ("weights",), N_("softmax down the columns"), _said(N_(
        "the softmax was taken down the columns (over the queries) instead of along each row"))),
    Mistake("no_sink", ("weights",), N_("sink left out"), _said(N_(
        "the sink was left out of the softmax's denominator: each row's weights sum to 1, where the sink should take "
        "its share"))),
    Mistake("unscaled", SCALING, N_("scaling forgotten"), lambda t, step: Said(N_(
        "the scaling was forgotten: the scores were not divided by {divisor}"),
        divisor=_dk(t) if t.problem.scale is True else f"{t.divisor:g}")),
    Mistake("multiplied", SCALING, N_("multiplied by √d_k"), lambda t, step: Said(N_(
        "the scores were multiplied by {dk} instead of divided by it"), dk=_dk(t))),
    Mistake("sqrt_d_model", SCALING, N_("divided by √d_model"), lambda t, step: Said(N_(
        "the scores were divided by √d_model = √{d_model} instead of {dk}"), d_model=t.dims.d_model, dk=_dk(t))),
    Mistake("scaled_when_none", SCALING, N_("scaled when not asked"), lambda t, step: Said(N_(
        "the scores were divided by {dk}, but this problem has no scaling"), dk=_dk(t))),
    Mistake("no_mask", SCALING, N_("mask left out"), _said(N_("the mask was left out: keys it hides were attended to"))),
    Mistake("inverted", SCALING, N_("mask inverted"), lambda t, step: Said(
        N_("the mask was inverted: only the keys it hides (j > i) were kept") if _causal(t) else
        N_("the mask was inverted: the hidden keys were attended and the visible ones hidden"))),
    Mistake("transposed_mask", SCALING, N_("mask transposed"), lambda t, step: Said(
        N_("the mask was transposed: the keys before each input (j < i) were hidden instead of those after it")
        if _causal(t) else N_("the mask was transposed: key j hidden from query i where it should hide i from j"))),
    Mistake("no_bias", SCALING, N_("ALiBi bias left out"), _said(N_(
        "the ALiBi bias (-slope · |i - j|) was not added to the scaled scores"))),
    Mistake("bias_sign", SCALING, N_("ALiBi bias with the wrong sign"), _said(N_(
        "the ALiBi bias was added with the wrong sign: +slope · |i - j| instead of -slope · |i - j|, so a key gained "
        "score the farther it was instead of losing it"))),
    Mistake("no_cap", SCALING, N_("soft-capping left out"), lambda t, step: Said(N_(
        "the soft-capping was left out: the scores were not turned into {cap} · tanh(score / {cap})"),
        cap=f"{t.problem.softcap or 0:g}")),
    Mistake("k_for_v", ("output",), N_("K used where V belongs"), _said(N_(
        "K was used where V belongs: the output is weights · K, not weights · V"))),
    Mistake("weights_transposed", ("output",), N_("weights transposed"), _said(N_(
        "the weights were transposed: the output is weights^T · V, each key's column used as a row"))),
    Mistake("no_wo", ("final",), N_("W_O forgotten"), _said(N_(
        "W_O was forgotten: the final output is the heads' concatenation, not concat · W_O"))),
    Mistake("order", ("final",), N_("heads in the wrong order"), _said(N_(
        "the heads were concatenated in the wrong order"))),
    Mistake("no_bo", ("final",), N_("b_o forgotten"), _said(N_("b_o was not added after concat · W_O"))),
    Mistake("wo_transposed", ("final",), N_("W_O transposed"), _said(N_("W_O was transposed: concat · W_O^T"))),
)


def _sentences(t: Trace, step: str, head: int | None) -> list[tuple[str, str, Said]]:
    """(variant, tag, sentence) for every wrong convention that can show first in this step"""
    shown = "final" if head is None else step
    return [(m.variant, m.tag, m.sentence(t, step)) for m in MISTAKES if shown in m.steps]


def _ordinal(n: int) -> Said:
    ending = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return Said({"st": N_("{n}st"), "nd": N_("{n}nd"), "rd": N_("{n}rd"), "th": N_("{n}th")}[ending], n=n)


def _fits(work: Work, key: Key, variant: str) -> tuple[bool, bool, bool]:
    """(the written cells follow the convention, its masked cells are exactly the ones left blank, and every written
    cell is the convention's value from the student's own numbers rounded, not only near it)"""
    redo = recompute(work, key, variant)
    if redo is None:
        return False, False, False
    candidates, bound = redo
    g = work.given[key]
    written = np.isfinite(g)
    cell_precision = work.cell_precision[key]
    found = (False, False, False)
    for values in candidates:
        if values.shape != g.shape:
            continue
        masked = np.isneginf(values)
        exact = rounds_to(g, np.where(masked, 0.0, values), cell_precision) & ~masked
        if ((exact | close(g, values, bound, cell_precision)) | ~written).all() and not (written & masked).any():
            fit = (True, bool(np.array_equal(masked, ~written)), bool((exact | ~written).all()))
            found = max(found, fit)
    return found


def diagnose(work: Work, items: list[Item]) -> tuple[Said | None, tuple[str, ...]]:
    """the first wrong step's mistake: every convention that explains it (preferring those that explain the blanks too)"""
    wrong = [item for item in items if item.verdict == WRONG]
    if not wrong:
        return None, ()
    first = min(wrong, key=lambda item: (item.step, item.head or 0))
    key = (first.head, first.key)
    fitting, tight = [], set()
    others = _same_convention(work, key, wrong)
    for variant, tag, sentence in _sentences(work.t, first.key, first.head):
        fits, exact, given = _fits(work, key, variant)
        for other in others if fits else ():
            also = _fits(work, other, variant)
            fits, given = also[0], given and also[2]
        if fits:
            fitting.append((exact, variant, tag, sentence))
            tight |= {variant} if given else set()
    if any(exact for exact, *_ in fitting):
        fitting = [f for f in fitting if f[0]]
    if any(variant in tight for _, variant, *_ in fitting):  # one the numbers give exactly rules out one only near them
        fitting = [f for f in fitting if f[1] in tight]
    if key[1] == "q" and any(v == "w_k" for _, v, *_ in fitting) and _fits(work, (key[0], "k"), "w_q")[0]:
        fitting = [(True, "swap", N_("Q and K swapped"),
                    Said(N_("Q and K were swapped: Q was computed with W_K and K with W_Q")))]

    def where(mistake: Said) -> Said:
        return Said(N_("{mistake} (first seen in {name})"), mistake=mistake, name=first.name) if len(items) > 1 else mistake

    if fitting:
        tags = tuple(dict.fromkeys(tag for *_, tag, _ in fitting))
        sentences = list(dict.fromkeys(sentence for *_, sentence in fitting))
        text = sentences[0] if len(sentences) == 1 else Said(N_("either {first}, or {second}"), first=sentences[0],
                                                              second=joined(sentences[1:], N_("{first}, or {second}")))
        return where(text), tags
    masked = [cell for cell in first.off if cell.given == -math.inf and math.isfinite(cell.expected)]
    if masked:
        cell = masked[0]
        return where(Said(N_("a cell that is never masked was written as masked (-inf): {cell}, expected {expected}; only "
                             "the scaled scores of a masked key are -inf"), cell=cell.name,
                          expected=number(cell.expected, cell.precision))), (N_("masked where nothing is masked"),)
    zeros = [cell for cell in first.off if cell.expected == -math.inf and cell.given == 0]
    if zeros and len(zeros) == len(first.off):
        return where(Said(N_("the masked cells were written as 0 ({cell} and the like): a masked score is -inf (or left "
                             "blank), so that the softmax gives it no weight"), cell=zeros[0].name)), \
            (N_("masked cells written as 0"),)
    rounded = _rounded_early(work, key)
    if rounded is not None:
        return where(rounded), (ROUNDED,)
    cut = _truncated(work, key)
    if cut is not None:
        return where(cut), (N_("cut instead of rounded"),)
    if len(first.off) == 1:
        cell = first.off[0]
        return (Said(N_("a slip in one cell: {cell} is {given}, expected {expected}; none of the usual mistakes explains "
                        "it"), cell=cell.name, given=number(cell.given, cell.quoted),
                     expected=number(cell.expected, cell.precision)), (N_("a slip in one cell"),))
    return None, ()


def _same_convention(work: Work, key: Key, wrong: list[Item]) -> list[Key]:
    """the other wrong steps a convention of this one's must explain too: a rotation turns Q and K of every head alike"""
    if key[1] not in ("q_rotated", "k_rotated"):
        return []
    return [(item.head, item.key) for item in wrong
            if item.key in ("q_rotated", "k_rotated") and (item.head, item.key) != key]


def _rounded_early(work: Work, key: Key) -> Said | None:
    """when every written cell of the step has fewer decimals than the sheet asks for, and is the value carried at its
    own decimals (which differs from the value carried at the sheet's): the numbers were rounded too early"""
    g = work.given[key]
    written = np.isfinite(g)
    cell_precision = written_precision(g)[written]
    if work.rule.tolerance or not written.any() or cell_precision.max() >= min(work.precision, EXACT_FROM):
        return None
    fewest = int(cell_precision.max())  # "0.5" among "0.25"-style cells is 1 decimal too
    carried, asked = work.carried(key, fewest), work.carried(key, work.precision)
    if np.array_equal(carried[written], asked[written]):  # whole numbers: rounding to fewer decimals changes nothing
        return None
    carried_written = np.where(np.isfinite(carried), carried, 0.0)[written]
    if not rounds_to(g[written], carried_written, np.full(cell_precision.shape, fewest)).all():
        return None
    if work.rule.precision is not None:
        message = N_("the numbers were rounded to {places}, not the {precision} --precision asks for, so every step "
                     "carries a larger rounding error")
    else:
        message = N_("the numbers were rounded to {places}, not the {precision} the sheet asks for, so every step "
                     "carries a larger rounding error")
    return Said(message, places=ngettext("{n} decimal", "{n} decimals", fewest), precision=work.precision)


def _truncated(work: Work, key: Key) -> Said | None:
    """when every written cell is the right value cut off after the sheet's decimals, and some would round otherwise:
    the digits were cut (truncated) instead of rounded"""

    p = work.precision
    if work.rule.tolerance or p >= EXACT_FROM:
        return None
    g = work.given[key]
    written = np.isfinite(g)
    redo = recompute(work, key, None)
    for values in [work.expected(key), *(redo[0] if redo is not None else [])]:
        if values.shape != g.shape or not np.isfinite(values[written]).all():
            continue
        cut = np.trunc(np.round(values * 10.0**p, 6)) / 10.0**p  # 0.29 * 100 is 28.999999999999996: cut 29, not 28
        if not np.allclose(g[written], cut[written], rtol=0, atol=1e-9):
            continue
        rounded = round_half_up(values, p)
        differ = np.argwhere(written & ~np.isclose(cut, rounded, rtol=0, atol=1e-9))
        if not len(differ):
            return None
        i, j = (int(v) for v in differ[0])
        return Said(N_("the numbers were cut off after {places} instead of rounded: {cell} is {value}, which rounds to "
                       "{rounded}, not {written}"), places=ngettext("{n} decimal", "{n} decimals", p),
                    cell=cell_name(work.t, key, i, j), value=number(values[i, j], p + 3),
                    rounded=number(rounded[i, j], p), written=number(g[i, j], p))
    return None
