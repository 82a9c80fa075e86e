"""A long sum in explain (a dot product of more than LONG terms, an output summed over many keys) is written as its
first three terms, a count and its last; its result is still exactly what all the written terms give, however large
the numbers, and whether or not the rounding is carried."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, localcontext

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attntrace.core.engine import trace
from attntrace.core.problem import Problem
from attntrace.views.explain import LONG, explain_steps
from attntrace.views.page import Note

DOT = re.compile(r"^(?:head (?P<head>\d+) · )?(?P<name>[qkv])(?P<row>\d+)\[(?P<col>\d+)\] = [xs]\d+ · W_[QKV]\[:,\d+\]"
                 r"(?P<bias> \+ b_[qkv]\[\d+\])? = (?P<terms>.*) = (?P<result>\S+)(?: \(unrounded: .*\))?$")
SCORE = re.compile(r"^(?:head (?P<head>\d+) · )?score\(\d+,(?P<key>\d+)\) = q\d+ · k\d+ = (?P<terms>.*) = "
                   r"(?P<result>\S+)(?: \(unrounded: .*\))?$")
OUTPUT = re.compile(r"^(?:head (?P<head>\d+) · )?output\d+\[(?P<col>\d+)\] = (?P<terms>.*) = (?P<result>\S+)"
                    r"(?: \(unrounded: .*\))?$")


def written(value: float, precision: int) -> str:
    """a number as explain writes an operand: whole numbers bare, the rest at fixed decimals, -0 as 0, negatives in
    brackets"""
    if float(value).is_integer() and abs(value) < 1e15:
        text = str(int(value))
    else:
        text = f"{value:.{precision}f}"
        text = text[1:] if text.startswith("-") and not text.strip("-0.") else text
    return f"({text})" if text.startswith("-") else text


def product_written(value: float, weight: float, v: float, precision: int) -> str:
    """step 6's product w(i, j) · v_j as a term of step 7: whole only when both its numbers were written whole"""
    if "." not in written(weight, precision) + written(v, precision):
        return written(value, precision)
    text = f"{value:.{precision}f}"
    text = text[1:] if text.startswith("-") and not text.strip("-0.") else text
    return f"({text})" if text.startswith("-") else text


def read(text: str) -> Decimal:
    return Decimal(text.strip("()"))


def shown(terms: list[str]) -> str:
    """the terms as explain writes a sum of them"""
    if len(terms) <= LONG:
        return " + ".join(terms)
    return " + ".join(terms[:3]) + f" + … ({len(terms) - 4} more terms) + " + terms[-1]


def check(result: str, total: Decimal, precision: int, carried: bool) -> None:
    """the result is the total rounded half away from zero (an exact half written in full when not carried)"""
    places = Decimal(1).scaleb(-precision)
    on_paper = total.quantize(places, rounding=ROUND_HALF_UP)
    if not carried and abs(total - on_paper) * 2 == places:
        assert Decimal(result) == total, (result, total)
    else:
        assert Decimal(result) == on_paper, (result, total)


@st.composite
def long_problems(draw: st.DrawFn) -> tuple[Problem, int, int, bool]:
    """inputs of 12 features, heads of 9 or 10 dimensions, 12 keys; numbers of a few decimals, some of them huge"""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    heads = draw(st.integers(1, 2))
    d_k = heads * draw(st.sampled_from([9, 10]))
    size = draw(st.sampled_from([1.0, 1e9]))

    def numbers(*shape: int) -> np.ndarray:
        return rng.integers(-40, 41, size=shape) / draw(st.sampled_from([1, 8, 10, 100])) * size

    bias = draw(st.booleans())
    problem = Problem(x=numbers(12, 12), w_q=numbers(12, d_k), w_k=numbers(12, d_k), w_v=numbers(12, d_k),
                      b_k=numbers(d_k) if bias else None, heads=heads, scale=False)
    return problem, draw(st.integers(1, 12)), draw(st.sampled_from([1, 2, 4])), draw(st.booleans())


@settings(max_examples=30, deadline=None)
@given(long_problems())
def test_a_long_sum_is_the_exact_sum_of_every_written_term(case):
    problem, query, precision, carried = case
    t = trace(problem, query=query, carry_rounding=precision if carried else None)
    found = {"dot": 0, "score": 0, "output": 0}
    with localcontext() as context:
        context.prec = 1000
        for line in (item.text for step in explain_steps(t, precision) for item in step.items if isinstance(item, Note)):
            if m := DOT.match(line):
                h = t.heads[int(m["head"] or 1) - 1]
                row, col = int(m["row"]) - 1, int(m["col"]) - 1
                weight = {"q": h.w_q, "k": h.w_k, "v": h.w_v}[m["name"]]
                pairs = [(written(problem.x[row, i], precision), written(weight[i, col], precision))
                         for i in range(weight.shape[0])]
                total = sum((read(a) * read(b) for a, b in pairs), Decimal(0))
                terms = m["terms"]
                if m["bias"]:
                    terms, _, bias = terms.rpartition(" + ")
                    assert bias == written(h.b_k[col], precision), line
                    total += read(bias)
                assert terms == shown([f"{a}×{b}" for a, b in pairs]), line
                check(m["result"], total, precision, carried)
                found["dot"] += 1
            elif m := SCORE.match(line):
                h = t.heads[int(m["head"] or 1) - 1]
                key = int(m["key"]) - 1
                pairs = [(written(h.q[0, i], precision), written(h.k[key, i], precision)) for i in range(h.q.shape[1])]
                assert m["terms"] == shown([f"{a}×{b}" for a, b in pairs]), line
                check(m["result"], sum((read(a) * read(b) for a, b in pairs), Decimal(0)), precision, carried)
                found["score"] += 1
            elif m := OUTPUT.match(line):
                a, col = int(m["head"] or 1) - 1, int(m["col"]) - 1
                h = t.heads[a]
                terms = [product_written(v, h.weights[0, j], h.v[j, col], precision)
                         for j, v in enumerate(t.weighted(a, t.rows[0])[:, col])]
                assert m["terms"] == shown(terms), line
                check(m["result"], sum(map(read, terms), Decimal(0)), precision, carried)
                found["output"] += 1
    assert found["dot"] == problem.w_k.shape[1] * (1 + 12 + 12)  # q_i, and each k_j and v_j
    assert found["score"] == problem.heads * 12 and found["output"] == problem.w_v.shape[1]
