"""The engine against the seed article's worked example and its documented behaviour."""

from dataclasses import replace

import numpy as np
import pytest

from attntrace.api import Trace
from attntrace.core.arithmetic import round_half_up
from attntrace.core.attention import softmax
from attntrace.core.engine import trace
from attntrace.core.masks import Padding, Window
from attntrace.core.problem import Problem, example
from attntrace.errors import AttntraceError
from attntrace.views.walkthrough import warnings

E2 = np.exp(2.0)


def test_worked_example_q_k_v_and_scores():
    h = trace(example()).heads[0]
    assert h.q.tolist() == [[1, 0, 2], [2, 2, 2], [2, 1, 3]]
    assert h.k.tolist() == [[0, 1, 1], [4, 4, 0], [2, 3, 1]]
    assert h.v.tolist() == [[1, 2, 3], [2, 8, 0], [2, 6, 3]]
    assert h.scores.tolist() == [[2, 4, 4], [4, 16, 12], [4, 12, 10]]


def test_worked_example_softmax_and_output_in_closed_form():
    t = trace(example())
    h = t.heads[0]
    np.testing.assert_allclose(h.weights[0], np.array([1, E2, E2]) / (1 + 2 * E2), rtol=1e-15)
    expected = np.array([1 + 4 * E2, 2 + 14 * E2, 3 * (1 + E2)]) / (1 + 2 * E2)
    np.testing.assert_allclose(t.output[0], expected, rtol=1e-15)
    np.testing.assert_allclose(t.output[0], [1.93662, 6.68311, 1.59507], atol=5e-6)
    assert t.divisor == 1.0 and t.self_check.ok


def test_weighted_values_sum_to_the_output():
    t = trace(example())
    h = t.heads[0]
    for i in range(3):
        np.testing.assert_allclose(t.weighted(0, i), h.weights[i][:, None] * h.v)
        np.testing.assert_allclose(t.weighted(0, i).sum(axis=0), h.output[i])


def test_carried_weighted_values_are_rounded_and_sum_to_the_rounded_output():
    t = trace(example(), carry_rounding=1)
    assert t.weighted(0, 0).tolist() == [[0.1, 0.2, 0.3], [1.0, 4.0, 0.0], [1.0, 3.0, 1.5]]
    assert round_half_up(t.weighted(0, 0).sum(axis=0), 1).tolist() == t.output[0].tolist()


def test_weighted_values_of_a_row_the_trace_does_not_hold_are_refused():
    with pytest.raises(ValueError, match="row 0 is not traced"):
        trace(example(), query=2).weighted(0, 0)


def test_carried_rounding_at_one_decimal_reproduces_a_hand_calculation():
    t = trace(example(), carry_rounding=1)
    assert t.heads[0].weights[0].tolist() == [0.1, 0.5, 0.5]
    assert t.output[0].tolist() == [2.1, 7.2, 1.8]
    assert not np.allclose(t.output[0], [2.0, 7.0, 1.5])  # the article's ad-hoc [0.0, 0.5, 0.5]


def test_rounding_is_half_away_from_zero_like_a_student():
    assert round_half_up(np.array([0.25, -0.25, 0.285, 2.5, 0.04]), 1).tolist() == [0.3, -0.3, 0.3, 2.5, 0.0]
    assert round_half_up(np.array([0.285]), 2).tolist() == [0.29]


@pytest.mark.parametrize("scale, divisor", [(True, np.sqrt(3)), (False, 1.0), (8.0, 8.0)])
def test_scale_divides_the_scores(scale, divisor):
    t = trace(replace(example(), scale=scale))
    h = t.heads[0]
    assert t.divisor == pytest.approx(divisor)
    np.testing.assert_allclose(h.scaled, h.scores / divisor)
    np.testing.assert_allclose(h.weights, softmax(h.scores / divisor))


def test_missing_projections_are_the_identity():
    x = np.array([[1.0, 2.0], [3.0, -1.0]])
    h = trace(Problem(x=x)).heads[0]
    assert np.array_equal(h.q, x) and np.array_equal(h.k, x) and np.array_equal(h.v, x)


def test_biases_are_added_after_the_product():
    p = replace(example(), b_q=np.array([1.0, 0, 0]), b_k=np.array([0, 1.0, 0]), b_v=np.array([0, 0, 1.0]))
    h = trace(p).heads[0]
    assert h.q[0].tolist() == [2, 0, 2] and h.k[0].tolist() == [0, 2, 1] and h.v[0].tolist() == [1, 2, 4]


def test_causal_mask_hides_later_keys_with_zero_weight_and_null_scaled():
    t = trace(replace(example(), mask=("causal",)))
    h = t.heads[0]
    assert h.weights[0].tolist() == [1.0, 0.0, 0.0]
    assert np.isneginf(h.scaled[0, 1:]).all() and np.isfinite(h.scaled[2]).all()


def test_window_mask_keeps_keys_within_the_window():
    t = trace(Problem(x=np.eye(5), mask=Window(1)))
    assert (t.heads[0].weights > 0).sum(axis=1).tolist() == [2, 3, 3, 3, 2]


def test_a_fully_masked_query_gets_zero_weights_and_output_and_a_warning():
    p = replace(example(), mask=(Padding((True, True, True)),))
    t = trace(p)
    assert not np.isnan(t.output).any()
    assert np.all(t.output == 0) and np.all(t.heads[0].weights == 0)
    assert t.fully_masked == (0, 1, 2)
    said = warnings(t)
    assert len(said) == 3 and "every key is masked" in said[0]


def test_the_facts_behind_a_warning_are_data_and_the_words_come_from_the_view():
    t = trace(replace(example(), mask=(Padding((False, True, True)),)), query=3)
    assert trace(example()).fully_masked == () and t.fully_masked == ()
    t = trace(Problem(x=np.eye(3), mask=Padding((True, True, True))), query=2)
    assert t.fully_masked == (1,)
    assert warnings(t) == ["input 2 (x2): every key is masked, so its weights are all 0 and its output is 0"]


def test_huge_scores_stay_finite():
    x = np.array([[1.0], [-1.0]])
    t = trace(Problem(x=x, w_q=np.array([[100.0]]), w_k=np.array([[100.0]]), scale=False))
    assert np.abs(t.heads[0].scores).max() == pytest.approx(1e4)
    assert np.isfinite(t.output).all() and np.isfinite(t.heads[0].weights).all()


def test_cross_attention_takes_keys_and_values_from_the_source():
    src = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]])
    p = Problem(x=np.array([[1.0, 1.0]]), source=src, w_q=np.eye(2), w_k=np.ones((3, 2)), w_v=np.eye(3))
    t = trace(p)
    assert t.dims.m == 2 and t.heads[0].k.shape == (2, 2) and t.output.shape == (1, 3)


def test_causal_with_a_source_is_an_error():
    with pytest.raises(AttntraceError, match="self-attention only"):
        Problem(x=np.ones((2, 2)), source=np.ones((3, 2)), mask=("causal",))


def test_heads_split_columns_and_w_o_joins_them():
    p = replace(example(), w_q=np.ones((4, 4)), w_k=np.ones((4, 4)), w_v=np.arange(16.0).reshape(4, 4), heads=2,
                w_o=np.eye(4) * 2, b_o=np.ones(4))
    t = trace(p)
    assert [h.q.shape for h in t.heads] == [(3, 2), (3, 2)]
    np.testing.assert_allclose(t.output, t.concat * 2 + 1)


def test_single_query_holds_that_row_only():
    t = trace(example(), query=2)
    assert t.rows == (1,) and t.heads[0].scores.tolist() == [[4, 16, 12]]
    np.testing.assert_array_equal(t.weighted(0, 1), trace(example()).weighted(0, 1))


@pytest.mark.parametrize("query", [0, 4, -1])
def test_single_query_out_of_range(query):
    with pytest.raises(AttntraceError, match="inputs 1 to 3"):
        trace(example(), query=query)


def test_a_large_problem_checks_four_rows_and_still_holds_every_rows_values():
    problem = Problem(x=np.arange(40.0).reshape(20, 2) / 40)
    t = trace(problem)
    assert t.self_check.rows == (0, 1, 2, 19)
    h = t.heads[0]
    np.testing.assert_array_equal(t.weighted(0, 10), h.weights[10][:, None] * h.v)


def test_intermediates_are_float64():
    h = trace(example()).heads[0]
    assert {a.dtype for a in (h.q, h.k, h.v, h.scores, h.weights, h.output)} == {np.dtype("float64")}


def test_step_8_recomputes_every_row_of_a_small_problem_on_its_own():
    assert trace(example()).self_check.rows == (0, 1, 2)
    assert trace(example(), query=3).self_check.rows == (2,)


def test_checked_rows_are_every_row_up_to_16_then_the_first_three_and_the_last():
    from attntrace.core.engine import checked_rows

    assert checked_rows(16) == list(range(16))
    assert checked_rows(17) == [0, 1, 2, 16]


def test_the_check_fails_when_the_row_by_row_result_disagrees(monkeypatch):
    from dataclasses import replace

    from attntrace.core import engine
    from attntrace.views.walkthrough import run_steps

    real = engine.heads

    def rows_alone_off(problem, d, rows, *args, **kwargs):  # step 8's rows, each recomputed alone, moved by 1e-3
        made = real(problem, d, rows, *args, **kwargs)
        if len(rows) > 1:
            return made
        return [replace(h, attended=replace(h.attended, output=h.attended.output + 1e-3)) for h in made]

    monkeypatch.setattr(engine, "heads", rows_alone_off)
    t = trace(example())
    assert not t.self_check.ok and t.self_check.max_abs_diff == pytest.approx(1e-3)
    assert "check FAILED" in run_steps(t)[-1].items[-1].text


def _arrays(t):
    heads = [a for h in t.heads for a in vars(h).values() if isinstance(a, np.ndarray)]
    return [*heads, t.concat, t.output, *([] if t.allowed is None else [t.allowed])]


@pytest.mark.parametrize("problem", [
    example(),
    Problem(x=np.eye(3), mask=("causal",)),
    replace(example(), w_q=np.ones((4, 4)), w_k=np.ones((4, 4)), w_v=np.eye(4), heads=2, w_o=np.eye(4), b_o=np.ones(4)),
])
@pytest.mark.parametrize("decimals", [None, 2])
def test_every_array_of_a_trace_is_read_only(problem, decimals):
    t = trace(problem, carry_rounding=decimals)
    with pytest.raises(ValueError, match="read-only"):
        t.output[0, 0] = 99
    assert not any(a.flags.writeable for a in _arrays(t))


def test_the_problems_own_arrays_stay_writable_and_apart_from_the_trace():
    p = example()
    p_identity = Problem(x=np.eye(3))
    t, t_identity = trace(p), trace(p_identity)
    assert all(a.flags.writeable for a in (p.x, p.w_q, p.w_k, p.w_v, p_identity.x))
    p.w_q[0, 0] = 99.0
    p_identity.x[0, 0] = 99.0
    assert t.heads[0].w_q[0, 0] == 1.0 and t_identity.heads[0].k[0, 0] == 1.0 and t_identity.heads[0].q[0, 0] == 1.0


def test_to_dict_is_the_documented_json_form():
    from attntrace.render.jsonform import trace_to_dict

    t = trace(example(), query=2)
    assert Trace.of(t).to_dict() == trace_to_dict(t)
