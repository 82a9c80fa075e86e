"""Random problems for `attntrace new`: exercises with small integers, or weights as networks start them."""

from __future__ import annotations

import math

import numpy as np

from attntrace.errors import AttntraceError
from attntrace.model.problem import Problem, check_memory

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
    for name, value in (("tokens", n), ("d_model", d_model), ("d_k", d_k), ("d_v", d_v), ("heads", heads)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise AttntraceError(f"{name} = {value!r} must be a whole number of at least 1")
    n, d_model, d_k, d_v, heads = int(n), int(d_model), int(d_k), int(d_v), int(heads)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise AttntraceError(f"seed = {seed!r} must be a whole number of at least 0")
    if tokens is not None and len(tokens) != n:
        raise AttntraceError(f"{len(tokens)} token labels given for n = {n} inputs")
    # before anything is drawn: the arrays (and the trace they are made for) must fit in memory
    check_memory(n, n, d_model, d_model, d_k, d_v, heads, d_v, what=f"a problem of {n:,} inputs, d_model = {d_model:,}")
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, size=(n, d_model)).astype(np.float64) if init == "integers" else np.round(
        rng.normal(size=(n, d_model)), 4)
    return Problem(
        x=x, w_q=_weights(rng, init, d_model, d_k), w_k=_weights(rng, init, d_model, d_k),
        w_v=_weights(rng, init, d_model, d_v), heads=heads, scale=init != "integers", tokens=tokens,
        name=f"{n} inputs, d_model = {d_model}, d_k = {d_k}, d_v = {d_v}, {heads} head{'s' * (heads > 1)} ({init})",
    )
