"""The kernels behind attention.heads: the whole row, the online softmax over blocks and the cache at step t agree, and
under carried rounding each works the numbers a worksheet's key holds."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attntrace.core.arithmetic import EXACT, Carried, round_half_up
from attntrace.core.attention import attend, exps, softmax
from attntrace.core.decode import decode
from attntrace.core.engine import trace
from attntrace.core.flash import Online, blocks, join, normalised, online_softmax
from tests.core.test_decode import decoder_problems

settings.register_profile("kernels", max_examples=30, deadline=None)


@st.composite
def rows(draw):
    """scores [n_q, m] (some masked, some rows wholly) and values [m, d_v] rounded to a precision, a block size, a
    sink logit or None, and the precision"""
    precision = draw(st.integers(0, 5))
    n_q, m, d_v = draw(st.integers(1, 4)), draw(st.integers(1, 8)), draw(st.integers(1, 3))
    numbers = st.floats(-6, 6, allow_nan=False)
    s = round_half_up(np.array(draw(st.lists(numbers, min_size=n_q * m, max_size=n_q * m))).reshape(n_q, m), precision)
    masked = np.array(draw(st.lists(st.booleans(), min_size=n_q * m, max_size=n_q * m))).reshape(n_q, m)
    v = round_half_up(np.array(draw(st.lists(numbers, min_size=m * d_v, max_size=m * d_v))).reshape(m, d_v), precision)
    sink = draw(st.none() | numbers.map(lambda z: float(round_half_up(np.float64(z), precision))))
    return np.where(masked, -np.inf, s), v, draw(st.integers(1, m)), sink, precision


def by_hand(s, v, block, precision, sink):
    """the recurrence as the worksheet's key works it: m exact, ℓ and O after each block rounded and carried on, then
    O / (ℓ + e^(sink − m)) rounded"""
    n_q, d_v = s.shape[0], v.shape[1]
    m, ell, o = np.full(n_q, -np.inf), np.zeros(n_q), np.zeros((n_q, d_v))
    ms, ls, os_ = [], [], []
    for start, stop in blocks(s.shape[1], block):
        with np.errstate(all="ignore"):
            top = np.max(s[:, start:stop], axis=1)
            m_new = np.maximum(m, top)
            factor = np.where(top == -np.inf, 1.0, np.where(np.isfinite(m), np.exp(m - m_new), 0.0))
            p = np.where(np.isfinite(s[:, start:stop]), np.exp(s[:, start:stop] - m_new[:, None]), 0.0)
        ell, o, m = round_half_up(ell * factor + p.sum(axis=1), precision), round_half_up(
            o * factor[:, None] + p @ v[start:stop], precision), m_new
        ms, ls, os_ = [*ms, m], [*ls, ell], [*os_, o]
    with np.errstate(all="ignore"):
        below = ell if sink is None else ell + np.exp(sink - m)
        out = np.divide(o, below[:, None], out=np.zeros_like(o), where=below[:, None] != 0)
    return np.stack(ms, 1), np.stack(ls, 1), np.stack(os_, 1), round_half_up(out, precision)


@settings(settings.get_profile("kernels"))
@given(rows())
def test_the_online_softmax_under_carried_rounding_is_the_worksheet_key(case):
    s, v, block, sink, precision = case
    r = online_softmax(s, v, block, sink, Carried(precision))
    for mine, key in zip((r.m, r.ell, r.o, r.output), by_hand(s, v, block, precision, sink)):
        assert np.array_equal(mine, key)


@settings(settings.get_profile("kernels"))
@given(rows())
def test_the_online_softmax_exactly_is_the_whole_row(case):
    s, v, block, sink, _precision = case
    r = online_softmax(s, v, block, sink)
    seen = np.isfinite(s)
    row = attend(np.where(seen, s, 0.0), np.eye(s.shape[1]), v, 1.0, seen, sink=sink)  # the scores as q, K = I
    size = max(1.0, float(np.abs(v).max()))
    np.testing.assert_allclose(r.output, row.output, rtol=0, atol=1e-12 * size)
    assert (r.exps[~seen] == 0).all()  # a masked key adds nothing


@settings(settings.get_profile("kernels"))
@given(decoder_problems(max_n=5), st.integers(1, 3))
def test_the_flash_kernel_through_heads_is_the_row_kernel(p, block):
    t = trace(p)
    from attntrace.core.attention import heads
    from attntrace.core.problem import divisor

    d = p.dims
    projected = [EXACT.affine(p.x, w, b) for w, b in ((p.w_q, p.b_q), (p.w_k, p.b_k), (p.w_v, p.b_v))]
    flashed = heads(p, d, np.arange(d.n), *projected, None, divisor(p, d.d_k), kernel=Online(block))
    for h, f in zip(t.heads, flashed):
        np.testing.assert_allclose(f.attended.output, h.output, rtol=0, atol=1e-12 * max(1.0, np.abs(h.v).max()))


def test_one_step_joins_from_any_state_and_rounds_what_it_carries():
    s, v = np.array([[1.0, 2.0], [-np.inf, -np.inf]]), np.array([[1.0, 0.0], [0.0, 1.0]])
    exact = join(np.array([0.5, 1.0]), np.array([1.0, 2.0]), np.ones((2, 2)), s, v)
    assert exact.m.tolist() == [2.0, 1.0] and exact.rescale[1] == 1.0 and exact.sums[1] == 0.0  # row 2 skipped
    assert exact.ell[0] == 1.0 * np.exp(0.5 - 2.0) + np.exp(1.0 - 2.0) + 1.0
    carried = join(np.array([0.5, 1.0]), np.array([1.0, 2.0]), np.ones((2, 2)), s, v, Carried(2))
    assert np.array_equal(carried.ell, round_half_up(exact.ell, 2)) and np.array_equal(carried.o,
                                                                                      round_half_up(exact.o, 2))


def test_the_output_from_the_last_state_takes_the_sink_once():
    o, ell, m = np.array([[2.0]]), np.array([1.0]), np.array([0.0])
    assert normalised(o, ell, m, None)[0, 0] == 2.0
    assert normalised(o, ell, m, 0.0)[0, 0] == 1.0  # ℓ + e^(0 − 0)
    assert normalised(np.zeros((1, 1)), np.zeros(1), np.array([-np.inf]), None)[0, 0] == 0.0


def test_exps_are_zero_where_masked():
    assert exps(np.array([0.0, -np.inf]), 0.0).tolist() == [1.0, 0.0]


@settings(settings.get_profile("kernels"))
@given(decoder_problems(max_n=5), st.sampled_from([None, 1, 2]), st.integers(1, 4))
def test_decoding_under_carried_rounding_is_the_hand_calculation(p, window, precision):
    """each step: the softmax of the printed logits over the cache, rounded; then Σ w·v with each product rounded"""
    from dataclasses import replace

    p = replace(p, sink=None)
    carried = trace(p, carry_rounding=precision)
    d = decode(p, window, arithmetic=Carried(precision))
    for h, head in zip(carried.heads, d.heads):
        for step in head.steps:
            keys = np.array(step.cache) - 1
            logits, v = round_half_up(h.scaled[step.t - 1, keys], precision), round_half_up(h.v[keys], precision)
            weights = round_half_up(softmax(logits[None, :]), precision)
            assert np.array_equal(step.scaled, logits) and np.array_equal(step.weights, weights[0])
            assert np.array_equal(step.output, Carried(precision).dot(weights, v)[0])
