"""What `attntrace flash` shows: the online softmax as pages, one per head and query, each a table of the recurrence
block by block, then O / ℓ beside step 7's output and their largest difference."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from attntrace.core.engine import checked_rows
from attntrace.core.flash import Flash
from attntrace.language import N_, _, ngettext
from attntrace.views.page import Block, Note, Section, Step
from attntrace.views.walkthrough import numbered

# the labels of the tables, in English as a CSV writes them and translated where a person reads them
KEYS, SINK = N_("keys {keys}"), N_("sink")
STATE = (N_("max"), "m", N_("rescale"), N_("sum"), "ℓ")  # the columns of the state after each block, before O's
COMPARED = (N_("O / ℓ"), N_("step 7"))


def flash_steps(f: Flash) -> list[Step]:
    """the recurrence in words, each shown query's blocks head by head, then every query's output against step 7's"""
    t = f.trace
    shown = list(range(len(t.rows))) if t.query is not None else checked_rows(t.dims.n)
    steps = [_rules(f)]
    for j in shown:
        for a in range(len(f.heads)):
            steps.append(_query(f, a, j))
    if len(shown) < len(t.rows):
        steps[-1] = replace(steps[-1], items=(*steps[-1].items, Note(
            _("… the blocks of inputs {first} to {last} are not shown; attntrace flash --input N shows any one, and "
              "--format json every one").format(first=shown[2] + 2, last=shown[3]), "hidden")))
    steps.append(_every(f))
    return steps


def _rules(f: Flash) -> Step:
    """the recurrence in words and how the keys fall into blocks"""
    m = f.trace.dims.m
    parts = " | ".join(_keys(start, stop) for start, stop in f.bounds)
    items = [
        Note(ngettext("blocks of {block} key, in order: {blocks}", "blocks of {block} keys, in order: {blocks}",
                      f.block).format(block=f.block, blocks=parts)),
        Note(_("before block 1: running maximum m = -inf, running sum ℓ = 0, O = 0")),
        Note(_("each block: m_new = max(m_old, block max); rescale factor e^(m_old - m_new) (0 at the first block, "
               "where m_old = -inf); ℓ = ℓ · e^(m_old - m_new) + Σ e^(s - m_new); O = O · e^(m_old - m_new) + "
               "Σ e^(s - m_new) · v")),
        Note(_("a block whose every key is masked is skipped: m, ℓ and O stay as they were")),
        Note(_("at the end: output = O / ℓ (0 when every key is masked), the same as step 7's")),
    ]
    if any(h.sink is not None for h in f.heads):
        items.append(Note(_("the sink logit joins the denominator after the last block, as one more score whose value "
                            "is 0: ℓ gains e^(sink - m), O only its rescaling")))
    if f.block >= m:
        items.append(Note(ngettext("the block size {block} is not less than the {m} key: one block holds them all",
                                   "the block size {block} is not less than the {m} keys: one block holds them all",
                                   m).format(block=f.block, m=m)))
    return Section(_("Online softmax (FlashAttention), blocks of keys"), tuple(items))


def _keys(start: int, stop: int) -> str:
    """a block's keys, from 1: "3" or "1-2" """
    return str(start + 1) if stop - start == 1 else f"{start + 1}-{stop}"


def _head(f: Flash, a: int) -> str:
    return _("head {head} · ").format(head=a + 1) if len(f.heads) > 1 else ""


def _query(f: Flash, a: int, j: int) -> Step:
    """head a's (from 0) online softmax for the traced row j: its scores, the recurrence, and O / ℓ against step 7"""
    t, h = f.trace, f.heads[a]
    row = t.rows[j]
    i, label, keys = row + 1, t.problem.labels[row], t.problem.key_labels
    head = _head(f, a)
    items: list[Block | Note] = [
        Block(_("{head}scores s({input}, j), as the softmax takes them").format(head=head, input=i), "scores",
              (label,), keys, h.scores[j:j + 1]),
    ]
    rows = [KEYS.format(keys=_keys(start, stop)) for start, stop in f.bounds]  # in English: a CSV's data
    table = np.column_stack([h.block_max[j], h.m[j], h.rescale[j], h.sums[j], h.ell[j], h.o[j]])
    if h.sink is not None:
        assert h.sink_m is not None and h.sink_rescale is not None and h.sink_sum is not None
        assert h.sink_ell is not None and h.sink_o is not None
        rows.append(SINK)
        table = np.vstack([table, [h.sink, h.sink_m[j], h.sink_rescale[j], h.sink_sum[j], h.sink_ell[j], *h.sink_o[j]]])
    cols = (*STATE, *(f"O{c}" for c in numbered(h.o.shape[2])))
    shown_rows = [_(KEYS).format(keys=_keys(start, stop)) for start, stop in f.bounds] + [_(SINK)] * (h.sink is not None)
    items.append(Block(_("{head}after each block: max = the block's largest score, m = running maximum, rescale = "
                         "e^(m_old - m_new), sum = Σ e^(s - m_new), ℓ = running sum, O = running output").format(
        head=head), "w", tuple(shown_rows), tuple(_(c) for c in cols), table, data_rows=tuple(rows), data_cols=cols))
    for b in np.flatnonzero(h.skipped[j]).tolist():
        start, stop = f.bounds[b]
        items.append(Note(_("block {number} (keys {keys}) is wholly masked for input {input}: skipped, m, ℓ and O "
                            "unchanged").format(number=b + 1, keys=_keys(start, stop), input=i)))
    items.extend(_compared(t.heads[a].output[j], h.output[j],
                           _("{head}output {input} = O / ℓ").format(head=head, input=i)))
    return Section(_("{head}online softmax for input {input} ({label})").format(head=head, input=i, label=label),
                tuple(items))


def _compared(traced: np.ndarray, flashed: np.ndarray, title: str) -> list[Block | Note]:
    """O / ℓ over step 7's output for one row, and their largest difference"""
    difference = float(np.max(np.abs(flashed - traced))) if traced.size else 0.0
    return [Block(title, "output", tuple(map(_, COMPARED)), numbered(len(traced)), np.vstack([flashed, traced]),
                  data_rows=COMPARED),
            Note(_("largest difference from step 7's output: {difference}").format(difference=difference_shown(difference)))]


def difference_shown(difference: float) -> str:
    """a difference as a page shows it: below 1e-13 (a few float64 roundings, machine-dependent in its last bits) as
    such, so that pages are the same on every machine; larger ones as they are"""
    return _("below 1e-13") if difference < 1e-13 else f"{difference:.1e}"


def _every(f: Flash) -> Step:
    """every traced query's O / ℓ per head, the heads side by side and through W_O, beside the trace's"""
    t, p = f.trace, f.trace.problem
    labels = t.row_labels
    items: list[Block | Note] = [Block(_("{head}O / ℓ, every input").format(head=_head(f, a)), "output", labels,
                                       numbered(h.output.shape[1]), h.output) for a, h in enumerate(f.heads)]
    if len(f.heads) > 1:
        items.append(Block(_("concat(heads) of O / ℓ"), "output", labels, numbered(f.concat.shape[1]), f.concat))
    if p.w_o is not None:
        formula = "concat · W_O" + (" + b_o" if p.b_o is not None else "")
        items.append(Block(_("output = {formula}").format(formula=formula), "output", labels,
                           numbered(f.output.shape[1]), f.output))
    items.append(Block(_("step 7's output"), "output", labels, numbered(t.output.shape[1]), t.output))
    said = (_("check: O / ℓ equals step 7's output (largest difference {difference}, within {tolerance})") if f.ok else
            _("check FAILED: O / ℓ differs from step 7's output by {difference} (more than {tolerance})"))
    items.append(Note(said.format(difference=difference_shown(f.max_diff), tolerance=f"{f.tolerance:.0e}"), "self_check"))
    return Section(_("Every input: O / ℓ against step 7"), tuple(items))
