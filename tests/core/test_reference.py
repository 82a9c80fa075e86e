"""The engine against an independent loop implementation on many random problems, for every variant."""

import math
from dataclasses import replace

import numpy as np
import pytest

from attntrace.core.engine import trace
from attntrace.core.masks import from_names
from attntrace.core.problem import Problem
from tests.reference import loops

SEEDS = range(25)


def _random(seed: int, *, cross=False, bias=False, heads=1, w_o=False, scale=True, masks=(), identity=False):
    rng = np.random.default_rng(seed)
    n, m = rng.integers(1, 7), rng.integers(1, 7)
    d_model, d_src = rng.integers(1, 6), rng.integers(1, 6)
    if identity:
        d_model = d_src = heads * int(rng.integers(1, 3))
    d_k, d_v = heads * rng.integers(1, 4), heads * rng.integers(1, 4)
    kv_dim = d_src if cross else d_model
    p = Problem(
        x=rng.normal(size=(n, d_model)) * 2,
        source=rng.normal(size=(m, d_src)) * 2 if cross else None,
        w_q=None if identity else rng.normal(size=(d_model, d_k)),
        w_k=None if identity else rng.normal(size=(kv_dim, d_k)),
        w_v=None if identity else rng.normal(size=(kv_dim, d_v)),
        heads=heads, scale=scale, mask=from_names(
            masks, window=int(rng.integers(0, 3)) if "window" in masks else None,
            padding=tuple(bool(b) for b in rng.integers(0, 2, size=m if cross else n)) if "padding" in masks else None),
    )
    if bias:
        p = replace(p, b_q=rng.normal(size=p.w_q.shape[1]), b_k=rng.normal(size=p.w_k.shape[1]),
                    b_v=rng.normal(size=p.w_v.shape[1]))
    if w_o:
        d_all = p.w_v.shape[1]
        p = replace(p, w_o=rng.normal(size=(d_all, 3)), b_o=rng.normal(size=3))
    return p


def _reference(p: Problem, t) -> np.ndarray:
    eye_q = np.eye(p.x.shape[1])
    eye_kv = np.eye(p.kv_input.shape[1])
    n, m = len(p.x), len(p.kv_input)
    allowed = None if not p.mask else [[("causal" not in p.masks or j <= i)
                                        and (p.window is None or abs(i - j) <= p.window)
                                        and (p.padding is None or not p.padding[j]) for j in range(m)] for i in range(n)]
    return loops(p.x, eye_q if p.w_q is None else p.w_q, eye_kv if p.w_k is None else p.w_k,
                 eye_kv if p.w_v is None else p.w_v, source=p.source, b_q=p.b_q, b_k=p.b_k, b_v=p.b_v,
                 heads=p.heads, w_o=p.w_o, b_o=p.b_o, divisor=t.divisor, allowed=allowed)


VARIANTS = {
    "plain": {},
    "no scale": {"scale": False},
    "scale by 8": {"scale": 8.0},
    "biases": {"bias": True},
    "identity": {"identity": True},
    "causal": {"masks": ("causal",)},
    "window": {"masks": ("window",)},
    "padding": {"masks": ("padding",)},
    "causal+window+padding": {"masks": ("causal", "window", "padding")},
    "cross": {"cross": True},
    "cross+padding": {"cross": True, "masks": ("padding",)},
    "2 heads": {"heads": 2},
    "3 heads + w_o": {"heads": 3, "w_o": True, "bias": True},
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_engine_matches_loops(variant):
    for seed in SEEDS:
        p = _random(seed, **VARIANTS[variant])
        t = trace(p)
        np.testing.assert_allclose(t.output, _reference(p, t), rtol=1e-10, atol=1e-10, err_msg=f"seed {seed}")
        for i in range(len(p.x)):
            one = trace(p, query=i + 1)
            np.testing.assert_allclose(one.output[0], t.output[i], rtol=1e-12, atol=1e-12)


def test_scale_true_divides_by_sqrt_of_the_per_head_d_k():
    p = _random(3, heads=2)
    assert trace(p).divisor == pytest.approx(math.sqrt(p.w_q.shape[1] / 2))
