"""One decode step written out line by line: every score, weight and output cell written is the step's value at the
precision, checked against a plain numpy computation of the same row of attention (not the code that wrote it)."""

import math
import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import attntrace
from attntrace.core.decode import decode
from attntrace.views.explain_decode import explain_decode_steps
from attntrace.views.page import Note

LINE = re.compile(r"^(?:head (\d+) · )?(q\d+ · k(\d+)|s\(\d+,(\d+)\)|w\(\d+,(\d+)\)|sink weight|output\d+\[(\d+)\]) = "
                  r".* = (-?\d+(?:\.\d+)?)$")


def _reference(x, w_q, w_k, w_v, t, window, sink, scale):
    """row t (from 1) of causal attention with the window, by hand: raw scores, logits, weights, sink weight, output"""
    q, k, v = x[t - 1] @ w_q, x @ w_k, x @ w_v
    keep = [j for j in range(1, t + 1) if window is None or t - j < window]
    raw = {j: float(q @ k[j - 1]) for j in keep}
    logits = {j: raw[j] / (math.sqrt(len(q)) if scale else 1.0) for j in keep}
    top = max([*logits.values(), -math.inf if sink is None else sink])
    e = {j: math.exp(logits[j] - top) for j in keep}
    total = sum(e.values()) + (0.0 if sink is None else math.exp(sink - top))
    weights = {j: e[j] / total for j in keep}
    return raw, logits, weights, (None if sink is None else math.exp(sink - top) / total), \
        sum(weights[j] * v[j - 1] for j in keep)


def _check(d, precision, reference):
    raw, logits, weights, sink_weight, output = reference
    half = 0.5 * 10 ** -precision + 1e-9
    checked = 0
    for step in explain_decode_steps(d, precision):
        for item in step.items:
            hit = isinstance(item, Note) and LINE.match(item.text)
            if not hit:
                continue
            value = float(hit[7])
            expected = (raw[int(hit[3])] if hit[3] else logits[int(hit[4])] if hit[4] else
                        weights[int(hit[5])] if hit[5] else output[int(hit[6]) - 1] if hit[6] else sink_weight)
            assert abs(value - expected) <= half, (item.text, expected)
            checked += 1
    assert checked >= 2 * len(weights) + len(output)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5), st.sampled_from([None, 1, 2, 3]), st.sampled_from([None, 0.5, -2.0]), st.booleans(),
       st.integers(0, 6), st.integers(0, 2 ** 16))
def test_every_result_is_the_step_rounded(t, window, sink, scale, precision, seed):
    rng = np.random.default_rng(seed)
    x, w_q, w_k, w_v = (rng.normal(size=shape).round(2) for shape in ((5, 3), (3, 2), (3, 2), (3, 3)))
    p = attntrace.trace(x=x, w_q=w_q, w_k=w_k, w_v=w_v, scale=scale).problem
    d = decode(p, window=window, position=t, sink=sink)
    _check(d, precision, _reference(x, w_q, w_k, w_v, t, window, sink, scale))


def test_the_sink_joins_the_denominator_and_takes_a_weight():
    p = attntrace.trace(x=[[1.0], [2.0], [3.0]], w_q=[[1.0]], w_k=[[1.0]], w_v=[[1.0]], scale=False).problem
    d = decode(p, position=1, sink=0.5)
    lines = [item.text for step in explain_decode_steps(d, 4) for item in step.items]
    assert "w(1,1) = e^1 / (e^1 + e^0.5000) = 0.6225" in lines
    assert "sink weight = e^0.5000 / (e^1 + e^0.5000) = 0.3775" in lines
