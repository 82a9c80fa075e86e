"""The trace: every intermediate of the eight steps, as frozen data that renderers only read."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attntrace.problem import Dims, Problem


@dataclass(frozen=True)
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
    weighted: dict[int, np.ndarray]  # row -> [m, d_v] w_ij * v_j, for the rows being shown
    output: np.ndarray  # [n_q, d_v]


@dataclass(frozen=True)
class Check:
    """step 8: softmax(Q K^T / s) V against each shown row recomputed on its own from q_i, K and V"""

    max_abs_diff: float
    tolerance: float
    rows: tuple[int, ...]  # the rows (from 0) recomputed

    @property
    def ok(self) -> bool:
        return self.max_abs_diff <= self.tolerance


@dataclass(frozen=True)
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
    check: Check
    decimals: int | None  # carried rounding, if any
    warnings: tuple[str, ...]

    @property
    def row_labels(self) -> tuple[str, ...]:
        labels = self.problem.labels
        return tuple(labels[r] for r in self.rows)
