"""Decoding with a KV cache: the tokens of a self-attention problem generated one at a time, each new token's k and v
appended to a cache (a rolling buffer with a window, with StreamingLLM's sink tokens kept for good) before its query is
scored against it. Every step is checked against the same row of attention over the whole sequence, and every number
as it is made: one that overflows a float64 stops decoding, named as the trace names it. Pure numpy."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np

from attntrace.core.arithmetic import EXACT, Exact
from attntrace.core.attention import heads
from attntrace.core.overflow import Cells
from attntrace.core.problem import Dims, Problem, divisor
from attntrace.core.variants import Rope
from attntrace.errors import AttntraceError, OutOfRange, Setting, whole
from attntrace.language import N_, _

TOLERANCE = 1e-12  # how far a step's output may be from the same row of attention over the whole sequence


@dataclass(frozen=True, eq=False)  # it holds arrays, which have no ==: one is equal only to itself
class DecodeStep:
    """one head at step t: the new token's q, k, v, the cache after k and v joined it, and q_t scored against it"""

    t: int  # the position generated, from 1
    q: np.ndarray  # [d_k] q_t as scored (turned by position with rope)
    k: np.ndarray  # [d_k] k_t as cached (turned by position with rope)
    v: np.ndarray  # [d_v]
    cache: tuple[int, ...]  # the positions (from 1) held after the step, in slot order
    scores: np.ndarray  # [len(cache)] q_t · k_j
    scaled: np.ndarray  # [len(cache)] scores / s (+ ALiBi bias, soft-capped): the logits
    weights: np.ndarray  # [len(cache)] the softmax (with the sink in its denominator)
    output: np.ndarray  # [d_v] Σ_j w_j · v_j
    sink_weight: float | None  # with a sink logit: the weight it takes (1 − Σ weights)
    evicted: int | None  # the position (from 1) whose slot k_t and v_t took, if any


@dataclass(frozen=True)
class Cost:
    """what step t costs: the cache's size after it, and its multiply-adds with the cache and recomputing K and V"""

    t: int
    numbers: int  # K and V held: c · kv_heads · (d_k + d_v)
    with_cache: int  # d_model · (heads · d_k + kv_heads · (d_k + d_v)) + heads · c · (d_k + d_v)
    recomputed: int  # d_model · (heads · d_k + c · kv_heads · (d_k + d_v)) + heads · c · (d_k + d_v)

    @property
    def float16(self) -> int:
        return 2 * self.numbers

    @property
    def float32(self) -> int:
        return 4 * self.numbers


@dataclass(frozen=True, eq=False)
class DecodeHead:
    head: int  # from 0
    kv_block: int  # the key/value block (from 0) whose cache it reads
    sink: float | None
    steps: tuple[DecodeStep, ...]
    k: np.ndarray  # [positions decoded, d_k] each position's key as it was cached (a row never changes once cached)
    v: np.ndarray  # [positions decoded, d_v]

    def cached(self, step: DecodeStep) -> tuple[np.ndarray, np.ndarray]:
        """the K and V the cache held after the step, in slot order: [len(cache), d_k], [len(cache), d_v]"""
        rows = np.array(step.cache) - 1
        return self.k[rows], self.v[rows]


@dataclass(frozen=True, eq=False)
class Decoded:
    """every step of every head, the costs, and how far the outputs are from attention over the whole sequence"""

    problem: Problem
    dims: Dims
    window: int | None
    sinks: int
    steps: tuple[int, ...]  # the positions shown (from 1): every one, or the one asked for
    heads: tuple[DecodeHead, ...]
    costs: tuple[Cost, ...]  # one per position shown
    output: np.ndarray  # [len(steps), d_out] each step's output (the heads side by side, through W_O if given)
    reference: np.ndarray  # [len(steps), d_out] the same rows of attention over the whole sequence
    max_diff: float  # the largest difference between them, over every head and the output

    @property
    def slots(self) -> int | None:
        """the cache's size in positions: sinks + window, or None (it grows by one a step)"""
        return None if self.window is None else self.sinks + self.window


def kept(t: int, window: int | None, sinks: int) -> list[int]:
    """the positions (from 1) query t sees, in position order: 1 … t; with a window t − W + 1 … t, and 1 … S too"""
    if window is None:
        return list(range(1, t + 1))
    return sorted(set(range(1, min(sinks, t) + 1)) | set(range(max(1, t - window + 1), t + 1)))


def slot(position: int, window: int | None, sinks: int) -> int:
    """the cache slot (from 0) of a position (from 1): slot t − 1 without a window; sink tokens 1 … S keep slots 0 …
    S − 1; any later token t goes to S + (t − S − 1) mod W, over the oldest (Mistral's rolling buffer when S = 0)"""
    if window is None or position <= sinks:
        return position - 1
    return sinks + (position - sinks - 1) % window


def allowed(n: int, window: int | None, sinks: int) -> np.ndarray:
    """[n, n] True where query i (from 0) sees key j: causal, within the window, or a sink"""
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    seen = j <= i
    if window is not None:
        seen &= (i - j < window) | (j < sinks)
    return seen


def check(problem: Problem, window: int | None, sinks: int, position: int | None) -> tuple[int | None, int, int | None]:
    """the problem and the settings fit decoding, or one line that names what does not (a setting as the caller gave
    it: errors.Setting); the window, sinks and position as ints"""
    if problem.source is not None:
        raise AttntraceError(_("decode generates a sequence from itself: it needs self-attention (remove source)"))
    others = [name for name in problem.masks if name != "causal"]
    if others:
        raise Setting(N_('decode is causal and keeps its own window ({window}); remove mask "{mask}" from the '
                         "problem"), {"window": ("window", "W")}, 1, mask=others[0])
    n = problem.dims.n
    window, position = whole("window", window, 1), whole("query", position)
    sinks = whole("sinks", sinks, 0) or 0  # None: none
    if sinks and window is None:
        raise Setting(N_("{sinks} keeps the first tokens beside a window: add {window}"),
                      {"sinks": ("sinks", None), "window": ("window", "W")})
    if sinks and sinks >= n:
        raise Setting(N_("{sinks} would keep every one of the {n} tokens; give fewer than {n}"),
                      {"sinks": ("sinks", repr(sinks))}, n=n)
    if position is not None and not 1 <= position <= n:
        raise OutOfRange(N_("query"), position, n, N_("this problem has inputs"))
    return window, sinks, position


def sink_logits(problem: Problem, sink: float | Sequence[float] | None, heads: int) -> tuple[float | None, ...]:
    """one sink logit per head (None: no sink); a single number is every head's; default the problem's own. The
    caller's sink is a real number, or a list (or 1-D array) of one per head, each a number or None (-inf: none too)"""
    if sink is None:
        sink = getattr(problem, "sink", None)
    if sink is None:
        return (None,) * heads
    if isinstance(sink, np.ndarray) and sink.ndim == 0:  # a 0-d array is the number it holds
        sink = sink.item()
    values: list[Any] | None = [sink] * heads if _real(sink) else list(sink) if _listed(sink) else None  # type: ignore[arg-type]
    if values is None or not all(value is None or _real(value) for value in values):
        raise Setting(N_("{sink} must be a number, or a list of one number per head (None or -inf: no sink)"),
                      {"sink": ("sink", _shown(sink))})
    if len(values) != heads:
        raise AttntraceError(_("sink has {count} values but the problem has {heads} heads; give one per head").format(
            count=len(values), heads=heads))
    out: list[float | None] = []
    for value in values:
        if value is None:
            out.append(None)
            continue
        number = float(value)
        if math.isnan(number) or number == math.inf:
            raise Setting(N_("{sink} must be a finite number (or -inf for none)"), {"sink": ("sink", _shown(sink))})
        out.append(None if number == -math.inf else number)
    return tuple(out)


def _real(value: object) -> bool:
    """a real number: an int or a float, numpy's too, never a bool (nor a 0-d array, which is not one value)"""
    return isinstance(value, Real) and not isinstance(value, (bool, np.bool_))


def _listed(value: object) -> bool:
    """a list of values: a list, a tuple, or a 1-D array"""
    return isinstance(value, (list, tuple)) or isinstance(value, np.ndarray) and value.ndim == 1


def _shown(value: object) -> str:
    """a value in a message, cut short"""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def decode(problem: Problem, window: int | None = None, sinks: int = 0, position: int | None = None,
           sink: float | Sequence[float] | None = None, arithmetic: Exact = EXACT) -> Decoded:
    """decode every position of a self-attention problem (position: show only that one, from 1) against a KV cache;
    arithmetic: carried rounding works every step as the hand calculation does (Carried.dot: each w · v rounded)"""
    window, sinks, position = check(problem, window, sinks, position)
    with np.errstate(all="ignore"):
        return _decode(problem, window, sinks, position, sink_logits(problem, sink, problem.dims.heads), arithmetic)


def _decode(problem: Problem, window: int | None, sinks: int, position: int | None,
            sinks_logit: tuple[float | None, ...], arithmetic: Exact) -> Decoded:
    d = problem.dims
    s = divisor(problem, d.d_k)
    settings = _Settings(problem.rope, problem.softcap, sinks_logit, problem.alibi)
    size = d.n if window is None else min(d.n, sinks + window)  # the cache's slots
    k_slots = np.zeros((d.kv_heads, size, d.d_k))  # the rolling buffer, a key/value block's rows together
    v_slots = np.zeros((d.kv_heads, size, d.d_v))
    held = [0] * size  # the position (from 1) in each slot; 0: empty
    last = d.n if position is None else position
    shown = tuple(range(1, d.n + 1)) if position is None else (position,)
    k_rows, v_rows = np.zeros((d.heads, last, d.d_k)), np.zeros((d.heads, last, d.d_v))  # by position, as cached
    by_head: list[list[DecodeStep]] = [[] for _ in range(d.heads)]
    costs = []
    for t in range(1, last + 1):
        x = problem.x[t - 1:t]  # [1, d_model] the new token
        row = np.array([t - 1])
        say = Cells(problem, d, row, row)  # a number that overflows is named as the trace names it
        q_all = arithmetic.affine(x, problem.w_q, problem.b_q)  # [1, heads · d_k]
        k_all = arithmetic.affine(x, problem.w_k, problem.b_k)  # [1, kv_heads · d_k]
        v_all = arithmetic.affine(x, problem.w_v, problem.b_v)  # [1, kv_heads · d_v]
        for name, w, b, made in (("q", problem.w_q, problem.b_q, q_all), ("k", problem.w_k, problem.b_k, k_all),
                                 ("v", problem.w_v, problem.b_v, v_all)):
            say.projected(name, x, w, b, made)
        where = slot(t, window, sinks)
        evicted = held[where] or None
        held[where] = t
        k_slots[:, where] = k_all.reshape(d.kv_heads, d.d_k)  # k_t and v_t join the cache before q_t is scored
        v_slots[:, where] = v_all.reshape(d.kv_heads, d.d_v)
        filled = min(t, size)  # slots fill in order: 0 … t − 1 until the buffer is full
        if t not in shown:
            continue
        cache = tuple(held[:filled])
        keys = np.array(cache) - 1  # the cache's positions (from 0), in slot order: what rope and ALiBi turn and bias
        watch = Cells(problem, d, row, keys)  # the scores' columns are the cache's slots
        for a, head in enumerate(heads(settings, d, row, q_all, k_slots[:, :filled], v_slots[:, :filled], None, s,
                                       arithmetic, watch, keys=keys)):  # q_t against the cache
            seen = head.attended
            k_cached = head.k if head.k_rotated is None else head.k_rotated
            k_rows[a, keys], v_rows[a, keys] = k_cached, head.v
            by_head[a].append(DecodeStep(
                t=t, q=(head.q if head.q_rotated is None else head.q_rotated)[0], k=k_rows[a, t - 1],
                v=v_rows[a, t - 1], cache=cache, scores=seen.scores[0], scaled=seen.scaled[0], weights=seen.weights[0],
                output=seen.output[0], sink_weight=None if seen.sink_weight is None else float(seen.sink_weight[0]),
                evicted=evicted))
        c = len(cache)
        scoring = d.heads * c * (d.d_k + d.d_v)  # q_t · k_j and w_j · v_j over the cache
        costs.append(Cost(t, c * d.kv_heads * (d.d_k + d.d_v),
                          d.d_model * (d.heads * d.d_k + d.kv_heads * (d.d_k + d.d_v)) + scoring,
                          d.d_model * (d.heads * d.d_k + c * d.kv_heads * (d.d_k + d.d_v)) + scoring))
    rows = np.array(shown) - 1
    per_head = [np.array([step.output for step in steps]) for steps in by_head]  # [len(shown), d_v] each
    reference_heads = whole_sequence(problem, window, sinks, sinks_logit, rows, arithmetic)
    output = _final(problem, per_head, arithmetic, Cells(problem, d, rows))
    reference = _final(problem, reference_heads, arithmetic)
    worst = max([_diff(output, reference), *(_diff(a, b) for a, b in zip(per_head, reference_heads))])
    return Decoded(problem, d, window, sinks, shown,
                   tuple(DecodeHead(a, d.kv_block(a), sinks_logit[a], tuple(steps), k_rows[a], v_rows[a])
                         for a, steps in enumerate(by_head)),
                   tuple(costs), output, reference, worst)


@dataclass(frozen=True)
class _Settings:
    """what heads() reads of a self-attention problem, with decoding's sink logits (a head may have none)"""

    rope: Rope | None
    softcap: float | None
    sink: tuple[float | None, ...]
    alibi: bool
    source: None = None


def whole_sequence(problem: Problem, window: int | None, sinks: int, sink: tuple[float | None, ...],
                   rows: np.ndarray, arithmetic: Exact = EXACT) -> list[np.ndarray]:
    """each head's output rows (from 0) of attention over the whole sequence at once, with decoding's mask: the rows
    every decoding step must equal"""
    d = problem.dims
    x = problem.x[rows]
    q_all = arithmetic.affine(x, problem.w_q, problem.b_q)
    k_all = arithmetic.affine(problem.x, problem.w_k, problem.b_k)
    v_all = arithmetic.affine(problem.x, problem.w_v, problem.b_v)
    seen = allowed(d.n, window, sinks)[rows]
    settings = _Settings(problem.rope, problem.softcap, sink, problem.alibi)
    return [head.attended.output
            for head in heads(settings, d, rows, q_all, k_all, v_all, seen, divisor(problem, d.d_k), arithmetic)]


def _final(problem: Problem, per_head: list[np.ndarray], arithmetic: Exact, say: Cells | None = None) -> np.ndarray:
    """the heads' outputs side by side, through W_O when the problem has it (say: names a cell that overflows)"""
    concat = np.concatenate(per_head, axis=1) if len(per_head) > 1 else per_head[0]
    if problem.w_o is None:
        return concat
    output = arithmetic.affine(concat, problem.w_o, problem.b_o)
    if say is not None:
        say.final(concat, problem.w_o, problem.b_o, output)
    return output


def _diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b))) if a.size else 0.0
