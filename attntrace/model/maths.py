"""The arithmetic of attention as plain array functions: no I/O, no state."""

from __future__ import annotations

import numpy as np


def softmax(z: np.ndarray, allowed: np.ndarray | None = None) -> np.ndarray:
    """stable softmax over the last axis; a row with no allowed cell is all zeros, never NaN"""
    if allowed is None:
        exp_z = np.exp(z - np.max(z, axis=-1, keepdims=True))
        return exp_z / np.sum(exp_z, axis=-1, keepdims=True)
    z = np.where(allowed, z, -np.inf)
    row_max = np.max(z, axis=-1, keepdims=True)
    exp_z = np.exp(z - np.where(np.isfinite(row_max), row_max, 0.0))
    total = np.sum(exp_z, axis=-1, keepdims=True)
    return np.divide(exp_z, total, out=np.zeros_like(exp_z), where=total > 0)


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, divisor: float,
              allowed: np.ndarray | None = None) -> np.ndarray:
    """softmax(Q K^T / s) V in one expression: [n_q, d_k], [m, d_k], [m, d_v] -> [n_q, d_v]"""
    return softmax(q @ k.T / divisor, allowed) @ v


def round_half_up(a: np.ndarray, decimals: int) -> np.ndarray:
    """round as a student does by hand: halves away from zero"""
    scaled = np.round(a * 10.0**decimals, 9)  # 0.285 is stored as 0.28499999...; a student writes 0.29
    return np.trunc(scaled + np.copysign(0.5, scaled)) / 10.0**decimals

