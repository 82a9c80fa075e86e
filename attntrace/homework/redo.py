"""Each step redone from a student's own earlier numbers, the right way or under one of the usual wrong conventions."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from attntrace.core.arithmetic import EXACT, product_bound, round_half_up
from attntrace.core.attention import logits, softmax, softmax_bound
from attntrace.core.trace import Trace
from attntrace.core.variants import PAIRS, pair_index, rotate
from attntrace.homework.results import EXACT_FROM
from attntrace.homework.sheet import Key


@dataclass
class Own:
    """a student's own numbers for one intermediate, blanks filled with the true values; eps: half a unit of each"""

    values: np.ndarray
    eps: np.ndarray


Redo = tuple[list[np.ndarray], np.ndarray]  # the values a step may take (ways of rounding), and the error bound


class Work(Protocol):
    """a sheet being marked, as a step is redone from it: the trace, the sheet's precision and the student's numbers"""

    t: Trace
    precision: int

    def own(self, key: Key) -> Own: ...

    def answered(self, key: Key) -> bool: ...

    def scaled_of(self, head: int) -> Own: ...


def recompute(work: Work, key: Key, variant: str | None) -> Redo | None:
    """the step's possible values and their error bound, or None when the variant does not apply to this problem"""
    head, step = key
    if head is None:
        return _final(work, variant)
    if step in ("q", "k", "v"):
        return _projection(work, head, step, variant)
    if step in ("q_rotated", "k_rotated"):
        return _rotation(work, head, step, variant)
    return {"scores": _scores, "scaled": _scaled, "weights": _weights, "output": _output}[step](work, head, variant)


def _projection(work: Work, head: int, step: str, variant: str | None) -> Redo | None:
    """Q, K or V from the problem's own X and weights: only a wrong convention can be redone"""
    p, t = work.t.problem, work.t
    x = p.x[list(t.rows)] if step == "q" else p.kv_input
    w, b = getattr(p, f"w_{step}"), getattr(p, f"b_{step}")
    size = t.dims.d_v if step == "v" else t.dims.d_k
    block = head - 1 if step == "q" else t.dims.kv_block(head - 1)  # the key/value block of grouped-query heads
    cols: slice = slice(block * size, (block + 1) * size)
    if variant is None or w is None:
        return None
    if variant in ("kv_block", "q_block"):  # another head's columns: its key/value block, or its columns of W_Q
        if variant == "kv_block" and (step == "q" or t.dims.kv_heads == 1):
            return None
        if variant == "q_block" and (step != "q" or t.dims.heads == 1):
            return None
        if variant == "kv_block":  # blocks dealt in turn (a mod kv_heads) are the usual slip, so they come first
            others = sorted(set(range(t.dims.kv_heads)) - {block}, key=lambda g: g != (head - 1) % t.dims.kv_heads)
        else:  # heads swapped, or numbered from 0
            others = [g for g in range(t.dims.heads) if g != block]
        full = EXACT.affine(x, w, None) + (0.0 if b is None else b)
        candidates = [full[:, g * size:(g + 1) * size] for g in others]
        return candidates, np.zeros(candidates[0].shape)
    if variant == "transposed":
        if w.shape[0] != w.shape[1] or np.array_equal(w, w.T):
            return None
        w = w.T
    elif variant == "interleaved":
        if t.dims.heads == 1:
            return None
        cols = slice(head - 1, None, t.dims.heads)
    elif variant in ("w_k", "w_q"):  # the other projection's weights
        other, other_b = getattr(p, variant), getattr(p, "b" + variant[1:])
        if step == "v" or p.source is not None or other is None or other.shape != w.shape or np.array_equal(other, w):
            return None
        w, b = other, other_b
    else:
        return None
    values = (EXACT.affine(x, w, None) + (0.0 if b is None else b))[:, cols]
    return [values], np.zeros(values.shape)


ROPE_ANGLES = {  # a wrong angle for each position p and pair frequency ω, from the right one, p · ω
    "backwards": lambda angles, turns: -angles,  # turned the other way
    "from_one": lambda angles, turns: angles + turns,  # positions counted from 1
    "degrees": lambda angles, turns: np.radians(angles),  # p · ω read as degrees, as a calculator in degree mode does
}


def _rotation(work: Work, head: int, step: str, variant: str | None) -> Redo | None:
    """q or k turned by position from the student's own q or k: as the problem pairs dimensions, the other way, or not
    at all"""
    t, rope = work.t, work.t.problem.rope
    assert rope is not None and t.query_angles is not None and t.key_angles is not None
    own = work.own((head, step[0]))
    angles = t.query_angles if step == "q_rotated" else t.key_angles
    pairs = rope.pairs
    if variant == "unrotated":
        return [own.values], own.eps
    if variant == "pairs":
        if t.dims.d_k == 2:
            return None
        pairs = next(p for p in PAIRS if p != rope.pairs)
    elif variant in ROPE_ANGLES:
        turned = ROPE_ANGLES[variant](angles, rope.pair_frequencies(t.dims.d_k))
        if np.allclose(turned, angles, rtol=0, atol=1e-12):
            return None
        angles = turned
    elif variant is not None:
        return None
    unit = 0.5 * 10.0 ** -min(work.precision, 12)  # cos θ and sin θ as a student rounds them
    size = np.abs(own.values) + own.eps
    bound = rotate(own.eps, np.zeros_like(angles), pairs) + own.eps[:, ::-1] + unit * (size + size[:, ::-1])
    rounded = [] if variant is None else [_turned(own.values, angles, pairs, min(work.precision, 12))]  # for diagnosis
    return [rotate(own.values, angles, pairs), *rounded], np.abs(bound)


def _turned(x: np.ndarray, angles: np.ndarray, pairs: str, places: int) -> np.ndarray:
    """x turned with cos θ and sin θ rounded to places first, as a student looks them up"""
    first, second = pair_index(x.shape[1], pairs)
    cos, sin = round_half_up(np.cos(angles), places), round_half_up(np.sin(angles), places)
    out = np.empty_like(x)
    out[:, first] = x[:, first] * cos - x[:, second] * sin
    out[:, second] = x[:, second] * cos + x[:, first] * sin
    return out


def _scores(work: Work, head: int, variant: str | None) -> Redo | None:
    turned = work.t.problem.rope is not None
    q, k = (work.own((head, "q_rotated")), work.own((head, "k_rotated"))) if turned else \
        (work.own((head, "q")), work.own((head, "k")))
    if variant == "unrotated":  # the scores of q and k as projected: the rotation forgotten
        if not turned:
            return None
        q, k = work.own((head, "q")), work.own((head, "k"))
        variant = None
    if variant == "kq":  # Q and K swapped: the transpose
        if work.t.query is not None or work.t.problem.source is not None:
            return None
        a, b = k, q
    elif variant == "kk":  # K used where Q belongs
        if work.t.query is not None or work.t.problem.source is not None:
            return None
        a, b = k, k
    elif variant is None:
        a, b = q, k
    else:
        return None
    return [EXACT.affine(a.values, b.values.T, None)], product_bound(a.values, a.eps, b.values.T, b.eps.T)


DIVISOR_VARIANTS = ("unscaled", "multiplied", "sqrt_d_model", "scaled_when_none", "no_bias", "bias_sign", "no_cap")
BIAS_VARIANTS = ("no_bias", "bias_sign")  # the ALiBi bias left out, or added with its sign flipped
MASK_VARIANTS = ("no_mask", "inverted", "transposed_mask")


def _divided(work: Work, scores: Own, variant: str | None, head: int,
             divisor: float | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """the scores divided (by the problem's divisor, or the one given), biased, capped and masked as the problem says,
    or as a wrong convention does"""
    t = work.t
    divisor, allowed = t.divisor if divisor is None else divisor, t.allowed
    if variant == "unscaled":
        if divisor == 1.0:
            return None
        divisor = 1.0
    elif variant == "multiplied":  # times √d_k instead of divided by it
        if t.problem.scale is not True:
            return None
        divisor = 1.0 / divisor
    elif variant == "sqrt_d_model":
        if t.problem.scale is not True or t.dims.d_model == t.dims.d_k:
            return None
        divisor = math.sqrt(t.dims.d_model)
    elif variant == "scaled_when_none":
        if t.problem.scale is not False:
            return None
        divisor = math.sqrt(t.dims.d_k)
    elif variant in MASK_VARIANTS:
        if allowed is None:
            return None
        if variant == "no_mask":
            allowed = None
        elif variant == "inverted":
            allowed = ~allowed
        else:
            if t.query is not None or allowed.shape[0] != allowed.shape[1] or np.array_equal(allowed, allowed.T):
                return None
            allowed = allowed.T
    elif variant is not None and variant not in (*BIAS_VARIANTS, "no_cap"):
        return None
    bias, cap = t.heads[head - 1].bias, t.problem.softcap
    if variant in BIAS_VARIANTS and (bias is None or not bias.any()) or variant == "no_cap" and cap is None:
        return None
    if bias is not None and variant in BIAS_VARIANTS:
        bias = None if variant == "no_bias" else -bias
    values = logits(scores.values, divisor, bias, None if variant == "no_cap" else cap)  # a cap never moves a value more
    eps = scores.eps / divisor  # than its input
    if allowed is not None:
        values = np.where(allowed, values, -np.inf)
    return values, eps


def _scaled(work: Work, head: int, variant: str | None) -> Redo | None:
    """the scaled scores from the student's own scores; rightly scaled, √d_k may be rounded to the sheet's decimals too
    (1.73 for √3), as the worksheet asks of every number"""
    scores = work.own((head, "scores"))
    divided = _divided(work, scores, variant, head)
    if divided is None:
        return None
    values, eps = divided
    candidates = [values]
    if variant is None and work.t.problem.scale is True and work.precision < EXACT_FROM:
        rounded = float(round_half_up(np.float64(work.t.divisor), work.precision))
        also = _divided(work, scores, None, head, rounded) if rounded not in (0.0, work.t.divisor) else None
        candidates += [] if also is None else [also[0]]
    return candidates, eps


def _weights(work: Work, head: int, variant: str | None) -> Redo | None:
    if variant in DIVISOR_VARIANTS or variant in MASK_VARIANTS:
        if work.answered((head, "scaled")):  # then the mistake shows in the scaled scores, not here
            return None
        divided = _divided(work, work.own((head, "scores")), variant, head)
        if divided is None:
            return None
        values, eps = divided
    elif variant in (None, "columns", "no_sink"):
        scaled = work.scaled_of(head)
        values, eps = scaled.values, scaled.eps
    else:
        return None
    sinks = work.t.problem.sink
    if variant == "no_sink" and sinks is None:
        return None
    sink = None if sinks is None or variant == "no_sink" else sinks[head - 1]  # the sink joins every row's denominator
    allowed = np.isfinite(values)
    if variant == "columns":
        if work.t.query is not None:
            return None
        weights = softmax(values.T, allowed.T, sink).T
        spread = np.max(np.where(allowed, eps, 0.0), axis=0, keepdims=True)
    else:
        weights = softmax(values, allowed, sink)
        spread = np.max(np.where(allowed, eps, 0.0), axis=1, keepdims=True)
    return [weights], softmax_bound(weights, spread)


def _output(work: Work, head: int, variant: str | None) -> Redo | None:
    w, v = work.own((head, "weights")), work.own((head, "v"))
    if variant == "k_for_v":  # the weights times K: the keys taken for the values
        v = work.own((head, "k"))
        if v.values.shape != work.own((head, "v")).values.shape:
            return None
    elif variant == "weights_transposed":  # W^T · V: each column of the weights used as a row
        if work.t.query is not None or w.values.shape[0] != w.values.shape[1]:
            return None
        w = Own(w.values.T, w.eps.T)
    elif variant is not None:
        return None
    unit = 0.5 * 10.0 ** -min(work.precision, 12)
    bound = product_bound(w.values, w.eps, v.values, v.eps) + unit * w.values.shape[1]
    products = round_half_up(w.values[:, :, None] * v.values[None, :, :], min(work.precision, 8)).sum(axis=1)
    return [EXACT.dot(w.values, v.values), products], bound


def _final(work: Work, variant: str | None) -> Redo | None:
    t, p = work.t, work.t.problem
    outputs = [work.own((a, "output")) for a in range(1, len(t.heads) + 1)]
    orders = [tuple(range(len(outputs)))]
    w_o, b_o = p.w_o, p.b_o
    if variant == "no_wo":
        if w_o is None:
            return None
        w_o, b_o = None, None
    elif variant == "no_bo":
        if b_o is None:
            return None
        b_o = None
    elif variant == "wo_transposed":
        if w_o is None or w_o.shape[0] != w_o.shape[1] or np.array_equal(w_o, w_o.T):
            return None
        w_o = w_o.T
    elif variant == "order":
        if len(outputs) < 2 or len(outputs) > 5:
            return None
        orders = [o for o in itertools.permutations(range(len(outputs))) if o != orders[0]]
    elif variant is not None:
        return None
    candidates, bound = [], np.zeros(0)
    for order in orders:
        concat = np.concatenate([outputs[a].values for a in order], axis=1)
        eps = np.concatenate([outputs[a].eps for a in order], axis=1)
        if w_o is None:
            candidates.append(concat)
            bound = eps
        else:
            candidates.append(EXACT.affine(concat, w_o, None) + (0.0 if b_o is None else b_o))
            bound = EXACT.dot(eps, np.abs(w_o))
    return candidates, bound
