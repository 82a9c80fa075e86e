"""The online softmax: equal to step 7 at every block size on every kind of problem, and its m, ℓ and O after each
block equal to an independent loop of FlashAttention-2's recurrence (tests/fixtures/make_flash_fixtures.py)."""

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attntrace.core.engine import trace
from attntrace.core.flash import blocks, default_block, flash, online_softmax
from attntrace.core.generate import random_problem
from attntrace.core.masks import Causal, Padding, Window
from attntrace.errors import AttntraceError
from attntrace.files.problemfile import from_dict

REFERENCE = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "flash_reference.json").read_text())


@st.composite
def problems(draw):
    """small problems with any mix of the variants: masks (a fully masked row among them), heads, kv_heads, rope,
    alibi, softcap, cross-attention, W_O"""
    n = draw(st.integers(1, 6))
    heads = draw(st.integers(1, 3))
    kv_heads = draw(st.sampled_from([k for k in range(1, heads + 1) if heads % k == 0]))
    cross = draw(st.booleans())
    rope = not cross and draw(st.booleans())
    p = random_problem(n=n, d_model=draw(st.integers(1, 4)), heads=heads, kv_heads=kv_heads, rope=rope,
                       alibi=draw(st.booleans()), softcap=draw(st.sampled_from([None, 0.5, 3.0])),
                       init=draw(st.sampled_from(["integers", "normal"])), seed=draw(st.integers(0, 2**16)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    changes: dict = {}
    m = n
    if cross:
        m = draw(st.integers(1, 7))
        changes["source"] = rng.integers(-3, 4, (m, p.x.shape[1])).astype(float)
    masks = []
    if not cross and draw(st.booleans()):
        masks.append(Causal())
    if draw(st.booleans()):
        masks.append(Window(draw(st.integers(0, 3))))
    if draw(st.booleans()):
        masks.append(Padding(tuple(draw(st.lists(st.booleans(), min_size=m, max_size=m)))))
    changes["mask"] = tuple(masks)
    if draw(st.booleans()):
        changes["w_o"] = rng.integers(-2, 3, (heads * p.dims.d_v, draw(st.integers(1, 3)))).astype(float)
    return replace(p, **changes)


@settings(max_examples=150, deadline=None)
@given(problems(), st.booleans(), st.data())
def test_every_block_size_gives_step_7s_output(problem, one_query, data):
    query = data.draw(st.integers(1, len(problem.x))) if one_query else None
    t = trace(problem, query=query)
    m = t.dims.m
    for block in range(1, m + 2):
        f = flash(t, block)
        assert f.max_diff <= f.tolerance, (block, f.max_diff)
        for h, traced in zip(f.heads, t.heads):
            assert np.abs(h.output - traced.output).max() <= f.tolerance
            assert h.m.shape[1] == math.ceil(m / block)
            assert np.all(h.ell[:, -1] >= 0) and not np.isnan(h.o).any() and not np.isnan(h.m).any()
        assert np.abs(f.output - t.output).max() <= f.tolerance


def test_a_fully_masked_row_skips_every_block_and_outputs_0():
    t = trace(from_dict(REFERENCE["padded"]["problem"], "padded"))
    f = flash(t, 2)
    h = f.heads[0]
    assert h.skipped[0].all() and np.all(h.m[0] == -np.inf) and np.all(h.ell[0] == 0) and np.all(h.output[0] == 0)
    assert np.all(h.rescale[0] == 1)  # a skipped block leaves m, ℓ and O as they were
    assert h.skipped[:, 0].all()  # keys 1-2 are padding: the first block is masked for every query
    assert f.ok


@pytest.mark.parametrize("case", list(REFERENCE))
def test_the_recurrence_matches_the_plain_loop_block_by_block(case):
    ref = REFERENCE[case]
    t = trace(from_dict(dict(ref["problem"]), case))
    for a, head in enumerate(ref["heads"]):
        for size, rows in head["by_block"].items():
            h = flash(t, int(size), sinks=None if ref["sink"] is None else tuple(ref["sink"])).heads[a]
            for j, row in enumerate(rows):
                assert len(row["blocks"]) == h.m.shape[1]
                for b, step in enumerate(row["blocks"]):
                    assert step["keys"] == list(range(f_start(t.dims.m, int(size), b) + 1,
                                                      f_start(t.dims.m, int(size), b) + len(step["keys"]) + 1))
                    assert bool(h.skipped[j, b]) == step["skipped"]
                    if step["m"] is None:
                        assert h.m[j, b] == -np.inf
                    else:
                        assert h.m[j, b] == pytest.approx(step["m"], rel=1e-12)
                    assert h.ell[j, b] == pytest.approx(step["l"], rel=1e-12, abs=1e-300)
                    assert np.allclose(h.o[j, b], step["o"], rtol=1e-12, atol=1e-12)
                    if not step["skipped"]:
                        assert h.rescale[j, b] == pytest.approx(step["rescale"], rel=1e-12, abs=1e-300)
                assert h.final_ell[j] == pytest.approx(row["l"], rel=1e-12, abs=1e-300)
                assert np.allclose(h.output[j], row["output"], rtol=1e-12, atol=1e-12)


def f_start(m: int, block: int, b: int) -> int:
    return blocks(m, block)[b][0]


@pytest.mark.parametrize("case", [c for c in REFERENCE if any(h["torch"] for h in REFERENCE[c]["heads"])])
def test_the_output_matches_torchs_scaled_dot_product_attention(case):
    ref = REFERENCE[case]
    t = trace(from_dict(dict(ref["problem"]), case))
    for a, head in enumerate(ref["heads"]):
        for block in range(1, t.dims.m + 1):
            h = flash(t, block).heads[a]
            for j, row in enumerate(head["torch"]):
                expected = np.zeros(h.output.shape[1]) if row is None else np.array(row)
                assert np.allclose(h.output[j], expected, rtol=1e-12, atol=1e-12)


def test_a_sink_joins_the_denominator_with_no_value():
    scores, v = np.array([[1.0, 2.0, 3.0]]), np.eye(3)
    for block in (1, 2, 3):
        r = online_softmax(scores, v, block, sink=0.5)
        assert np.allclose(r.output[0], [0.0854, 0.2321, 0.6308], atol=5e-5)
        assert r.output.sum() < 1
        assert r.sink_m[0] == 3.0 and r.sink_sum[0] == pytest.approx(math.exp(0.5 - 3.0))


def test_a_sink_of_minus_infinity_is_no_sink():
    scores, v = np.array([[1.0, -np.inf, 3.0], [-np.inf, -np.inf, -np.inf]]), np.arange(6.0).reshape(3, 2)
    with_sink, without = online_softmax(scores, v, 2, sink=-np.inf), online_softmax(scores, v, 2)
    assert np.array_equal(with_sink.output, without.output) and np.array_equal(with_sink.final_ell, without.final_ell)


def test_a_sink_larger_than_every_score_rescales_l_and_o():
    r = online_softmax(np.array([[0.0, 1.0]]), np.array([[1.0], [2.0]]), 1, sink=5.0)
    assert r.sink_m[0] == 5.0 and r.sink_rescale[0] == pytest.approx(math.exp(1.0 - 5.0))
    expected = (math.exp(0 - 5) * 1 + math.exp(1 - 5) * 2) / (math.exp(-5) + math.exp(-4) + 1)
    assert r.output[0, 0] == pytest.approx(expected, rel=1e-14)


def test_the_default_block_gives_two_blocks_and_a_large_one_gives_one():
    assert [default_block(m) for m in (1, 2, 3, 4, 7)] == [1, 1, 2, 2, 4]
    assert blocks(5, 2) == ((0, 2), (2, 4), (4, 5)) and blocks(3, 10) == ((0, 3),)
    t = trace(from_dict(REFERENCE["causal"]["problem"], "causal"))
    assert flash(t).block == 2 and len(flash(t).bounds) == 2


def test_a_block_below_1_is_refused():
    t = trace(from_dict(REFERENCE["causal"]["problem"], "causal"))
    with pytest.raises(AttntraceError) as e:
        flash(t, 0)
    assert e.value.exit_code == 2 and str(e.value) == "block=0 must be a whole number of at least 1"


def test_the_problems_sink_is_read_one_per_head():
    t = trace(from_dict(REFERENCE["two_heads"]["problem"], "two_heads"))
    with pytest.raises(AttntraceError, match="one per head"):
        flash(t, 2, sinks=(1.0,))
    assert flash(t, 2, sinks=(0.0, 1.0)).heads[1].sink == 1.0
