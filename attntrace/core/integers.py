"""Exact arithmetic of decimals as written: each number times 10^p is an integer, and products and sums of those are
exact. numpy's int64 while no result can leave it, Python integers beyond. explain writes a cell's arithmetic with it."""

from __future__ import annotations

import numpy as np

LIMIT = 2**62  # integers below this, and sums of two of them, are exact in int64


def exact(values: list[int], shape: tuple[int, ...]) -> np.ndarray:
    """exact integers as an array: int64 when every one is small enough, else Python integers"""
    if not values or (max(values) < LIMIT and min(values) > -LIMIT):
        return np.array(values, dtype=np.int64).reshape(shape)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out.reshape(shape)


def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a * b (broadcast), exactly"""
    if a.dtype == np.int64 and b.dtype == np.int64 and largest(a) * largest(b) < LIMIT:
        return a * b
    return np.asarray(a.astype(object) * b.astype(object), dtype=object)


def dot(a: np.ndarray, b: np.ndarray, count: int) -> np.ndarray:
    """the count-term dot products of a's rows and b's columns, exactly: [rows, count] @ [count, cols]"""
    if a.dtype == np.int64 and b.dtype == np.int64 and largest(a) * largest(b) * max(count, 1) < LIMIT:
        return a @ b
    return np.asarray(a.astype(object) @ b.astype(object), dtype=object)


def plus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b, exactly"""
    if a.dtype == np.int64 and b.dtype == np.int64 and largest(a) + largest(b) < LIMIT:
        return a + b
    return np.asarray(a.astype(object) + b.astype(object), dtype=object)


def largest(a: np.ndarray) -> int:
    """the largest magnitude in a"""
    return max((abs(int(v)) for v in a.flat), default=0) if a.dtype == object else int(np.abs(a).max(initial=0))
