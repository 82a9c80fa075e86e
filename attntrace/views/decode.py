"""Decoding with a KV cache as pages: what the cache keeps and how, then each step's new token, its cache, weights,
output and cost, then every step's output against attention over the whole sequence."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from attntrace.core.decode import TOLERANCE, Decoded, DecodeHead, DecodeStep
from attntrace.core.engine import checked_rows
from attntrace.core.problem import divisor
from attntrace.language import N_, _
from attntrace.views.flash import SINK, difference_shown
from attntrace.views.page import Block, Note, Section, Step
from attntrace.views.walkthrough import numbered

SCORED = (N_("q · k"), N_("logit"))  # a step's scores before and after scaling (in English as a CSV writes them)
SUNK = (N_("logit"), N_("weight"))  # the sink's logit and the weight it takes


def decode_steps(d: Decoded) -> list[Step]:
    """the rules, each step shown (all of a short sequence; of a long one the first three and the last), the check"""
    steps = [_rules(d)]
    shown = [d.steps[i] for i in checked_rows(len(d.steps))]
    for place, t in enumerate(shown):
        step = _step(d, d.steps.index(t))
        following = shown[place + 1] if place + 1 < len(shown) else None
        if following is not None and following != t + 1:
            step = replace(step, items=(*step.items, Note(_(
                "… decode steps {first} to {last} are not shown; --input T shows any one, and --format json shows them "
                "all").format(first=t + 1, last=following - 1), "hidden")))
        steps.append(step)
    steps.append(_check(d))
    return steps


def _rules(d: Decoded) -> Step:
    """how the cache is kept and what a step costs, in words"""
    p, dims = d.problem, d.dims
    items = [Note(_("Each step t generates one token: its q, k and v come from x_t alone; k_t and v_t join the KV cache "
                    "before q_t is scored against it, so token t sees itself. The weights are the softmax of q_t's "
                    "scores against the cached keys (scaled, biased and capped as the problem says) and the output is "
                    "their weighted sum of the cached values."))]
    items.append(Note(_("In each step's scores, the row q · k holds q_t's dot product with each cached key, and the "
                        "row logit what the softmax takes: {logit}.").format(logit=_logit_formula(d))))
    if d.window is None:
        items.append(Note(_("No window: the cache grows by one token a step and query t sees keys 1 … t (causal "
                            "attention).")))
    else:
        items.append(Note(_("Window W = {window}: query t sees keys t − W + 1 … t, the convention of Mistral's and "
                            "Gemma's code (implementations differ by one). The cache is a rolling buffer of "
                            "W slots: token t goes to slot (t − 1) mod W + 1, over the oldest.").format(window=d.window)))
    if d.sinks:
        items.append(Note(_("Sinks S = {sinks} (StreamingLLM): tokens 1 … S are always kept, in slots 1 … S, beside the "
                            "last W; a later token t goes to slot S + (t − S − 1) mod W + 1.").format(sinks=d.sinks)))
    if any(head.sink is not None for head in d.heads):
        logits = ", ".join(_logit(head.sink) for head in d.heads)
        items.append(Note(_("Sink logit ({logits}): one more score in each softmax's denominator with no value, so a "
                            "step's weights sum to less than 1; the sink weight is the rest.").format(logits=logits)))
    items.append(Note(_("Cost of a step with c keys in the cache: the cache holds c · kv_heads · (d_k + d_v) numbers, "
                        "2 bytes each in float16 and 4 in float32. Multiply-adds with the cache: the new token's q, k "
                        "and v, d_model · (heads · d_k + kv_heads · (d_k + d_v)), plus its scores and weighted values, "
                        "heads · c · (d_k + d_v). Recomputing K and V of the c tokens instead: d_model · (heads · d_k + "
                        "c · kv_heads · (d_k + d_v)) plus the same scores and values. Here d_model = {d_model}, "
                        "heads = {heads}, kv_heads = {kv_heads}, d_k = {d_k}, d_v = {d_v}.").format(
                            d_model=dims.d_model, heads=dims.heads, kv_heads=dims.kv_heads, d_k=dims.d_k, d_v=dims.d_v)))
    if p.w_o is not None:
        items.append(Note(_("Each step's output is its heads' outputs side by side, times W_O.")))
    return Section(_("Decoding with a KV cache"), tuple(items))


def _logit_formula(d: Decoded) -> str:
    """how a step's logit is made from its q · k, as the problem says: divided, biased, capped"""
    p = d.problem
    by = divisor(p, d.dims.d_k)
    text = "q · k" if by == 1.0 else "q · k / sqrt(d_k)" if p.scale is True else f"q · k / {by:g}"
    if p.alibi:
        text += " - slope · |t - j|"
    return text if p.softcap is None else f"{p.softcap:g} · tanh(({text}) / {p.softcap:g})"


def _logit(value: float | None) -> str:
    return "-inf" if value is None else f"{value:g}"


def _step(d: Decoded, index: int) -> Step:
    """one step: per head q_t, the cache, the scores, the weights and the output; the cache's positions and the cost"""
    p, dims = d.problem, d.dims
    t = d.steps[index]
    label = p.labels[t - 1]
    items: list[Block | Note] = []
    first = d.heads[0].steps[index]
    items.append(Note(_("cache after step {t}, in slot order: {positions}").format(
        t=t, positions=", ".join(str(j) for j in first.cache)) + (_(" (token {t} took the slot of token {old})").format(
            t=t, old=first.evicted) if first.evicted else "")))
    for head in d.heads:
        items.extend(_head(d, head, head.steps[index], label))
    if dims.heads > 1 or p.w_o is not None:
        items.append(Block(_("output of step {t}").format(t=t), "output", (label,), numbered(dims.d_out),
                           d.output[index:index + 1]))
    cost = d.costs[index]
    items.append(Note(_("cost: the cache holds {numbers} numbers ({float16} bytes in float16, {float32} in float32); "
                        "{with_cache} multiply-adds with the cache, {recomputed} recomputing K and V").format(
                            numbers=f"{cost.numbers:,}", float16=f"{cost.float16:,}", float32=f"{cost.float32:,}",
                            with_cache=f"{cost.with_cache:,}", recomputed=f"{cost.recomputed:,}")))
    return Section(_("Decode step {t} of {n} · {label}").format(t=t, n=dims.n, label=label), tuple(items))


def _head(d: Decoded, head: DecodeHead, step: DecodeStep, label: str) -> list[Block | Note]:
    p, dims = d.problem, d.dims
    who = _("head {head} · ").format(head=head.head + 1) if dims.heads > 1 else ""
    block = _(" (key/value block {block})").format(block=head.kv_block + 1) if dims.kv_heads != dims.heads else ""
    keys = tuple(p.labels[j - 1] for j in step.cache)
    k_cache, v_cache = head.cached(step)
    turned = "'" if p.rope is not None else ""
    items: list[Block | Note] = [
        Block(f"{who}q{step.t}{turned}", "q", (label,), numbered(dims.d_k), step.q[None, :]),
        Block(_("{who}K cache{turned}{block}").format(who=who, turned=turned, block=block), "k", keys,
              numbered(dims.d_k), k_cache),
        Block(_("{who}V cache{block}").format(who=who, block=block), "v", keys, numbered(dims.d_v), v_cache),
        Block(_("{who}scores of q{t}").format(who=who, t=step.t), "scores", tuple(map(_, SCORED)), keys,
              np.stack([step.scores, step.scaled]), data_rows=SCORED),
        Block(_("{who}weights of q{t}").format(who=who, t=step.t), "weights", (label,), keys, step.weights[None, :]),
    ]
    if step.sink_weight is not None:
        items.append(Block(_("{who}sink").format(who=who), "weights", tuple(map(_, SUNK)), (_(SINK),),
                           np.array([[head.sink], [step.sink_weight]]), data_rows=SUNK, data_cols=(SINK,)))
    items.append(Block(_("{who}output of step {t}").format(who=who, t=step.t), "output", (label,), numbered(dims.d_v),
                       step.output[None, :]))
    return items


def _check(d: Decoded) -> Step:
    """every step's output beside attention over the whole sequence at once, and the largest difference"""
    p, dims = d.problem, d.dims
    labels = tuple(p.labels[t - 1] for t in d.steps)
    how = (_("causal") if d.window is None else
           _("causal, window {window}").format(window=d.window) if not d.sinks else
           _("causal, window {window} and sinks 1 … {sinks}").format(window=d.window, sinks=d.sinks))
    items: list[Block | Note] = [
        Block(_("decoded, step by step"), "output", labels, numbered(dims.d_out), d.output),
        Block(_("attention over the whole sequence ({mask})").format(mask=how), "output", labels, numbered(dims.d_out),
              d.reference),
    ]
    if d.max_diff <= TOLERANCE * max(1.0, float(abs(d.reference).max()) if d.reference.size else 1.0):
        items.append(Note(_("check: each step's output equals row t of attention over the whole sequence (largest "
                            "difference {diff}, within 1e-12)").format(diff=difference_shown(d.max_diff)), "self_check"))
    else:
        items.append(Note(_("check: the steps differ from attention over the whole sequence by up to {diff}, more than "
                            "1e-12").format(diff=f"{d.max_diff:.1e}"), "self_check"))
    return Section(_("Decoding equals attention over the whole sequence"), tuple(items))
