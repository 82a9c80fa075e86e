"""What each step shows: a trace arranged into the page model's titled blocks, step by step."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from attntrace.core import who
from attntrace.core.problem import example
from attntrace.core.trace import Trace
from attntrace.core.variants import alibi_slopes, pair_index
from attntrace.escape import visible
from attntrace.language import _, ngettext
from attntrace.views.describe import sink_text
from attntrace.views.page import Block, Note, Section, Step
from attntrace.views.text import left as padded
from attntrace.views.text import width as text_width
from attntrace.words import counted

if TYPE_CHECKING:
    from attntrace.core.experiments import Result


def numbered(n: int, start: int = 1) -> tuple[str, ...]:
    return tuple(str(i) for i in range(start, start + n))


def run_steps(t: Trace, worksheet: bool = False) -> list[Step]:
    """the eight steps for every input (for a worksheet, without the sink weights, which are answers)"""
    steps = [_inputs(t), _weights(t), _derive(t, _("Step 3 · derive Q, K, V"))]
    shown = list(t.self_check.rows)  # the rows step 8 checked, walked through one by one
    for row, following in zip(shown, [*shown[1:], None]):
        walked = _query_steps(t, row, worksheet)
        if following is not None and following != row + 1:
            walked[-1] = replace(walked[-1], items=(*walked[-1].items, _skipped(row, following)))
        steps.extend(walked)
    steps.append(_every(t, worksheet))
    return steps


def _skipped(row: int, following: int) -> Note:
    """where a long run skips from input row + 1 to input following + 1: say so, and how to see the rest"""
    return Note(_("… steps 4-7 for inputs {first} to {last} ({count}) are not shown; attntrace step --input N shows any "
                  "one, and step 8 shows them all").format(first=row + 2, last=following,
                                                           count=counted(following - row - 1, "input")), "hidden")


def step_steps(t: Trace) -> list[Step]:
    """a compact reminder of q_i, K and V, then steps 4-7 for the one traced input"""
    reminder = _derive(t, _("Step 3 · reminder: q{query}, K and V").format(query=t.query))
    return [reminder, *_query_steps(t, t.rows[0])]


def _inputs(t: Trace) -> Step:
    p = t.problem
    items = [Block("X", "x", p.labels, numbered(t.dims.d_model), p.x)]
    if p.source is not None:
        items.append(Block(_("source (K and V come from here)"), "x", p.key_labels, numbered(t.dims.d_src), p.source))
    return Step(1, _("Step 1 · prepare inputs"), tuple(items))


def _weights(t: Trace) -> Step:
    p = t.problem
    items: list[Block | Note] = []
    src = "X" if p.source is None else "source"
    for name, w, b in (("W_Q", p.w_q, p.b_q), ("W_K", p.w_k, p.b_k), ("W_V", p.w_v, p.b_v)):
        if w is None:
            letter = name[-1]
            feeds = "X" if letter == "Q" else src
            items.append(Note(_("{name}: none, so {letter} = {feeds} (no projection)").format(name=name, letter=letter,
                                                                                               feeds=feeds)))
        else:
            items.append(Block(name, "w", numbered(w.shape[0]), numbered(w.shape[1]), w))
        if b is not None:
            items.append(Block(f"b_{name[-1].lower()}", "w", ("b",), numbered(len(b)), b[None, :]))
    d = t.dims
    if d.heads > 1 and d.kv_heads == d.heads:
        items.append(Note(_("{heads} heads: head a uses columns (a-1)·{d_k}+1 to a·{d_k} of W_Q and W_K, and "
                            "(a-1)·{d_v}+1 to a·{d_v} of W_V").format(heads=d.heads, d_k=d.d_k, d_v=d.d_v)))
    elif d.heads > 1:
        share = d.heads // d.kv_heads
        items.append(Note(ngettext(
            "{heads} query heads share {kv_heads} key/value block (grouped-query attention): head a uses columns "
            "(a-1)·{d_k}+1 to a·{d_k} of W_Q, and block b = ⌊(a-1)/{share}⌋+1 of W_K (columns (b-1)·{d_k}+1 to "
            "b·{d_k}) and of W_V (columns (b-1)·{d_v}+1 to b·{d_v})",
            "{heads} query heads share {kv_heads} key/value blocks (grouped-query attention): head a uses columns "
            "(a-1)·{d_k}+1 to a·{d_k} of W_Q, and block b = ⌊(a-1)/{share}⌋+1 of W_K (columns (b-1)·{d_k}+1 to "
            "b·{d_k}) and of W_V (columns (b-1)·{d_v}+1 to b·{d_v})", d.kv_heads,
        ).format(heads=d.heads, kv_heads=d.kv_heads, d_k=d.d_k, d_v=d.d_v, share=share)))
    items.extend(Note(text) for text in _variant_notes(t))
    if p.w_o is not None:
        items.append(Block("W_O", "w", numbered(p.w_o.shape[0]), numbered(p.w_o.shape[1]), p.w_o))
    if p.b_o is not None:
        items.append(Block("b_o", "w", ("b",), numbered(len(p.b_o)), p.b_o[None, :]))
    return Step(2, _("Step 2 · weights"), tuple(items))


def _variant_notes(t: Trace) -> list[str]:
    """what a problem's rope, alibi and softcap do, in words"""
    p, out = t.problem, []
    if p.rope is not None:
        at = _("positions 0 to n - 1") if p.rope.positions is None else _("the positions given")
        turns = _("rope: after the projections, q and k turn by position ({at}): dimension i with i + d_k/2 turn "
                  "together, pair i by position · {frequency}") if p.rope.pairs == "half" else \
            _("rope: after the projections, q and k turn by position ({at}): dimension 2i - 1 with 2i turn together, "
              "pair i by position · {frequency}")
        out.append(turns.format(at=at, frequency=_frequency(t)))
    if p.alibi:
        out.append(_("alibi: -slope · |i - j| is added to each head's scaled scores (slopes {slopes})").format(
            slopes=", ".join(f"{s:g}" for s in _slopes(t))))
    if p.softcap is not None:
        out.append(_("softcap: the scores become {cap} · tanh(score / {cap}) before the softmax").format(
            cap=f"{p.softcap:g}"))
    if p.sink is not None:
        out.append(_("sink: a learned logit per head ({sinks}) joins each row's softmax with no value, so the weights "
                     "over the keys sum to less than 1 and the sink weight is the rest").format(sinks=_sinks(t)))
    return out


def _sinks(t: Trace) -> str:
    """each head's sink logit, or the one every head shares"""
    assert t.problem.sink is not None
    return sink_text(t.problem.sink)


def _slopes(t: Trace) -> list[float]:
    return [float(s) for s in alibi_slopes(t.dims.heads)]


def _head(t: Trace, a: int) -> str:
    return _("head {head} · ").format(head=a + 1) if t.dims.heads > 1 else ""


def _column_range(t: Trace, a: int, size: int) -> str:
    """head a's (from 0) block of columns, "[:, 4..6]", for its formulas' titles; nothing with one head"""
    return f"[:, {a * size + 1}..{(a + 1) * size}]" if t.dims.heads > 1 else ""


def _derive(t: Trace, heading: str) -> Step:
    p, d = t.problem, t.dims
    items: list[Block | Note] = []
    src = "X" if p.source is None else "source"
    for a, h in enumerate(t.heads):
        g = d.kv_block(a)
        dk, kk, kv = _column_range(t, a, d.d_k), _column_range(t, g, d.d_k), _column_range(t, g, d.d_v)
        block = _(" (key/value block {block})").format(block=g + 1) if d.kv_heads != d.heads else ""
        for name, formula, kind, rows, values, size in (
            ("Q", _proj("X", "W_Q" + dk, p.w_q, p.b_q, "b_q" + dk), "q", t.row_labels, h.q, d.d_k),
            ("K", _proj(src, "W_K" + kk, p.w_k, p.b_k, "b_k" + kk) + block, "k", p.key_labels, h.k, d.d_k),
            ("V", _proj(src, "W_V" + kv, p.w_v, p.b_v, "b_v" + kv) + block, "v", p.key_labels, h.v, d.d_v),
        ):
            label = "q" if name == "Q" and t.query is not None else name
            items.append(Block(f"{_head(t, a)}{label} = {formula}", kind, rows, numbered(size), values,
                               (a + 1, kind, None)))
    if p.rope is not None:
        items.extend(_rotations(t))
    return Step(3, heading, tuple(items))


def _frequency(t: Trace, d_k: int | str = "d_k") -> str:
    """how far pair i turns per position: base^(-2(i-1)/d_k), or ω_i when the problem gives its own frequencies"""
    rope = t.problem.rope
    assert rope is not None
    return _("ω_i (the frequencies given)") if rope.frequencies is not None else f"{rope.base:g}^(-2(i-1)/{d_k})"


def _rotations(t: Trace) -> list[Block | Note]:
    """rope: the angle of each position and pair, then each head's q and k turned by them"""
    p, d = t.problem, t.dims
    assert p.rope is not None and t.key_angles is not None and t.query_angles is not None
    first, second = pair_index(d.d_k, p.rope.pairs)
    pairs = tuple(f"({i + 1},{j + 1})" for i, j in zip(first.tolist(), second.tolist()))
    rule = _("position · {frequency}").format(frequency=_frequency(t, d.d_k))
    items: list[Block | Note] = [Note(_("rotate q and k by position: each pair of dimensions (a, b) turns by its angle "
                                        "θ: a' = a cos θ - b sin θ, b' = b cos θ + a sin θ"))]
    if p.rope.frequencies is not None:
        items.append(Block(_("ω = each pair's turn per position, as the model scales it"), "w", ("ω",), pairs,
                           p.rope.pair_frequencies(d.d_k)[None, :]))
    if p.source is None and t.query is None:
        items.append(Block(_("angle θ = {rule}").format(rule=rule), "w", p.labels, pairs, t.key_angles))
    else:
        items.append(Block(_("angle θ of the queries = {rule}").format(rule=rule), "w", t.row_labels, pairs,
                           t.query_angles))
        items.append(Block(_("angle θ of the keys = {rule}").format(rule=rule), "w", p.key_labels, pairs, t.key_angles))
    for a, h in enumerate(t.heads):
        assert h.q_rotated is not None and h.k_rotated is not None
        q = "q" if t.query is not None else "Q"
        items.append(Block(_("{head}{q}' = {q} turned by position").format(head=_head(t, a), q=q), "q", t.row_labels,
                           numbered(d.d_k), h.q_rotated, (a + 1, "q_rotated", None)))
        items.append(Block(_("{head}K' = K turned by position").format(head=_head(t, a)), "k", p.key_labels,
                           numbered(d.d_k), h.k_rotated, (a + 1, "k_rotated", None)))
    return items


def _proj(inp: str, w_name: str, w: np.ndarray | None, b: np.ndarray | None, b_name: str) -> str:
    formula = inp if w is None else f"{inp} · {w_name}"
    return formula if b is None else f"{formula} + {b_name}"


def _query_steps(t: Trace, row: int, worksheet: bool = False) -> list[Step]:
    """steps 4 to 7 for one input"""
    return [_scores(t, row), _softmax(t, row, worksheet), _weighted(t, row), _output(t, row)]


def _scores(t: Trace, row: int) -> Step:
    """step 4: input row's scores against every key, then scaled or masked when the problem does either"""
    j, i, label, keys = t.rows.index(row), row + 1, t.problem.labels[row], t.problem.key_labels
    items = []
    turned = "'" if t.problem.rope is not None else ""
    later = t.problem.alibi or t.problem.softcap is not None  # the scaled scores come in step 5, with bias or cap
    for a, h in enumerate(t.heads):
        head = _head(t, a)
        items.append(Block(f"{head}score({i}, j) = q{i}{turned} · k_j{turned}", "scores", (label,), keys,
                           h.scores[j:j + 1], (a + 1, "scores", j)))
        if later:
            continue
        if t.divisor != 1.0:
            formula = _masked(t, f"{head}score({i}, j) / {_short_divisor(t)}")
            items.append(Block(f"{formula}{_divisor_value(t)}", "scores", (label,), keys, h.scaled[j:j + 1],
                               (a + 1, "scaled", j)))
        elif t.allowed is not None:
            items.append(Block(_masked(t, f"{head}score({i}, j)"), "scores", (label,), keys, h.scaled[j:j + 1],
                               (a + 1, "scaled", j)))
    return Step(4, _("Step 4 · attention scores for input {input} ({label})").format(input=i, label=label), tuple(items))


def _masked(t: Trace, formula: str) -> str:
    """a formula's title, said to be masked when the problem masks"""
    return formula if t.allowed is None else _("{formula}, masked").format(formula=formula)


def _softmax(t: Trace, row: int, worksheet: bool = False) -> Step:
    """step 5: input row's weights (with a sink, its weight too, unless on a worksheet), and a note when every key is
    masked for it"""
    j, i, label, keys = t.rows.index(row), row + 1, t.problem.labels[row], t.problem.key_labels
    items: list[Block | Note] = []
    p = t.problem
    for a, h in enumerate(t.heads):
        head, z = _head(t, a), f"score({i}, j)" + ("" if t.divisor == 1.0 else f" / {_short_divisor(t)}")
        if h.bias is not None:
            items.append(Block(f"{head}bias({i}, j) = -{_slopes(t)[a]:g} · |{i} - j|", "scores", (label,), keys,
                               h.bias[j:j + 1]))
            z += f" + bias({i}, j)"
        if p.softcap is not None:
            assert h.uncapped is not None
            if p.alibi or t.divisor != 1.0 or t.allowed is not None:
                items.append(Block(f"{head}z({i}, j) = {z}", "scores", (label,), keys, h.uncapped[j:j + 1]))
                z = f"z({i}, j)"
            items.append(Block(f"{head}{p.softcap:g} · tanh({z} / {p.softcap:g})", "scores", (label,), keys,
                               h.scaled[j:j + 1], (a + 1, "scaled", j)))
        elif h.bias is not None:
            items.append(Block(f"{head}{z}", "scores", (label,), keys, h.scaled[j:j + 1], (a + 1, "scaled", j)))
        title = _("{head}w({input}, j) = softmax over j").format(head=head, input=i)
        items.append(Block(title, "weights", (label,), keys, h.weights[j:j + 1],
                           (a + 1, "weights", j)))
        if h.sink_weight is not None and not worksheet:
            items.append(Block(_("{head}sink weight = e^sink / (Σ_j e^z_j + e^sink)").format(head=head), "weights",
                               (label,), (_("sink"),), h.sink_weight[j:j + 1, None]))
    if p.sink is not None:
        items.append(Note(_("the sink ({sinks}) joins the softmax's denominator with no value: input {input}'s weights "
                            "sum to less than 1, and the sink takes the rest").format(sinks=_sinks(t), input=i)))
    if row in t.fully_masked:
        items.append(Note(_("every key is masked for input {input}: its weights are 0 and its output is 0").format(
            input=i)))
    return Step(5, _("Step 5 · softmax for input {input}").format(input=i), tuple(items))


def _weighted(t: Trace, row: int) -> Step:
    """step 6: each value weighted for input row"""
    j, i, keys = t.rows.index(row), row + 1, t.problem.key_labels
    items = tuple(Block(f"{_head(t, a)}w({i}, j) · v_j", "weighted", keys, numbered(t.dims.d_v), t.weighted(a, row),
                        (a + 1, "weighted", j)) for a in range(len(t.heads)))
    return Step(6, _("Step 6 · multiply the weights by the values for input {input}").format(input=i), items)


def _output(t: Trace, row: int) -> Step:
    """step 7: input row's output from each head, then their concatenation and W_O when the problem has them"""
    p, d = t.problem, t.dims
    j, i, label = t.rows.index(row), row + 1, p.labels[row]
    title = _("{head}output {input} = Σ_j w({input}, j) · v_j")
    items: list[Block | Note] = [Block(title.format(head=_head(t, a), input=i), "output", (label,), numbered(d.d_v),
                   h.output[j:j + 1], (a + 1, "output", j)) for a, h in enumerate(t.heads)]
    if d.heads > 1:
        items.append(Block(_("concat(heads) for input {input}").format(input=i), "output", (label,), numbered(d.heads * d.d_v),
                           t.concat[j:j + 1], (None, _concat_key(t), j)))
    if p.w_o is not None:
        formula = "concat · W_O" + (" + b_o" if p.b_o is not None else "")
        items.append(Block(_("output {input} = {formula}").format(input=i, formula=formula), "output", (label,),
                           numbered(d.d_out), t.output[j:j + 1], (None, "output", j)))
    if row == 0 and t.query is None and _tutorial(t):  # in a run, as the article walks through it
        items.append(Note(_('the article "8 steps to self-attention" gets [2.0, 7.0, 1.5] here, not 1.9366 6.6831 '
                            "1.5951, because it rounded the softmax row of step 5 to [0.0, 0.5, 0.5] by hand; rounding "
                            "carried at one decimal (--carry-rounding --precision 1) gives [0.1, 0.5, 0.5] and 2.1 7.2 "
                            "1.8"), "tutorial"))
    return Step(7, _("Step 7 · sum the weighted values into output {input}").format(input=i), tuple(items))


def _tutorial(t: Trace) -> bool:
    """whether the trace is the article's worked example as the article computes it (no rounding carried), whose
    hand-rounded output 1 differs from the exact one"""
    p, e = t.problem, example()
    same = all(a is not None and b is not None and np.array_equal(a, b) for a, b in ((p.x, e.x), (p.w_q, e.w_q), (p.w_k, e.w_k),
                                                                   (p.w_v, e.w_v)))
    plain = all(v is None for v in (p.b_q, p.b_k, p.b_v, p.source, p.w_o, p.b_o, p.rope, p.softcap))
    return same and plain and p.heads == 1 and p.scale is False and not p.mask and not p.alibi and t.carry_rounding is None


def _concat_key(t: Trace) -> str:
    """without W_O the heads' concatenation is the final output"""
    return "concat" if t.problem.w_o is not None else "output"


def _divisor_value(t: Trace) -> str:
    """what sqrt(d_k) is, after a title that divides by it: " (sqrt(3) = 1.7321)"; nothing for a number"""
    if t.problem.scale is not True:
        return ""
    return f" (sqrt({t.dims.d_k}) = {f'{t.divisor:.4f}'.rstrip('0').rstrip('.')})"


def _short_divisor(t: Trace) -> str:
    """the divisor inside a formula: sqrt(d_k) or the number"""
    return "sqrt(d_k)" if t.problem.scale is True else f"{t.divisor:g}"


def _every(t: Trace, worksheet: bool = False) -> Step:
    """step 8: every input at once as matrices (with a sink, its weights unless on a worksheet), then the self-check
    against the row-by-row steps"""
    p, d = t.problem, t.dims
    items: list[Block | Note] = []
    for a, h in enumerate(t.heads):
        head = _head(t, a)
        turned = "'" if p.rope is not None else ""
        scores = _("{head}scores = {formula}").format(head=head, formula=f"Q{turned} K{turned}^T")
        items.append(Block(scores, "scores", p.labels, p.key_labels, h.scores,
                           (a + 1, "scores", None)))
        logits = _("scores") if t.divisor == 1.0 else _("scores / {divisor}").format(divisor=_short_divisor(t))
        if p.alibi:
            logits += " + bias"
        if p.softcap is not None:
            logits = f"{p.softcap:g} · tanh(({logits}) / {p.softcap:g})"
        logits = _masked(t, logits) + (", sink" if p.sink is not None else "")
        weights = _("{head}weights = softmax({logits})").format(head=head, logits=logits)
        items.append(Block(weights, "weights", p.labels, p.key_labels, h.weights,
                           (a + 1, "weights", None)))
        if h.sink_weight is not None and not worksheet:
            items.append(Block(_("{head}sink weight = 1 - Σ_j weights").format(head=head), "weights", p.labels,
                               (_("sink"),), h.sink_weight[:, None]))
        items.append(Block(_("{head}output = weights · V").format(head=head), "output", p.labels, numbered(d.d_v), h.output,
                           (a + 1, "output", None)))
    if d.heads > 1:
        items.append(Block("concat(heads)", "output", p.labels, numbered(d.heads * d.d_v), t.concat,
                           (None, _concat_key(t), None)))
    if p.w_o is not None:
        formula = "concat · W_O" + (" + b_o" if p.b_o is not None else "")
        items.append(Block(_("output = {formula}").format(formula=formula), "output",
                           p.labels, numbered(d.d_out), t.output, (None, "output", None)))
    items.append(_self_check(t))
    return Step(8, _("Step 8 · every input: {formula}").format(formula=_matrix_form(t)), tuple(items))


def _matrix_form(t: Trace) -> str:
    """step 8's formula as this problem computes it: softmax(Q K^T) V unscaled, softmax(Q K^T / √d_k) V scaled, or
    divided by the problem's own number, with ALiBi's bias and the soft cap"""
    p = t.problem
    turned = "'" if p.rope is not None else ""
    scaled = "" if t.divisor == 1.0 else " / √d_k" if p.scale is True else f" / {t.divisor:g}"
    logits = f"Q{turned} K{turned}^T{scaled}" + (" + bias" if p.alibi else "")
    if p.softcap is not None:
        logits = f"{p.softcap:g} · tanh(({logits}) / {p.softcap:g})"
    return f"softmax({logits}{', sink' if p.sink is not None else ''}) V"


def _self_check(t: Trace) -> Note:
    """step 8's self-check in words: how far the matrix form is from the row-by-row outputs (both rounded the same way,
    with carried rounding); then, apart, how far carrying the rounding moved the output from the unrounded one"""
    c, n = t.self_check, t.carry_rounding
    form, inputs = _matrix_form(t), ", ".join(str(r + 1) for r in c.rows)
    some = len(c.rows) != t.dims.n
    if c.ok and n is None:
        text = (_("check: {formula} equals the row-by-row outputs of inputs {inputs} (within 1e-9)") if some else
                _("check: {formula} equals the row-by-row outputs (within 1e-9)"))
    elif c.ok:
        assert n is not None
        text = (ngettext("check: {formula} with rounding carried at {n} decimal equals the row-by-row outputs of inputs "
                         "{inputs} (within 1e-9)",
                         "check: {formula} with rounding carried at {n} decimals equals the row-by-row outputs of inputs "
                         "{inputs} (within 1e-9)", n) if some else
                ngettext("check: {formula} with rounding carried at {n} decimal equals the row-by-row outputs (within "
                         "1e-9)",
                         "check: {formula} with rounding carried at {n} decimals equals the row-by-row outputs (within "
                         "1e-9)", n))
    elif n is None:
        text = _("check FAILED: {formula} differs from the row-by-row outputs by {difference}")
    else:
        assert n is not None
        text = ngettext("check FAILED: {formula} with rounding carried at {n} decimal differs from the row-by-row "
                        "outputs by {difference}",
                        "check FAILED: {formula} with rounding carried at {n} decimals differs from the row-by-row "
                        "outputs by {difference}", n)
    text = text.format(formula=form, inputs=inputs, n=n, difference=f"{c.max_abs_diff:.3e}")
    if n is not None and c.from_exact is not None:
        text += _("; carrying the rounding moved the output at most {moved} from the unrounded one").format(
            moved=f"{c.from_exact:.{n + 2}f}")
    return Note(text, "self_check")


def warnings(t: Trace) -> list[str]:
    """the trace's facts worth a warning, in words: each input whose every key is masked"""
    labels = t.problem.labels
    return [_("input {input} ({label}): every key is masked, so its weights are all 0 and its output is 0").format(
        input=i + 1, label=labels[i]) for i in t.fully_masked]


def experiment_steps(result: Result) -> list[Step]:
    """an experiment's matrices and findings as one step"""
    blocks = [Block(m.title, m.kind, m.rows, m.cols, m.values, data_cols=m.data_cols) for m in result.matrices]
    findings = [Note(text) for text in result.findings]
    return [Section(_("Experiment · {title}").format(title=result.title), (*blocks, *findings))]


def worksheet_steps(t: Trace) -> list[Step]:
    """the steps a worksheet asks for: the problem (steps 1 and 2), then every table to compute"""
    if t.query is None:
        steps = run_steps(t, worksheet=True)
    else:
        steps = [_inputs(t), _weights(t), _derive(t, _("Step 3 · derive q{query}, K and V").format(query=t.query)),
                 *_query_steps(t, t.rows[0], worksheet=True)]
    return [_without_self_check(step) for step in steps]


def _without_self_check(step: Step) -> Step:
    """the step without step 8's self-check and the worked example's note, which would give a worksheet's answers away"""
    return replace(step, items=tuple(item for item in step.items
                                     if not (isinstance(item, Note) and item.kind in ("self_check", "tutorial"))))


def who_steps(t: Trace, heading: str, top: int = 3, leave_out: tuple[int, ...] = ()) -> list[Step]:
    """each token's top attended tokens with their weights, head by head; tokens in leave_out (from 0) are not listed,
    as keys nor as rows (unless the trace is of that one input), and the weights stay as the model gave them"""
    labels, keys = _shown_labels(t)
    shown = [(j, r) for j, r in enumerate(t.rows) if t.query is not None or r not in leave_out]
    width = max(text_width(labels[r]) for _, r in shown)
    aside = _aside(keys, leave_out)
    notes = [Note(aside[0])] if aside else []
    for a, attends in enumerate(who.per_head(t, top, leave_out)):
        if len(t.heads) > 1:
            notes.append(Note(_("head {head}").format(head=a + 1)))
        slots = _slots(keys, attends.best, shown)
        for j, r in shown:
            pairs = " · ".join(f"{padded(keys[c], slots[s])} {attends.weights[j, c]:.2f}"
                               for s, c in enumerate(attends.best[j]) if c >= 0)
            tail = f"  | {aside[1]} {attends.aside[j]:.2f}" if aside else ""
            notes.append(Note(f"{padded(labels[r], width)} → {pairs}{tail}"))
    return [Section(heading, tuple(notes))]


def layer_summary_steps(t: Trace, heading: str, top: int = 3, leave_out: tuple[int, ...] = ()) -> list[Step]:
    """across every head of a layer: each token's top tokens by mean weight, and each head's favourite, in aligned
    columns; tokens in leave_out (from 0) are not listed, and the mean weight matrix is shown whole"""
    labels, keys = _shown_labels(t)
    mean, favourites = who.layer_mean(t, top, leave_out)
    shown = [(j, r) for j, r in enumerate(t.rows) if r not in leave_out]
    width = max(text_width(labels[r]) for _, r in shown)
    aside = _aside(keys, leave_out)
    items: list[Block | Note] = [
        Block(_("mean weight over the {n} heads").format(n=len(t.heads)), "weights", t.row_labels, t.problem.key_labels,
              mean.weights)
    ]
    if aside:
        items.append(Note(aside[0]))
    slots = _slots(keys, mean.best, shown)
    favourite = _slots(keys, favourites.T, shown)
    for j, r in shown:
        pairs = " · ".join(f"{padded(keys[c], slots[s])} {mean.weights[j, c]:.2f}"
                           for s, c in enumerate(mean.best[j]) if c >= 0)
        tail = f"  | {aside[1]} {mean.aside[j]:.2f}" if aside else ""
        per_head = " ".join(f"{a + 1}:{padded(keys[fav], favourite[a])}" for a, fav in enumerate(favourites[:, j]))
        items.append(Note((f"{padded(labels[r], width)} → {pairs}{tail}  | "
                           + _("top per head: {heads}").format(heads=per_head)).rstrip()))
    return [Section(heading, tuple(items))]


def _shown_labels(t: Trace) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """the tokens and keys as shown, for lines that pad them into columns: padding measures what is shown"""
    return tuple(map(visible, t.problem.labels)), tuple(map(visible, t.problem.key_labels))


def _slots(keys: tuple[str, ...], best: np.ndarray, shown: list[tuple[int, int]]) -> list[int]:
    """the width of each column of top keys, over the rows shown (a row the mask leaves fewer keys has gaps, -1)"""
    return [max((text_width(keys[best[j, s]]) for j, _ in shown if best[j, s] >= 0), default=0)
            for s in range(best.shape[1])]


def _aside(keys: tuple[str, ...], leave_out: tuple[int, ...]) -> tuple[str, str] | None:
    """what the who views say about the tokens they leave out: a note, and the name each line gives their weight"""
    if not leave_out:
        return None
    names = [keys[c] for c in sorted(set(leave_out))]
    together = "+".join(names)
    if len(names) == 1:
        return (_("{name} is left out of these lists; the weights are the model's own (not renormalised), and {name} at "
                  "a line's end is its weight on it").format(name=names[0]), together)
    return (_("{names} and {last} are left out of these lists; the weights are the model's own (not renormalised), and "
              "{together} at a line's end is its weight on them").format(names=_(", ").join(names[:-1]), last=names[-1],
                                                                           together=together), together)
