"""explain agrees with itself: every line, redone by hand from the numbers it writes, gives the result it writes; where
the tables show another value for that cell, the line says which. And the carried-rounding check compares like with
like: the carried chain against its own matrix form, with its distance from the unrounded answer said apart."""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Decimal, localcontext

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attntrace.core import engine
from attntrace.core.arithmetic import Carried
from attntrace.core.attention import attend
from attntrace.core.engine import trace
from attntrace.core.masks import Causal, Padding, Window
from attntrace.core.problem import Problem, example
from attntrace.core.trace import Trace
from attntrace.files.problemfile import load
from attntrace.views.explain import explain_steps
from attntrace.views.page import Note
from attntrace.views.walkthrough import run_steps
from tests.conftest import SAMPLES

LINE = re.compile(r"^(?:head (?P<head>\d+) · )?(?P<body>.*)$")
RESULT = re.compile(r"^(?P<result>-?\d+(?:\.\d+)?)(?: \(unrounded: (?P<table>-?\d+(?:\.\d+)?)\))?$")
HALF_WIDTH = Decimal("1e-30")  # a softmax redone to 50 digits this close to a half may be that half exactly


def lines(t: Trace, precision: int) -> list[str]:
    return [item.text for step in explain_steps(t, precision) for item in step.items if isinstance(item, Note)]


def tables(value: float, precision: int) -> str:
    """a number as the tables print it"""
    text = f"{value:.{precision}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def written(value: float, precision: int) -> str:
    """a number as explain writes an operand: whole numbers bare, the rest as the tables print it"""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else tables(value, precision)


def read(token: str) -> Decimal:
    token = token.strip()
    if token.startswith("(") and token.endswith(")"):
        token = token[1:-1]
    if token.startswith("sqrt("):
        return Decimal(int(token[5:-1])).sqrt()
    return Decimal(token)


def redo(expr: str) -> tuple[Decimal, bool]:
    """the expression as a student with a calculator works it out, to 50 digits and more; and whether it is a softmax"""
    with localcontext() as ctx:
        ctx.prec, ctx.Emax, ctx.Emin = 1000, 10**6, -10**6
        if expr.startswith("e^"):
            top, bottom = expr.split(" / ", 1)
            powers = [read(term[2:]) for term in bottom[1:-1].split(" + ")]
            top_power = max(powers)  # e^(z - max) over the same sum of e^(z_j - max): the same quotient, never too big
            return (read(top[2:]) - top_power).exp() / sum(((p - top_power).exp() for p in powers), Decimal(0)), True
        if " / " in expr:
            a, b = expr.split(" / ")
            return read(a) / read(b), False
        return sum((math.prod((read(f) for f in term.split("×")), start=Decimal(1))
                    for term in expr.split(" + ")), Decimal(0)), False


def table_value(t: Trace, line: str) -> float:
    """the trace's own value for the cell a line computes: what the tables show for it"""
    m = LINE.match(line)
    assert m
    a = int(m["head"]) - 1 if m["head"] else 0
    h, body, row = t.heads[a], m["body"], t.rows[0]
    cell = body.split(" = ")[0]
    if found := re.fullmatch(r"w\((\d+),(\d+)\) · v(\d+)\[(\d+)\]", cell):
        return float(t.weighted(a, row)[int(found[2]) - 1, int(found[4]) - 1])
    if found := re.fullmatch(r"w\((\d+),(\d+)\)", cell):
        return float(h.weights[0, int(found[2]) - 1])
    if found := re.match(r"score\((\d+),(\d+)\)", cell):
        return float((h.scaled if " / " in cell else h.scores)[0, int(found[2]) - 1])
    if found := re.fullmatch(r"output(\d+)\[(\d+)\]", cell):
        return float((t.output if "concat" in body else h.output)[0, int(found[2]) - 1])
    found = re.fullmatch(r"([qkv])(\d+)\[(\d+)\]", cell)
    assert found, line
    values = {"q": h.q, "k": h.k, "v": h.v}[found[1]]
    return float(values[0 if found[1] == "q" else int(found[2]) - 1, int(found[3]) - 1])


def check_every_line(t: Trace, precision: int) -> int:
    """each line's result is its expression, redone from the numbers written, rounded to the precision half away from
    zero (an exact half written in full unless the rounding is carried); a bracket holds the tables' value exactly
    when the tables show another. Returns how many lines had arithmetic to redo."""
    places, carried, checked = Decimal(1).scaleb(-precision), t.carry_rounding is not None, 0
    for line in lines(t, precision):
        parts = LINE.match(line)["body"].split(" = ")  # type: ignore[index]
        if len(parts) < 3 or "masked" in line:
            continue
        expr, result = parts[-2], RESULT.match(parts[-1])
        assert result, line
        shown, value = Decimal(result["result"]), table_value(t, line)
        decimals = len(result["result"].partition(".")[2])
        if "[" not in expr:  # not a cell named without arithmetic, "q1[2] = x1[2] = 3"
            exact, softmax = redo(expr)
            on_paper = exact.quantize(places, rounding=ROUND_HALF_UP)
            near_half = abs(abs(exact - on_paper) * 2 - places) <= (HALF_WIDTH if softmax else 0)
            if decimals == precision + 1:  # a half written in full
                assert not carried and near_half and abs(shown - exact) <= HALF_WIDTH, line
            else:
                assert decimals in (0, precision), line
                assert shown == on_paper or (near_half and abs(shown - exact) * 2 == places), line
            checked += 1
        differs = tables(float(shown), precision) != tables(value, precision)
        assert (result["table"] is not None) == differs, line
        if differs:
            assert result["table"] == written(value, precision), line
    return checked


@st.composite
def problems(draw, written_at: int | None = None) -> tuple[Problem, int]:
    """a small problem of any shape, biases, W_O, masks, scaling and heads, and the input to explain. written_at:
    every number has at most that many decimals, as a person writes them; else any float"""
    heads = draw(st.integers(1, 2))
    n, d_model = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    cross = draw(st.booleans())
    m, d_src = (draw(st.integers(1, 4)), draw(st.integers(1, 4))) if cross else (n, d_model)
    identity = not cross and draw(st.booleans()) and d_model % heads == 0
    d_k = d_model // heads if identity else draw(st.integers(1, 3))
    d_v = d_k if identity else draw(st.integers(1, 3))

    if written_at is None:
        number = st.floats(-5, 5, allow_nan=False, width=64)
    else:
        number = st.builds(lambda k, places: k / 10**places, st.integers(-40, 40), st.integers(0, written_at))

    def matrix(rows: int, cols: int) -> np.ndarray:
        return np.array(draw(st.lists(st.lists(number, min_size=cols, max_size=cols), min_size=rows, max_size=rows)))

    def maybe(size: int) -> np.ndarray | None:
        return np.array(draw(st.lists(number, min_size=size, max_size=size))) if draw(st.booleans()) else None

    w = (None, None, None) if identity else (matrix(d_model, d_k * heads), matrix(d_src, d_k * heads),
                                             matrix(d_src, d_v * heads))
    w_o = matrix(d_v * heads, draw(st.integers(1, 3))) if draw(st.booleans()) else None
    problem = Problem(
        x=matrix(n, d_model), w_q=w[0], w_k=w[1], w_v=w[2], b_q=maybe(d_k * heads), b_k=maybe(d_k * heads),
        b_v=maybe(d_v * heads), source=matrix(m, d_src) if cross else None, heads=heads, w_o=w_o,
        b_o=None if w_o is None else maybe(w_o.shape[1]),
        scale=draw(st.sampled_from([True, False, 2.0, 8.0, 0.3, 2.5])),
        mask=() if cross else draw(st.sampled_from([(), (Causal(),), (Window(1),), (Padding((False,) * (n - 1) + (True,)),)])),
    )
    return problem, draw(st.integers(1, n))


PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(problems(), st.integers(0, 6))
def test_every_line_follows_from_the_numbers_it_writes(drawn, precision):
    problem, query = drawn
    assert check_every_line(trace(problem, query=query), precision) > 0


@PROPERTY
@given(st.data(), st.integers(0, 4))
def test_with_carried_rounding_every_line_is_the_tables_own_arithmetic(data, precision):
    """numbers written to the precision, rounding carried: each line redone by hand is the tables' value, no bracket"""
    problem, query = data.draw(problems(written_at=precision))
    t = trace(problem, query=query, carry_rounding=precision)
    assert check_every_line(t, precision) > 0
    assert not any("unrounded" in line for line in lines(t, precision))


@pytest.mark.parametrize("sample", [None, "scaled.json", "causal.json", "cross.json", "two_heads.json"])
@pytest.mark.parametrize("precision", [0, 1, 2, 4, 10])
@pytest.mark.parametrize("carried", [False, True])
def test_the_samples_explain_agrees_with_itself(sample, precision, carried):
    problem = load(None if sample is None else str(SAMPLES / sample))
    for query in range(1, len(problem.x) + 1):
        assert check_every_line(trace(problem, query=query, carry_rounding=precision if carried else None), precision) > 0


def product_written(value: float, weight: str, v: str, precision: int) -> str:
    """step 6's product as explain writes it, given its two numbers as written: whole only when both of them are"""
    if "." not in weight + v:
        return written(value, precision)
    text = f"{value:.{precision}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def test_the_worked_examples_products_are_what_a_calculator_gives(attntrace):
    """the issue's lines: the weight times the value, as written, and the tables' value in brackets"""
    t = trace(example(), query=1)
    out = attntrace("explain", "--input", "1").out
    products = re.findall(r"^w\(1,(\d)\) · v\d\[(\d)\] = (\S+)×(\S+) = (\S+)(?: \(unrounded: (\S+)\))?$", out, re.M)
    assert len(products) == 9
    for j, c, weight, value, result, table in products:
        assert weight == tables(t.heads[0].weights[0, int(j) - 1], 4) and value == written(t.heads[0].v[int(j) - 1, int(c) - 1], 4)
        on_paper = (Decimal(weight) * Decimal(value)).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)
        assert Decimal(result) == on_paper
        exact = product_written(t.weighted(0, 0)[int(j) - 1, int(c) - 1], weight, value, 4)
        assert (table or result) == exact
    assert any(table for *_, table in products)  # rounding the weight first moves some products


@pytest.mark.parametrize(("problem", "query", "precision"), [(example(), 2, 4), (example(), 1, 4),
                                                             (load(str(SAMPLES / "scaled.json")), 1, 2),
                                                             (load(str(SAMPLES / "labels.json")), 2, 3)])
def test_the_sums_add_the_products_step_6_writes(problem, query, precision):
    """step 7 adds the numbers step 6 shows (not the tables' unrounded products), and says the tables' output where it
    differs"""
    t = trace(problem, query=query)
    out = lines(t, precision)
    products = {}
    for line in out:
        found = re.match(r"^w\(\d+,(\d+)\) · v\d+\[(\d+)\] = \S+ = (\S+)", line)
        if found:
            products[int(found[1]), int(found[2])] = found[3]
    sums = [line for line in out if line.startswith(f"output{query}[")]
    assert sums and products
    for c, line in enumerate(sums, start=1):
        expr, result = line.split(" = ")[1:]
        terms = [term.strip("()") for term in expr.split(" + ")]
        assert terms == [products[j, c] for j in range(1, t.dims.m + 1)], line
        exact, shown = sum(map(Decimal, terms)), result.split(" ")[0]
        if len(shown.partition(".")[2]) == precision + 1:  # exactly halfway: written in full
            assert Decimal(shown) == exact, line
        else:
            assert Decimal(shown) == exact.quantize(Decimal(1).scaleb(-precision), rounding=ROUND_HALF_UP), line
    if any("(unrounded" in line for line in out if line.startswith("w(")):
        assert "Step 7 adds the weighted values as step 6 writes them." in out


def test_the_issue_sum_of_a_rounded_weight_adds_what_is_shown():
    """w(1,1) · v1[2] = 0.14×2 = 0.28 (unrounded: 0.27): the sum adds 0.28, and gives the tables' 6.32 apart"""
    out = lines(trace(load(str(SAMPLES / "scaled.json")), query=1), 2)
    assert "w(1,1) · v1[2] = 0.14×2 = 0.28 (unrounded: 0.27)" in out
    assert "output1[2] = 0.28 + 3.44 + 2.58 = 6.30 (unrounded: 6.32)" in out


def test_an_exact_half_is_written_in_full_unless_the_rounding_is_carried():
    problem = Problem(x=[[1.0, 0.0], [0.0, 1.0]], scale=8.0)  # score 1, divided by 8: 0.125
    exact = Decimal(1) / Decimal(8)
    halves = [line for line in lines(trace(problem, query=1), 2) if line.startswith("score(1,1) / 8")]
    assert halves == [f"score(1,1) / 8 = 1 / 8 = {exact}"]
    assert any("halfway" in line for line in lines(trace(problem, query=1), 2))
    carried = [line for line in lines(trace(problem, query=1, carry_rounding=2), 2) if line.startswith("score(1,1) / 8")]
    assert carried == [f"score(1,1) / 8 = 1 / 8 = {exact.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)}"]
    assert not any("halfway" in line for line in lines(trace(problem, query=1, carry_rounding=2), 2))


@pytest.mark.parametrize("d_k, divisor", [(3, "sqrt(3)"), (2, "sqrt(2)"), (4, "2")])
def test_the_scaling_divisor_is_written_exactly(d_k, divisor):
    problem = Problem(x=np.ones((2, d_k)), scale=True)
    divided = [line for line in lines(trace(problem, query=1), 2) if line.startswith("score(1,1) / ")]
    assert divided and all(line.split(" = ")[1] == f"{d_k} / {divisor}" for line in divided)


def test_a_divisor_with_more_decimals_than_the_precision_is_written_in_full():
    t = trace(Problem(x=[[1.0, 2.0]], scale=1.2345), query=1)
    assert any(" / 1.2345 = " in line for line in lines(t, 2))
    assert check_every_line(t, 2) > 0


def test_the_legend_says_how_lines_are_written_and_names_a_bracket_only_when_there_is_one():
    with_brackets = lines(trace(example(), query=1), 4)
    assert with_brackets[0].startswith("Each line works from the numbers as the tables show them")
    bracket = re.search(r"\(unrounded: \S+\)", next(line for line in with_brackets[2:] if "(unrounded:" in line))
    assert bracket and bracket[0] in with_brackets[1]
    carried = lines(trace(example(), query=1, carry_rounding=4), 4)
    assert "carried on" in carried[0] and not any("unrounded" in line for line in carried)


def test_the_carried_check_compares_the_carried_chain_with_its_own_matrix_form():
    """row by row and as matrices, rounded alike: equal; how far the carried answer is from the exact one, apart"""
    for problem in (example(), load(str(SAMPLES / "two_heads.json")), load(str(SAMPLES / "causal.json"))):
        for decimals in (0, 1, 2, 4):
            t, exact = trace(problem, carry_rounding=decimals), trace(problem)
            assert t.self_check.ok and t.self_check.max_abs_diff == 0.0
            assert t.self_check.from_exact == float(np.max(np.abs(t.output - exact.output)))
            assert exact.self_check.from_exact is None
            for h in t.heads:
                alone = attend(h.q, h.k, h.v, t.divisor, t.allowed, arithmetic=Carried(decimals))
                np.testing.assert_array_equal(alone.output, h.output)


@PROPERTY
@given(problems(), st.integers(0, 4))
def test_the_carried_chain_row_by_row_is_its_matrix_form(drawn, decimals):
    problem, _ = drawn
    t = trace(problem, carry_rounding=decimals)
    assert t.self_check.ok and t.self_check.max_abs_diff == 0.0
    assert t.self_check.from_exact == float(np.max(np.abs(t.output - trace(problem).output)))


def test_the_carried_check_line_says_equal_and_says_how_far_from_exact_apart():
    t = trace(example(), carry_rounding=1)
    note = run_steps(t)[-1].items[-1]
    assert isinstance(note, Note) and note.kind == "self_check"
    distance = float(np.max(np.abs(t.output - trace(example()).output)))
    assert note.text.startswith("check: softmax(Q K^T) V with rounding carried at 1 decimal equals the row-by-row")
    assert f"moved the output at most {distance:.3f} from the unrounded one" in note.text
    assert "differ" not in note.text


def test_the_carried_check_fails_when_the_carried_rows_disagree(monkeypatch):
    from dataclasses import replace

    real = engine.heads

    def rows_alone_off(problem, d, rows, *args, **kwargs):  # step 8's rows, each recomputed alone, moved by 0.1
        made = real(problem, d, rows, *args, **kwargs)
        if len(rows) > 1:
            return made
        return [replace(h, attended=replace(h.attended, output=h.attended.output + 0.1)) for h in made]

    monkeypatch.setattr(engine, "heads", rows_alone_off)
    t = trace(example(), carry_rounding=1)
    assert not t.self_check.ok and t.self_check.max_abs_diff == pytest.approx(0.1)
    text = run_steps(t)[-1].items[-1].text  # type: ignore[union-attr]
    assert text.startswith("check FAILED: softmax(Q K^T) V with rounding carried at 1 decimal differs")


def test_the_unrounded_check_line_is_unchanged_in_kind():
    note = run_steps(trace(example()))[-1].items[-1]
    assert isinstance(note, Note) and note.text.startswith("check: softmax(Q K^T) V equals the row-by-row outputs")
    assert "unrounded one" not in note.text
