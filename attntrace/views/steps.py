"""What each step shows: a trace arranged into the page model's titled blocks, step by step."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from attntrace.model import who
from attntrace.model.trace import Trace
from attntrace.views.page import Block, Note, Step
from attntrace.views.text import left as padded
from attntrace.views.text import width as text_width

if TYPE_CHECKING:
    from attntrace.model.experiments import Result

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
    for row, following in zip(shown, [*shown[1:], None]):
        walked = _query_steps(t, row)
        if following is not None and following != row + 1:
            walked[-1] = replace(walked[-1], items=(*walked[-1].items, _skipped(row, following)))
        steps.extend(walked)
    steps.append(_every(t))
    return steps


def _skipped(row: int, following: int) -> Note:
    """where a long run skips from input row + 1 to input following + 1: say so, and how to see the rest"""
    return Note(f"… steps 4-7 for inputs {row + 2} to {following} ({following - row - 1} inputs) are not shown; "
                "attntrace step --input N shows any one, and step 8 shows them all", "hidden")


def step_steps(t: Trace) -> list[Step]:
    """a compact reminder of q_i, K and V, then steps 4-7 for the one traced input"""
    reminder = _derive(t, f"Step 3 · reminder: q{t.query}, K and V")
    return [reminder, *_query_steps(t, t.rows[0])]


def _inputs(t: Trace) -> Step:
    p = t.problem
    items = [Block("X", "x", p.labels, numbered(t.dims.d_model), p.x)]
    if p.source is not None:
        items.append(Block("source (K and V come from here)", "x", p.key_labels, numbered(t.dims.d_src), p.source))
    return Step(1, "Step 1 · prepare inputs", tuple(items))


def _weights(t: Trace) -> Step:
    p = t.problem
    items: list[Block | Note] = []
    src = "x" if p.source is None else "source"
    for name, w, b in (("W_Q", p.w_q, p.b_q), ("W_K", p.w_k, p.b_k), ("W_V", p.w_v, p.b_v)):
        if w is None:
            letter = name[-1]
            feeds = "X" if letter == "Q" else src
            items.append(Note(f"{name}: none, so {letter} = {feeds} (no projection)"))
        else:
            items.append(Block(name, "w", numbered(w.shape[0]), numbered(w.shape[1]), w))
        if b is not None:
            items.append(Block(f"b_{name[-1].lower()}", "w", ("b",), numbered(len(b)), b[None, :]))
    if t.dims.heads > 1:
        items.append(Note(
            f"{t.dims.heads} heads: head a uses columns (a-1)·{t.dims.d_k}+1 to a·{t.dims.d_k} of W_Q and W_K, "
            f"and (a-1)·{t.dims.d_v}+1 to a·{t.dims.d_v} of W_V"
        ))
    if p.w_o is not None:
        items.append(Block("W_O", "w", numbered(p.w_o.shape[0]), numbered(p.w_o.shape[1]), p.w_o))
    if p.b_o is not None:
        items.append(Block("b_o", "w", ("b",), numbered(len(p.b_o)), p.b_o[None, :]))
    return Step(2, "Step 2 · weights", tuple(items))


def _head(t: Trace, a: int) -> str:
    return f"head {a + 1} · " if t.dims.heads > 1 else ""


def _column_range(t: Trace, a: int, size: int) -> str:
    """head a's (from 0) block of columns, "[:, 4..6]", for its formulas' titles; nothing with one head"""
    return f"[:, {a * size + 1}..{(a + 1) * size}]" if t.dims.heads > 1 else ""


def _derive(t: Trace, heading: str) -> Step:
    p, d = t.problem, t.dims
    items = []
    src = "X" if p.source is None else "source"
    for a, h in enumerate(t.heads):
        dk, dv = _column_range(t, a, d.d_k), _column_range(t, a, d.d_v)
        for name, formula, kind, rows, values, size in (
            ("Q", _proj("X", "W_Q" + dk, p.w_q, p.b_q, "b_q" + dk), "q", t.row_labels, h.q, d.d_k),
            ("K", _proj(src, "W_K" + dk, p.w_k, p.b_k, "b_k" + dk), "k", p.key_labels, h.k, d.d_k),
            ("V", _proj(src, "W_V" + dv, p.w_v, p.b_v, "b_v" + dv), "v", p.key_labels, h.v, d.d_v),
        ):
            label = "q" if name == "Q" and t.query is not None else name
            items.append(Block(f"{_head(t, a)}{label} = {formula}", kind, rows, numbered(size), values,
                               (a + 1, kind, None)))
    return Step(3, heading, tuple(items))


def _proj(inp: str, w_name: str, w: np.ndarray | None, b: np.ndarray | None, b_name: str) -> str:
    formula = inp if w is None else f"{inp} · {w_name}"
    return formula if b is None else f"{formula} + {b_name}"


def _query_steps(t: Trace, row: int) -> list[Step]:
    """steps 4 to 7 for one input"""
    return [_scores(t, row), _softmax(t, row), _weighted(t, row), _output(t, row)]


def _scores(t: Trace, row: int) -> Step:
    """step 4: input row's scores against every key, then scaled or masked when the problem does either"""
    j, i, label, keys = t.rows.index(row), row + 1, t.problem.labels[row], t.problem.key_labels
    items = []
    for a, h in enumerate(t.heads):
        head = _head(t, a)
        items.append(Block(f"{head}score({i}, j) = q{i} · k_j", "scores", (label,), keys, h.scores[j:j + 1],
                           (a + 1, "scores", j)))
        if t.divisor != 1.0:
            items.append(Block(f"{head}score({i}, j) / {_divisor(t)}", "scores", (label,), keys, h.scaled[j:j + 1],
                               (a + 1, "scaled", j)))
        elif t.allowed is not None:
            items.append(Block(f"{head}score({i}, j), masked", "scores", (label,), keys, h.scaled[j:j + 1],
                               (a + 1, "scaled", j)))
    return Step(4, f"Step 4 · attention scores for input {i} ({label})", tuple(items))


def _softmax(t: Trace, row: int) -> Step:
    """step 5: input row's weights, and a note when every key is masked for it"""
    j, i, label, keys = t.rows.index(row), row + 1, t.problem.labels[row], t.problem.key_labels
    items: list[Block | Note] = [
        Block(f"{_head(t, a)}w({i}, j) = softmax over j", "weights", (label,), keys, h.weights[j:j + 1], (a + 1, "weights", j))
        for a, h in enumerate(t.heads)
    ]
    if row in t.fully_masked:
        items.append(Note(f"every key is masked for input {i}: its weights are 0 and its output is 0"))
    return Step(5, f"Step 5 · softmax for input {i}", tuple(items))


def _weighted(t: Trace, row: int) -> Step:
    """step 6: each value weighted for input row"""
    j, i, keys = t.rows.index(row), row + 1, t.problem.key_labels
    items = tuple(Block(f"{_head(t, a)}w({i}, j) · v_j", "weighted", keys, numbered(t.dims.d_v), t.weighted(a, row),
                        (a + 1, "weighted", j)) for a in range(len(t.heads)))
    return Step(6, f"Step 6 · multiply the weights by the values for input {i}", items)


def _output(t: Trace, row: int) -> Step:
    """step 7: input row's output from each head, then their concatenation and W_O when the problem has them"""
    p, d = t.problem, t.dims
    j, i, label = t.rows.index(row), row + 1, p.labels[row]
    items = [Block(f"{_head(t, a)}output {i} = Σ_j w({i}, j) · v_j", "output", (label,), numbered(d.d_v),
                   h.output[j:j + 1], (a + 1, "output", j)) for a, h in enumerate(t.heads)]
    if d.heads > 1:
        items.append(Block(f"concat(heads) for input {i}", "output", (label,), numbered(d.heads * d.d_v),
                           t.concat[j:j + 1], (None, _concat_key(t), j)))
    if p.w_o is not None:
        formula = "concat · W_O" + (" + b_o" if p.b_o is not None else "")
        items.append(Block(f"output {i} = {formula}", "output", (label,), numbered(d.d_out),
                           t.output[j:j + 1], (None, "output", j)))
    return Step(7, f"Step 7 · sum the weighted values into output {i}", tuple(items))


def _concat_key(t: Trace) -> str:
    """without W_O the heads' concatenation is the final output"""
    return "concat" if t.problem.w_o is not None else "output"


def _divisor(t: Trace) -> str:
    if t.problem.scale is True:
        return f"sqrt(d_k = {t.dims.d_k}) = {t.divisor:.4f}".rstrip("0").rstrip(".")
    return f"{t.divisor:g}"


def _every(t: Trace) -> Step:
    """step 8: every input at once as matrices, then the self-check against the row-by-row steps"""
    p, d = t.problem, t.dims
    items: list[Block | Note] = []
    for a, h in enumerate(t.heads):
        head = _head(t, a)
        items.append(Block(f"{head}scores = Q K^T", "scores", p.labels, p.key_labels, h.scores, (a + 1, "scores", None)))
        scaled = "scores" if t.divisor == 1.0 else f"scores / {_divisor(t)}"
        items.append(Block(f"{head}weights = softmax({scaled})", "weights", p.labels, p.key_labels, h.weights,
                           (a + 1, "weights", None)))
        items.append(Block(f"{head}output = weights · V", "output", p.labels, numbered(d.d_v), h.output,
                           (a + 1, "output", None)))
    if d.heads > 1:
        items.append(Block("concat(heads)", "output", p.labels, numbered(d.heads * d.d_v), t.concat,
                           (None, _concat_key(t), None)))
    if p.w_o is not None:
        formula = "concat · W_O" + (" + b_o" if p.b_o is not None else "")
        items.append(Block(f"output = {formula}", "output", p.labels, numbered(d.d_out), t.output, (None, "output", None)))
    items.append(_self_check(t))
    return Step(8, "Step 8 · every input: softmax(Q K^T / s) V", tuple(items))


def _self_check(t: Trace) -> Note:
    """step 8's self-check in words: how far the matrix form is from the row-by-row outputs (both rounded the same way,
    with carried rounding); then, apart, how far carrying the rounding moved the output from the unrounded one"""
    c = t.self_check
    which = "" if len(c.rows) == t.dims.n else f" of inputs {', '.join(str(r + 1) for r in c.rows)}"
    carried = "" if t.decimals is None else \
        f" with rounding carried at {t.decimals} decimal{'s' * (t.decimals != 1)}"
    if c.ok:
        text = f"check: softmax(Q K^T / s) V{carried} equals the row-by-row outputs{which} (within 1e-9)"
    else:
        text = f"check FAILED: softmax(Q K^T / s) V{carried} differs from the row-by-row outputs by {c.max_abs_diff:.3e}"
    if t.decimals is not None and c.from_exact is not None:
        text += (f"; carrying the rounding moved the output at most {c.from_exact:.{t.decimals + 2}f} "
                 "from the unrounded one")
    return Note(text, "self_check")


def warnings(t: Trace) -> list[str]:
    """the trace's facts worth a warning, in words: each input whose every key is masked"""
    labels = t.problem.labels
    return [f"input {i + 1} ({labels[i]}): every key is masked, so its weights are all 0 and its output is 0"
            for i in t.fully_masked]


def experiment_steps(result: Result) -> list[Step]:
    """an experiment's matrices and findings as one step"""
    blocks = [Block(title, kind, rows, cols, values) for title, kind, rows, cols, values in result.matrices]
    findings = [Note(text) for text in result.findings]
    return [Step(0, f"Experiment · {result.title}", (*blocks, *findings))]


def worksheet_steps(t: Trace) -> list[Step]:
    """the steps a worksheet asks for: the problem (steps 1 and 2), then every table to compute"""
    if t.query is None:
        steps = run_steps(t)
    else:
        steps = [_inputs(t), _weights(t), _derive(t, f"Step 3 · derive q{t.query}, K and V"),
                 *_query_steps(t, t.rows[0])]
    return [_without_self_check(step) for step in steps]


def _without_self_check(step: Step) -> Step:
    """the step without step 8's self-check, which would give a worksheet's answers away"""
    return replace(step, items=tuple(item for item in step.items if not (isinstance(item, Note) and item.kind == "self_check")))


def who_steps(t: Trace, heading: str, top: int = 3, leave_out: tuple[int, ...] = ()) -> list[Step]:
    """each token's top attended tokens with their weights, head by head; tokens in leave_out (from 0) are not listed,
    as keys nor as rows (unless the trace is of that one input), and the weights stay as the model gave them"""
    labels, keys = t.problem.labels, t.problem.key_labels
    shown = [(j, r) for j, r in enumerate(t.rows) if t.query is not None or r not in leave_out]
    width = max(text_width(labels[r]) for _, r in shown)
    aside = _aside(keys, leave_out)
    notes = [Note(aside[0])] if aside else []
    for a, attends in enumerate(who.per_head(t, top, leave_out)):
        if len(t.heads) > 1:
            notes.append(Note(f"head {a + 1}"))
        slots = [max(text_width(keys[attends.best[j, s]]) for j, _ in shown) for s in range(attends.best.shape[1])]
        for j, r in shown:
            pairs = " · ".join(f"{padded(keys[c], slots[s])} {attends.weights[j, c]:.2f}"
                               for s, c in enumerate(attends.best[j]))
            tail = f"  | {aside[1]} {attends.aside[j]:.2f}" if aside else ""
            notes.append(Note(f"{padded(labels[r], width)} → {pairs}{tail}"))
    return [Step(0, heading, tuple(notes))]


def layer_summary_steps(t: Trace, heading: str, top: int = 3, leave_out: tuple[int, ...] = ()) -> list[Step]:
    """across every head of a layer: each token's top tokens by mean weight, and each head's favourite, in aligned
    columns; tokens in leave_out (from 0) are not listed, and the mean weight matrix is shown whole"""
    labels, keys = t.problem.labels, t.problem.key_labels
    mean, favourites = who.layer_mean(t, top, leave_out)
    shown = [(j, r) for j, r in enumerate(t.rows) if r not in leave_out]
    width = max(text_width(labels[r]) for _, r in shown)
    aside = _aside(keys, leave_out)
    items: list[Block | Note] = [
        Block(f"mean weight over the {len(t.heads)} heads", "weights", t.row_labels, keys, mean.weights)
    ]
    if aside:
        items.append(Note(aside[0]))
    slots = [max(text_width(keys[mean.best[j, s]]) for j, _ in shown) for s in range(mean.best.shape[1])]
    favourite = [max(text_width(keys[favourites[a, j]]) for j, _ in shown) for a in range(len(t.heads))]
    for j, r in shown:
        pairs = " · ".join(f"{padded(keys[c], slots[s])} {mean.weights[j, c]:.2f}" for s, c in enumerate(mean.best[j]))
        tail = f"  | {aside[1]} {mean.aside[j]:.2f}" if aside else ""
        per_head = " ".join(f"{a + 1}:{padded(keys[fav], favourite[a])}" for a, fav in enumerate(favourites[:, j]))
        items.append(Note(f"{padded(labels[r], width)} → {pairs}{tail}  | top per head: {per_head}".rstrip()))
    return [Step(0, heading, tuple(items))]


def _aside(keys: tuple[str, ...], leave_out: tuple[int, ...]) -> tuple[str, str] | None:
    """what the who views say about the tokens they leave out: a note, and the name each line gives their weight"""
    if not leave_out:
        return None
    names = [keys[c] for c in sorted(set(leave_out))]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    together = "+".join(names)
    verb = "is" if len(names) == 1 else "are"
    return (f"{listed} {verb} left out of these lists; the weights are the model's own (not renormalised), "
            f"and {together} at a line's end is its weight on {'it' if len(names) == 1 else 'them'}", together)
