"""RoPE, grouped-query heads, ALiBi and soft-capping against the Hugging Face code paths, and what must always hold."""

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attntrace import AttntraceError, Problem
from attntrace.core.engine import trace
from attntrace.core.variants import Rope, alibi_slopes, frequencies, llama3_frequencies
from tests.conftest import ROOT

REFERENCE = json.loads((ROOT / "tests" / "fixtures" / "variant_reference.json").read_text())
finite = st.floats(-3, 3, allow_nan=False, width=64)


@pytest.mark.parametrize("case", REFERENCE["cases"], ids=lambda c: json.dumps(
    {k: v for k, v in c["problem"].items() if k in ("heads", "kv_heads", "rope", "alibi", "softcap")})[:60])
def test_each_head_agrees_with_the_hugging_face_code_paths(case):
    t = trace(Problem(**case["problem"]))
    for a, h in enumerate(t.heads):
        assert np.allclose(h.weights, case["weights"][a], rtol=0, atol=1e-12)
        if case["q_rotated"] is not None:
            assert np.allclose(h.q_rotated, case["q_rotated"][a], rtol=0, atol=1e-12)
            assert np.allclose(h.k_rotated, case["k_rotated"][a], rtol=0, atol=1e-12)
    assert np.allclose(t.output, case["output"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("heads", range(1, 17))
def test_alibi_slopes_are_the_papers_and_blooms(heads):
    assert alibi_slopes(heads).tolist() == REFERENCE["alibi_slopes"]["paper"][str(heads)]
    assert np.allclose(alibi_slopes(heads), REFERENCE["alibi_slopes"]["bloom"][str(heads)], rtol=1e-6, atol=0)


@st.composite
def rope_problems(draw, heads: int = 1):
    n, d_model, d_k = draw(st.integers(1, 5)), draw(st.integers(1, 4)), 2 * draw(st.integers(1, 3))
    x = draw(arrays(np.float64, (n, d_model), elements=finite))
    w_q, w_k = (draw(arrays(np.float64, (d_model, d_k * heads), elements=finite)) for _ in range(2))
    w_v = draw(arrays(np.float64, (d_model, heads), elements=finite))
    positions = draw(st.lists(st.integers(0, 50), min_size=n, max_size=n))
    return dict(x=x, w_q=w_q, w_k=w_k, w_v=w_v, heads=heads), positions, draw(st.sampled_from(["half", "adjacent"]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rope_problems(), st.integers(-20, 20), st.floats(2, 1e5))
def test_rope_scores_depend_only_on_the_distance_between_positions(case, shift, base):
    p, positions, pairs = case
    at = trace(Problem(**p, rope=Rope(base, pairs, tuple(positions))))
    shifted = trace(Problem(**p, rope=Rope(base, pairs, tuple(q + shift for q in positions))))
    assert np.allclose(at.heads[0].scores, shifted.heads[0].scores, rtol=1e-9, atol=1e-9)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rope_problems(), st.integers(0, 30))
def test_equal_positions_turn_q_and_k_alike_and_leave_the_scores(case, position):
    p, positions, pairs = case
    turned = trace(Problem(**p, rope=Rope(10000.0, pairs, tuple([position] * len(positions)))))
    plain = trace(Problem(**p))
    assert np.allclose(turned.heads[0].scores, plain.heads[0].scores, rtol=1e-9, atol=1e-9)
    at_zero = trace(Problem(**p, rope=Rope(10000.0, pairs, tuple([0] * len(positions)))))
    assert np.array_equal(at_zero.heads[0].q_rotated, plain.heads[0].q)  # position 0: no turn at all


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 4), st.integers(1, 4), st.data())
def test_multi_query_equals_repeating_k_and_v_and_kv_heads_equal_to_heads_is_multi_head(heads, n, data):
    d_model, d_k, d_v = 3, 2, 2
    x = data.draw(arrays(np.float64, (n, d_model), elements=finite))
    w_q = data.draw(arrays(np.float64, (d_model, heads * d_k), elements=finite))
    w_k = data.draw(arrays(np.float64, (d_model, d_k), elements=finite))
    w_v = data.draw(arrays(np.float64, (d_model, d_v), elements=finite))
    shared = trace(Problem(x=x, w_q=w_q, w_k=w_k, w_v=w_v, heads=heads, kv_heads=1))
    repeated = Problem(x=x, w_q=w_q, w_k=np.tile(w_k, heads), w_v=np.tile(w_v, heads), heads=heads)
    assert np.allclose(trace(repeated).output, shared.output, rtol=1e-12, atol=1e-12)  # one matmul or several
    assert np.array_equal(trace(Problem(x=x, w_q=w_q, w_k=np.tile(w_k, heads), w_v=np.tile(w_v, heads), heads=heads,
                                        kv_heads=heads)).output, trace(repeated).output)
    assert [h.kv_head for h in shared.heads] == ([0] * heads if heads > 1 else [None])


def test_a_query_head_reads_the_key_value_block_of_repeat_kv():
    rng = np.random.default_rng(1)
    x, w_q = rng.normal(size=(3, 4)), rng.normal(size=(4, 6 * 2))
    w_k, w_v = rng.normal(size=(4, 3 * 2)), rng.normal(size=(4, 3 * 2))
    t = trace(Problem(x=x, w_q=w_q, w_k=w_k, w_v=w_v, heads=6, kv_heads=3))
    assert [h.kv_head for h in t.heads] == [0, 0, 1, 1, 2, 2]
    assert np.array_equal(t.heads[3].k, x @ w_k[:, 2:4]) and np.array_equal(t.heads[5].v, x @ w_v[:, 4:6])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rope_problems(heads=2))
def test_a_cap_far_above_the_scores_is_no_cap_and_a_low_cap_bounds_them(case):
    p, _, _ = case
    free, capped = trace(Problem(**p)), trace(Problem(**p, softcap=1e12))
    for a, b in zip(free.heads, capped.heads):
        assert np.allclose(a.weights, b.weights, rtol=0, atol=1e-9)
    low = trace(Problem(**p, softcap=0.5))
    assert all(np.all(np.abs(h.scaled) <= 0.5) for h in low.heads)


def test_the_cap_comes_after_the_bias_and_masked_cells_stay_masked():
    x = np.array([[1.0, 0], [0, 1], [1, 1]])
    t = trace(Problem(x=x, alibi=True, softcap=0.8, mask="causal"))
    h = t.heads[0]
    slope = alibi_slopes(1)[0]
    expected = 0.8 * np.tanh((x @ x.T / math.sqrt(2) - slope * np.abs(np.subtract.outer(range(3), range(3)))) / 0.8)
    allowed = np.tril(np.ones((3, 3), dtype=bool))
    assert np.allclose(h.scaled[allowed], expected[allowed], rtol=0, atol=1e-15)
    assert np.all(h.scaled[~allowed] == -np.inf) and np.all(h.weights[~allowed] == 0)


def test_alibi_bias_is_minus_slope_times_distance_per_head():
    t = trace(Problem(x=np.eye(4), heads=2, alibi=True))
    for a, h in enumerate(t.heads):
        assert np.array_equal(h.bias, -alibi_slopes(2)[a] * np.abs(np.subtract.outer(range(4), range(4))))


def test_variants_with_one_query_give_that_row_of_the_full_trace():
    rng = np.random.default_rng(3)
    p = Problem(x=rng.normal(size=(5, 4)), w_q=rng.normal(size=(4, 8)), w_k=rng.normal(size=(4, 4)),
                w_v=rng.normal(size=(4, 4)), heads=4, kv_heads=2, rope=True, alibi=True, softcap=3.0, mask="causal")
    full = trace(p)
    for i in range(1, 6):
        one = trace(p, query=i)
        for a, b in zip(full.heads, one.heads):
            assert np.allclose(a.weights[i - 1], b.weights[0], rtol=0, atol=1e-15)
            assert np.allclose(a.q_rotated[i - 1], b.q_rotated[0], rtol=0, atol=1e-15)


def test_variants_with_carried_rounding_check_against_their_own_row_by_row_chain():
    p = Problem(x=[[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]], rope=True, alibi=True, softcap=2.0)
    t = trace(p, carry_rounding=2)
    assert t.self_check.ok
    for h in t.heads:
        for a in (h.q_rotated, h.k_rotated, h.bias, h.scaled[np.isfinite(h.scaled)]):
            assert np.array_equal(np.round(a, 2), a)


@pytest.mark.parametrize(("settings", "message"), [
    ({"heads": 4, "kv_heads": 3}, "kv_heads = 3 must be a whole number that divides heads = 4"),
    ({"heads": 2, "kv_heads": 2, "w_k": np.ones((2, 2))}, "w_k has 2 columns but w_q has 4"),
    ({"heads": 2, "kv_heads": 1, "w_k": np.ones((2, 4))}, "1 key/value block of d_k = 2 need 2"),
    ({"rope": True, "w_q": np.ones((2, 3)), "w_k": np.ones((2, 3))}, "d_k must be even"),
    ({"rope": {"positions": [0, 1]}}, "rope positions has 2 values but x has 3 rows"),
    ({"rope": {"pairs": "interleaved"}}, 'must be "half"'),
    ({"rope": {"base": 1}}, "must be a number above 1"),
    ({"rope": {"theta": 5}}, 'unknown key "theta"'),
    ({"rope": {"frequencies": [1.0, 0.5, 0.25]}}, "rope frequencies has 3 values but a head turns 2 pairs of dimensions"),
    ({"rope": {"frequencies": [0.0]}}, "rope frequencies must be positive numbers"),
    ({"rope": {"frequencies": ["fast"]}}, 'rope frequencies value 1 is "fast"; it must be a finite number, one per pair'),
    ({"rope": {"positions": [0, True, 2]}}, "rope positions value 2 is true; it must be a finite number, one per input"),
    ({"rope": {"positions": [0, np.True_, 2]}}, "rope positions value 2 is true"),
    ({"rope": {"positions": 3}}, "rope positions = 3 must be a list of numbers, one per input"),
    ({"softcap": True}, "softcap = true must be a positive number"),
    ({"softcap": 0}, "softcap = 0 must be a positive number"),
    ({"alibi": "yes"}, 'alibi = "yes" must be true or false'),
])
def test_a_bad_variant_setting_is_one_clear_error(settings, message):
    base = dict(x=np.ones((3, 2)), w_q=np.ones((2, 4)), w_k=np.ones((2, 4)), w_v=np.ones((2, 4)))
    with pytest.raises(AttntraceError) as e:
        Problem(**{**base, **settings})
    assert message in str(e.value)


def test_rope_in_cross_attention_needs_the_sources_positions():
    with pytest.raises(AttntraceError, match="source_positions"):
        Problem(x=np.ones((2, 2)), source=np.ones((3, 2)), rope=True)
    t = trace(Problem(x=np.ones((2, 2)), source=np.eye(3, 2), rope={"positions": [5, 6], "source_positions": [0, 1, 2]}))
    assert t.heads[0].k_rotated.shape == (3, 2)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([2, 4, 8, 64, 128]), st.floats(10, 1e6), st.floats(1.5, 64), st.floats(0.5, 2),
       st.floats(2.5, 8), st.floats(16, 10_000))
def test_llama3_keeps_fast_pairs_divides_slow_ones_and_blends_between(d, base, factor, low, high, original):
    plain = frequencies(d, base)
    turns = llama3_frequencies(d, base, factor, low, high, original)
    wavelength = 2 * np.pi / plain
    fast, slow = wavelength < original / high, wavelength > original / low
    assert np.array_equal(turns[fast], plain[fast]) and np.array_equal(turns[slow], plain[slow] / factor)
    middle = ~fast & ~slow
    assert np.all(turns[middle] >= plain[middle] / factor * (1 - 1e-12))
    assert np.all(turns[middle] <= plain[middle] * (1 + 1e-12))
    assert np.all(np.diff(turns) < 0)  # still slower pair by pair
    np.testing.assert_allclose(llama3_frequencies(d, base, 1.0, low, high, original), plain, rtol=1e-15)  # factor 1


def test_given_frequencies_turn_each_pair_by_position_times_its_own():
    x = np.random.default_rng(3).normal(size=(5, 4))
    turns = [0.9, 0.01]
    t = trace(Problem(x=x, rope={"frequencies": turns, "positions": [0, 1, 2, 3, 7]}))
    np.testing.assert_array_equal(t.key_angles, np.array([0, 1, 2, 3, 7.0])[:, None] * np.array(turns)[None, :])
    default = trace(Problem(x=x, rope={"frequencies": frequencies(4, 10000.0).tolist()}))
    np.testing.assert_array_equal(default.heads[0].weights, trace(Problem(x=x, rope=True)).heads[0].weights)
