"""Marking a sheet cell by cell at the precision the student worked to, with follow-through from their own numbers."""

from __future__ import annotations

import numpy as np

from attntrace import language
from attntrace.core import intermediates
from attntrace.core.arithmetic import round_half_up
from attntrace.core.attention import logits
from attntrace.core.trace import Trace
from attntrace.homework.redo import Own, Redo, recompute
from attntrace.homework.results import (
    CONSEQUENCE,
    EXACT_FROM,
    NOT_ANSWERED,
    RIGHT,
    WRONG,
    Cell,
    Item,
    Rule,
    Traces,
    close,
    rounds_to,
    written_precision,
)
from attntrace.homework.said import Said, joined, ngettext
from attntrace.homework.said import said as in_language
from attntrace.homework.sheet import SIZES, Key, Sheet, SheetError
from attntrace.homework.worksheet import asked
from attntrace.language import N_, _


def asking(t: Trace, given: dict[Key, np.ndarray], notes: list[str]) -> dict[Key, np.ndarray]:
    """a table whose every cell is masked (every key padding) has nothing to write, so it is neither asked nor counted:
    it is read as left blank, and numbers written in it (but a masked weight's 0) are said in a note"""
    out = dict(given)
    for key, g in given.items():
        if masked_cells(t, key).all():
            if (np.isfinite(g) & (g != 0 if key[1] == "weights" else True)).any():
                notes.append(Said(N_("every cell of the {name} is masked, so it asks for nothing; the numbers written "
                                     "there are not marked"), name=item_name(t, key)))
            out[key] = np.full(g.shape, np.nan)
    return out


def masked_cells(t: Trace, key: Key) -> np.ndarray:
    """the cells the mask leaves nothing to write in: a masked scaled score, and its weight (0, or left blank)"""
    if key[1] == "weights" and t.allowed is not None:
        return ~t.allowed
    return np.isneginf(_expected(t, *key))


def _one_output(head: np.ndarray | None, final: np.ndarray, t: Trace, notes: list[str]) -> np.ndarray:
    """one head and no W_O: the head's output and the final output are one answer; where they differ, the worse counts"""
    if head is None or head.shape != final.shape:
        return final
    both = ~np.isnan(head) & ~np.isnan(final) & (head != final)
    if both.any():
        truth = t.heads[0].output
        worse = np.where(np.abs(final - truth) > np.abs(head - truth), final, head)
        i, j = np.argwhere(both)[0]
        notes.append(Said(N_("the output is written twice, differently ({cell}: {first} and {second}); the one further "
                             "from the answer is marked"), cell=cell_name(t, (1, "output"), int(i), int(j)),
                          first=f"{head[i, j]:g}", second=f"{final[i, j]:g}"))
        head = np.where(both, worse, head)
    return np.where(np.isnan(head), final, head)


def given_of(sheet: Sheet, t: Trace, notes: list[str], problem: str) -> dict[Key, np.ndarray]:
    """the sheet's matrices for what the problem asks, each checked against the shape it must have"""
    keys = asked(t)
    heads = len(t.heads)
    cells = dict(sheet.cells)
    for head in {h for h, _key in cells if h is not None} | set(sheet.heads):
        if head > heads:
            raise SheetError(in_language(ngettext("{sheet}: the sheet gives head {head}, but the problem has {n} head",
                                                  "{sheet}: the sheet gives head {head}, but the problem has {n} heads",
                                                  heads, sheet=sheet.origin, head=head)))
    if (None, "output") not in keys and (None, "output") in cells:  # one head, no W_O: the final output is the head's
        cells[(1, "output")] = _one_output(cells.get((1, "output")), cells.pop((None, "output")), t, notes)
    _same_shapes(sheet, t, cells, problem)
    out: dict[Key, np.ndarray] = {}
    for head, key in keys:
        expected = _expected(t, head, key)
        value = cells.get((head, key))
        if value is None:
            value = np.full(expected.shape, np.nan)
        if key == "weights":
            value = np.where(np.isneginf(value), 0.0, value)  # "masked" written for a weight is its 0
        out[(head, key)] = value
    return out


def _sizes(head: int | None, key: str) -> tuple[str, str]:
    """the sizes a table's rows and columns count: the inputs answered, the keys, d_k, d_v, or the final output's width"""
    return ("n", "d_out") if head is None else SIZES[key]


def _same_shapes(sheet: Sheet, t: Trace, cells: dict[Key, np.ndarray], problem: str) -> None:
    """every table of the sheet has the shape the problem gives it; when none does, and the tables agree with one another
    on the sizes of another problem, the sheet answers that problem: said so, as a whole, rather than one table's rows"""
    wrong = [(key, value.shape, _expected(t, *key).shape) for key, value in cells.items()
             if key[1] in SIZES and value.shape != _expected(t, *key).shape]
    if not wrong:
        return
    (head, key), got, want = wrong[0]
    sizes: dict[str, set[int]] = {}
    for (h, k), value in cells.items():
        if k in SIZES:
            for size, count in zip(_sizes(h, k), value.shape):
                sizes.setdefault(size, set()).add(count)
    fits = {size: count for size, counts in sizes.items() if len(counts) == 1 for count in counts}
    d = t.dims
    ours = {"n": d.n, "m": d.m, "d_k": d.d_k, "d_v": d.d_v, "d_out": d.d_out}  # every input's, as a sheet of them all
    differ = [size for size in fits if fits[size] != ours[size]]
    if len(fits) < len(sizes) or not differ or len(wrong) == 1 and len(differ) == 1:  # the tables disagree, or one is
        raise SheetError(f"{sheet.origin}: {_shape_error(t, head, key, got, want)}")  # one size off: a slip in it
    where = _table(t, head, key)
    said = joined([_size(size, fits[size]) for size in ("n", "m", "d_k", "d_v", "d_out") if size in fits],
                  N_("{first}, {second}"))
    raise SheetError(_("{sheet}: this sheet answers another problem ({sizes}): its {table} is {rows} x {columns}, where "
                       "{problem} asks for {want_rows} x {want_columns}; check it against the problem it answers").format(
        sheet=sheet.origin, sizes=in_language(said), table=where, rows=got[0], columns=got[1], problem=problem,
        want_rows=want[0], want_columns=want[1]))


def _size(size: str, count: int) -> Said:
    """another problem's size, in words"""
    if size == "n":
        return ngettext("{n} input", "{n} inputs", count)
    if size == "m":
        return ngettext("{n} key", "{n} keys", count)
    if size == "d_out":
        return Said(N_("an output {n} wide"), n=count)
    return Said("{size} = {n}", size=size, n=count)


def _table(t: Trace, head: int | None, key: str) -> str:
    """a table of a sheet by its keys: output, scaled, or head 2 scaled"""
    return "output" if head is None else _("head {head} {key}").format(head=head, key=key) if len(t.heads) > 1 else key


ROWS = {"n": N_("one per input"), "m": N_("one per key")}  # what a table's rows or columns count, in words


def _expected(t: Trace, head: int | None, key: str) -> np.ndarray:
    return t.output if head is None else getattr(t.heads[head - 1], key)


def _shape_error(t: Trace, head: int | None, key: str, got: tuple[int, ...], want: tuple[int, ...]) -> str:
    where = _table(t, head, key)
    rows = _("the input answered (query {query})").format(query=t.query) if t.query is not None and key not in (
        "k", "v") else _(ROWS["m"]) if key in ("k", "v") else _(ROWS["n"])
    cols = {"q": "d_k", "k": "d_k", "v": "d_v", "output": "d_v" if head is not None else "d_out"}.get(key) or _(ROWS["m"])
    if got[0] != want[0]:
        return in_language(ngettext("{table} has {n} row, expected {expected}: {rows}",
                                    "{table} has {n} rows, expected {expected}: {rows}", got[0], n=got[0], table=where,
                                    expected=want[0], rows=rows))
    return in_language(ngettext("{table} has {n} column, expected {expected}: {columns}",
                                "{table} has {n} columns, expected {expected}: {columns}", got[1], n=got[1],
                                table=where, expected=want[1], columns=cols))


class Work:
    """one sheet being marked: the true, carried and the student's own values of every intermediate"""

    def __init__(self, traces: Traces, t: Trace, given: dict[Key, np.ndarray], precision: int, rule: Rule) -> None:
        self.traces, self.t, self.given, self.precision, self.rule = traces, t, given, precision, rule
        self.cell_precision = {key: np.maximum(written_precision(g), precision) for key, g in given.items()}
        self.written: int | None = None  # the decimals the sheet was written to, when --precision asks for others
        self.verdicts: dict[Key, str] = {}

    # --- the values each step is judged against ---
    def expected(self, key: Key) -> np.ndarray:
        return _expected(self.t, *key)

    def carried(self, key: Key, cell_precision: int) -> np.ndarray:
        return _expected(self.traces.traced(self.t.query, cell_precision), *key)

    def own(self, key: Key) -> Own:
        """the student's numbers where written, else the true ones (exact, so no rounding error)"""
        g = self.given[key]
        written = np.isfinite(g)
        values = np.where(written, g, self.expected(key))
        if key[1] == "scaled" and written.any():  # their blanks are their mask, and so are the cells they masked later
            values = np.where(written & ~self.masked_at_softmax(key[0]), g, -np.inf)
        eps = np.where(written, 0.5 * 10.0 ** -np.minimum(self.cell_precision[key], EXACT_FROM + 3), 0.0)
        return Own(values, eps)

    def masked_at_softmax(self, head: int | None) -> np.ndarray:
        """the masked cells of head's scaled scores where the student wrote the score before the mask yet gave the
        key no weight: they masked at the softmax, as many books do, rather than leaving the mask out"""
        none = np.zeros(self.t.heads[0].scaled.shape if self.t.heads else (0, 0), dtype=bool)
        scaled, weights = self.given.get((head, "scaled")), self.given.get((head, "weights"))
        if head is None or self.t.allowed is None or scaled is None or weights is None or not np.isfinite(weights).any():
            return none
        hidden = ~self.t.allowed & np.isfinite(scaled) & ((weights == 0) | np.isnan(weights))
        if not hidden.any():
            return none
        scores = self.own((head, "scores"))
        h = self.t.heads[head - 1]
        cell_precision = self.cell_precision[(head, "scaled")]
        fits = np.zeros(hidden.shape, dtype=bool)
        for values, bound in ((scores.values / self.t.divisor, scores.eps / self.t.divisor),  # their own scores
                              (h.scores / self.t.divisor, np.zeros(hidden.shape))):  # the true ones
            fits |= close(scaled, logits(values, 1.0, h.bias, self.t.problem.softcap), bound, cell_precision)
        return hidden & fits

    def answered(self, key: Key) -> bool:
        return key in self.given and bool(np.isfinite(self.given[key]).any())

    def scaled_of(self, head: int) -> Own:
        """what the student took the softmax of: their scaled scores, or their scores divided and masked"""
        if self.answered((head, "scaled")):
            return self.own((head, "scaled"))
        scores = self.own((head, "scores"))
        values = logits(scores.values, self.t.divisor, self.t.heads[head - 1].bias, self.t.problem.softcap)
        return Own(masked(self.t, values), scores.eps / self.t.divisor)

    # --- marking ---
    def mark_all(self) -> list[Item]:
        items = []
        for head, key in self.given:
            item = self.mark((head, key))
            self.verdicts[(head, key)] = item.verdict
            items.append(item)
        return items

    def mark(self, key: Key) -> Item:
        """one intermediate marked cell by cell: right, a consequence of an earlier mistake, or wrong"""
        head, step = key
        g = self.given[key]
        item = Item(head, step, item_name(self.t, key), max_points=_points(self.rule, key, self.t))
        masked_cell = masked_cells(self.t, key)  # a masked scaled score is asked to be left blank (or written masked)
        if step == "weights":
            masked_cell &= np.isnan(g)  # a masked weight left blank is its 0
        written = ~np.isnan(g)  # a number, or "masked" (-inf), which is an answer too
        item.given = int((written & ~masked_cell).sum())
        item.asked = int((~masked_cell).sum())
        if not np.isfinite(g).any():
            item.note = Said(N_("none of its {cells} written"), cells=ngettext("{n} cell", "{n} cells", item.asked))
            return item
        cell_precision = self.cell_precision[key]
        right = self.right(g, self.expected(key), key, cell_precision) | (masked_cell & ~np.isfinite(g))
        if step == "scaled":
            right |= self._masked_later(item, head)
        redo = self.redo(key)
        follows = np.zeros(g.shape, dtype=bool)
        if redo is not None:
            right |= written & self._carried_on(key, redo[0], cell_precision)
            follows = self._follows(key, redo, cell_precision)
        own = self._own_words(key)
        blank = ~written
        if (right | blank).all():
            item.verdict = RIGHT
        elif (right | follows | blank).all():
            item.verdict, item.note = CONSEQUENCE, Said(N_("follows from {own}"), own=own)
        else:
            self._wrong(item, key, ~(right | follows | blank), redo if follows.any() else None, own)
        missing = item.asked - item.given
        if missing and item.verdict != NOT_ANSWERED:
            extra = Said(N_("{missing} of {cells} not written"), missing=missing,
                         cells=ngettext("{n} cell", "{n} cells", item.asked))
            item.note = Said(N_("{first}; {second}"), first=item.note, second=extra) if item.note else extra
        return item

    def _masked_later(self, item: Item, head: int | None) -> np.ndarray:
        """the masked cells of the scaled scores the student masked at the softmax instead, said in the item's note"""
        later = self.masked_at_softmax(head)
        count = int(later.sum())
        if count:
            item.note = Said(N_("{n} masked cell holds the score before the mask, and your weight there is 0: you masked "
                                "at the softmax, which is fine; the worksheet writes -inf in a masked cell, or leaves it "
                                "blank") if count == 1 else
                             N_("{n} masked cells hold the score before the mask, and your weights there are 0: you "
                                "masked at the softmax, which is fine; the worksheet writes -inf in a masked cell, or "
                                "leaves it blank"), n=count)
        return later

    def _carried_on(self, key: Key, candidates: list[np.ndarray], cell_precision: np.ndarray) -> np.ndarray:
        """cells that are the step redone from right numbers at the student's own rounding"""
        g = self.given[key]
        out = np.zeros(g.shape, dtype=bool)
        if all(self.verdicts.get(k, NOT_ANSWERED) in (RIGHT, NOT_ANSWERED) for k in depends(self.t, key)):
            for values in candidates:
                finite = np.isfinite(values)
                out |= finite & rounds_to(g, np.where(finite, values, 0.0), cell_precision)
        return out

    def _follows(self, key: Key, redo: Redo, cell_precision: np.ndarray) -> np.ndarray:
        """cells that follow from an earlier mistake: the step redone from the student's own numbers, within the error
        those numbers carry (it can show even through right-looking rounded numbers)"""
        g = self.given[key]
        out = np.zeros(g.shape, dtype=bool)
        if self.mistaken(key):
            candidates, bound = redo
            for values in candidates:
                if values.shape == g.shape:
                    out |= close(g, values, bound, cell_precision)
        return out

    def _own_words(self, key: Key) -> Said:
        """the student's own numbers a step follows from, in words (your own scores and V)"""
        direct = [k for k in depends(self.t, key) if self.verdicts.get(k) in (WRONG, CONSEQUENCE)]
        return Said(N_("your own {steps}"), steps=joined(list(dict.fromkeys(
            step_name(self.t, k[1]) if key[0] is not None else Said(N_("head outputs"))
            for k in direct or self.mistaken(key))), N_("{first} and {second}")))

    def _wrong(self, item: Item, key: Key, off: np.ndarray, redo: Redo | None, own: Said) -> None:
        """a wrong item's cells, each with what it should hold: the true value, or (when the other cells follow from
        the student's own numbers, so that these are slips of their own) what their numbers give"""
        g = self.given[key]
        cell_precision = self.cell_precision[key]
        item.verdict = WRONG
        shown, basis = self.shown(key, cell_precision), ""
        if redo is not None:
            basis = own
            shown = next(v for v in redo[0] if v.shape == g.shape).copy()
            for p in np.unique(cell_precision):
                at = (cell_precision == p) & np.isfinite(shown)
                if p < EXACT_FROM:
                    shown[at] = round_half_up(shown[at], int(p))
            item.note = Said(N_("the other cells follow from {own}"), own=own)
        carried = None if basis or self.rule.tolerance else self.carried(key, self.precision)
        quoted = np.maximum(written_precision(g), 0) if self.rule.tolerance else cell_precision  # with a tolerance: as
        # written
        written_at = None if self.written is None else np.maximum(written_precision(g), self.written)
        item.off = [Cell(int(i), int(j), cell_name(self.t, key, int(i), int(j)), float(g[i, j]), float(shown[i, j]),
                         int(quoted[i, j]), basis, _also(carried, shown, cell_precision, self.precision, i, j),
                         None if written_at is None else int(written_at[i, j]))
                    for i, j in np.argwhere(off)]
        item.written = int((~np.isnan(g)).sum())

    def mistaken(self, key: Key) -> list[Key]:
        """the earlier steps this one is computed from, directly or not, that are wrong or a consequence"""
        out: list[Key] = []
        for k in depends(self.t, key):
            if self.verdicts.get(k) in (WRONG, CONSEQUENCE):
                out.append(k)
            out.extend(m for m in self.mistaken(k) if m not in out)
        return out

    def right(self, g: np.ndarray, expected: np.ndarray, key: Key, cell_precision: np.ndarray) -> np.ndarray:
        """cells equal to the true value, or to the hand calculation with rounding carried, at the cell's precision"""
        finite = np.isfinite(expected)
        if self.rule.tolerance:
            rtol, atol = self.rule.rtol or 0.0, self.rule.atol or 0.0
            return finite & (np.abs(g - np.where(finite, expected, 0.0)) <= atol + rtol * np.abs(np.where(finite, expected, 0.0)))
        out = finite & rounds_to(g, np.where(finite, expected, 0.0), cell_precision)
        for p in np.unique(np.minimum(cell_precision, EXACT_FROM)):
            if p < EXACT_FROM:
                carried = self.carried(key, int(p))
                at = cell_precision == p
                out |= at & np.isfinite(carried) & rounds_to(g, np.where(np.isfinite(carried), carried, 0.0), cell_precision)
        return out

    def shown(self, key: Key, cell_precision: np.ndarray) -> np.ndarray:
        """the value a wrong cell should have held, at the precision it is judged at"""
        expected = self.expected(key)
        if self.rule.tolerance:
            return expected
        out = expected.copy()
        for p in np.unique(cell_precision):
            at = (cell_precision == p) & np.isfinite(expected)
            if p < EXACT_FROM:
                out[at] = round_half_up(expected[at], int(p))
        return out

    def redo(self, key: Key) -> Redo | None:
        """this step recomputed from the student's own earlier numbers, with the error those numbers carry"""
        return recompute(self, key, None)


def _also(carried: np.ndarray | None, shown: np.ndarray, cell_precision: np.ndarray, precision: int, i: int,
          j: int) -> float | None:
    """the key's value of a cell written at the sheet's precision, when the rounding carried makes it differ from the
    true value rounded (both are right: the report names both, so that it never contradicts the key)"""
    if carried is None or cell_precision[i, j] != precision or not np.isfinite(carried[i, j]):
        return None
    value = float(carried[i, j])
    return None if value == shown[i, j] else value


def depends(t: Trace, key: Key) -> list[Key]:
    """the intermediates a step is computed from"""
    head, step = key
    if head is None:
        return [(a, "output") for a in range(1, len(t.heads) + 1)]
    turned = t.problem.rope is not None
    inputs: dict[str, list[Key]] = {"q_rotated": [(head, "q")], "k_rotated": [(head, "k")],
            "scores": [(head, "q_rotated"), (head, "k_rotated")] if turned else [(head, "q"), (head, "k")],
            "scaled": [(head, "scores")],
            "weights": [(head, "scaled") if (head, "scaled") in asked(t) else (head, "scores")],
            "output": [(head, "weights"), (head, "v")]}
    return inputs.get(step, [])


def masked(t: Trace, scaled: np.ndarray) -> np.ndarray:
    return scaled if t.allowed is None else np.where(t.allowed, scaled, -np.inf)


def item_name(t: Trace, key: Key) -> Said:
    head, step = key
    if head is None:
        return Said(N_("final output (concat · W_O)") if t.problem.w_o is not None else N_("final output (concat)"))
    return Said(N_("head {head} · {name}"), head=head, name=step_name(t, step)) if len(t.heads) > 1 else step_name(t, step)


STEP_NAMES = {"q": "Q", "k": "K", "v": "V", "q_rotated": N_("Q turned by position"), "k_rotated": N_("K turned by position"),
              "scores": N_("scores"), "scaled": N_("scaled scores"), "weights": N_("weights"), "output": N_("output")}


def step_name(t: Trace, step: str) -> Said:
    """an intermediate's name in words (intermediates.NAME); the scaled scores of a problem that masks but does not
    scale are the masked scores, as its worksheet calls them"""
    p = t.problem
    if step == "scaled" and t.divisor == 1.0 and t.allowed is not None and not p.alibi and p.softcap is None:
        return Said(N_("masked scores"))
    return Said(STEP_NAMES.get(step, intermediates.NAME[step]))


class _StepWord(Said):
    """a cell's intermediate: its key as the JSON names the cell ("scaled"), and in English; in any other language
    its name in words (缩放后的得分)"""

    def said(self) -> str:
        return str(self) if language.current() == "en" else str(in_language(self.fields["name"]))


def cell_name(t: Trace, key: Key, i: int, j: int) -> Said:
    """a cell by its labels: weights[the → cat], q[the, 2] (in another language, by the intermediate's name in words);
    a label is kept apart from the words, never formatted"""
    head, step = key
    p = t.problem
    rows = p.key_labels if step in ("k", "v") else t.row_labels
    word = _StepWord("{key}", key="output" if head is None else step,
                     name=Said(N_("output")) if head is None else step_name(t, step))
    if step in ("scores", "scaled", "weights"):
        cell = Said("{step}[{row} → {column}]", step=word, row=rows[i], column=p.key_labels[j])
    else:
        cell = Said("{step}[{row}, {column}]", step=word, row=rows[i], column=j + 1)
    return Said(N_("head {head} · {cell}"), head=head, cell=cell) if head is not None and len(t.heads) > 1 else cell


def _points(rule: Rule, key: Key, t: Trace) -> float:
    name = "final" if key[0] is None else key[1]
    return rule.points.get(name, 1.0)
