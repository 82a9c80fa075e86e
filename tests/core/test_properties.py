"""What must always hold, whatever the numbers."""

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attntrace.core.engine import trace
from attntrace.core.masks import Window, from_names
from attntrace.core.problem import Problem
from tests.strategies import matrix, problems

settings.register_profile("default", max_examples=60, deadline=None)
settings.load_profile("default")


def _problem(drawn, **kw) -> Problem:
    x, w_q, w_k, w_v, h = drawn
    return Problem(x=x, w_q=w_q, w_k=w_k, w_v=w_v, heads=h, **kw)


@given(problems(), st.sampled_from([(), ("causal",), ("window",), ("causal", "window")]), st.integers(0, 3))
def test_weight_rows_are_a_distribution_and_masked_cells_are_exactly_zero(drawn, masks, window):
    p = _problem(drawn, mask=from_names(masks, window=window if "window" in masks else None))
    t = trace(p)
    for h in t.heads:
        assert (h.weights >= 0).all()
        np.testing.assert_allclose(h.weights.sum(axis=1), 1.0, rtol=1e-12)
        if t.allowed is not None:
            assert (h.weights[~t.allowed] == 0.0).all()
            assert np.isneginf(h.scaled[~t.allowed]).all()


@given(problems(), st.randoms())
def test_permuting_inputs_permutes_outputs(drawn, rnd):
    p = _problem(drawn)
    order = list(range(len(p.x)))
    rnd.shuffle(order)
    permuted = trace(replace(p, x=p.x[order])).output
    np.testing.assert_allclose(permuted, trace(p).output[order], rtol=1e-9, atol=1e-9)


@given(problems(max_n=6), st.data())
def test_causal_output_row_ignores_later_tokens(drawn, data):
    p = _problem(drawn, mask=("causal",))
    n = len(p.x)
    i = data.draw(st.integers(0, n - 1))
    changed = p.x.copy()
    changed[i + 1:] = data.draw(matrix(n - i - 1, p.x.shape[1]))
    np.testing.assert_allclose(trace(replace(p, x=changed)).output[i], trace(p).output[i], rtol=1e-12, atol=1e-12)


@given(problems())
def test_output_rows_lie_within_the_range_of_v(drawn):
    t = trace(_problem(drawn))
    for h in t.heads:
        low, high = h.v.min(axis=0), h.v.max(axis=0)
        slack = 1e-9 * (1 + np.abs(h.v).max())
        assert (h.output >= low - slack).all() and (h.output <= high + slack).all()


@given(problems())
def test_h_heads_equal_h_single_head_traces_concatenated(drawn):
    p = _problem(drawn)
    d_k, d_v = p.w_q.shape[1] // p.heads, p.w_v.shape[1] // p.heads
    singles = [
        trace(replace(p, heads=1, w_q=p.w_q[:, a * d_k:(a + 1) * d_k], w_k=p.w_k[:, a * d_k:(a + 1) * d_k],
                      w_v=p.w_v[:, a * d_v:(a + 1) * d_v])).output
        for a in range(p.heads)
    ]
    np.testing.assert_allclose(trace(p).output, np.concatenate(singles, axis=1), rtol=1e-12, atol=1e-12)


@given(problems())
def test_source_equal_to_x_is_self_attention(drawn):
    p = _problem(drawn)
    np.testing.assert_allclose(trace(replace(p, source=p.x)).output, trace(p).output, rtol=1e-12, atol=1e-12)


@given(problems(), st.integers(0, 4))
def test_a_window_as_wide_as_the_input_is_no_mask(drawn, extra):
    p = _problem(drawn)
    wide = replace(p, mask=Window(len(p.x) - 1 + extra))
    np.testing.assert_allclose(trace(wide).output, trace(p).output, rtol=1e-14, atol=1e-14)


@given(problems(), st.data(), st.sampled_from([(), ("causal",)]))
def test_a_single_query_trace_is_that_row_of_the_full_trace(drawn, data, masks):
    p = _problem(drawn, mask=masks)
    i = data.draw(st.integers(1, len(p.x)))
    full, one = trace(p), trace(p, query=i)
    np.testing.assert_allclose(one.output[0], full.output[i - 1], rtol=1e-12, atol=1e-12)
    for a, (hf, ho) in enumerate(zip(full.heads, one.heads)):
        np.testing.assert_allclose(ho.weights[0], hf.weights[i - 1], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(one.weighted(a, i - 1), full.weighted(a, i - 1), rtol=1e-12, atol=1e-12)


@given(problems())
def test_never_nan_and_the_matrix_check_holds(drawn):
    t = trace(_problem(drawn))
    assert np.isfinite(t.output).all() and t.self_check.ok
