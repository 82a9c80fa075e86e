"""Who attends to whom: each query's most-attended keys, per head or averaged over a layer. Computes, never prints."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attntrace.core.trace import Trace


@dataclass(frozen=True)
class Attends:
    """weights [n_q, m], per query row the columns of its `top` largest weights (largest first) among the keys not
    left out, and per row the weight it gives the keys left out (the weights themselves are never renormalised)"""

    weights: np.ndarray
    best: np.ndarray  # [n_q, top] (fewer columns when fewer keys are kept); -1 past a row's last key the mask allows
    aside: np.ndarray  # [n_q]: the sum of each row's weights on the keys left out; 0 when none are


def top_keys(weights: np.ndarray, top: int, leave_out: tuple[int, ...] = (),
             allowed: np.ndarray | None = None) -> Attends:
    """the top keys of each row, never one of leave_out (key columns from 0) nor one the mask hides from it"""
    out = sorted(set(leave_out))
    ranked = weights.copy() if allowed is None else np.where(allowed, weights, -np.inf)
    ranked[:, out] = -np.inf
    kept = weights.shape[1] - len(out)
    best = np.argsort(-ranked, axis=1, kind="stable")[:, :min(top, kept)]
    best = np.where(np.isneginf(np.take_along_axis(ranked, best, axis=1)), -1, best)
    return Attends(weights, best, weights[:, out].sum(axis=1))


def per_head(t: Trace, top: int, leave_out: tuple[int, ...] = ()) -> list[Attends]:
    return [top_keys(h.weights, top, leave_out, t.allowed) for h in t.heads]


def layer_mean(t: Trace, top: int, leave_out: tuple[int, ...] = ()) -> tuple[Attends, np.ndarray]:
    """the weights averaged over the heads, and each head's most-attended key (not left out) per query: [heads, n_q]"""
    mean = np.mean([h.weights for h in t.heads], axis=0)
    favourites = np.stack([top_keys(h.weights, 1, leave_out, t.allowed).best[:, 0] for h in t.heads])
    return top_keys(mean, top, leave_out, t.allowed), favourites
