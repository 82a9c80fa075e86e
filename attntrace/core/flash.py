"""FlashAttention's online softmax: each query's scores taken one block of keys at a time, with a running maximum m,
a running sum ℓ and a running unnormalised output O, rescaled by e^(m_old - m_new) whenever the maximum grows; O / ℓ
at the end equals step 7's output. The scores are the trace's own (scaled, biased, soft-capped and masked as the
problem says), so every variant the trace knows is run block by block here. Pure numpy, no printing.

Conventions: before the first block m = -inf, ℓ = 0, O = 0, and the first block's rescale factor is e^(-inf) = 0 (it
multiplies ℓ = 0 and O = 0). A block whose every key is masked for a query is skipped: its maximum is -inf, its rescale
factor 1 and its sum 0, so m, ℓ and O stay as they were. A learned sink logit joins the denominator at the end as one
more score whose value is 0. A row with no key left (and no sink) ends with ℓ = 0: its output is 0, as the trace's."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from attntrace.core.arithmetic import EXACT, Exact
from attntrace.core.attention import Watch, exps, scored
from attntrace.core.trace import Trace, freeze
from attntrace.errors import AttntraceError, whole
from attntrace.language import _


@dataclass(frozen=True, eq=False)  # it holds arrays, which have no ==: one is equal only to itself
class Recurrence:
    """one head's online softmax for the traced query rows: the state after each block, nb blocks in key order"""

    scores: np.ndarray  # [n_q, m] the trace's scaled scores, -inf where masked
    block_max: np.ndarray  # [n_q, nb] each block's largest score; -inf where the block is wholly masked
    m: np.ndarray  # [n_q, nb] the running maximum after the block; -inf until a key is seen
    rescale: np.ndarray  # [n_q, nb] e^(m_old - m_new): 0 for the first block seen, 1 for a skipped one
    sums: np.ndarray  # [n_q, nb] Σ_j e^(s_j - m_new) over the block's keys
    ell: np.ndarray  # [n_q, nb] the running sum ℓ after the block
    o: np.ndarray  # [n_q, nb, d_v] the running unnormalised output after the block
    skipped: np.ndarray  # [n_q, nb] True where every key of the block is masked for the query
    exps: np.ndarray  # [n_q, m] each key's e^(s_j - m) with m the running maximum after its block; 0 where masked
    sink: float | None  # the head's learned sink logit, which joins the denominator with no value
    sink_m: np.ndarray | None  # [n_q] with a sink: m, rescale, e^(sink - m), ℓ and O once it has joined
    sink_rescale: np.ndarray | None  # [n_q]
    sink_sum: np.ndarray | None  # [n_q]
    sink_ell: np.ndarray | None  # [n_q]
    sink_o: np.ndarray | None  # [n_q, d_v]
    output: np.ndarray  # [n_q, d_v] O / ℓ at the end (0 where ℓ = 0)

    def __post_init__(self) -> None:
        freeze(self)

    @property
    def final_ell(self) -> np.ndarray:
        """[n_q] ℓ at the end (with the sink when there is one)"""
        return self.ell[:, -1] if self.sink_ell is None else self.sink_ell

    @property
    def final_o(self) -> np.ndarray:
        """[n_q, d_v] O at the end"""
        return self.o[:, -1] if self.sink_o is None else self.sink_o


@dataclass(frozen=True, eq=False)
class Flash:
    """every head's online softmax for the traced rows, and how far its outputs are from the trace's (step 7's)"""

    trace: Trace
    block: int  # B, the keys per block (the last block may be shorter)
    bounds: tuple[tuple[int, int], ...]  # each block's keys, start to stop (from 0)
    heads: tuple[Recurrence, ...]
    concat: np.ndarray  # [n_q, heads * d_v] the heads' O / ℓ side by side
    output: np.ndarray  # [n_q, d_out] concat · W_O + b_O with W_O, else the concat
    max_diff: float  # the largest |difference| from the trace's head outputs and final output
    tolerance: float  # 1e-12 · the largest |number| among V and the outputs (at least 1e-12)

    def __post_init__(self) -> None:
        freeze(self)

    @property
    def ok(self) -> bool:
        return self.max_diff <= self.tolerance

    @property
    def rows(self) -> tuple[int, ...]:
        return self.trace.rows


def default_block(m: int) -> int:
    """a block size giving two blocks (one for a single key): ceil(m / 2)"""
    return max(1, math.ceil(m / 2))


def blocks(m: int, block: int) -> tuple[tuple[int, int], ...]:
    """the blocks of keys in order, start to stop (from 0): B keys each, the last shorter; one block when B >= m"""
    return tuple((start, min(start + block, m)) for start in range(0, m, block))


def rescale(m_old: np.ndarray, m_new: np.ndarray, skipped: np.ndarray) -> np.ndarray:
    """[n_q] the rescale factor e^(m_old − m_new): 0 before any key was seen (m_old = −∞), 1 for a skipped block"""
    return np.where(skipped, 1.0, exps(m_old, m_new))


class Joined(NamedTuple):
    """one step of the recurrence for every row: the block's largest score, and m, the rescale factor, the block's
    Σ e^(s − m), ℓ and O after it"""

    top: np.ndarray  # [n_q]
    m: np.ndarray  # [n_q]
    rescale: np.ndarray  # [n_q]
    sums: np.ndarray  # [n_q]
    ell: np.ndarray  # [n_q]
    o: np.ndarray  # [n_q, d_v]


def join(m_old: np.ndarray, l_old: np.ndarray, o_old: np.ndarray, s: np.ndarray, v: np.ndarray,
         arithmetic: Exact = EXACT) -> Joined:
    """one step of the recurrence for every row: scores s [n_q, b] (-inf masked) with values v [b, d_v] join the
    state m, ℓ [n_q], O [n_q, d_v]; under carried rounding ℓ and O are written rounded (m is a score, already so)"""
    return _joined(m_old, l_old, o_old, s, v, arithmetic)[0]


def _joined(m_old: np.ndarray, l_old: np.ndarray, o_old: np.ndarray, s: np.ndarray, v: np.ndarray,
            arithmetic: Exact) -> tuple[Joined, np.ndarray]:
    """join, and each key's e^(s − m_new) [n_q, b]"""
    with np.errstate(all="ignore"):
        top = np.max(s, axis=1) if s.shape[1] else np.full(len(s), -np.inf)
        m_new = np.maximum(m_old, top)
        factor = rescale(m_old, m_new, top == -np.inf)
        p = exps(s, m_new[:, None])  # a masked score (and so a skipped block) gives 0
        sums = p.sum(axis=1)
        ell, o = arithmetic.rounded(l_old * factor + sums), arithmetic.rounded(o_old * factor[:, None] + p @ v)
        return Joined(top, m_new, factor, sums, ell, o), p


def normalised(o: np.ndarray, ell: np.ndarray, m: np.ndarray, sink: float | None) -> np.ndarray:
    """the output from the last state: O / ℓ, or with a sink O / (ℓ + e^(sink − m)); 0 where the denominator is 0 (a
    row with no key and no sink)"""
    with np.errstate(all="ignore"):
        denominator = ell if sink is None else ell + np.exp(sink - m)
        return np.divide(o, denominator[..., None], out=np.zeros_like(o), where=denominator[..., None] != 0)


def online_softmax(scores: np.ndarray, v: np.ndarray, block: int, sink: float | None = None,
                   arithmetic: Exact = EXACT) -> Recurrence:
    """the tiled online softmax of scores [n_q, m] (-inf where masked) over values v [m, d_v], B = block keys at a
    time; sink: a learned logit joining the denominator with no value (None: none). Under carried rounding ℓ and O
    are written rounded after each block and carried on, and the output is O / (ℓ + e^(sink − m)) from the last
    block's state, rounded: the hand-worked key."""
    block = whole("block", block, 1)  # type: ignore[assignment]
    n_q, d_v = scores.shape[0], v.shape[1]
    bounds = blocks(scores.shape[1], block)
    nb = len(bounds)
    state = (np.full(n_q, -np.inf), np.zeros(n_q), np.zeros((n_q, d_v)))
    kept = {name: np.empty((n_q, nb)) for name in ("block_max", "m", "rescale", "sums", "l")}
    o = np.empty((n_q, nb, d_v))
    exps_all = np.zeros(scores.shape)
    for b, (start, stop) in enumerate(bounds):
        joined, exps_all[:, start:stop] = _joined(*state, scores[:, start:stop], v[start:stop], arithmetic)
        for name, value in zip(kept, joined[:5]):
            kept[name][:, b] = value
        o[:, b] = joined.o
        state = (joined.m, joined.ell, joined.o)
    last = state
    sink_kept = None
    if sink is not None:
        joined = join(*state, np.full((n_q, 1), float(sink)), np.zeros((1, d_v)), arithmetic)
        sink_kept = joined[1:]
        state = (joined.m, joined.ell, joined.o)
    _m, l_end, o_end = state
    if arithmetic.precision is None:
        with np.errstate(all="ignore"):
            output = np.divide(o_end, l_end[:, None], out=np.zeros_like(o_end), where=l_end[:, None] > 0)
    else:
        output = arithmetic.rounded(normalised(last[2], last[1], last[0], sink))
    sink_m, sink_rescale, sink_sum, sink_ell, sink_o = (None,) * 5 if sink_kept is None else sink_kept
    return Recurrence(scores, kept["block_max"], kept["m"], kept["rescale"], kept["sums"], kept["l"], o,
                      kept["block_max"] == -np.inf, exps_all, None if sink is None else float(sink), sink_m,
                      sink_rescale, sink_sum, sink_ell, sink_o, output)


@dataclass(frozen=True)
class Online:
    """the online softmax as a kernel of attention.heads, B = block keys at a time: the scores as attend makes them
    (watch sees them), then the recurrence"""

    block: int

    def __call__(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, divisor: float, allowed: np.ndarray | None = None,
                 bias: np.ndarray | None = None, cap: float | None = None, arithmetic: Exact = EXACT,
                 watch: Watch | None = None, head: int = 0, sink: float | None = None) -> Recurrence:
        scaled = scored(q, k, divisor, allowed, bias, cap, arithmetic, watch, head).scaled
        if allowed is not None:
            scaled = np.where(allowed, scaled, -np.inf)
        return online_softmax(scaled, v, self.block, sink, arithmetic)


def flash(t: Trace, block: int | None = None, sinks: tuple[float, ...] | None = None,
          arithmetic: Exact = EXACT) -> Flash:
    """the online softmax of every head of a trace, block keys at a time (None: default_block), from the trace's
    scaled scores and values; sinks: one learned sink logit per head (None: the problem's `sink`, if it has one).
    arithmetic: carried rounding works the recurrence by hand from the trace's numbers rounded (online_softmax)."""
    m = t.dims.m
    block = default_block(m) if block is None else whole("block", block, 1)
    assert block is not None
    if sinks is None:
        sinks = getattr(t.problem, "sink", None)
    if sinks is not None and len(sinks) != len(t.heads):
        raise AttntraceError(_("sink holds {n} logits but the problem has {heads} heads; give one per head").format(
            n=len(sinks), heads=len(t.heads)))
    heads = tuple(online_softmax(arithmetic.rounded(h.scaled), arithmetic.rounded(h.v), block,
                                 None if sinks is None else sinks[a], arithmetic) for a, h in enumerate(t.heads))
    concat = np.concatenate([h.output for h in heads], axis=1) if len(heads) > 1 else heads[0].output
    p = t.problem
    output = concat if p.w_o is None else arithmetic.affine(concat, p.w_o, p.b_o)  # as the trace's step 7
    diffs = [_max_diff(f.output, h.output) for f, h in zip(heads, t.heads)] + [_max_diff(output, t.output)]
    size = max([1.0, *(float(np.max(np.abs(a))) for a in (*(h.v for h in t.heads), t.output) if a.size)])
    return Flash(t, block, blocks(m, block), heads, concat, output, max(diffs), 1e-12 * size)


def _max_diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b))) if a.size else 0.0
