"""Every cell's arithmetic for one input, written out as a student would: the numbers as the tables show them, and
exactly what those numbers give, so that every line can be redone by hand."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext

import numpy as np

from attntrace.model.maths import decimal_of
from attntrace.model.trace import Trace
from attntrace.views.page import Note, Step

LONG = 8  # dot products longer than this show their first 3 terms, a count, and the last term
UNROUNDED = "unrounded"  # the word before the tables' value where the written numbers give another result

_EXACT = Context(prec=2000, Emax=10**6, Emin=-10**6)  # sums, products and quotients of written numbers: exact, or
# (a quotient by sqrt) hundreds of digits past any rounding digit shown
_EXP = Context(prec=60, Emax=10**6, Emin=-10**6)  # e^z and the softmax's quotients: 60 significant digits
_SNAP = Decimal(1).scaleb(-45)  # a softmax weight is rounded here, so 1/2 from e^z / (e^z + e^z) is exactly a half


def num(value: float, precision: int) -> str:
    """a whole number without decimals, anything else at the precision (as the tables write it); -0 as 0"""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return fixed(value, precision)


def fixed(value: float, precision: int) -> str:
    """a number exactly as the tables show it: fixed decimals, -0 as 0"""
    return _unsigned_zero(f"{value:.{precision}f}")


def _unsigned_zero(text: str) -> str:
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


class _Writer:
    """writes numbers as the tables show them and each result as exactly what the written numbers give, rounded to
    the precision half away from zero; remembers what the legend must explain"""

    def __init__(self, precision: int, carried: bool) -> None:
        self.precision = precision
        self.carried = carried  # carried rounding rounds an exact half away from zero, as the trace does
        self.halves = False  # a result exactly halfway was written in full
        self.bracket = ""  # the first bracket with the tables' different value, as the legend's example

    def read(self, value: float) -> tuple[str, Decimal]:
        """a number as written, and the decimal a student reads from it"""
        text = num(value, self.precision)
        return text, Decimal(text)

    def factor(self, value: float) -> tuple[str, Decimal]:
        """a number as written in a product or a sum: a negative one in brackets"""
        text, exact = self.read(value)
        return (f"({text})" if text.startswith("-") else text), exact

    def result(self, exact: Decimal, table: float) -> str:
        """exact rounded to the precision, half away from zero (without carried rounding an exact half is written in
        full, since the tables round halves their own way); then the tables' value when they show another"""
        places = Decimal(1).scaleb(-self.precision)
        rounded = exact.quantize(places, rounding=ROUND_HALF_UP)
        half = not self.carried and abs(exact - rounded) * 2 == places
        shown = exact if half else rounded
        if shown == shown.to_integral_value() and num(table, self.precision) == str(int(shown)):
            text = str(int(shown))  # a whole number written whole, as the tables' value is
        else:
            text = _unsigned_zero(f"{shown:.{self.precision + half}f}")
        self.halves |= half
        if fixed(float(shown), self.precision) != fixed(table, self.precision):
            bracket = f"({UNROUNDED}: {num(table, self.precision)})"
            self.bracket = self.bracket or bracket
            text += f" {bracket}"
        return text

    def legend(self) -> tuple[Note, ...]:
        """how every line is written: which numbers it uses, how its result is rounded, and what the brackets say"""
        p = self.precision
        carried = ", and carried on as by hand" if self.carried else ""
        notes = [Note(f"Each line works from the numbers as the tables show them; its result is rounded to {p} "
                      f"decimal{'s' * (p != 1)}, halves away from zero{carried}.")]
        if self.halves:
            notes.append(Note("A result exactly halfway between two roundings is written in full."))
        if self.bracket:
            source = "start from the inputs unrounded" if self.carried else "work from the unrounded numbers"
            notes.append(Note(f"A bracket such as {self.bracket} gives the tables' value where it differs: they {source}."))
        return tuple(notes)


def _terms(terms: list[str]) -> str:
    if len(terms) <= LONG:
        return " + ".join(terms)
    return " + ".join(terms[:3]) + f" + … ({len(terms) - 4} more terms) + " + terms[-1]


def _dot(a: np.ndarray, b: np.ndarray, w: _Writer) -> tuple[str, Decimal]:
    """a · b as written, term by term, and its exact value from the written numbers"""
    terms, total = [], Decimal(0)
    for x, y in zip(a.tolist(), b.tolist()):
        (x_text, x_exact), (y_text, y_exact) = w.factor(x), w.factor(y)
        terms.append(f"{x_text}×{y_text}")
        total += x_exact * y_exact
    return _terms(terms), total


def _sum(values: list[float], w: _Writer) -> tuple[str, Decimal]:
    """values added as written, and their exact sum"""
    read = [w.factor(v) for v in values]
    return _terms([text for text, _ in read]), sum((exact for _, exact in read), Decimal(0))


def explain_steps(t: Trace, precision: int) -> list[Step]:
    """steps 3 to 7 for the one input of a single-query trace, cell by cell, after a line saying how they are written"""
    i = t.rows[0] + 1
    w = _Writer(precision, t.decimals == precision)

    def per_head(write: Callable[[Trace, int, _Writer], list[Note]]) -> tuple[Note, ...]:
        return tuple(note for a in range(len(t.heads)) for note in write(t, a, w))

    with localcontext(_EXACT):
        steps = [
            Step(3, f"Step 3 · derive q{i}, and every k_j and v_j", per_head(_derive)),
            Step(4, f"Step 4 · attention scores for input {i}", per_head(_scores)),
            Step(5, f"Step 5 · softmax for input {i}", per_head(_softmax)),
            Step(6, f"Step 6 · weighted values for input {i}", per_head(_weighted)),
            Step(7, f"Step 7 · output {i}", (*per_head(_output), *_projected(t, w))),
        ]
    steps[0] = replace(steps[0], items=(*w.legend(), *steps[0].items))
    return steps


def _head(t: Trace, a: int) -> str:
    return f"head {a + 1} · " if t.dims.heads > 1 else ""


def _derive(t: Trace, a: int, w: _Writer) -> list[Note]:
    """step 3 for head a (from 0): every cell of q_i, and of each k_j and v_j"""
    p, d, h, g = t.problem, t.dims, t.heads[a], t.dims.kv_block(a)
    kv, kv_name = (p.x, "x") if p.source is None else (p.source, "s")
    notes = []
    for name, weight, b, rows, inp, label, values, col0 in (
        ("q", h.w_q, h.b_q, [t.rows[0]], p.x, "x", h.q, a * d.d_k),
        ("k", h.w_k, h.b_k, range(d.m), kv, kv_name, h.k, g * d.d_k),
        ("v", h.w_v, h.b_v, range(d.m), kv, kv_name, h.v, g * d.d_v),
    ):
        for r_index, r in enumerate(rows):
            for c in range(values.shape[1]):
                cell, column = f"{_head(t, a)}{name}{r + 1}[{c + 1}]", col0 + c + 1
                if weight is None:
                    named = f"{label}{r + 1}[{column}]"
                    written, exact = w.factor(inp[r, col0 + c])
                else:
                    named = f"{label}{r + 1} · W_{name.upper()}[:,{column}]"
                    written, exact = _dot(inp[r], weight[:, c], w)
                if b is not None:
                    bias, bias_exact = w.factor(b[c])
                    named, written, exact = f"{named} + b_{name}[{column}]", f"{written} + {bias}", exact + bias_exact
                result = w.result(exact, values[r_index, c])
                arithmetic = "" if weight is None and b is None else f" = {written}"  # a copied cell has none
                notes.append(Note(f"{cell} = {named}{arithmetic} = {result}"))
    return notes + _rotated(t, a, w)


def _rotated(t: Trace, a: int, w: _Writer) -> list[Note]:
    """rope: the angle of each pair of q_i and of every k_j, then each cell turned by it"""
    from attntrace.model.variants import pair_index

    p, d, h = t.problem, t.dims, t.heads[a]
    if p.rope is None or h.q_rotated is None or h.k_rotated is None:
        return []
    assert t.query_angles is not None and t.key_angles is not None
    first, second = pair_index(d.d_k, p.rope.pairs)
    q_at = (p.rope.positions or range(d.n))[t.rows[0]]
    k_at = list(p.rope.source_positions or p.rope.positions or range(d.m))
    notes = []
    for name, vectors, turned, angles, rows, at in (("q", h.q, h.q_rotated, t.query_angles, [t.rows[0]], [q_at]),
                                                    ("k", h.k, h.k_rotated, t.key_angles, range(d.m), k_at)):
        for r_index, r in enumerate(rows):
            for pair, (f, s) in enumerate(zip(first.tolist(), second.tolist())):
                theta = float(angles[r_index, pair])
                turn = f"{at[r_index]:g} · {p.rope.base:g}^(-{2 * pair}/{d.d_k}) = " if pair else ""
                notes.append(Note(f"{_head(t, a)}θ of {name}{r + 1}, pair ({f + 1},{s + 1}) = {turn}"
                                  f"{num(theta, w.precision)}"))
                (c, c_exact), (sn, s_exact) = w.factor(math.cos(theta)), w.factor(math.sin(theta))
                (x1, x1_exact), (x2, x2_exact) = w.factor(vectors[r_index, f]), w.factor(vectors[r_index, s])
                cell = f"{_head(t, a)}{name}{r + 1}"
                notes.append(Note(
                    f"{cell}'[{f + 1}] = {name}{r + 1}[{f + 1}] cos θ - {name}{r + 1}[{s + 1}] sin θ = {x1}×{c} - "
                    f"{x2}×{sn} = {w.result(x1_exact * c_exact - x2_exact * s_exact, turned[r_index, f])}"))
                notes.append(Note(
                    f"{cell}'[{s + 1}] = {name}{r + 1}[{s + 1}] cos θ + {name}{r + 1}[{f + 1}] sin θ = {x2}×{c} + "
                    f"{x1}×{sn} = {w.result(x2_exact * c_exact + x1_exact * s_exact, turned[r_index, s])}"))
    return notes


def _divisor(t: Trace, w: _Writer) -> tuple[str, str, Decimal]:
    """what the scores are divided by: its name, how it is written (exactly), and its value"""
    d_k = t.dims.d_k
    if t.problem.scale is True:
        root = math.isqrt(d_k)
        if root * root == d_k:
            return f"sqrt({d_k})", str(root), Decimal(root)
        return f"sqrt({d_k})", f"sqrt({d_k})", Decimal(d_k).sqrt()
    text, exact = w.read(t.divisor)
    if exact != decimal_of(t.divisor):  # more decimals than the precision: written in full, never rounded
        exact = decimal_of(t.divisor)
        text = f"{exact:f}"
    return text, text, exact


def _scores(t: Trace, a: int, w: _Writer) -> list[Note]:
    """step 4 for head a: each score as a dot product, then masked or divided"""
    h, i, head = t.heads[a], t.rows[0] + 1, _head(t, a)
    by, by_written, by_exact = _divisor(t, w)
    q, k, turned = (h.q, h.k, "") if h.q_rotated is None or h.k_rotated is None else (h.q_rotated, h.k_rotated, "'")
    cap = t.problem.softcap
    notes = []
    for j in range(t.dims.m):
        written, exact = _dot(q[0], k[j], w)
        notes.append(Note(f"{head}score({i},{j + 1}) = q{i}{turned} · k{j + 1}{turned} = {written} = "
                          f"{w.result(exact, h.scores[0, j])}"))
        if t.allowed is not None and not t.allowed[0, j]:
            notes.append(Note(f"{head}score({i},{j + 1}) is masked: it becomes -inf, so its weight is 0"))
            continue
        named, z = f"score({i},{j + 1})", None  # the logit as it is built up, and the tables' value of it
        score, z_exact = w.read(h.scores[0, j])
        written = score
        if t.divisor != 1.0:
            named, z_exact, written = f"{named} / {by}", z_exact / by_exact, f"{score} / {by_written}"
        if h.bias is not None:
            bias, bias_exact = w.factor(h.bias[0, j])
            named, z_exact, written = f"{named} + bias({i},{j + 1})", z_exact + bias_exact, f"{written} + {bias}"
        if t.divisor != 1.0 or h.bias is not None:
            z = h.scaled[0, j] if h.uncapped is None else h.uncapped[0, j]
            notes.append(Note(f"{head}{named} = {written} = {w.result(z_exact, z)}"))
        if cap is not None:
            assert h.uncapped is not None
            z_text, z_read = w.factor(h.uncapped[0, j])
            tanh_text, tanh_exact = w.factor(math.tanh(float(z_read) / cap))
            c_text, c_exact = w.read(cap)
            notes.append(Note(f"{head}capped({i},{j + 1}) = {c_text} · tanh({z_text} / {c_text}) = {c_text}×{tanh_text} = "
                              f"{w.result(c_exact * tanh_exact, h.scaled[0, j])}"))
    return notes


def _softmax(t: Trace, a: int, w: _Writer) -> list[Note]:
    """step 5 for head a: each weight as e^score over the sum for the keys not masked"""
    h, i, head = t.heads[a], t.rows[0] + 1, _head(t, a)
    seen = [j for j in range(t.dims.m) if t.allowed is None or t.allowed[0, j]]
    powers = {j: w.factor(h.scaled[0, j]) for j in seen}
    exps = _terms([f"e^{text}" for text, _ in powers.values()])
    weights = _softmax_exact([exact for _, exact in powers.values()])
    exact = dict(zip(seen, weights))
    return [Note(f"{head}w({i},{j + 1}) = e^{powers[j][0]} / ({exps}) = {w.result(exact[j], h.weights[0, j])}")
            if j in seen else Note(f"{head}w({i},{j + 1}) = 0 (masked)") for j in range(t.dims.m)]


def _softmax_exact(z: list[Decimal]) -> list[Decimal]:
    """e^z_j / Σ e^z to 45 decimals (far below any rounding digit shown), from the written z"""
    if not z:
        return []
    top = max(z)
    exps = [_EXP.exp(value - top) for value in z]  # value - top: exact in the caller's context
    total = sum(exps, Decimal(0))
    return [_EXP.divide(e, total).quantize(_SNAP, context=_EXP) for e in exps]


def _weighted(t: Trace, a: int, w: _Writer) -> list[Note]:
    """step 6 for head a: each weight times each cell of its value"""
    h, i, head = t.heads[a], t.rows[0] + 1, _head(t, a)
    products = t.weighted(a, t.rows[0])  # [m, d_v]
    notes = []
    for j in range(t.dims.m):
        for c in range(t.dims.d_v):
            (weight, weight_exact), (value, value_exact) = w.factor(h.weights[0, j]), w.factor(h.v[j, c])
            notes.append(Note(f"{head}w({i},{j + 1}) · v{j + 1}[{c + 1}] = {weight}×{value} = "
                              f"{w.result(weight_exact * value_exact, products[j, c])}"))
    return notes


def _output(t: Trace, a: int, w: _Writer) -> list[Note]:
    """step 7 for head a: each cell of the output as the sum of the weighted values"""
    h, i, head = t.heads[a], t.rows[0] + 1, _head(t, a)
    products = t.weighted(a, t.rows[0])  # [m, d_v]
    notes = []
    for c in range(t.dims.d_v):
        written, exact = _sum(products[:, c].tolist(), w)
        notes.append(Note(f"{head}output{i}[{c + 1}] = {written} = {w.result(exact, h.output[0, c])}"))
    return notes


def _projected(t: Trace, w: _Writer) -> list[Note]:
    """the rest of step 7 with W_O: each cell of the final output from the concatenated heads"""
    p, i = t.problem, t.rows[0] + 1
    if p.w_o is None:
        return []
    notes = []
    for c in range(t.dims.d_out):
        written, exact = _dot(t.concat[0], p.w_o[:, c], w)
        named = f"concat{i} · W_O[:,{c + 1}]"
        if p.b_o is not None:
            bias, bias_exact = w.factor(p.b_o[c])
            named, written, exact = f"{named} + b_o[{c + 1}]", f"{written} + {bias}", exact + bias_exact
        notes.append(Note(f"output{i}[{c + 1}] = {named} = {written} = {w.result(exact, t.output[0, c])}"))
    return notes
