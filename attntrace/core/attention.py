"""Attention, written once: one head's scores, scale, bias, soft-cap, mask, softmax, weighted values and output, over
either arithmetic (arithmetic.EXACT or Carried(precision)), and every head of a problem with its key/value blocks,
rotary positions and ALiBi. The trace, step 8's check, check's redo of a step and every model family's forward pass
all compute attention here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar, overload

import numpy as np

from attntrace.core import variants
from attntrace.core.arithmetic import EXACT, Exact

if TYPE_CHECKING:
    from decimal import Decimal

    from attntrace.core.problem import Dims


class Variants(Protocol):
    """what heads() reads of a problem besides its arrays: a Problem, or a model layer's settings (checkpoints)"""

    @property
    def rope(self) -> variants.Rope | None: ...
    @property
    def softcap(self) -> float | None: ...
    @property
    def sink(self) -> Sequence[float | None] | None: ...
    @property
    def alibi(self) -> bool: ...
    @property
    def source(self) -> np.ndarray | None: ...


def exps(z: np.ndarray, m: np.ndarray | float) -> np.ndarray:
    """e^(z − m), the softmax's numerators against a maximum m (broadcast): 0 where z is −∞ (a masked score)"""
    with np.errstate(all="ignore"):
        return np.where(np.isfinite(z), np.exp(z - m), 0.0)


def softmax(z: np.ndarray, allowed: np.ndarray | None = None, sink: float | None = None) -> np.ndarray:
    """stable softmax over the last axis; a row with no allowed cell is all zeros, never NaN (finite z never gives NaN).
    sink: a learned logit in every row's denominator that takes no value, so a row's weights sum to less than 1"""
    if sink is not None:
        return sunk(z, allowed, sink)[0]
    with np.errstate(all="ignore"):
        if allowed is None:
            exp_z = np.exp(z - np.max(z, axis=-1, keepdims=True))
            return exp_z / np.sum(exp_z, axis=-1, keepdims=True)
        z = np.where(allowed, z, -np.inf)
        row_max = np.max(z, axis=-1, keepdims=True)
        exp_z = np.exp(z - np.where(np.isfinite(row_max), row_max, 0.0))
        total = np.sum(exp_z, axis=-1, keepdims=True)
        return np.divide(exp_z, total, out=np.zeros_like(exp_z), where=total > 0)


def sunk(z: np.ndarray, allowed: np.ndarray | None, sink: float) -> tuple[np.ndarray, np.ndarray]:
    """softmax with a sink logit: the weights over the last axis and each row's sink weight (the rest of 1), both from
    e^(z - max(max z, sink)); a row with no allowed cell gives all its weight to the sink"""
    with np.errstate(all="ignore"):
        if allowed is not None:
            z = np.where(allowed, z, -np.inf)
        top = np.maximum(np.max(z, axis=-1, keepdims=True), sink)  # [..., 1] finite: the sink is
        exp_z, exp_sink = np.exp(z - top), np.exp(sink - top)
        total = np.sum(exp_z, axis=-1, keepdims=True) + exp_sink
        return exp_z / total, (exp_sink / total)[..., 0]


def softmax_written(z: list[Decimal], sink: Decimal | None = None) -> list[Decimal]:
    """the softmax of scores as written, in decimal: e^z_j / Σ e^z to 45 decimals (far below any rounding digit a table
    shows), e^z and the quotients to 60 significant digits; what explain writes beside each weight. The caller's
    context (arithmetic.exact_context()) makes z_j - max z and the sum exact. sink: one more logit in the denominator (the
    sink weight is softmax_written([*z, sink])[-1])."""
    from decimal import Context, Decimal

    logits = z if sink is None else [*z, sink]
    if not logits:
        return []
    digits = Context(prec=60, Emax=10**6, Emin=-10**6)
    top = max(logits)
    exps = [digits.exp(value - top) for value in logits]
    total = sum(exps, Decimal(0))
    return [digits.divide(e, total).quantize(Decimal(1).scaleb(-45), context=digits) for e in exps[:len(z)]]


def softmax_bound(weights: np.ndarray, off: np.ndarray) -> np.ndarray:
    """how far each weight of a softmax can move when every logit of its row moves by up to off (broadcast): the
    weight w becomes at most w·e^(2·off) / (w·e^(2·off) + 1 − w), at least the same with e^(−2·off)"""
    up, down = np.exp(2 * off), np.exp(-2 * off)
    high = weights * up / (weights * up + 1 - weights)
    low = weights * down / (weights * down + 1 - weights)
    return np.maximum(high - weights, weights - low)


def softcap(z: np.ndarray, cap: float) -> np.ndarray:
    """c · tanh(z / c): every logit kept within ±c, near-linear well inside it"""
    return cap * np.tanh(z / cap)


def logits(scores: np.ndarray, divisor: float, bias: np.ndarray | None = None, cap: float | None = None) -> np.ndarray:
    """what the softmax takes, in float64: scores / s + bias, soft-capped (check redoes it from a student's scores)"""
    z = scores / divisor
    if bias is not None:
        z = z + bias
    return z if cap is None else softcap(z, cap)


def weighted(weights: np.ndarray, v: np.ndarray, arithmetic: Exact = EXACT) -> np.ndarray:
    """step 6, w_ij · v_j for every key j: [..., m], [m, d_v] -> [..., m, d_v]"""
    return arithmetic.product(weights[..., None], v)


class Watch(Protocol):
    """what looks at each stage of a head as it is made (the trace names the first cell that is not a finite number)"""

    def rotated(self, head: int, q_rotated: np.ndarray) -> None: ...

    def scores(self, head: int, q: np.ndarray, k: np.ndarray, scores: np.ndarray) -> None: ...

    def scaled(self, head: int, scores: np.ndarray, divisor: float, scaled: np.ndarray,
               allowed: np.ndarray | None) -> None: ...

    def weights(self, head: int, weights: np.ndarray) -> None: ...

    def output(self, head: int, weights: np.ndarray, v: np.ndarray, output: np.ndarray) -> None: ...


@dataclass(frozen=True, eq=False)
class Attended:
    """one head's steps 4-7 for the query rows given"""

    scores: np.ndarray  # [n_q, m] q_i · k_j
    scaled: np.ndarray  # [n_q, m] scores / s (+ bias, capped), -inf where masked
    weights: np.ndarray  # [n_q, m] softmax rows, 0 where masked
    output: np.ndarray  # [n_q, d_v] Σ_j w_ij · v_j
    uncapped: np.ndarray | None = None  # [n_q, m] with a soft-cap: the logits before it, -inf where masked
    sink_weight: np.ndarray | None = None  # [n_q] with a sink logit: the weight each row gives the sink


class Scored(NamedTuple):
    """one head's logits: q_i · k_j, what the softmax takes (masked cells not yet -inf), and the same before a cap"""

    scores: np.ndarray  # [n_q, m]
    scaled: np.ndarray  # [n_q, m]
    uncapped: np.ndarray | None  # [n_q, m] with a soft-cap


def scored(q: np.ndarray, k: np.ndarray, divisor: float, allowed: np.ndarray | None = None,
           bias: np.ndarray | None = None, cap: float | None = None, arithmetic: Exact = EXACT,
           watch: Watch | None = None, head: int = 0) -> Scored:
    """steps 4-5, what every kernel does first: q · kᵀ, divided by s, biased and soft-capped, [n_q, d_k], [m, d_k] ->
    [n_q, m]; watch sees the scores and the scaled scores"""
    with np.errstate(all="ignore"):
        scores = arithmetic.affine(q, k.T, None)  # [n_q, d_k] @ [d_k, m] -> [n_q, m]
        if watch:
            watch.scores(head, q, k, scores)
        scaled = scores
        if divisor != 1.0:
            scaled = arithmetic.quotient(scores, divisor)
            if watch:
                watch.scaled(head, scores, divisor, scaled, allowed)
        if bias is not None:
            scaled = arithmetic.add(scaled, bias)
        uncapped = None
        if cap is not None:
            uncapped, scaled = scaled, arithmetic.rounded(softcap(scaled, cap))
        return Scored(scores, scaled, uncapped)


def attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, divisor: float, allowed: np.ndarray | None = None,
           bias: np.ndarray | None = None, cap: float | None = None, arithmetic: Exact = EXACT,
           watch: Watch | None = None, head: int = 0, sink: float | None = None) -> Attended:
    """softmax(cap(Q K^T / s + bias)) V, every stage kept: [n_q, d_k], [m, d_k], [m, d_v] -> [n_q, d_v].
    allowed: [n_q, m] False where a key is masked (None: nothing is); bias: [n_q, m] added to the scaled scores;
    cap: the soft-cap c; sink: a logit in every row's denominator with no value. watch (with the head's number) sees
    each stage as it is made."""
    with np.errstate(all="ignore"):  # a cell that is not finite is the watch's to name, never a numpy warning
        scores, scaled, uncapped = scored(q, k, divisor, allowed, bias, cap, arithmetic, watch, head)
        sink_weight = None
        if sink is None:
            weights = arithmetic.rounded(softmax(scaled, allowed))  # e^z is transcendental: float64, its result rounded
        else:
            weights, sink_weight = sunk(scaled, allowed, sink)
            weights, sink_weight = arithmetic.rounded(weights), arithmetic.rounded(sink_weight)
        if watch:
            watch.weights(head, weights)
        if allowed is not None:
            scaled = np.where(allowed, scaled, -np.inf)
            uncapped = None if uncapped is None else np.where(allowed, uncapped, -np.inf)
        output = arithmetic.dot(weights, v)  # [n_q, m] @ [m, d_v] -> [n_q, d_v]
        if watch:
            watch.output(head, weights, v, output)
    return Attended(scores, scaled, weights, output, uncapped, sink_weight)


R = TypeVar("R", covariant=True)


class Kernel(Protocol[R]):
    """one head's attention from its rotated q, k and v, as attend() takes them: the whole row (attend), the online
    softmax over blocks of keys (flash.Online), or the cache at step t (attend over the cache's rows)"""

    def __call__(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, divisor: float, allowed: np.ndarray | None = None,
                 bias: np.ndarray | None = None, cap: float | None = None, arithmetic: Exact = EXACT,
                 watch: Watch | None = None, head: int = 0, sink: float | None = None) -> R: ...


@dataclass(frozen=True, eq=False)
class Head(Generic[R]):
    """one head of a problem: its columns of q, k and v, what rotary positions and ALiBi made of them, and what its
    kernel made of them"""

    q: np.ndarray  # [n_q, d_k]
    k: np.ndarray  # [m, d_k]
    v: np.ndarray  # [m, d_v]
    q_rotated: np.ndarray | None  # [n_q, d_k] with rope: q turned by position, what the scores use
    k_rotated: np.ndarray | None  # [m, d_k]
    bias: np.ndarray | None  # [n_q, m] with alibi: -slope · |i - j|
    kv_block: int  # the key/value block (from 0) this head reads
    attended: R  # the kernel's result: Attended for the whole row


@overload
def heads(problem: Variants, d: Dims, rows: np.ndarray, q_all: np.ndarray, k_all: np.ndarray, v_all: np.ndarray,
          allowed: np.ndarray | None, divisor: float, arithmetic: Exact = ..., watch: Watch | None = ..., *,
          keys: np.ndarray | None = ...) -> list[Head[Attended]]: ...


@overload
def heads(problem: Variants, d: Dims, rows: np.ndarray, q_all: np.ndarray, k_all: np.ndarray, v_all: np.ndarray,
          allowed: np.ndarray | None, divisor: float, arithmetic: Exact = ..., watch: Watch | None = ..., *,
          kernel: Kernel[R], keys: np.ndarray | None = ...) -> list[Head[R]]: ...


def heads(problem: Variants, d: Dims, rows: np.ndarray, q_all: np.ndarray, k_all: np.ndarray, v_all: np.ndarray,
          allowed: np.ndarray | None, divisor: float, arithmetic: Exact = EXACT, watch: Watch | None = None, *,
          kernel: Kernel[Any] = attend, keys: np.ndarray | None = None) -> list[Head[Any]]:
    """every head of problem for the query rows (from 0), the one loop over heads: q_all [n_q, heads*d_k], k_all
    [m, kv_heads*d_k], v_all [m, kv_heads*d_v] as projected (or [kv_heads, m, d_k] and [kv_heads, m, d_v], a block's
    rows together, as a cache holds them), allowed [n_q, m] or None. Each head's columns are turned
    by their positions (rope) and biased by their distance (ALiBi) here, then handed to the kernel. keys: the
    positions (from 0) of k_all's rows, None for 0 … m-1 (decoding hands the rows its cache holds)."""
    rope, cap, sinks = problem.rope, problem.softcap, problem.sink
    key_rows = np.arange(len(k_all)) if keys is None else keys
    if rope is not None:  # [n_q, d_k/2] and [m, d_k/2]: the angle each pair of q_i and k_j turns by
        q_positions = np.arange(d.n, dtype=np.float64) if rope.positions is None else np.array(rope.positions)
        k_positions = q_positions if problem.source is None else np.array(rope.source_positions)
        turns = rope.pair_frequencies(d.d_k)
        q_angles = variants.angles(q_positions[rows], turns)
        k_angles = variants.angles(k_positions if keys is None else k_positions[keys], turns)
    slopes = variants.alibi_slopes(d.heads) if problem.alibi else None
    out = []
    with np.errstate(all="ignore"):
        for a in range(d.heads):
            g = d.kv_block(a)  # the key/value block this head reads
            q = q_all[:, a * d.d_k:(a + 1) * d.d_k]  # [n_q, d_k]
            k = k_all[g] if k_all.ndim == 3 else k_all[:, g * d.d_k:(g + 1) * d.d_k]  # [m, d_k]
            v = v_all[g] if v_all.ndim == 3 else v_all[:, g * d.d_v:(g + 1) * d.d_v]  # [m, d_v]
            q_rotated = k_rotated = bias = None
            if rope is not None:  # [n_q, d_k], [m, d_k]: each pair turned by its position's angle
                q_rotated = arithmetic.rounded(variants.rotate(q, q_angles, rope.pairs))
                k_rotated = arithmetic.rounded(variants.rotate(k, k_angles, rope.pairs))
                if watch:
                    watch.rotated(a, q_rotated)
            if slopes is not None:  # [n_q, m] -slope_a · |i - j|
                bias = arithmetic.rounded(variants.alibi_bias(float(slopes[a]), rows, key_rows))
            attended = kernel(q if q_rotated is None else q_rotated, k if k_rotated is None else k_rotated, v, divisor,
                              allowed, bias, cap, arithmetic, watch, a, None if sinks is None else sinks[a])
            out.append(Head(q, k, v, q_rotated, k_rotated, bias, g, attended))
    return out
