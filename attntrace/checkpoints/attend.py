"""A layer's attention output computed with the trace's own attention but none of its intermediates kept: the forward
pass through the layers before the one traced, where nothing is shown, from the queries, keys and values a model
projected itself (in float32 or float64) and the layer's settings."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attntrace.core import masks
from attntrace.core.attention import heads
from attntrace.core.masks import Mask
from attntrace.core.problem import Dims, divisor
from attntrace.core.variants import Rope


@dataclass(frozen=True)
class Layer:
    """a model layer's attention settings, as a Problem holds them, for queries, keys and values already projected"""

    heads: int
    kv_heads: int
    mask: tuple[Mask, ...]
    scale: bool | float = True
    rope: Rope | None = None
    softcap: float | None = None
    sink: tuple[float, ...] | None = None
    alibi: bool = False
    source: None = None  # self-attention


def attend_projected(layer: Layer, q_all: np.ndarray, k_all: np.ndarray, v_all: np.ndarray) -> np.ndarray:
    """[n, heads * d_v]: every head's output side by side, from q_all [n, heads * d_k], k_all [n, kv_heads * d_k] and
    v_all [n, kv_heads * d_v] (float32 ones widened: the scores and softmax are float64)"""
    n, d_k, d_v = len(q_all), q_all.shape[1] // layer.heads, v_all.shape[1] // layer.kv_heads
    d = Dims(n=n, m=n, d_model=q_all.shape[1], d_src=q_all.shape[1], d_k=d_k, d_v=d_v, heads=layer.heads,
             d_out=layer.heads * d_v, kv_heads=layer.kv_heads)
    q, k, v = (a.astype(np.float64, copy=False) for a in (q_all, k_all, v_all))
    rows = np.arange(n)
    allowed = masks.allowed(layer.mask, rows, n)  # [n, n] or None
    outputs = [head.attended.output for head in heads(layer, d, rows, q, k, v, allowed, divisor(layer, d_k))]
    return np.concatenate(outputs, axis=1)  # [n, heads * d_v]
