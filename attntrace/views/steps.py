"""What each step shows: a trace arranged into the page model's titled blocks, step by step."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from attntrace.model import who
from attntrace.model.trace import Trace
from attntrace.views.page import Block, Note, Step

WALK_ALL_UP_TO = 16  # above this many inputs, steps 4-7 are walked through for the first 3 and the last


def numbered(n: int, start: int = 1) -> tuple[str, ...]:
    return tuple(str(i) for i in range(start, start + n))


def walk_rows(n: int) -> list[int]:
    """the inputs (from 0) whose steps 4-7 are shown one by one in a full run"""
    if n <= WALK_ALL_UP_TO:
        return list(range(n))
    return [0, 1, 2, n - 1]


def run_steps(t: Trace) -> list[Step]:
    """the eight steps for every input"""
    steps = [_inputs(t), _weights(t), _derive(t, "Step 3 · derive Q, K, V")]
    shown = [r for r in walk_rows(t.dims.n) if r in t.self_check.rows]  # the rows the trace was asked to show
    for index, row in enumerate(shown):
        steps.extend(_query_steps(t, row))
        if index + 1 < len(shown) and shown[index + 1] != row + 1:
            hidden = shown[index + 1] - row - 1
            steps[-1].items.append(Note(
                f"… steps 4-7 for inputs {row + 2} to {shown[index + 1]} ({hidden} inputs) are not shown; "
                "attntrace step --input N shows any one, and step 8 shows them all"
            ))
    steps.append(_every(t))
    return steps


def step_steps(t: Trace) -> list[Step]:
    """a compact reminder of q_i, K and V, then steps 4-7 for the one traced input"""
    reminder = _derive(t, f"Step 3 · reminder: q{t.query}, K and V")
    return [reminder, *_query_steps(t, t.rows[0])]


def _inputs(t: Trace) -> Step:
    p = t.problem
    step = Step(1, "Step 1 · prepare inputs")
    step.items.append(Block("X", "x", p.labels,
                            numbered(t.dims.d_model), p.x))
    if p.source is not None:
        step.items.append(Block("source (K and V come from here)",
                                "x", p.key_labels, numbered(t.dims.d_src), p.source))
    return step


def _weights(t: Trace) -> Step:
    p = t.problem
    step = Step(2, "Step 2 · weights")
    src = "x" if p.source is None else "source"
    for name, w, b in (("W_Q", p.w_q, p.b_q), ("W_K", p.w_k, p.b_k), ("W_V", p.w_v, p.b_v)):
        if w is None:
            letter = name[-1]
            feeds = "X" if letter == "Q" else src
            step.items.append(Note(f"{name}: none, so {letter} = {feeds} (no projection)"))
        else:
            step.items.append(Block(name, "w", numbered(w.shape[0]),
                                    numbered(w.shape[1]), w))
        if b is not None:
            step.items.append(Block(f"b_{name[-1].lower()}", "w", ("b",), numbered(len(b)), b[None, :]))
    if t.dims.heads > 1:
        step.items.append(Note(
            f"{t.dims.heads} heads: head a uses columns (a-1)·{t.dims.d_k}+1 to a·{t.dims.d_k} of W_Q and W_K, "
            f"and (a-1)·{t.dims.d_v}+1 to a·{t.dims.d_v} of W_V"
        ))
    if p.w_o is not None:
        step.items.append(Block("W_O", "w", numbered(p.w_o.shape[0]),
                                numbered(p.w_o.shape[1]), p.w_o))
    if p.b_o is not None:
        step.items.append(Block("b_o", "w", ("b",), numbered(len(p.b_o)), p.b_o[None, :]))
    return step


def _head(t: Trace, a: int) -> str:
    return f"head {a + 1} · " if t.dims.heads > 1 else ""


def _cols(t: Trace, a: int, size: int) -> str:
    return f"[:, {a * size + 1}..{(a + 1) * size}]" if t.dims.heads > 1 else ""


def _derive(t: Trace, heading: str) -> Step:
    p, d = t.problem, t.dims
    step = Step(3, heading)
    src = "X" if p.source is None else "source"
    for a, h in enumerate(t.heads):
        dk, dv = _cols(t, a, d.d_k), _cols(t, a, d.d_v)
        for name, formula, kind, rows, values, size in (
            ("Q", _proj("X", "W_Q" + dk, p.w_q, p.b_q, "b_q" + dk), "q", t.row_labels, h.q, d.d_k),
            ("K", _proj(src, "W_K" + dk, p.w_k, p.b_k, "b_k" + dk), "k", p.key_labels, h.k, d.d_k),
            ("V", _proj(src, "W_V" + dv, p.w_v, p.b_v, "b_v" + dv), "v", p.key_labels, h.v, d.d_v),
        ):
            label = "q" if name == "Q" and t.query is not None else name
            step.items.append(Block(f"{_head(t, a)}{label} = {formula}", kind, rows, numbered(size), values,
                                    (a + 1, kind, None)))
    return step


def _proj(inp: str, w_name: str, w: np.ndarray | None, b: np.ndarray | None, b_name: str) -> str:
    formula = inp if w is None else f"{inp} · {w_name}"
    return formula if b is None else f"{formula} + {b_name}"


def _query_steps(t: Trace, row: int) -> list[Step]:
    """steps 4 to 7 for one input"""
    p, d = t.problem, t.dims
    j = t.rows.index(row)
    i, label = row + 1, p.labels[row]
    keys = p.key_labels
    scores = Step(4, f"Step 4 · attention scores for input {i} ({label})")
    soft = Step(5, f"Step 5 · softmax for input {i}")
    weighted = Step(6, f"Step 6 · multiply the weights by the values for input {i}")
    output = Step(7, f"Step 7 · sum the weighted values into output {i}")
    for a, h in enumerate(t.heads):
        head = _head(t, a)
        n = a + 1
        scores.items.append(Block(f"{head}score({i}, j) = q{i} · k_j", "scores", (label,), keys, h.scores[j:j + 1],
                                  (n, "scores", j)))
        if t.divisor != 1.0:
            scores.items.append(Block(f"{head}score({i}, j) / {_divisor(t)}", "scores", (label,), keys,
                                      h.scaled[j:j + 1], (n, "scaled", j)))
        elif t.allowed is not None:
            scores.items.append(Block(f"{head}score({i}, j), masked", "scores", (label,), keys, h.scaled[j:j + 1],
                                      (n, "scaled", j)))
        soft.items.append(Block(f"{head}w({i}, j) = softmax over j", "weights", (label,), keys, h.weights[j:j + 1],
                                (n, "weights", j)))
        weighted.items.append(Block(f"{head}w({i}, j) · v_j", "weighted", keys, numbered(d.d_v), t.weighted(a, row),
                                    (n, "weighted", j)))
        output.items.append(Block(f"{head}output {i} = Σ_j w({i}, j) · v_j", "output", (label,), numbered(d.d_v),
                                  h.output[j:j + 1], (n, "output", j)))
    if row in t.fully_masked:
        soft.items.append(Note(f"every key is masked for input {i}: its weights are 0 and its output is 0"))
    if d.heads > 1:
        output.items.append(Block(f"concat(heads) for input {i}", "output", (label,), numbered(d.heads * d.d_v),
                                  t.concat[j:j + 1], (None, _concat_key(t), j)))
    if p.w_o is not None:
        formula = "concat · W_O" + (" + b_o" if p.b_o is not None else "")
        output.items.append(Block(f"output {i} = {formula}", "output", (label,), numbered(d.d_out),
                                  t.output[j:j + 1], (None, "output", j)))
    return [scores, soft, weighted, output]


def _concat_key(t: Trace) -> str:
    """without W_O the heads' concatenation is the final output"""
    return "concat" if t.problem.w_o is not None else "output"


def _divisor(t: Trace) -> str:
    if t.problem.scale is True:
        return f"sqrt(d_k = {t.dims.d_k}) = {t.divisor:.4f}".rstrip("0").rstrip(".")
    return f"{t.divisor:g}"


def _every(t: Trace) -> Step:
    p, d = t.problem, t.dims
    step = Step(8, "Step 8 · every input: softmax(Q K^T / s) V")
    for a, h in enumerate(t.heads):
        head = _head(t, a)
        step.items.append(Block(f"{head}scores = Q K^T", "scores", p.labels, p.key_labels, h.scores,
                                (a + 1, "scores", None)))
        scaled = "scores" if t.divisor == 1.0 else f"scores / {_divisor(t)}"
        step.items.append(Block(f"{head}weights = softmax({scaled})", "weights", p.labels,
                                p.key_labels, h.weights, (a + 1, "weights", None)))
        step.items.append(Block(f"{head}output = weights · V", "output", p.labels, numbered(d.d_v), h.output,
                                (a + 1, "output", None)))
    if d.heads > 1:
        step.items.append(Block("concat(heads)", "output", p.labels, numbered(d.heads * d.d_v), t.concat,
                                (None, _concat_key(t), None)))
    if p.w_o is not None:
        formula = "concat · W_O" + (" + b_o" if p.b_o is not None else "")
        step.items.append(Block(f"output = {formula}", "output", p.labels, numbered(d.d_out), t.output,
                                (None, "output", None)))
    c = t.self_check
    if t.decimals is not None:
        step.items.append(Note(
            f"check: with rounding carried at {t.decimals} decimal{'s' * (t.decimals != 1)}, the row-by-row outputs differ from "
            f"softmax(Q K^T / s) V by at most {c.max_abs_diff:.{t.decimals + 2}f}"
        ))
    elif c.ok:
        which = "" if len(c.rows) == d.n else f" of inputs {', '.join(str(r + 1) for r in c.rows)}"
        step.items.append(Note(f"check: softmax(Q K^T / s) V equals the row-by-row outputs{which} (within 1e-9)"))
    else:
        step.items.append(Note(f"check FAILED: softmax(Q K^T / s) V differs from the row-by-row outputs by "
                               f"{c.max_abs_diff:.3e}"))
    return step


def warnings(t: Trace) -> list[str]:
    """the trace's facts worth a warning, in words: each input whose every key is masked"""
    labels = t.problem.labels
    return [f"input {i + 1} ({labels[i]}): every key is masked, so its weights are all 0 and its output is 0"
            for i in t.fully_masked]


def experiment_steps(result: Any) -> list[Step]:
    """an experiment's matrices and findings as one step"""
    step = Step(0, f"Experiment · {result.title}")
    for title, kind, rows, cols, values in result.matrices:
        step.items.append(Block(title, kind, rows, cols, values))
    step.items.extend(Note(text) for text in result.findings)
    return [step]


def worksheet_steps(t: Trace) -> list[Step]:
    """the steps a worksheet asks for: the problem (steps 1 and 2), then every table to compute"""
    if t.query is None:
        steps = run_steps(t)
    else:
        steps = [_inputs(t), _weights(t), _derive(t, f"Step 3 · derive q{t.query}, K and V"),
                 *_query_steps(t, t.rows[0])]
    return [replace(step, items=[item for item in step.items if not (isinstance(item, Note) and item.text.startswith("check"))])
            for step in steps]


def who_steps(t: Trace, heading: str, top: int = 3) -> list[Step]:
    """each token's top attended tokens with their weights, head by head"""
    labels, keys = t.problem.labels, t.problem.key_labels
    width = max(len(labels[r]) for r in t.rows)
    step = Step(0, heading)
    for a, attends in enumerate(who.per_head(t, top)):
        if len(t.heads) > 1:
            step.items.append(Note(f"head {a + 1}"))
        for j, (r, best) in enumerate(zip(t.rows, attends.best)):
            pairs = " · ".join(f"{keys[c]} {attends.weights[j, c]:.2f}" for c in best)
            step.items.append(Note(f"{labels[r].ljust(width)} → {pairs}"))
    return [step]


def layer_summary_steps(t: Trace, heading: str, top: int = 3) -> list[Step]:
    """across every head of a layer: each token's top tokens by mean weight, and each head's favourite"""
    labels, keys = t.problem.labels, t.problem.key_labels
    mean, favourites = who.layer_mean(t, top)
    width = max(len(labels[r]) for r in t.rows)
    step = Step(0, heading)
    step.items.append(Block(f"mean weight over the {len(t.heads)} heads", "weights", t.row_labels, keys, mean.weights))
    for j, (r, best) in enumerate(zip(t.rows, mean.best)):
        pairs = " · ".join(f"{keys[c]} {mean.weights[j, c]:.2f}" for c in best)
        per_head = " ".join(f"{a + 1}:{keys[fav]}" for a, fav in enumerate(favourites[:, j]))
        step.items.append(Note(f"{labels[r].ljust(width)} → {pairs}   | top per head: {per_head}"))
    return [step]
