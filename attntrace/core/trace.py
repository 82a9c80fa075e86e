"""The trace: every intermediate of the eight steps, as read-only data that renderers only read."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from attntrace.core.arithmetic import arithmetic
from attntrace.core.attention import weighted
from attntrace.core.problem import Dims, Problem
from attntrace.core.variants import angles
from attntrace.language import _

FORMAT = 1  # the version of a trace's JSON form: its "format" key


def read_only(a: np.ndarray) -> np.ndarray:
    """a, unwritable; a view of memory still writable elsewhere (the caller's problem, say) is copied first"""
    base = a.base
    base_read_only = isinstance(base, np.ndarray) and not base.flags.writeable
    if base is not None and not base_read_only:
        a = a.copy()
    a.setflags(write=False)
    return a


def freeze(data: Any) -> None:
    """make every array field of a frozen dataclass read-only, so a trace's numbers cannot be overwritten"""
    for f in fields(data):
        value = getattr(data, f.name)
        if isinstance(value, np.ndarray):
            object.__setattr__(data, f.name, read_only(value))


@dataclass(frozen=True, eq=False)  # it holds arrays, which have no ==: one is equal only to itself
class HeadTrace:
    """steps 2-7 for one head; q, scores, scaled, weights and output hold the traced query rows only"""

    w_q: np.ndarray | None  # [d_model, d_k] this head's columns; None = identity
    w_k: np.ndarray | None  # [d_src, d_k]
    w_v: np.ndarray | None  # [d_src, d_v]
    b_q: np.ndarray | None  # [d_k]
    b_k: np.ndarray | None
    b_v: np.ndarray | None
    q: np.ndarray  # [n_q, d_k]
    k: np.ndarray  # [m, d_k]
    v: np.ndarray  # [m, d_v]
    scores: np.ndarray  # [n_q, m] raw q_i · k_j
    scaled: np.ndarray  # [n_q, m] scores / s, -inf where masked
    weights: np.ndarray  # [n_q, m] softmax rows, 0 where masked
    output: np.ndarray  # [n_q, d_v]
    q_rotated: np.ndarray | None = None  # [n_q, d_k] with rope: q turned by position, what the scores use
    k_rotated: np.ndarray | None = None  # [m, d_k]
    bias: np.ndarray | None = None  # [n_q, m] with alibi: -slope · |i - j|, added to the scaled scores
    uncapped: np.ndarray | None = None  # [n_q, m] with softcap: the logits before c · tanh(z / c)
    kv_head: int | None = None  # with grouped-query attention: the key/value block (from 0) this head reads
    sink_weight: np.ndarray | None = None  # [n_q] with a sink logit: the weight each row gives the sink (1 - Σ weights)

    def __post_init__(self) -> None:
        freeze(self)


@dataclass(frozen=True)
class SelfCheck:
    """step 8: softmax(Q K^T / s) V against each shown row recomputed on its own from q_i, K and V (with carried
    rounding, both rounded and carried the same way); and how far carrying the rounding moved the output"""

    max_abs_diff: float
    tolerance: float
    rows: tuple[int, ...]  # the rows (from 0) recomputed: the ones asked to be shown
    from_exact: float | None = None  # carried rounding only: the output's largest distance from the unrounded trace's

    @property
    def ok(self) -> bool:
        return self.max_abs_diff <= self.tolerance


@dataclass(frozen=True, eq=False)  # it holds arrays, which have no ==: one is equal only to itself
class Trace:
    """every intermediate of one problem; rows says which query rows (from 0) the arrays hold"""

    problem: Problem
    dims: Dims
    query: int | None  # the input traced alone (from 1), or None for every input
    rows: tuple[int, ...]
    divisor: float
    allowed: np.ndarray | None  # [n_q, m] True where a key may be attended; None = no mask
    heads: tuple[HeadTrace, ...]
    concat: np.ndarray  # [n_q, heads * d_v]
    output: np.ndarray  # [n_q, d_out]
    self_check: SelfCheck
    carry_rounding: int | None  # the decimals every intermediate was rounded to and carried at; None: exact float64
    fully_masked: tuple[int, ...]  # the traced rows (from 0) whose every key is masked: weights and output all 0
    _weighted: dict[tuple[int, int], np.ndarray] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        freeze(self)

    @property
    def row_labels(self) -> tuple[str, ...]:
        labels = self.problem.labels
        return tuple(labels[r] for r in self.rows)

    @property
    def key_angles(self) -> np.ndarray | None:
        """with rope: [m, d_k/2] the angle each pair of every k_j turns by (in self-attention, q_j's too); else None"""
        rope = self.problem.rope
        if rope is None:
            return None
        m = self.dims.m
        positions = rope.source_positions if self.problem.source is not None else rope.positions
        return angles(np.arange(m, dtype=np.float64) if positions is None else np.array(positions),
                      rope.pair_frequencies(self.dims.d_k))

    @property
    def query_angles(self) -> np.ndarray | None:
        """with rope: [n_q, d_k/2] the angles of the traced query rows' pairs; else None"""
        rope = self.problem.rope
        if rope is None:
            return None
        positions = np.arange(self.dims.n, dtype=np.float64) if rope.positions is None else np.array(rope.positions)
        return angles(positions[list(self.rows)], rope.pair_frequencies(self.dims.d_k))

    def weighted(self, head: int, row: int) -> np.ndarray:
        """step 6 for input `row` (from 0) in head `head` (from 0), derived when asked: [m, d_v] w_ij * v_j"""
        if (head, row) not in self._weighted:  # derived once: the steps and explain show the same array
            self._weighted[head, row] = read_only(self.weighted_rows(head, row, 0, len(self.heads[head].v)))
        return self._weighted[head, row]

    def weighted_rows(self, head: int, row: int, start: int, stop: int) -> np.ndarray:
        """weighted(head, row)[start:stop], worked out for those keys alone: [stop - start, d_v]"""
        if (head, row) in self._weighted:
            return self._weighted[head, row][start:stop]
        if row not in self.rows:
            raise ValueError(_("row {row} is not traced; this trace holds rows {rows}").format(row=row, rows=list(self.rows)))
        h = self.heads[head]
        return weighted(h.weights[self.rows.index(row), start:stop], h.v[start:stop], arithmetic(self.carry_rounding))
