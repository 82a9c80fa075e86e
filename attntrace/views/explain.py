"""Every cell's arithmetic for one input, written out as a student would: the factors, and the trace's result."""

from __future__ import annotations

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
    p, d = t.problem, t.dims
    i = t.rows[0] + 1
    kv, kv_name = (p.x, "x") if p.source is None else (p.source, "s")
    derive = Step(3, f"Step 3 · derive q{i}, and every k_j and v_j")
    scores = Step(4, f"Step 4 · attention scores for input {i}")
    soft = Step(5, f"Step 5 · softmax for input {i}")
    weighted = Step(6, f"Step 6 · weighted values for input {i}")
    output = Step(7, f"Step 7 · output {i}")
    f = lambda v: num(v, precision)  # noqa: E731
    by = f"sqrt({d.d_k})" if p.scale is True else f(t.divisor)
    for a, h in enumerate(t.heads):
        head = f"head {a + 1} · " if d.heads > 1 else ""
        col0_k, col0_v = a * d.d_k, a * d.d_v
        for name, w, b, rows, inp, label, values, col0 in (
            ("q", h.w_q, h.b_q, [t.rows[0]], p.x, "x", h.q, col0_k),
            ("k", h.w_k, h.b_k, range(d.m), kv, kv_name, h.k, col0_k),
            ("v", h.w_v, h.b_v, range(d.m), kv, kv_name, h.v, col0_v),
        ):
            for r_index, r in enumerate(rows):
                for c in range(values.shape[1]):
                    cell = f"{head}{name}{r + 1}[{c + 1}]"
                    if w is None:
                        text = f"{cell} = {label}{r + 1}[{col0 + c + 1}]"
                    else:
                        text = f"{cell} = {label}{r + 1} · W_{name.upper()}[:,{col0 + c + 1}] = {_dot(inp[r], w[:, c], precision)}"
                    if b is not None:
                        text += f" + {_factor(b[c], precision)}"
                    derive.items.append(Note(f"{text} = {f(values[r_index, c])}"))
        for j in range(d.m):
            masked = t.allowed is not None and not t.allowed[0, j]
            scores.items.append(Note(f"{head}score({i},{j + 1}) = q{i} · k{j + 1} = {_dot(h.q[0], h.k[j], precision)} "
                                     f"= {f(h.scores[0, j])}"))
            if masked:
                scores.items.append(Note(f"{head}score({i},{j + 1}) is masked: it becomes -inf, so its weight is 0"))
            elif t.divisor != 1.0:
                scores.items.append(Note(f"{head}score({i},{j + 1}) / {by} = {f(h.scores[0, j])} / "
                                         f"{f(t.divisor)} = {f(h.scaled[0, j])}"))
        seen = [j for j in range(d.m) if t.allowed is None or t.allowed[0, j]]
        exps = _terms([f"e^{_factor(h.scaled[0, j], precision)}" for j in seen])
        for j in range(d.m):
            if j in seen:
                soft.items.append(Note(f"{head}w({i},{j + 1}) = e^{_factor(h.scaled[0, j], precision)} / ({exps}) "
                                       f"= {f(h.weights[0, j])}"))
            else:
                soft.items.append(Note(f"{head}w({i},{j + 1}) = 0 (masked)"))
        products = t.weighted(a, t.rows[0])  # [m, d_v]
        for j in range(d.m):
            for c in range(d.d_v):
                weighted.items.append(Note(
                    f"{head}w({i},{j + 1}) · v{j + 1}[{c + 1}] = {_factor(h.weights[0, j], precision)}×"
                    f"{_factor(h.v[j, c], precision)} = {f(products[j, c])}"))
        for c in range(d.d_v):
            parts = _terms([_factor(products[j, c], precision) for j in range(d.m)])
            output.items.append(Note(f"{head}output{i}[{c + 1}] = {parts} = {f(h.output[0, c])}"))
    if p.w_o is not None:
        for c in range(d.d_out):
            bias = "" if p.b_o is None else f" + {_factor(p.b_o[c], precision)}"
            output.items.append(Note(f"output{i}[{c + 1}] = concat{i} · W_O[:,{c + 1}] = "
                                     f"{_dot(t.concat[0], p.w_o[:, c], precision)}{bias} = {f(t.output[0, c])}"))
    return [derive, scores, soft, weighted, output]
