"""Who attends to whom: each query's most-attended keys, per head or averaged over a layer. Computes, never prints."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attntrace.model.trace import Trace


@dataclass(frozen=True)
class Attends:
    """weights [n_q, m] and, per query row, the columns of its `top` largest weights (largest first)"""

    weights: np.ndarray
    best: np.ndarray  # [n_q, top]


def top_keys(weights: np.ndarray, top: int) -> Attends:
    return Attends(weights, np.argsort(-weights, axis=1, kind="stable")[:, :top])


def per_head(t: Trace, top: int) -> list[Attends]:
    return [top_keys(h.weights, top) for h in t.heads]


def layer_mean(t: Trace, top: int) -> tuple[Attends, np.ndarray]:
    """the weights averaged over the heads, and each head's most-attended key per query: [heads, n_q]"""
    mean = np.mean([h.weights for h in t.heads], axis=0)
    favourites = np.stack([top_keys(h.weights, 1).best[:, 0] for h in t.heads])
    return top_keys(mean, top), favourites
