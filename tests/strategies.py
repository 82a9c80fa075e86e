"""Hypothesis strategies for attention problems of small random shapes."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)


def matrix(rows: int, cols: int) -> st.SearchStrategy[np.ndarray]:
    return arrays(np.float64, (rows, cols), elements=finite)


@st.composite
def problems(draw, heads: int | None = None, max_n: int = 6):
    """(x, w_q, w_k, w_v, heads) with d_k and d_v divisible by heads"""
    h = heads or draw(st.integers(1, 3))
    n = draw(st.integers(1, max_n))
    d_model = draw(st.integers(1, 5))
    d_k = h * draw(st.integers(1, 3))
    d_v = h * draw(st.integers(1, 3))
    return draw(matrix(n, d_model)), draw(matrix(d_model, d_k)), draw(matrix(d_model, d_k)), draw(matrix(d_model, d_v)), h
