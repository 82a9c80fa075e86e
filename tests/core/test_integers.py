"""Exact integer arithmetic of written decimals: the same as Python's integers, in int64 or beyond it."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from attntrace.core import integers

small = st.integers(-10**6, 10**6)
huge = st.integers(-10**30, 10**30)


@given(st.lists(st.tuples(huge, huge), min_size=1, max_size=6))
def test_a_dot_product_is_python_s_own(pairs: list[tuple[int, int]]) -> None:
    a = integers.exact([x for x, _ in pairs], (1, len(pairs)))
    b = integers.exact([y for _, y in pairs], (len(pairs), 1))
    assert int(integers.dot(a, b, len(pairs))[0, 0]) == sum(x * y for x, y in pairs)


@given(small, small)
def test_small_numbers_stay_in_int64(x: int, y: int) -> None:
    a, b = integers.exact([x], (1,)), integers.exact([y], (1,))
    assert integers.product(a, b).dtype == np.int64 and int(integers.product(a, b)[0]) == x * y
    assert int(integers.plus(a, b)[0]) == x + y


def test_a_product_past_int64_is_exact() -> None:
    a = integers.exact([2**40], (1,))
    out = integers.product(a, a)
    assert out.dtype == object and int(out[0]) == 2**80
    assert integers.largest(integers.exact([-(2**70), 3], (2,))) == 2**70
