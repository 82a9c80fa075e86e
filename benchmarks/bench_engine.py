"""Engine speed against bare numpy on the same data, and the memory of a single-query trace.

    python benchmarks/bench_engine.py
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from attntrace.core.engine import trace
from attntrace.core.problem import Problem


def bare(x, w_q, w_k, w_v, heads):  # the same attention, written as a numpy user would
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    d = q.shape[1] // heads
    outs = []
    for a in range(heads):
        s = slice(a * d, (a + 1) * d)
        z = q[:, s] @ k[:, s].T / np.sqrt(d)
        e = np.exp(z - z.max(axis=1, keepdims=True))
        outs.append(e / e.sum(axis=1, keepdims=True) @ v[:, s])
    return np.concatenate(outs, axis=1)


def best(fn, repeat=7):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    n, d_model, heads = 512, 768, 12
    x = rng.normal(size=(n, d_model))
    w_q, w_k, w_v = (rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(3))
    problem = Problem(x=x, w_q=w_q, w_k=w_k, w_v=w_v, heads=heads)
    np.testing.assert_allclose(trace(problem).output, bare(x, w_q, w_k, w_v, heads), rtol=1e-9, atol=1e-12)
    t_bare = best(lambda: bare(x, w_q, w_k, w_v, heads))
    t_engine = best(lambda: trace(problem))
    print(f"full trace, n={n}, d_model={d_model}, {heads} heads")
    print(f"  bare numpy     {t_bare * 1e3:8.1f} ms")
    print(f"  attntrace      {t_engine * 1e3:8.1f} ms   ratio {t_engine / t_bare:.2f}x (target <= 1.5x)")

    n = 20_000
    x = rng.normal(size=(n, 64))
    w = rng.normal(size=(64, 64))
    problem = Problem(x=x, w_q=w, w_k=w, w_v=w)
    tracemalloc.start()
    start = time.perf_counter()
    trace(problem, query=n // 2)
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    square = n * n * 8
    print(f"single-query trace, n={n}, d_model=64")
    print(f"  time           {elapsed * 1e3:8.1f} ms")
    print(f"  peak memory    {peak / 1e6:8.1f} MB   (one n x n float64 matrix would be {square / 1e9:.1f} GB)")


if __name__ == "__main__":
    main()
