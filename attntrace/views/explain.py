"""Every cell's arithmetic for one input, written out as a student would: the factors, and the trace's result."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from attntrace.model.trace import Trace
from attntrace.views.page import Note, Step

LONG = 8  # dot products longer than this show their first 3 terms, a count, and the last term


def num(value: float, precision: int) -> str:
    """a whole number without decimals, anything else at the precision; -0 as 0"""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    text = f"{value:.{precision}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def _terms(terms: list[str]) -> str:
    if len(terms) <= LONG:
        return " + ".join(terms)
    return " + ".join(terms[:3]) + f" + … ({len(terms) - 4} more terms) + " + terms[-1]


def _factor(value: float, precision: int) -> str:
    text = num(value, precision)
    return f"({text})" if text.startswith("-") else text


def _dot(a: np.ndarray, b: np.ndarray, precision: int) -> str:
    return _terms([f"{_factor(x, precision)}×{_factor(y, precision)}" for x, y in zip(a.tolist(), b.tolist())])


def explain_steps(t: Trace, precision: int) -> list[Step]:
    """steps 3 to 7 for the one input of a single-query trace, cell by cell"""
    i = t.rows[0] + 1

    def per_head(write: Callable[[Trace, int, int], list[Note]]) -> tuple[Note, ...]:
        return tuple(note for a in range(len(t.heads)) for note in write(t, a, precision))

    return [
        Step(3, f"Step 3 · derive q{i}, and every k_j and v_j", per_head(_derive)),
        Step(4, f"Step 4 · attention scores for input {i}", per_head(_scores)),
        Step(5, f"Step 5 · softmax for input {i}", per_head(_softmax)),
        Step(6, f"Step 6 · weighted values for input {i}", per_head(_weighted)),
        Step(7, f"Step 7 · output {i}", (*per_head(_output), *_projected(t, precision))),
    ]


def _head(t: Trace, a: int) -> str:
    return f"head {a + 1} · " if t.dims.heads > 1 else ""


def _derive(t: Trace, a: int, precision: int) -> list[Note]:
    """step 3 for head a (from 0): every cell of q_i, and of each k_j and v_j"""
    p, d, h = t.problem, t.dims, t.heads[a]
    kv, kv_name = (p.x, "x") if p.source is None else (p.source, "s")
    notes = []
    for name, w, b, rows, inp, label, values, col0 in (
        ("q", h.w_q, h.b_q, [t.rows[0]], p.x, "x", h.q, a * d.d_k),
        ("k", h.w_k, h.b_k, range(d.m), kv, kv_name, h.k, a * d.d_k),
        ("v", h.w_v, h.b_v, range(d.m), kv, kv_name, h.v, a * d.d_v),
    ):
        for r_index, r in enumerate(rows):
            for c in range(values.shape[1]):
                cell = f"{_head(t, a)}{name}{r + 1}[{c + 1}]"
                if w is None:
                    text = f"{cell} = {label}{r + 1}[{col0 + c + 1}]"
                else:
                    text = f"{cell} = {label}{r + 1} · W_{name.upper()}[:,{col0 + c + 1}] = {_dot(inp[r], w[:, c], precision)}"
                if b is not None:
                    text += f" + {_factor(b[c], precision)}"
                notes.append(Note(f"{text} = {num(values[r_index, c], precision)}"))
    return notes


def _scores(t: Trace, a: int, precision: int) -> list[Note]:
    """step 4 for head a: each score as a dot product, then masked or divided"""
    h, i, head = t.heads[a], t.rows[0] + 1, _head(t, a)
    by = f"sqrt({t.dims.d_k})" if t.problem.scale is True else num(t.divisor, precision)
    notes = []
    for j in range(t.dims.m):
        notes.append(Note(f"{head}score({i},{j + 1}) = q{i} · k{j + 1} = {_dot(h.q[0], h.k[j], precision)} "
                          f"= {num(h.scores[0, j], precision)}"))
        if t.allowed is not None and not t.allowed[0, j]:
            notes.append(Note(f"{head}score({i},{j + 1}) is masked: it becomes -inf, so its weight is 0"))
        elif t.divisor != 1.0:
            notes.append(Note(f"{head}score({i},{j + 1}) / {by} = {num(h.scores[0, j], precision)} / "
                              f"{num(t.divisor, precision)} = {num(h.scaled[0, j], precision)}"))
    return notes


def _softmax(t: Trace, a: int, precision: int) -> list[Note]:
    """step 5 for head a: each weight as e^score over the sum for the keys not masked"""
    h, i, head = t.heads[a], t.rows[0] + 1, _head(t, a)
    seen = [j for j in range(t.dims.m) if t.allowed is None or t.allowed[0, j]]
    exps = _terms([f"e^{_factor(h.scaled[0, j], precision)}" for j in seen])
    return [Note(f"{head}w({i},{j + 1}) = e^{_factor(h.scaled[0, j], precision)} / ({exps}) "
                 f"= {num(h.weights[0, j], precision)}") if j in seen else Note(f"{head}w({i},{j + 1}) = 0 (masked)")
            for j in range(t.dims.m)]


def _weighted(t: Trace, a: int, precision: int) -> list[Note]:
    """step 6 for head a: each weight times each cell of its value"""
    h, i, head = t.heads[a], t.rows[0] + 1, _head(t, a)
    products = t.weighted(a, t.rows[0])  # [m, d_v]
    return [Note(f"{head}w({i},{j + 1}) · v{j + 1}[{c + 1}] = {_factor(h.weights[0, j], precision)}×"
                 f"{_factor(h.v[j, c], precision)} = {num(products[j, c], precision)}")
            for j in range(t.dims.m) for c in range(t.dims.d_v)]


def _output(t: Trace, a: int, precision: int) -> list[Note]:
    """step 7 for head a: each cell of the output as the sum of the weighted values"""
    h, i, head = t.heads[a], t.rows[0] + 1, _head(t, a)
    products = t.weighted(a, t.rows[0])  # [m, d_v]
    return [Note(f"{head}output{i}[{c + 1}] = {_terms([_factor(products[j, c], precision) for j in range(t.dims.m)])} "
                 f"= {num(h.output[0, c], precision)}") for c in range(t.dims.d_v)]


def _projected(t: Trace, precision: int) -> list[Note]:
    """the rest of step 7 with W_O: each cell of the final output from the concatenated heads"""
    p, i = t.problem, t.rows[0] + 1
    if p.w_o is None:
        return []
    notes = []
    for c in range(t.dims.d_out):
        bias = "" if p.b_o is None else f" + {_factor(p.b_o[c], precision)}"
        notes.append(Note(f"output{i}[{c + 1}] = concat{i} · W_O[:,{c + 1}] = "
                          f"{_dot(t.concat[0], p.w_o[:, c], precision)}{bias} = {num(t.output[0, c], precision)}"))
    return notes
