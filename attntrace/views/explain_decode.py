"""One decode step written out as a student would: the cache after the new token joined it, each score of q_t against
it, each weight of the softmax (the sink logit in its denominator when there is one) and each cell of the output,
with the numbers at the precision and each result the step's value rounded."""

from __future__ import annotations

import math
from dataclasses import replace

from attntrace.core.decode import Decoded, DecodeHead, DecodeStep
from attntrace.core.problem import divisor
from attntrace.language import _, ngettext
from attntrace.views.explain import head_words, num, output_cell
from attntrace.views.explain_flash import added, written
from attntrace.views.page import Note, Section, Step


def explain_decode_steps(d: Decoded, precision: int) -> list[Step]:
    """the one step shown (decode --input t), line by line: the cache, the scores, the weights, the output"""
    t = d.steps[0]
    first = d.heads[0].steps[0]
    cache = Note(_("cache after step {t}, in slot order: {positions}").format(
        t=t, positions=", ".join(str(j) for j in first.cache)))
    legend = Note(ngettext("Each line writes its numbers at {p} decimal; its result is the step's value, rounded to {p} "
                           "decimal (worked from the unrounded numbers).",
                           "Each line writes its numbers at {p} decimals; its result is the step's value, rounded to "
                           "{p} decimals (worked from the unrounded numbers).", precision).format(p=precision))
    heads = [(h, h.steps[0], head_words(h.head + 1) if d.dims.heads > 1 else "") for h in d.heads]
    steps: list[Step] = [
        Section(_("Decode step {t}: the scores of q{t} against the cache").format(t=t),
                (legend, cache, *(n for h, s, who in heads for n in _scores(d, s, who, precision)))),
        Section(_("Decode step {t}: the softmax").format(t=t),
                tuple(n for h, s, who in heads for n in _weights(h, s, who, precision))),
        Section(_("Decode step {t}: the output").format(t=t),
                tuple(n for h, s, who in heads for n in _output(h, s, who, precision))),
    ]
    if d.dims.heads > 1 or d.problem.w_o is not None:
        steps[-1] = replace(steps[-1], items=(*steps[-1].items, Note(
            _("the heads' outputs side by side go through W_O as in step 7 (attntrace explain shows it)")
            if d.problem.w_o is not None else _("the step's output is the heads' outputs side by side"))))
    return steps


def _scores(d: Decoded, s: DecodeStep, who: str, p: int) -> list[Note]:
    """q_t · k_j for each cached j, then divided (biased, capped) into the softmax's logit"""
    lines = []
    by = divisor(d.problem, d.dims.d_k)
    varied = d.problem.alibi or d.problem.softcap is not None
    k_rows = next(head for head in d.heads if head.steps[0] is s).cached(s)[0]
    for place, j in enumerate(s.cache):
        terms = [f"{written(a, p)}×{written(b, p)}" for a, b in zip(s.q, k_rows[place])]
        lines.append(f"{who}q{s.t} · k{j} = {added(terms)} = {num(s.scores[place], p)}")
        if varied:
            lines.append(f"{who}s({s.t},{j}) = " + _("{score} / {divisor}, biased and capped as the problem says").format(
                score=written(s.scores[place], p), divisor=num(by, p)) + f" = {written(s.scaled[place], p)}")
        elif by != 1.0:
            lines.append(f"{who}s({s.t},{j}) = q{s.t} · k{j} / {num(by, p)} = {written(s.scores[place], p)} / "
                         f"{num(by, p)} = {num(s.scaled[place], p)}")
    return [Note(line) for line in lines]


def _weights(h: DecodeHead, s: DecodeStep, who: str, p: int) -> list[Note]:
    """each weight as e^s over the sum of e^s for the cached keys, and the sink's e^sink with it"""
    powers = [f"e^{written(x, p)}" for x in s.scaled if x != -math.inf]
    if h.sink is not None:
        powers.append(f"e^{written(h.sink, p)}")
    below = added(powers)
    lines = [f"{who}w({s.t},{j}) = e^{written(s.scaled[place], p)} / {below} = {num(s.weights[place], p)}"
             for place, j in enumerate(s.cache)]
    if h.sink is not None and s.sink_weight is not None:
        lines.append(f"{who}" + _("sink weight") + f" = e^{written(h.sink, p)} / {below} = {num(s.sink_weight, p)}")
    return [Note(line) for line in lines]


def _output(h: DecodeHead, s: DecodeStep, who: str, p: int) -> list[Note]:
    """each cell of the output: Σ_j w(t,j) · v_j[c] over the cache"""
    v_rows = h.cached(s)[1]
    lines = []
    for c in range(len(s.output)):
        terms = [f"{written(s.weights[place], p)}×{written(v_rows[place, c], p)}" for place in range(len(s.cache))]
        lines.append(f"{who}{output_cell(s.t, c + 1)} = Σ w({s.t},j) · v_j[{c + 1}] = {added(terms)} = "
                     f"{num(s.output[c], p)}")
    return [Note(line) for line in lines]
