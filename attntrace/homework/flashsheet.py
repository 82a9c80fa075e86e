"""Worksheets of FlashAttention's online softmax: per head and query, a row per block of keys for the running m, ℓ and
O, then O / ℓ (with a learned sink, O / (ℓ + e^(sink − m))); the key is the recurrence worked by hand from the scores
and values the handout prints, each value written rounded and carried into the next block. A sheet is marked by the
eight steps' rules (judging.py) and the first classic mistake its numbers prove is named."""

from __future__ import annotations

import itertools
import math
from typing import Any, NamedTuple

import numpy as np

from attntrace.core.arithmetic import Carried, round_half_up
from attntrace.core.attention import exps, logits
from attntrace.core.engine import trace
from attntrace.core.flash import blocks, default_block, online_softmax, rescale
from attntrace.core.problem import Problem
from attntrace.core.trace import Trace
from attntrace.escape import visible
from attntrace.homework import judging
from attntrace.homework.judging import BLANK, RIGHT, UNASKED, WRONG, Span, half, rounded
from attntrace.homework.results import Item, Kind, Report, Rule, Traces, precision_of, rounded_fewer
from attntrace.homework.said import Said
from attntrace.homework.sheet import FLASH_KEYS, Key, Sheet, SheetError
from attntrace.homework.tables import Page, Reading, another_problem, block_size, filled_pages, nothing_found, read_kind
from attntrace.homework.worksheet import intro
from attntrace.language import N_, _
from attntrace.render.document import Document
from attntrace.render.jsonform import floats
from attntrace.views.page import Block, Note, Section


class _Item(Item):
    """an online-softmax item: its step is the softmax's and the output's"""

    @property
    def step(self) -> int:
        return 7 if self.key == "flash_output" else 6


class Worked(NamedTuple):
    """one head's recurrence for the traced rows, rounded and carried: m, ℓ [n_q, nb], O [n_q, nb, d_v], the output"""

    m: np.ndarray
    ell: np.ndarray
    o: np.ndarray
    output: np.ndarray


def printed(t: Trace, precision: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """each head's scaled scores and values as the handout prints them, from the trace with the rounding carried: what
    the eight steps' key gives, and what the decoding handout prints too"""
    return [(round_half_up(h.scaled, precision), round_half_up(h.v, precision)) for h in t.heads]


def sinks(t: Trace) -> tuple[float | None, ...]:
    """each head's learned sink logit, or None"""
    sink = getattr(t.problem, "sink", None)
    return tuple(None if sink is None else float(sink[a]) for a in range(len(t.heads)))


def worked(scaled: np.ndarray, v: np.ndarray, block: int, precision: int, sink: float | None = None) -> Worked:
    """the hand-worked recurrence of scores [n_q, m] over values [m, d_v], B keys at a time: the online softmax under
    carried rounding (m a score, ℓ and O rounded after each block and carried; the output rounded)"""
    key = online_softmax(scaled, v, block, sink, Carried(precision))
    return Worked(key.m, key.ell, key.o, key.output)


def works(t: Trace, block: int, precision: int) -> list[Worked]:
    """every head's hand-worked recurrence, from the scores and values the handout prints"""
    return [worked(s, v, block, precision, sink) for (s, v), sink in zip(printed(t, precision), sinks(t))]


def answer_sheet(t: Trace, block: int, blank: bool, precision: int) -> dict[str, Any]:
    """the JSON answer sheet: per head flash_m, flash_l [query][block], flash_o [query][block][d_v] and flash_output
    [query][d_v]; blank: every cell null"""

    def cells(values: np.ndarray) -> Any:
        listed = floats(np.where(np.isfinite(values), values, np.nan)) if values.size else []
        return _nulls(listed) if blank else listed

    heads = [{"head": a, "flash_m": cells(w.m), "flash_l": cells(w.ell), "flash_o": cells(w.o),
              "flash_output": cells(w.output)} for a, w in enumerate(works(t, block, precision), start=1)]
    return {"name": t.problem.name, **({"student": None} if blank else {}), "query": t.query, "precision": precision,
            "block": block, "tokens": list(t.problem.labels), "heads": heads}


def _nulls(value: Any) -> Any:
    return [_nulls(v) for v in value] if isinstance(value, list) else None


def steps(t: Trace, block: int, precision: int) -> list[Section]:
    """a page per head and query: its scores and values given, the table of m, ℓ, O per block, and the output"""
    bounds = blocks(t.dims.m, block)
    keys = tuple(visible(label) for label in t.problem.key_labels)
    out = []
    for a, ((s, v), w) in enumerate(zip(printed(t, precision), works(t, block, precision)), start=1):
        d_v = v.shape[1]
        o_cols = tuple(f"O[{c}]" for c in range(1, d_v + 1))
        for r, row in enumerate(t.rows):
            head = _what(a, row + 1, len(t.heads))
            rows = tuple(_("block {block} (keys {first}–{last})").format(block=b + 1, first=start + 1, last=stop)
                         for b, (start, stop) in enumerate(bounds))
            table = np.column_stack([w.m[r], w.ell[r], w.o[r]])
            out.append(Section(head, (
                Block(_(SCORES).format(what=head), "scores", ("s",), keys, s[r:r + 1]),
                Block(_("{what}: values V").format(what=head), "v", keys, tuple(f"v[{c}]" for c in range(1, d_v + 1)),
                      v),
                Block(_(TABLE).format(what=head), "weighted", rows, ("m", "ℓ", *o_cols), table, (a, "flash", r)),
                Block(_(OUTPUT).format(what=head), "output", ("O / ℓ",), o_cols, w.output[r:r + 1],
                      (a, "flash_output", r)))))
    return out


RULES = N_("Take the keys {block} at a time, in order. Start with m = −∞, ℓ = 0, O = 0. For each block: m_new = "
           "max(m, the block's largest score); ℓ = ℓ·e^(m − m_new) + Σ e^(s − m_new); O = O·e^(m − m_new) + "
           "Σ e^(s − m_new)·v. A block whose every key is masked leaves m, ℓ and O as they were. At the end, the "
           "output is O / ℓ.")
SINK = N_("This problem has a learned attention sink with logit {sink}: it joins the sum at the end as one more "
          "score with no value, so the output is O / (ℓ + e^({sink} − m)), with m, ℓ and O after the last block.")
SINKS = N_("This problem has a learned attention sink in each head (logits {sinks}): it joins the sum at the end as "
           "one more score with no value, so the output is O / (ℓ + e^(sink − m)), with the head's sink and m, ℓ and O "
           "after the last block.")
SINK_HEAD = N_("head {head}: {sink}")
TABLE = N_("{what}: m, ℓ and O after each block")
SCORES = N_("{what}: scores s, as the softmax takes them")
SCALED = N_("{what}: scores s (scaled)")  # the title of worksheets printed before, read back all the same
OUTPUT = N_("{what}: output O / ℓ")


def _what(head: int, query: int, heads: int) -> str:
    return _("head {head}, query {query}").format(head=head, query=query) if heads > 1 else _("query {query}").format(
        query=query)


def rules(block: int) -> str:
    """the recurrence to work, in words"""
    return _(RULES).format(block=block)


def sink_rule(logits_: tuple[float | None, ...], one: str = SINK, each: str = SINKS) -> str | None:
    """where the learned sink enters, with each head's logit (one: the sentence for a logit every head shares, each:
    for one per head); None without one"""
    if all(sink is None for sink in logits_):
        return None
    if len(set(logits_)) == 1:
        return _(one).format(sink=f"{logits_[0]:g}")
    return _(each).format(sinks=_(", ").join(_(SINK_HEAD).format(head=a, sink="−∞" if s is None else f"{s:g}")
                                             for a, s in enumerate(logits_, start=1)))


def document(t: Trace, block: int | None, precision: int, key: bool, student: str | None = None) -> Document:
    """the worksheet of the online softmax: the problem's instructions, the recurrence, and a page per head and query"""
    block = default_block(t.dims.m) if block is None else block
    pages = steps(t, block, precision)
    first = pages[0]
    sink = sink_rule(sinks(t))
    notes = (Note(rules(block), "text"), *([] if sink is None else [Note(sink, "text")]))
    pages[0] = Section(first.heading, (*notes, *first.items))
    return Document(pages, answer_sheet(t, block, blank=not key, precision=precision),
                    preface=lambda fmt: intro(t, precision, key, fmt == "markdown", student))


NAMES = {"flash_m": N_("m after each block"), "flash_l": N_("ℓ after each block"), "flash_o": N_("O after each block"),
         "flash_output": N_("output O / ℓ")}
OWN = {"flash_m": N_("your own m before it"), "flash_l": N_("your own m and ℓ"), "flash_o": N_("your own m and O"),
       "flash_output": N_("your own m, ℓ and O after the last block")}


class Numbers(NamedTuple):
    """one head's numbers a sheet is worked from and judged against"""

    sets: tuple[tuple[np.ndarray, np.ndarray], ...]  # (scores [n_q, m], values [m, d_v]) a student may work from:
    # as the handout prints them, the true ones rounded, the true ones
    sink: float | None
    true: Worked  # the recurrence unrounded, from the true scores and values
    key: Worked  # the handout's key


class Given(NamedTuple):
    """one head's cells as written, NaN where blank: m, ℓ [n_q, nb], O [n_q, nb, d_v], the output [n_q, d_v]"""

    m: np.ndarray
    ell: np.ndarray
    o: np.ndarray
    output: np.ndarray


def numbers(marker: Traces, query: int | None, block: int, precision: int, divisor: float = 1.0) -> list[Numbers]:
    """every head's numbers; divisor: the scores taken divided by it once more (√d_k: scaled when the problem says
    not; 1 / s: the scaling forgotten)"""
    exact, carried = marker.traced(query), marker.traced(query, precision)
    out = []
    for (h, c), sink in zip(zip(exact.heads, carried.heads), sinks(exact)):
        def scores(trace_head: Any) -> np.ndarray:
            if divisor == 1.0:
                return trace_head.scaled
            z = logits(trace_head.scores, exact.divisor * divisor, trace_head.bias, exact.problem.softcap)
            return np.where(np.isfinite(trace_head.scaled), z, -np.inf)

        printed_ = (round_half_up(scores(c), precision), round_half_up(c.v, precision))
        true = online_softmax(scores(h), h.v, block, sink)
        out.append(Numbers((printed_, (round_half_up(scores(h), precision), round_half_up(h.v, precision)),
                            (scores(h), h.v), *divided_again(c, precision, divisor)), sink,
                           Worked(true.m, true.ell, true.o, true.output), worked(*printed_, block, precision, sink)))
    return out


def divided_again(head: Any, precision: int, divisor: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """with the scaling applied where the problem has none: the handout's own scores divided by the divisor, or by
    the divisor rounded as the sheet rounds (1.41 for √2), each quotient rounded"""
    if divisor <= 1.0:
        return []
    given = round_half_up(head.scaled, precision), round_half_up(head.v, precision)
    return [(round_half_up(given[0] / by, precision), given[1])
            for by in dict.fromkeys((divisor, float(round_half_up(np.float64(divisor), precision)))) if by > 0]


def judge(n: Numbers, g: Given, bounds: tuple[tuple[int, int], ...], precision: int,
          variant: str | None = None) -> dict[str, np.ndarray]:
    """every cell's verdict (judging's codes), each worked from the student's own numbers before it (the key's where
    they left a cell blank); variant: one classic mistake made, whose numbers are then the ones that fit"""
    n_q, nb, d_v = g.o.shape
    truths = variant is None
    codes = {"flash_m": np.zeros((n_q, nb), dtype=int), "flash_l": np.zeros((n_q, nb), dtype=int),
             "flash_o": np.zeros((n_q, nb, d_v), dtype=int)}
    u = half(precision)
    m_old, l_old, o_old = np.full(n_q, -np.inf), np.zeros(n_q), np.zeros((n_q, d_v))
    good_m, good_l, good_o = np.ones(n_q, bool), np.ones(n_q, bool), np.ones(n_q, bool)
    l_written, o_written = np.zeros(n_q, bool), np.zeros((n_q, d_v), bool)
    folded = np.zeros(n_q)  # 1 where the student added the sink to ℓ at the last block, NaN where either fits
    with np.errstate(all="ignore"):
        for b, (start, stop) in enumerate(bounds):
            tops = [np.max(s[:, start:stop], axis=1) for s, _v in n.sets]
            own_m = [top if variant == "no_carry" else np.maximum(m_old, top) for top in tops]
            gm, true_m = g.m[:, b], n.true.m[:, b]
            cm = judging.verdicts(gm, [true_m, n.key.m[:, b]] if truths else [],
                                  judging.equals_rounded(gm, own_m, precision), good_m, precision)
            unasked = ~np.isfinite(true_m)  # no key seen yet: m is −∞, left blank
            cm = np.where(unasked, np.where(np.isfinite(gm), WRONG, UNASKED), cm)
            m_new = np.where(np.isfinite(gm), gm, own_m[0])
            fresh = (cm == RIGHT) | (((cm == BLANK) | (cm == UNASKED)) & good_m)
            seen = np.isfinite(m_old)
            spans = {"l": Span((n_q,)), "o": Span((n_q, d_v)), "fold": Span((n_q,))}
            centre_l, centre_o = l_old, o_old
            for index, (s_all, v_all) in enumerate(n.sets):
                s, v = s_all[:, start:stop], v_all[start:stop]
                skipped = ~np.isfinite(s).any(axis=1)
                factor = rescale(m_old, m_new, skipped)
                kept = np.where(skipped | ~seen, factor, 1.0)  # the rescale factor forgotten
                f_l = kept if variant in ("no_rescale", "no_rescale_l") else factor
                f_o = kept if variant in ("no_rescale", "no_rescale_o") else factor
                p = exps(s, m_new[:, None])
                for round_f, round_p, round_products in itertools.product((False, True), repeat=3):
                    fl, fo = (rounded(f_l, precision), rounded(f_o, precision)) if round_f else (f_l, f_o)
                    pp = rounded(p, precision) if round_p else p
                    lf, of, pv = l_old * fl, o_old * fo[:, None], pp[:, :, None] * v[None]
                    if round_products:
                        lf, of, pv = rounded(lf, precision), rounded(of, precision), rounded(pv, precision)
                    total, add = pp.sum(axis=1), pv.sum(axis=1)
                    if variant == "normalised":
                        add = np.divide(add, total[:, None], out=np.zeros_like(add), where=total[:, None] > 0)
                    spans["l"].add(lf + total)
                    spans["o"].add(of + add)
                    if n.sink is not None and b == nb - 1:  # the sink added to ℓ at once, after the last block
                        for round_e in (False, True):
                            e = exps(np.asarray(n.sink), m_new)
                            spans["fold"].add(lf + total + (rounded(e, precision) if round_e else e))
                    if index == 0 and not (round_f or round_p or round_products):
                        centre_l, centre_o = rounded(lf + total, precision), rounded(of + add, precision)
            slack = u * np.abs(exps(m_old, m_new))
            spans["l"].slack = np.where(l_written, slack, 0.0)
            spans["fold"].slack = spans["l"].slack
            spans["o"].slack = np.where(o_written, slack[:, None], 0.0)
            gl, go = g.ell[:, b], g.o[:, b]
            fits_l = spans["l"].holds(gl, precision)
            fits_fold = spans["fold"].holds(gl, precision) if n.sink is not None and b == nb - 1 else np.zeros(n_q, bool)
            truths_l = [n.true.ell[:, b], n.key.ell[:, b]] if truths else []
            if truths and n.sink is not None and b == nb - 1:
                truths_l += [n.true.ell[:, b] + exps(np.asarray(n.sink), n.true.m[:, b])]
            inputs_l = fresh & good_m & good_l
            inputs_o = fresh & good_m & good_o
            cl = judging.verdicts(gl, truths_l, fits_l | fits_fold, inputs_l, precision)
            co = judging.verdicts(go, [n.true.o[:, b], n.key.o[:, b]] if truths else [], spans["o"].holds(go, precision),
                                  inputs_o[:, None], precision)
            codes["flash_m"][:, b], codes["flash_l"][:, b], codes["flash_o"][:, b] = cm, cl, co
            folded = np.where(fits_l, np.where(fits_fold, np.nan, 0.0), np.where(fits_fold, 1.0, 0.0))  # NaN: either
            good_l = (cl == RIGHT) | ((cl == BLANK) & inputs_l)
            good_o = ((co == RIGHT) | ((co == BLANK) & inputs_o[:, None])).all(axis=1)
            good_m = fresh
            l_written, o_written = np.isfinite(gl), np.isfinite(go)
            m_old, l_old, o_old = m_new, np.where(l_written, gl, centre_l), np.where(o_written, go, centre_o)
        codes["flash_output"] = _judge_output(n, g.output, m_old, l_old, o_old, folded, l_written, o_written,
                                              good_m & good_l & good_o, precision, variant)
    return codes


def _judge_output(n: Numbers, given: np.ndarray, m: np.ndarray, ell: np.ndarray, o: np.ndarray, folded: np.ndarray,
                  l_written: np.ndarray, o_written: np.ndarray, inputs: np.ndarray, precision: int,
                  variant: str | None) -> np.ndarray:
    """the output's verdicts: O / ℓ from the student's own last m, ℓ and O (with the sink's e^(sink − m) added to ℓ,
    unless they added it to ℓ at the last block already)"""
    span = Span(o.shape)
    centre = np.zeros_like(o)
    for round_e, round_denominator in itertools.product((False, True), repeat=2):
        if n.sink is None or variant == "no_sink":
            ways = [ell]
        else:
            e = exps(np.asarray(n.sink), m)
            added = ell + (rounded(e, precision) if round_e else e)
            ways = [np.where(folded == 1, ell, added), np.where(folded == 0, added, ell)]
        top = o
        if variant == "sink_valued" and n.sink is not None:  # the sink taken for token 1, value and all
            top = o + np.where(np.isfinite(m), exps(np.asarray(n.sink), m), 0.0)[:, None] * n.sets[0][1][0]
        for denominator in ways:
            if round_denominator:
                denominator = rounded(denominator, precision)
            out = o if variant == "no_division" else np.divide(top, denominator[:, None], out=np.zeros_like(o),
                                                              where=denominator[:, None] != 0)
            span.add(out)
            if not (round_e or round_denominator):
                centre = np.where(denominator[:, None] != 0, 1.0 / np.abs(denominator[:, None]), 0.0) * (
                    1 + np.abs(out))
    span.slack = half(precision) * np.where(l_written[:, None] | o_written, centre, 0.0)
    truths = [n.true.output, n.key.output] if variant is None else []
    return judging.verdicts(given, truths, span.holds(given, precision), inputs[:, None], precision)


BLOCK_VARIANTS = ("no_carry", "no_rescale", "no_rescale_l", "no_rescale_o", "normalised")
OUTPUT_VARIANTS = ("no_sink", "sink_valued", "no_division")  # with ℓ = 1 only the sink's term shows
SCORE_VARIANTS = ("unscaled", "scaled_when_none")


def _first_wrong(codes: dict[str, np.ndarray]) -> tuple[int, int | None] | None:
    """the first row and block (None: the output) holding a wrong cell, as the sheet is read"""
    n_q, nb = codes["flash_m"].shape
    for r in range(n_q):
        for b in range(nb):
            if WRONG in (codes["flash_m"][r, b], codes["flash_l"][r, b]) or (codes["flash_o"][r, b] == WRONG).any():
                return r, b
        if (codes["flash_output"][r] == WRONG).any():
            return r, None
    return None


def _group(codes: dict[str, np.ndarray], r: int, b: int | None) -> np.ndarray:
    if b is None:
        return codes["flash_output"][r]
    return np.concatenate([[codes["flash_m"][r, b], codes["flash_l"][r, b]], codes["flash_o"][r, b]])


def _variant_said(variant: str, block: int | None, query: int, divisor: str) -> tuple[Said, str]:
    """a mistake in words, and its tag"""
    if variant == "no_carry":
        return Said(N_("the running maximum was not carried: m after block {block} is that block's own largest score, "
                       "not the larger of it and m before"), block=block), "maximum not carried"
    if variant in ("no_rescale", "no_rescale_l", "no_rescale_o"):
        which = {"no_rescale": N_("both ℓ and O"), "no_rescale_l": N_("ℓ (O was rescaled)"),
                 "no_rescale_o": N_("O (ℓ was rescaled)")}[variant]
        return Said(N_("the rescale factor was forgotten in {which}: in block {block} ℓ and O before it must both be "
                       "multiplied by e^(m_old − m_new)"), which=Said(which), block=block), "rescale factor forgotten"
    if variant == "normalised":
        return Said(N_("the sum was normalised per block: in block {block} O adds the block's Σ e^(s − m)·v divided by "
                       "its own sum; divide by ℓ only at the end"), block=block), "normalised per block"
    if variant == "sink_valued":
        return Said(N_("the sink was given a value: it joins ℓ as e^(sink − m) but adds nothing to O, so output {query} "
                       "is O / (ℓ + e^(sink − m))"), query=query), "sink given a value"
    if variant == "no_division":
        return Said(N_("the output was not divided by ℓ: output {query} is O / ℓ, and O after the last block was "
                       "written"), query=query), "division by ℓ forgotten"
    if variant == "no_sink":
        return Said(N_("the learned sink was left out: it joins the sum at the end as one more score with no value, so "
                       "the output is O / (ℓ + e^(sink − m)), not O / ℓ")), "sink left out"
    if variant == "unscaled":
        return Said(N_("the scaling was forgotten: the scores were not divided by {divisor}"),
                    divisor=divisor), "scaling forgotten"
    return Said(N_("the scores were divided by {dk}, but this problem has no scaling"), dk=divisor), "scaled when not asked"


def _diagnosis(marker: Traces, t: Trace, sheet: Sheet, given: list[Given], judged: list[dict[str, np.ndarray]],
               bounds: tuple[tuple[int, int], ...], precision: int) -> tuple[Said | None, tuple[str, ...]]:
    """the first classic mistake the first wrong numbers prove: judged again with that mistake made, the cells there
    fit where they did not"""
    assert sheet.block is not None
    for a, (g, codes) in enumerate(zip(given, judged)):
        first = _first_wrong(codes)
        if first is None:
            continue
        r, b = first
        p = t.problem
        variants: list[tuple[str, float]] = [(v, 1.0) for v in (BLOCK_VARIANTS if b is not None else OUTPUT_VARIANTS)]
        if p.scale is True or (p.scale not in (None, False) and t.divisor != 1.0):
            variants.append(("unscaled", 1.0 / t.divisor))
        if p.scale is False:
            variants.append(("scaled_when_none", math.sqrt(t.dims.d_k)))
        fitting = []  # (wrong cells left on the whole sheet, order, variant) of each mistake that fits there
        for order, (variant, divisor) in enumerate(variants):
            if variant in ("no_sink", "sink_valued") and sinks(t)[a] is None:
                continue
            n = numbers(marker, sheet.query, sheet.block, precision, divisor)[a]
            again = judge(n, g, bounds, precision, None if variant in SCORE_VARIANTS else variant)
            if WRONG not in _group(again, r, b):
                fitting.append((sum(int((c == WRONG).sum()) for c in again.values()), order, variant))
        if not fitting:
            return None, ()
        variant = min(fitting)[2]  # the one the rest of the sheet bears out best
        dk = f"√d_k = √{t.dims.d_k} = {math.sqrt(t.dims.d_k):.4g}" if p.scale in (True, False) else f"{t.divisor:g}"
        said, tag = _variant_said(variant, None if b is None else b + 1, t.rows[r] + 1, dk)
        return said, (tag,)
    return None, ()


def _given(sheet: Sheet, head: int, n_q: int, nb: int, d_v: int) -> Given:
    """a head's cells, NaN where not given; a table of another shape refuses the sheet"""
    shapes = {"flash_m": (n_q, nb), "flash_l": (n_q, nb), "flash_o": (n_q * nb, d_v), "flash_output": (n_q, d_v)}
    out = {}
    for key, shape in shapes.items():
        cells = sheet.cells.get((head, key))
        if cells is None:
            out[key] = np.full(shape, np.nan)
            continue
        if cells.shape != shape:
            raise SheetError(_("{sheet}: head {head} {key} is {rows} x {columns}, where this problem with blocks of "
                               "{block} keys asks for {want_rows} x {want_columns}; check it against the problem and "
                               "block size it answers").format(sheet=sheet.origin, head=head, key=key,
                                                              rows=cells.shape[0], columns=cells.shape[1],
                                                              block=sheet.block, want_rows=shape[0],
                                                              want_columns=shape[1]))
        out[key] = cells
    return Given(out["flash_m"], out["flash_l"], out["flash_o"].reshape(n_q, nb, d_v), out["flash_output"])


def mark(marker: Traces, sheet: Sheet, rule: Rule) -> Report:
    """an online-softmax sheet marked cell by cell by the eight steps' rules (judging.py), and the first classic
    mistake named; a sheet written to fewer decimals than asked is marked again at its own"""
    report = _marked(marker, sheet, rule)
    rounded_fewer(sheet, rule, report, lambda fewer, again: _marked(marker, fewer, again))
    return report


def _marked(marker: Traces, sheet: Sheet, rule: Rule) -> Report:
    """an online-softmax sheet marked at one precision"""
    assert sheet.block is not None
    t = marker.traced(sheet.query)
    precision, source = precision_of(sheet, rule)
    bounds = blocks(t.dims.m, sheet.block)
    nb, n_q = len(bounds), len(t.rows)
    heads = numbers(marker, sheet.query, sheet.block, precision)
    given = [_given(sheet, a, n_q, nb, h.sets[0][1].shape[1]) for a, h in enumerate(heads, start=1)]
    for number in sheet.heads:
        if not 1 <= number <= len(heads):
            raise SheetError(_("{sheet}: head {head} is out of range; this problem has heads 1 to {heads}").format(
                sheet=sheet.origin, head=number, heads=len(heads)))
    judged = [judge(n, g, bounds, precision) for n, g in zip(heads, given)]
    items: list[Item] = []
    many = len(heads) > 1
    for a, (n, g, codes) in enumerate(zip(heads, given, judged), start=1):
        d_v = g.o.shape[2]
        values = {"flash_m": (g.m, n.key.m), "flash_l": (g.ell, n.key.ell),
                  "flash_o": (g.o.reshape(n_q * nb, d_v), n.key.o.reshape(n_q * nb, d_v)),
                  "flash_output": (g.output, n.key.output)}
        for key in FLASH_KEYS:
            written, expected = values[key]
            name = Said(N_("head {head} {key}"), head=a, key=Said(NAMES[key])) if many else Said(NAMES[key])
            marked = judging.item(_Item, a, key, name, codes[key].reshape(written.shape), written, expected,
                                      precision, _namer(t, name, key, nb), Said(OWN[key]))
            if marked is not None:
                items.append(marked)
    report = Report(sheet.origin, marker.problem.name or marker.origin, precision, source, sheet.query, items,
                    follow_through=rule.follow_through, student=sheet.student, notes=list(sheet.notes))
    if _first_wrong_any(judged):
        report.diagnosis, report.mistakes = _diagnosis(marker, t, sheet, given, judged, bounds, precision)
    return report


def _first_wrong_any(judged: list[dict[str, np.ndarray]]) -> bool:
    return any(_first_wrong(codes) is not None for codes in judged)


def _namer(t: Trace, name: Said, key: str, nb: int) -> Any:
    """a cell as a student reads it: by query, block and column"""
    def named(i: int, j: int) -> Said:
        if key in ("flash_m", "flash_l"):
            where = Said(N_("query {query}, block {block}"), query=t.rows[i] + 1, block=j + 1)
        elif key == "flash_o":
            where = Said(N_("query {query}, block {block}, column {column}"), query=t.rows[i // nb] + 1,
                         block=i % nb + 1, column=j + 1)
        else:
            where = Said(N_("query {query}, column {column}"), query=t.rows[i] + 1, column=j + 1)
        return Said("{name} [{where}]", name=name, where=where)

    return named


def read(text: str, origin: str, problem: Problem | None) -> Sheet | None:
    """a filled worksheet --flash, in any language attntrace prints, as a sheet; None if the text is not one"""
    if problem is None:
        return None
    return read_kind(text, origin, lambda: [_(RULES)], lambda reading, found: _read(reading, found, problem))


def _read(reading: Reading, found: dict[str, str], problem: Problem) -> Sheet:
    """a filled worksheet --flash, read in the language its rules are written in"""
    block = block_size(found["block"], reading)
    d = problem.dims
    another_problem(reading, [_(TABLE).format(what=_what(a, d.n + 1, d.heads)) for a in range(1, d.heads + 1)],
                    problem.name)
    nb = len(blocks(d.m, block))
    precision = reading.precision()
    printed_ = printed(trace(problem, carry_rounding=2 if precision is None else precision),
                       2 if precision is None else precision)
    places = [(a, q, _what(a, q, d.heads)) for a in range(1, d.heads + 1) for q in range(1, d.n + 1)]
    pages = [Page(((_("{what}: values V").format(what=what), printed_[a - 1][1]),
                   *((_(title).format(what=what), printed_[a - 1][0][q - 1:q]) for title in (SCORES, SCALED))),
                  ((_(TABLE).format(what=what), nb, 2 + d.d_v), (_(OUTPUT).format(what=what), 1, d.d_v)))
             for a, q, what in places]
    answered: dict[int, dict[int, tuple[np.ndarray, np.ndarray]]] = {}
    for (a, q, _title), (table, output) in zip(places, filled_pages(reading, pages, precision or 2, problem.name,
                                                                    first=True)):
        if table is not None:
            answered.setdefault(a, {})[q] = (table, np.full((1, d.d_v), np.nan) if output is None else output)
    if not answered:
        nothing_found(reading, problem.name)
    queries = sorted({q for per in answered.values() for q in per})
    query = queries[0] if len(queries) == 1 and d.n > 1 else None
    rows = queries if query is not None else list(range(1, d.n + 1))
    cells: dict[Key, np.ndarray] = {}
    for a, per in answered.items():
        got = [per.get(q, (np.full((nb, 2 + d.d_v), np.nan), np.full((1, d.d_v), np.nan))) for q in rows]
        cells[(a, "flash_m")] = np.array([g[0][:, 0] for g in got])
        cells[(a, "flash_l")] = np.array([g[0][:, 1] for g in got])
        cells[(a, "flash_o")] = np.vstack([g[0][:, 2:] for g in got])
        cells[(a, "flash_output")] = np.vstack([g[1] for g in got])
    return Sheet(reading.origin, cells, query=query, precision=reading.precision(), student=reading.student(),
                 notes=tuple(reading.notes), heads=tuple(answered), block=block)


KIND = Kind("flash", read, lambda sheet: sheet.block is not None, mark)
