"""Naming the first mistake on a sheet: the usual wrong convention its numbers follow, in plain words."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from attntrace.core.trace import Trace
from attntrace.homework.marking import WRONG, Item, close, rounds_to
from attntrace.homework.redo import recompute
from attntrace.homework.said import Said, joined, ngettext
from attntrace.homework.sheet import Key
from attntrace.language import N_

if TYPE_CHECKING:
    from attntrace.homework.marking import Work

ROUNDED = N_("rounded to fewer decimals")  # a mistake's tag


def _mask_words(t: Trace) -> tuple[Said, Said]:
    causal = "causal" in t.problem.masks and len(t.problem.masks) == 1
    inverted = Said(N_("the mask was inverted: only the keys it hides (j > i) were kept") if causal
                    else N_("the mask was inverted: the hidden keys were attended and the visible ones hidden"))
    transposed = Said(N_("the mask was transposed: the keys before each input (j < i) were hidden instead of those after "
                         "it") if causal else
                      N_("the mask was transposed: key j hidden from query i where it should hide i from j"))
    return inverted, transposed


def _sentences(t: Trace, step: str, head: int | None) -> list[tuple[str, str, Said]]:
    """(variant, tag, sentence) for every wrong convention that can show first in this step; a tag is English, for a
    class summary and JSON, and said with _()"""
    d = t.dims
    dk = f"√d_k = √{d.d_k} = {math.sqrt(d.d_k):.4g}"
    inverted, transposed = _mask_words(t)
    cap = f"{t.problem.softcap or 0:g}"
    divisor = {
        "unscaled": (N_("scaling forgotten"), Said(N_("the scaling was forgotten: the scores were not divided by {divisor}"),
                                                   divisor=dk if t.problem.scale is True else f"{t.divisor:g}")),
        "multiplied": (N_("multiplied by √d_k"), Said(N_("the scores were multiplied by {dk} instead of divided by it"),
                                                      dk=dk)),
        "sqrt_d_model": (N_("divided by √d_model"), Said(N_("the scores were divided by √d_model = √{d_model} instead of "
                                                            "{dk}"), d_model=d.d_model, dk=dk)),
        "scaled_when_none": (N_("scaled when not asked"), Said(N_("the scores were divided by {dk}, but this problem has "
                                                                  "no scaling"), dk=dk)),
        "no_mask": (N_("mask left out"), Said(N_("the mask was left out: keys it hides were attended to"))),
        "inverted": (N_("mask inverted"), inverted),
        "transposed_mask": (N_("mask transposed"), transposed),
        "no_bias": (N_("ALiBi bias left out"), Said(N_("the ALiBi bias (-slope · |i - j|) was not added to the scaled "
                                                       "scores"))),
        "bias_sign": (N_("ALiBi bias with the wrong sign"),
                      Said(N_("the ALiBi bias was added with the wrong sign: +slope · |i - j| instead of -slope · |i - j|, "
                              "so a key gained score the farther it was instead of losing it"))),
        "no_cap": (N_("soft-capping left out"), Said(N_("the soft-capping was left out: the scores were not turned into "
                                                        "{cap} · tanh(score / {cap})"), cap=cap)),
    }
    if step in ("q", "k", "v"):
        letter = step.upper()
        out = [("transposed", TRANSPOSED[letter],
                Said(N_("W_{letter} was transposed: {letter} = X · W_{letter}^T"), letter=letter))]
        if step == "q":
            out.append(("w_k", N_("K used where Q belongs"), Said(N_("K was used where Q belongs: Q was computed with W_K"))))
            if d.heads > 1:
                out.append(("q_block", N_("another head's columns"),
                            Said(N_("Q was taken from another head's columns of W_Q: head a reads columns (a - 1) · {d_k} "
                                    "+ 1 to a · {d_k} (the heads were mixed up)"), d_k=d.d_k)))
        if step == "k":
            out.append(("w_q", N_("Q used where K belongs"), Said(N_("Q was used where K belongs: K was computed with W_Q"))))
        out.append(("interleaved", N_("heads interleaved"),
                    Said(N_("the heads were split as interleaved columns (every {nth} column) instead of contiguous "
                            "blocks"), nth=_ordinal(d.heads))))
        if step != "q" and d.kv_heads > 1:
            rule = (Said(N_("head a reads block ⌊(a-1) / {share}⌋ + 1 of W_{letter}: the query heads that share a block "
                            "are next to each other"), share=d.heads // d.kv_heads, letter=letter)
                    if d.kv_heads < d.heads else Said(N_("head a reads its own columns of W_{letter}"), letter=letter))
            out.append(("kv_block", N_("wrong key/value block"),
                        Said(N_("{letter} was taken from another head's block of W_{letter}: {rule}"), letter=letter,
                             rule=rule)))
        return out
    if step in ("q_rotated", "k_rotated"):
        which = step[0].upper()
        rope = t.problem.rope
        other = Said(N_("2i - 1 with 2i") if rope is not None and rope.pairs == "half" else N_("i with i + d_k/2"))
        first_position = (Said(N_("the first input is at position 0")) if rope is None or rope.positions is None
                          else Said(N_("p is the position the problem gives")))
        return [("unrotated", N_("rotation forgotten"),
                 Said(N_("the rotation was forgotten: {which} was not turned by position"), which=which)),
                ("pairs", N_("rope pairs mixed up"),
                 Said(N_("the pairs were mixed up: {which} was turned with dimension {pairs} paired"), which=which,
                      pairs=other)),
                ("backwards", N_("rotation the wrong way"),
                 Said(N_("{which} was turned the wrong way: by -p · ω instead of p · ω (the sines' signs swapped)"),
                      which=which)),
                ("from_one", N_("positions counted from 1"),
                 Said(N_("the positions were counted from 1: {which} was turned by (p + 1) · ω, but {first}"),
                      which=which, first=first_position)),
                ("degrees", N_("angles in degrees"),
                 Said(N_("the angles p · ω were taken as degrees; cos and sin take them in radians (a calculator left "
                         "in degree mode)")))]
    if step == "scores":
        return [("unrotated", N_("rotation forgotten"),
                 Said(N_("the rotation was forgotten: the scores are q · k of Q and K as projected, not as turned by "
                         "position"))),
                ("kq", N_("Q and K swapped"), Said(N_("Q and K were swapped: the scores are K Q^T, the transpose of Q K^T"))),
                ("kk", N_("K used where Q belongs"), Said(N_("K was used where Q belongs: the scores are K K^T")))]
    if step == "scaled":
        return [(v, *divisor[v]) for v in divisor]
    if step == "weights":
        return [("columns", N_("softmax down the columns"),
                 Said(N_("the softmax was taken down the columns (over the queries) instead of along each row"))),
                ("no_sink", N_("sink left out"),
                 Said(N_("the sink was left out of the softmax's denominator: each row's weights sum to 1, where the "
                         "sink should take its share"))),
                *[(v, *divisor[v]) for v in divisor]]
    if step == "output" and head is not None:
        return [("k_for_v", N_("K used where V belongs"),
                 Said(N_("K was used where V belongs: the output is weights · K, not weights · V"))),
                ("weights_transposed", N_("weights transposed"),
                 Said(N_("the weights were transposed: the output is weights^T · V, each key's column used as a row")))]
    if head is None:
        return [("no_wo", N_("W_O forgotten"),
                 Said(N_("W_O was forgotten: the final output is the heads' concatenation, not concat · W_O"))),
                ("order", N_("heads in the wrong order"), Said(N_("the heads were concatenated in the wrong order"))),
                ("no_bo", N_("b_o forgotten"), Said(N_("b_o was not added after concat · W_O"))),
                ("wo_transposed", N_("W_O transposed"), Said(N_("W_O was transposed: concat · W_O^T")))]
    return []


TRANSPOSED = {"Q": N_("W_Q transposed"), "K": N_("W_K transposed"), "V": N_("W_V transposed")}  # tags


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
    from attntrace.homework.report import number

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
    from attntrace.homework.marking import EXACT_FROM, written_precision

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
    from attntrace.core.arithmetic import round_half_up
    from attntrace.homework.marking import EXACT_FROM, cell_name
    from attntrace.homework.redo import recompute
    from attntrace.homework.report import number
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
