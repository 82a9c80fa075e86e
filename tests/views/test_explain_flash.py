"""The online softmax written out line by line: every result written is the recurrence's value at the precision,
checked against a plain numpy loop of FlashAttention's recurrence (not the code that wrote the page)."""

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attntrace
from attntrace.core.flash import flash
from attntrace.views.explain_flash import explain_flash_steps
from attntrace.views.page import Note

RESULT = re.compile(r"^(?:head (\d+) · )?(m|ℓ|O\[(\d+)\]|output\[(\d+)\]) = .* = (-?\d+(?:\.\d+)?)$")


def _reference(s, v, block, sink=None):
    """the recurrence by hand: per block (and the sink) m, ℓ and O after it, then O / ℓ"""
    m, ell, o, states = -math.inf, 0.0, np.zeros(v.shape[1]), []
    for start in range(0, len(s), block):
        block_s, block_v = s[start:start + block], v[start:start + block]
        if np.all(block_s == -math.inf):
            states.append(None)
            continue
        m_new = max(m, float(np.max(block_s)))
        rescale = math.exp(m - m_new) if m > -math.inf else 0.0
        e = np.array([math.exp(x - m_new) if x > -math.inf else 0.0 for x in block_s])
        ell, o, m = ell * rescale + e.sum(), o * rescale + e @ block_v, m_new
        states.append((m, ell, o.copy()))
    if sink is not None:
        m_new = max(m, sink)
        rescale = math.exp(m - m_new) if m > -math.inf else 0.0
        ell, o, m = ell * rescale + math.exp(sink - m_new), o * rescale, m_new
        states.append((m, ell, o.copy()))
    return states, (o / ell if ell > 0 else np.zeros_like(o))


def _lines(steps):
    return [[item.text for item in step.items if isinstance(item, Note)] for step in steps]


def _check(f, precision, sinks=None):
    """every m, ℓ, O and output line's result equals the reference at the precision"""
    t = f.trace
    steps = _lines(explain_flash_steps(f, precision))
    blocks = steps[1:-1]
    half = 0.5 * 10 ** -precision + 1e-9
    checked = 0
    for a, h in enumerate(t.heads):
        states, output = _reference(h.scaled[0], h.v, f.block, None if sinks is None else sinks[a])
        assert len(blocks) == len(states)
        for lines, state in zip([*blocks, steps[-1]], [*states, None]):
            for line in lines:
                hit = RESULT.match(line)
                if not hit or (len(t.heads) > 1 and int(hit[1]) != a + 1):
                    continue
                value = float(hit[5])
                if hit[2].startswith("output"):
                    expected = output[int(hit[4]) - 1]
                else:
                    assert state is not None, line
                    expected = {"m": state[0], "ℓ": state[1]}.get(hit[2])
                    if expected is None:
                        expected = state[2][int(hit[3]) - 1]
                assert abs(value - expected) <= half, (line, expected)
                checked += 1
    assert checked > 0
    return steps


def test_the_worked_example_writes_every_line_of_the_recurrence():
    f = attntrace.flash(attntrace.trace().problem, block=2, query=2)
    steps = _check(f, 4)
    assert "m = max(m_old, block max) = max(-inf, 16) = 16" in steps[1]
    assert "rescale = e^(m_old - m_new) = e^(-inf - 16) = 0" in steps[1]
    assert "ℓ = ℓ_old · rescale + Σ e^(s - m) = 1.0000 · 1 + (e^(12 - 16)) = 1.0183" in steps[2]
    assert "output[2] = O[2] / ℓ = 8.1099 / 1.0183 = 7.9640" in steps[-1]


def test_two_heads_a_wholly_masked_block_and_a_sink_are_written():
    p = attntrace.trace(problem=None, x=[[1, 0], [0, 1], [1, 1], [2, 0]], heads=2, w_q=np.eye(2), w_k=np.eye(2),
                        w_v=np.eye(2), mask="causal").problem
    t = attntrace.trace(p, query=2)
    f = flash(t, 2, sinks=(0.5, -1.0))
    steps = _check(f, 3, sinks=(0.5, -1.0))
    assert any("head 2 · every key of the block is masked" in line for line in steps[2])
    assert any(line.startswith("head 1 · ℓ = ℓ_old · rescale + e^(sink - m)") for line in steps[-2])


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5), st.integers(0, 6), st.integers(1, 4), st.integers(0, 2 ** 16))
def test_every_result_is_the_recurrence_rounded(block, precision, row, seed):
    rng = np.random.default_rng(seed)
    x, w = rng.normal(size=(4, 3)).round(2), rng.normal(size=(3, 3)).round(2)
    t = attntrace.trace(query=row, x=x, w_q=w, w_k=w.T, w_v=w, mask="causal")
    _check(flash(t, block), precision)


@pytest.mark.parametrize("fmt", ["plain", "markdown", "table"])
def test_explain_is_shown_in_every_words_format(attntrace_cli, fmt):
    r = attntrace_cli("flash", "--input", "2", "--explain", "--format", fmt)
    assert r.code == 0 and r.err == "", r.err
    assert "e^(-inf - 16) = 0" in r.out


@pytest.fixture
def attntrace_cli(attntrace):
    return attntrace
