"""Random problems for `attntrace new`: exercises with small integers, or weights as networks start them."""

from __future__ import annotations

import math

import numpy as np

from attntrace.errors import AttntraceError
from attntrace.model.problem import Problem

INITS = ("integers", "normal", "xavier", "kaiming")


def _weights(rng: np.random.Generator, init: str, rows: int, cols: int) -> np.ndarray:
    if init == "integers":
        return rng.integers(-1, 3, size=(rows, cols)).astype(np.float64)
    if init == "normal":
        w = rng.normal(0.0, 1.0, size=(rows, cols))
    elif init == "xavier":  # Glorot uniform: U(-a, a), a = sqrt(6 / (fan_in + fan_out))
        a = math.sqrt(6.0 / (rows + cols))
        w = rng.uniform(-a, a, size=(rows, cols))
    else:  # Kaiming normal for fan_in: N(0, 2 / fan_in)
        w = rng.normal(0.0, math.sqrt(2.0 / rows), size=(rows, cols))
    return np.round(w, 4)


def random_problem(*, n: int, d_model: int, d_k: int, d_v: int, heads: int = 1, init: str = "integers",
                   seed: int | None = None, tokens: tuple[str, ...] | None = None) -> Problem:
    """a problem ready to edit; integers (the default) can be computed by hand, like the worked example"""
    if init not in INITS:
        raise AttntraceError(f'unknown init "{init}"; use {", ".join(INITS)}')
    if tokens is not None and len(tokens) != n:
        raise AttntraceError(f"{len(tokens)} token labels given for n = {n} inputs")
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, size=(n, d_model)).astype(np.float64) if init == "integers" else np.round(
        rng.normal(size=(n, d_model)), 4)
    return Problem(
        x=x, w_q=_weights(rng, init, d_model, d_k), w_k=_weights(rng, init, d_model, d_k),
        w_v=_weights(rng, init, d_model, d_v), heads=heads, scale=init != "integers", tokens=tokens,
        name=f"{n} inputs, d_model = {d_model}, d_k = {d_k}, d_v = {d_v}, {heads} head{'s' * (heads > 1)} ({init})",
    )
