"""Carried rounding is a hand calculation done exactly: the decimals a student reads, multiplied, added and divided
exactly, then rounded half away from zero, as on paper."""

from __future__ import annotations

import json
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attntrace.core.arithmetic import carried_affine, carried_product, carried_quotient, carried_sum, round_half_up
from attntrace.core.engine import trace
from attntrace.core.problem import Problem, example


def on_paper(value: Decimal, places: int) -> float:
    return float(value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def test_one_and_a_half_times_fifteen_hundredths_is_0_23_as_on_paper():
    assert 1.5 * 0.15 == 0.22499999999999998  # what float64 makes of it
    t = trace(Problem(x=[[1.5]], w_q=[[0.15]], w_k=[[1.0]], w_v=[[0.15]]), carry_rounding=2)
    assert t.heads[0].q.tolist() == [[0.23]] and t.heads[0].v.tolist() == [[0.23]]
    assert carried_product(np.array([1.5, -1.5]), np.array([0.15, 0.15]), 2).tolist() == [0.23, -0.23]


def test_a_number_just_below_a_half_rounds_down_as_on_paper():
    assert round_half_up(np.array([0.224999999999, -0.224999999999]), 2).tolist() == [0.22, -0.22]
    t = trace(Problem(x=[[0.224999999999]]), carry_rounding=2)
    assert t.heads[0].q.tolist() == [[0.22]]


@pytest.mark.parametrize("value, places, rounded", [
    (0.285, 2, 0.29), (-0.125, 2, -0.13), (0.125, 2, 0.13), (2.675, 2, 2.68), (1.005, 2, 1.01), (0.045, 2, 0.05),
    (0.25, 1, 0.3), (-0.25, 1, -0.3), (2.5, 0, 3.0), (-2.5, 0, -3.0), (0.04, 1, 0.0), (0.5, 0, 1.0), (1e-5, 4, 0.0),
    (123456.785, 2, 123456.79), (0.1 + 0.2, 2, 0.3),
])
def test_round_half_up_rounds_the_decimal_a_student_reads(value, places, rounded):
    assert round_half_up(np.array([value]), places).tolist() == [rounded]
    assert round_half_up(np.array(value), places).shape == ()


def test_a_negative_number_rounding_to_zero_stays_a_zero():
    assert round_half_up(np.array([-0.004]), 2).tolist() == [0.0]


def test_carried_dot_products_and_quotients_are_exact():
    # 0.15·1.5 + 0.25·0.1 = 0.25 exactly: at 1 decimal, 0.3 (float64 alone gives 0.24999999999999997 -> 0.2)
    assert carried_affine(np.array([[0.15, 0.25]]), np.array([[1.5], [0.1]]), None, 1).tolist() == [[0.3]]
    assert carried_affine(np.array([[0.1, 0.2]]), None, np.array([0.025, -0.025]), 2).tolist() == [[0.13, 0.18]]
    assert carried_quotient(np.array([0.45, -0.45, 1.0]), 0.2, 0).tolist() == [2.0, -2.0, 5.0]  # 2.25, -2.25, 5
    assert carried_quotient(np.array([0.7]), 0.2, 2).tolist() == [3.5]
    assert carried_sum(np.array([[0.1, 0.2, 0.15]]), 1, 1).tolist() == [0.5]  # 0.45 -> 0.5


def test_the_worked_example_still_carries_as_by_hand():
    t = trace(example(), carry_rounding=1)
    assert t.heads[0].weights[0].tolist() == [0.1, 0.5, 0.5]
    assert t.output[0].tolist() == [2.1, 7.2, 1.8]


def test_the_unrounded_trace_is_plain_float64():
    t = trace(Problem(x=[[1.5]], w_q=[[0.15]]))
    assert t.heads[0].q.tolist() == [[1.5 * 0.15]]


two_places = st.integers(-999, 999).map(lambda n: Decimal(n).scaleb(-2))  # -9.99 to 9.99, at most 2 decimals


@given(two_places, two_places, st.integers(0, 4))
def test_a_carried_product_is_the_exact_product_rounded(a, b, places):
    expected = on_paper(a * b, places)
    assert carried_product(np.array([float(a)]), np.array([float(b)]), places).tolist() == [expected]
    t = trace(Problem(x=[[float(a)]], w_q=[[float(b)]]), carry_rounding=places)
    assert t.heads[0].q.tolist() == [[expected]]


@given(st.lists(st.tuples(two_places, two_places), min_size=1, max_size=6), st.integers(0, 4))
def test_a_carried_dot_product_is_the_exact_sum_rounded(pairs, places):
    x = np.array([[float(a) for a, _ in pairs]])
    w = np.array([[float(b)] for _, b in pairs])
    expected = on_paper(sum((a * b for a, b in pairs), Decimal(0)), places)
    assert carried_affine(x, w, None, places).tolist() == [[expected]]


@given(st.lists(two_places, min_size=1, max_size=8), st.integers(0, 4))
def test_round_half_up_of_a_two_place_decimal_is_exact(values, places):
    assert round_half_up(np.array([float(v) for v in values]), places).tolist() == [on_paper(v, places) for v in values]


@given(st.integers(-10**13, 10**13), st.integers(0, 8), st.integers(0, 10))
def test_round_half_up_rounds_the_decimal_a_person_wrote_exactly(digits, scale, places):
    written = Decimal(digits).scaleb(-scale)  # up to 14 significant digits: its float's shortest repr is this decimal
    assert round_half_up(np.array([float(written)]), places).tolist() == [on_paper(written, places)]


def test_a_computed_float_is_read_without_the_noise_of_its_last_digits():
    # 0.75 · 0.15 · 2 is 0.225 on paper; float64 makes it 0.22499999999999998, which a student never writes
    assert 0.75 * 0.15 * 2 == 0.22499999999999998
    assert round_half_up(np.array([0.75 * 0.15 * 2, 1.5 * 0.15, -(1.5 * 0.15)]), 2).tolist() == [0.23, 0.23, -0.23]
    # rounded to as many digits as the float holds, nothing is cut
    assert round_half_up(np.array([0.1234567890123456, 2 / 3]), 17).tolist() == [0.1234567890123456, 2 / 3]


def test_a_student_who_did_not_carry_the_rounding_is_marked_right_at_a_tie(attntrace, tmp_path):
    # q1 = 0.75 · 0.15 = 0.1125 (written 0.11) and score(1, 1) = 0.1125 · 2 = 0.225, written 0.23 from the unrounded q1
    problem = tmp_path / "tie.json"
    problem.write_text('{"x": [[0.75, 1], [0, 1]], "w_q": [[0.15, 0], [0, 0]], "w_k": [[0, 0], [2, 0]], "scale": false}')
    key = attntrace("worksheet", problem, "--key", "--format", "json", "--precision", "2")
    assert key.code == 0, key.err
    sheet = json.loads(key.out)
    answers = sheet["heads"][0] if "heads" in sheet else sheet
    assert answers["scores"][0] == [0.22, 0.22]  # the key carries the rounding: 0.11 · 2
    answers["scores"][0] = [0.23, 0.23]
    written = tmp_path / "sheet.json"
    written.write_text(json.dumps(sheet))
    r = attntrace("check", written, problem)
    assert r.code == 0 and "PASS" in r.out and "WRONG" not in r.out, r.out + r.err
