"""Decoding with a KV cache: every step equals the same row of attention over the whole sequence."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attntrace.core.attention import sunk
from attntrace.core.decode import allowed, decode, kept, slot
from attntrace.core.engine import trace
from attntrace.core.masks import Causal, Window
from attntrace.core.problem import Problem
from attntrace.errors import AttntraceError, OutOfRange, Setting
from attntrace.files.problemfile import from_dict, load
from tests.conftest import SAMPLES
from tests.strategies import matrix

settings.register_profile("decode", max_examples=40, deadline=None)
FIXTURE = Path(__file__).parent.parent / "fixtures" / "decode_reference.json"


@st.composite
def decoder_problems(draw, max_n: int = 7) -> Problem:
    """a self-attention problem with any of heads/kv_heads, rope, alibi, softcap, W_O and biases"""
    kv_heads = draw(st.integers(1, 2))
    heads = kv_heads * draw(st.integers(1, 2))
    n, d_model = draw(st.integers(1, max_n)), draw(st.integers(1, 4))
    d_k, d_v = 2 * draw(st.integers(1, 2)), draw(st.integers(1, 3))
    w_o = draw(st.none() | matrix(heads * d_v, 2))
    b_q = draw(st.none() | matrix(1, heads * d_k))
    return Problem(x=draw(matrix(n, d_model)), w_q=draw(matrix(d_model, heads * d_k)) / 4,
                   w_k=draw(matrix(d_model, kv_heads * d_k)) / 4, w_v=draw(matrix(d_model, kv_heads * d_v)),
                   b_q=b_q, heads=heads, kv_heads=kv_heads, w_o=w_o, rope=draw(st.booleans()) or None,
                   alibi=draw(st.booleans()), softcap=draw(st.none() | st.floats(0.5, 20)),
                   scale=draw(st.sampled_from([True, False, 2.5])))


def _rows(problem: Problem, masks: tuple) -> np.ndarray:
    from dataclasses import replace

    return trace(replace(problem, mask=masks)).output


@settings(settings.get_profile("decode"))
@given(decoder_problems())
def test_each_step_is_the_row_of_causal_attention(p):
    d = decode(p)
    np.testing.assert_allclose(d.output, _rows(p, (Causal(),)), rtol=0, atol=1e-12 * max(1.0, np.abs(d.output).max()))
    assert d.max_diff <= 1e-12 * max(1.0, np.abs(d.output).max())
    for head in d.heads:
        for step in head.steps:
            assert step.cache == tuple(range(1, step.t + 1))  # the new token is in its own cache
            assert math.isclose(step.weights.sum(), 1.0, rel_tol=1e-12)


@settings(settings.get_profile("decode"))
@given(decoder_problems(), st.integers(1, 8))
def test_a_window_is_causal_attention_with_a_window_mask(p, window):
    d = decode(p, window=window)
    expected = _rows(p, (Causal(), Window(window - 1)))  # |i - j| <= W - 1 and j <= i: keys t - W + 1 … t
    np.testing.assert_allclose(d.output, expected, rtol=0, atol=1e-12 * max(1.0, np.abs(expected).max()))
    for step in d.heads[0].steps:
        assert sorted(step.cache) == list(range(max(1, step.t - window + 1), step.t + 1))
        assert len(step.cache) <= window


@settings(settings.get_profile("decode"))
@given(decoder_problems())
def test_a_window_as_long_as_the_sequence_is_no_window(p):
    n = p.dims.n
    whole, windowed = decode(p), decode(p, window=n + 1)
    np.testing.assert_array_equal(whole.output, windowed.output)
    assert [s.cache for s in whole.heads[0].steps] == [s.cache for s in windowed.heads[0].steps]


@settings(settings.get_profile("decode"))
@given(decoder_problems(max_n=8).filter(lambda p: p.dims.n >= 2), st.data())
def test_sinks_with_a_window_attend_to_that_key_set(p, data):
    n = p.dims.n
    sinks = data.draw(st.integers(1, n - 1))
    window = data.draw(st.integers(1, n))
    d = decode(p, window=window, sinks=sinks)
    direct = []  # each row attended over exactly 1 … S and t − W + 1 … t, one query at a time, by trace
    from dataclasses import replace

    from attntrace.core.masks import Padding

    for t in range(1, n + 1):
        keep = kept(t, window, sinks)
        part = replace(p, x=p.x[:t], mask=(Padding(tuple(j + 1 not in keep for j in range(t))),),
                       rope=p.rope)
        direct.append(trace(part, query=t).output[0])
    np.testing.assert_allclose(d.output, np.array(direct), rtol=0, atol=1e-12 * max(1.0, np.abs(d.output).max()))
    for step in d.heads[0].steps:
        assert sorted(step.cache) == kept(step.t, window, sinks)
        assert len(step.cache) <= window + sinks


@settings(settings.get_profile("decode"))
@given(decoder_problems(), st.floats(-5, 5))
def test_a_sink_takes_weight_and_gives_no_value(p, logit):
    d = decode(p, sink=logit)
    for head in d.heads:
        for step in head.steps:
            assert step.sink_weight is not None and 0 <= step.sink_weight <= 1
            assert math.isclose(step.weights.sum() + step.sink_weight, 1.0, rel_tol=1e-12)
    assert d.max_diff <= 1e-12 * max(1.0, np.abs(d.output).max())


@settings(settings.get_profile("decode"))
@given(decoder_problems())
def test_a_sink_of_minus_infinity_or_far_below_is_no_sink(p):
    plain = decode(p)
    np.testing.assert_array_equal(decode(p, sink=-math.inf).output, plain.output)
    assert decode(p, sink=-math.inf).heads[0].steps[0].sink_weight is None
    far = decode(p, sink=-1e4)
    np.testing.assert_allclose(far.output, plain.output, rtol=0, atol=1e-12 * max(1.0, np.abs(plain.output).max()))


def test_the_sink_example():
    weights, rest = sunk(np.array([1.0, 2.0, 3.0]), None, 0.5)
    assert [round(w, 4) for w in weights] == [0.0854, 0.2321, 0.6308]
    assert math.isclose(float(rest) + weights.sum(), 1.0)


def test_the_rolling_buffer_fills_in_order_then_overwrites_the_oldest():
    assert [slot(t, 3, 0) for t in range(1, 8)] == [0, 1, 2, 0, 1, 2, 0]
    assert [slot(t, 2, 2) for t in range(1, 8)] == [0, 1, 2, 3, 2, 3, 2]
    d = decode(load(str(SAMPLES / "causal.json")), window=2, sinks=1)
    assert [(s.cache, s.evicted) for s in d.heads[0].steps] == [((1,), None), ((1, 2), None), ((1, 2, 3), None),
                                                               ((1, 4, 3), 2)]
    assert allowed(4, 2, 1).tolist() == [[True, False, False, False], [True, True, False, False],
                                        [True, True, True, False], [True, False, True, True]]


def test_costs_count_the_cache_and_the_multiply_adds():
    d = decode(load(str(SAMPLES / "causal.json")))  # d_model 4, one head, d_k = d_v = 3
    last = d.costs[-1]
    assert (last.numbers, last.float16, last.float32) == (4 * 6, 48, 96)
    assert last.with_cache == 4 * (3 + 6) + 4 * 6  # q, k, v of the new token, then 4 scores and 4 values
    assert last.recomputed == 4 * (3 + 4 * 6) + 4 * 6  # K and V of all 4 tokens again


def test_one_position_is_decoded_up_to_it():
    p = load(str(SAMPLES / "causal.json"))
    one = decode(p, position=3)
    assert one.steps == (3,) and [s.t for s in one.heads[0].steps] == [3]
    np.testing.assert_array_equal(one.output[0], decode(p).output[2])


@pytest.mark.parametrize("kw, python, words", [
    ({"window": 0}, "window=0 must be", "--window 0 must be a whole number of at least 1"),
    ({"sinks": 1}, "sinks keeps the first tokens beside a window: add window=W",
     "--sinks keeps the first tokens beside a window: add --window W"),
    ({"window": 2, "sinks": 4}, "sinks=4 would keep", "--sinks 4 would keep every one of the 4 tokens; give fewer than 4"),
    ({"window": 2, "sinks": -1}, "sinks=-1 must be", "--sinks -1 must be a whole number of at least 0"),
])
def test_bad_options_are_refused_as_usage_in_the_callers_words(kw, python, words):
    """as Python arguments (window=0) where the library is called, as options (--window 0) on the command line"""
    from attntrace.cli.guard import OPTIONS

    with pytest.raises(Setting, match=python) as e:
        decode(load(str(SAMPLES / "causal.json")), **kw)
    assert e.value.exit_code == 2 and str(e.value).startswith(python)
    assert e.value.worded(OPTIONS) == words


def test_what_decoding_cannot_do_is_said():
    with pytest.raises(AttntraceError, match="needs self-attention"):
        decode(load(str(SAMPLES / "cross.json")))
    with pytest.raises(AttntraceError, match='remove mask "window"'):
        decode(Problem(x=np.eye(3), mask=(Window(1),)))
    with pytest.raises(OutOfRange):
        decode(load(str(SAMPLES / "causal.json")), position=5)
    with pytest.raises(AttntraceError, match="one per head"):
        decode(load(str(SAMPLES / "two_heads.json")), sink=[1.0])


@pytest.mark.parametrize("case", json.loads(FIXTURE.read_text())["cases"], ids=lambda c: f"n{len(c['problem']['x'])}")
def test_matches_the_independent_loop(case):
    d = decode(from_dict(case["problem"], "fixture"), window=case["window"], sinks=case["sinks"], sink=case["sink"])
    np.testing.assert_allclose(d.output, case["output"], rtol=0, atol=1e-12)
    for head, expected in zip(d.heads, case["heads"]):
        for step, want in zip(head.steps, expected["steps"], strict=True):
            assert list(step.cache) == want["cache"]
            np.testing.assert_allclose(step.weights, want["weights"], rtol=0, atol=1e-12)
            np.testing.assert_allclose(step.output, want["output"], rtol=0, atol=1e-12)
            if "sink_weight" in want:
                assert step.sink_weight == pytest.approx(want["sink_weight"], abs=1e-12)
