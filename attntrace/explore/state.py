"""An exploration without a screen: the problem and its edits, where the reader is (step, input, head, cell), and what
each step shows, recomputed through the engine and the views after every change."""

from __future__ import annotations

import copy
import math
import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from attntrace.core import masks
from attntrace.core.arithmetic import MAX_PRECISION
from attntrace.core.attention import softmax
from attntrace.core.decode import decode
from attntrace.core.engine import trace
from attntrace.core.flash import flash
from attntrace.core.problem import Problem
from attntrace.core.trace import Trace
from attntrace.errors import AttntraceError, OutOfRange
from attntrace.language import N_, _, ngettext
from attntrace.memory import check_trace
from attntrace.render.jsonform import dumps, problem_to_dict
from attntrace.render.layout import shown
from attntrace.views.explain import angle_words, explain_steps, fixed, head_words, output_cell
from attntrace.views.explain_decode import explain_decode_steps
from attntrace.views.explain_flash import explain_flash_steps
from attntrace.views.page import Block, Note, Step
from attntrace.views.walkthrough import run_steps, step_steps

STEPS = (N_("prepare inputs"), N_("weights"), N_("derive Q, K, V"), N_("scores"), N_("softmax"),
         N_("weighted values"), N_("output"), N_("every input at once"))  # translated where they are shown
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")  # what a cell may be edited to
TEMPERATURES = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
GIVEN = {"X": "x", "W_Q": "w_q", "W_K": "w_k", "W_V": "w_v", "W_O": "w_o", "b_q": "b_q", "b_k": "b_k",
         "b_v": "b_v", "b_o": "b_o"}  # the tables of steps 1 and 2 that are the problem's own numbers, by title
MASKS = {"causal": N_("causal")}  # a mask's name as the status line shows it, by its name in a problem file
CACHED = 64  # traces and views kept; past that, those least lately asked for are dropped


@dataclass(frozen=True)
class Selected:
    """the selected cell: its table among the current step's tables, its row and its column, all from 0"""

    block: int
    row: int
    col: int


class Session:
    """the problem being explored, its undo history, and where the reader is; every view comes from the engine"""

    def __init__(self, problem: Problem, *, precision: int = 4, carry_rounding: bool = False, row: int = 0,
                 whose: str | None = None) -> None:
        """whose: which head of what the problem is, when it is one head of a model ("layer 5 · head 3/12")"""
        if not 0 <= row < problem.dims.n:
            raise OutOfRange("query", row + 1, problem.dims.n, "this problem has inputs")
        self.original = problem
        self.problem = problem
        self.whose = whose
        self.history: list[Problem] = []  # the problems before each change, the last one first to undo
        self.before: Problem | None = None  # the problem before the last change: what its highlighted cells differ from
        self.precision = precision
        self.carry_rounding = carry_rounding  # round every intermediate to the precision and carry it on
        self.step = 1
        self.row = row  # the input steps 4-7 follow, from 0
        self.head = 0
        self.temperature = 1.0
        self.tempered = False  # the softmax at a temperature is shown
        self.explaining = False  # the selected cell's arithmetic is shown
        self.flashing = False  # the online softmax of the input and head followed is shown, one block at a time
        self.flash_block = 0  # the block shown (from 0); past the last, the sink and then O / ℓ
        self.decoding = False  # the decode step that generates the input followed is shown, against its KV cache
        self._memo: OrderedDict[tuple[Any, ...], tuple[Problem, Any]] = OrderedDict()
        self.view()
        self.cell: Selected | None = None
        self._open()

    # what is shown

    @property
    def carried_precision(self) -> int | None:
        return self.precision if self.carry_rounding else None

    def view(self, problem: Problem | None = None) -> list[Step]:
        """the eight steps of problem (default: the current one) for the input and head followed"""
        p = self.problem if problem is None else problem

        def make() -> list[Step]:
            whole = self._cached(("run", id(p), self.carried_precision), p, lambda: run_steps(self._trace(p, None)))
            walked = step_steps(self._trace(p, self.row + 1))[1:]
            return [self._for_head(s, p) for s in (*whole[:3], *walked, whole[-1])]

        return self._cached(("view", id(p), self.row, self.head, self.carried_precision), p, make)  # type: ignore[no-any-return]

    def current(self) -> Step:
        return self.view()[self.step - 1]

    def blocks(self, step: Step | None = None) -> list[Block]:
        return [item for item in (step or self.current()).items if isinstance(item, Block)]

    def _trace(self, p: Problem, query: int | None) -> Trace:
        """every input (walked through as run does), or one input (from 1) as step does"""
        return self._traced(p, query, self.carried_precision)

    def _traced(self, p: Problem, query: int | None, carried: int | None) -> Trace:
        def make() -> Trace:
            check_trace(p, query)
            return trace(p, query=query, carry_rounding=carried)

        return self._cached(("trace", id(p), query, carried), p, make)  # type: ignore[no-any-return]

    def _cached(self, key: tuple[Any, ...], p: Problem, make: Callable[[], Any]) -> Any:
        """what make gives for key, made once while it is kept; a copy of the session (see ahead) may ask from another
        thread meanwhile, so every change to the memo is one step that cannot fail"""
        memo = self._memo
        held = memo.get(key)
        if held is not None and held[0] is p:  # the entry holds p, so no other problem can have its id meanwhile
            try:
                memo.move_to_end(key)
            except KeyError:  # dropped meanwhile
                pass
            return held[1]
        value = make()
        while len(memo) >= CACHED:
            try:
                memo.popitem(last=False)
            except KeyError:  # emptied meanwhile
                break
        memo[key] = (p, value)
        return value

    def ahead(self) -> Session:
        """a copy of the session to try a key on (on another thread, say): what it works out is kept where this session
        finds it, so the key costs this session nothing that the copy has worked out"""
        other = copy.copy(self)
        other.history = list(self.history)
        return other

    def _for_head(self, step: Step, p: Problem) -> Step:
        """the step with only the followed head's tables (and those of every head together), as the views make them"""
        if p.dims.heads == 1:
            return step
        keep = tuple(item for item in step.items if not isinstance(item, Block) or item.answer is None
                     or item.answer[0] in (None, self.head + 1))
        return replace(step, items=keep)

    def changed(self, number: int | None = None) -> list[np.ndarray | None]:
        """for each table of a step (default: the current one), its cells that differ from the problem before the last
        change"""
        number = self.step if number is None else number
        now = self.blocks(self.view()[number - 1])
        if self.before is None:
            return [None] * len(now)
        try:
            old = {_identity(b): b for b in self.blocks(self.view(self.before)[number - 1])}
        except AttntraceError:
            return [None] * len(now)
        out: list[np.ndarray | None] = []
        for b in now:
            was = old.get(_identity(b))
            out.append(None if was is None or was.values.shape != b.values.shape else was.values != b.values)
        return out

    # moving about

    def go(self, step: int) -> None:
        """open a step (1 to 8), its first cell selected"""
        self.step = min(max(step, 1), len(STEPS))
        self._open()

    def next_step(self, delta: int) -> None:
        if not 1 <= self.step + delta <= len(STEPS):
            raise AttntraceError(_("this is the last step") if delta > 0 else _("this is the first step"))
        self.go(self.step + delta)

    def follow(self, row: int) -> None:
        """follow input row (from 0) through steps 4-7"""
        n = self.problem.dims.n
        if not 0 <= row < n:
            raise AttntraceError(_("input {i} is out of range; this problem has inputs 1 to {n}").format(i=row + 1, n=n))
        self.row = row
        self._keep()

    def next_input(self, delta: int) -> None:
        n = self.problem.dims.n
        if not 0 <= self.row + delta < n:
            said = (_("input {i} is the last; this problem has inputs 1 to {n}") if delta > 0 else
                    _("input {i} is the first; this problem has inputs 1 to {n}"))
            raise AttntraceError(said.format(i=self.row + 1, n=n))
        self.follow(self.row + delta)

    def next_head(self, delta: int) -> None:
        heads = self.problem.dims.heads
        if heads == 1:
            raise AttntraceError(_("this problem has one head"))
        self.head = (self.head + delta) % heads
        self._keep()

    def select(self, cell: Selected) -> None:
        blocks = self.blocks()
        if not (0 <= cell.block < len(blocks) and 0 <= cell.row < len(blocks[cell.block].rows)
                and 0 <= cell.col < len(blocks[cell.block].cols)):
            raise AttntraceError(_("there is no such cell in this step"))
        self.cell = cell

    def move(self, rows: int, cols: int) -> None:
        """the cell rows down and cols right of the selected one, in the same table (hidden rows and columns skipped)"""
        if self.cell is None:
            raise AttntraceError(_("this step has no table"))
        c, b = self.cell, self.blocks()[self.cell.block]
        shown_rows, shown_cols = shown(len(b.rows))[0], shown(len(b.cols))[0]
        r = shown_rows[min(max(shown_rows.index(c.row) + rows, 0), len(shown_rows) - 1)]
        k = shown_cols[min(max(shown_cols.index(c.col) + cols, 0), len(shown_cols) - 1)]
        self.cell = Selected(c.block, r, k)

    def tab(self, delta: int) -> None:
        """the next cell (delta 1) or the previous one (-1), row by row, on to the next table and round again"""
        if self.cell is None:
            raise AttntraceError(_("this step has no table"))
        order = [Selected(k, r, c) for k, b in enumerate(self.blocks())
                 for r in shown(len(b.rows))[0] for c in shown(len(b.cols))[0]]
        self.cell = order[(order.index(self.cell) + delta) % len(order)]

    def _open(self) -> None:
        self.cell = Selected(0, 0, 0) if self.blocks() else None

    def _keep(self) -> None:
        """keep the selected cell where the step still has it, else select the first"""
        c, blocks = self.cell, self.blocks()
        if c is None or c.block >= len(blocks) or c.row >= len(blocks[c.block].rows) \
                or c.col >= len(blocks[c.block].cols):
            self._open()

    # changing the problem and how it is shown

    def editable(self) -> tuple[str, Block]:
        """the problem key of the selected cell's table, and the table; only the given numbers can be edited"""
        if self.cell is None:
            raise AttntraceError(_("this step has no table"))
        b = self.blocks()[self.cell.block]
        key = GIVEN.get(b.title) or ("source" if b.kind == "x" else None)  # X is the other table of kind x
        if self.step > 2 or key is None:
            raise AttntraceError(_("{title} is computed; edit X or the weights (steps 1 and 2) and watch it change").format(
                title=b.title))
        return key, b

    def edit(self, text: str) -> str:
        """put the number text in the selected cell of X or a weight; every later intermediate is recomputed"""
        key, b = self.editable()
        c = self.cell
        assert c is not None
        try:
            if not NUMBER.fullmatch(text.strip()):  # float() takes 1_000 and "nan" too; a cell takes a plain number
                raise ValueError
            value = float(text.strip())
        except ValueError:
            raise AttntraceError(_('"{text}" is not a number; type one such as 2, -0.5 or 1e-3').format(
                text=text.strip())) from None
        if not math.isfinite(value):
            raise AttntraceError(_("{text} is not a finite number; type one such as 2, -0.5 or 1e-3").format(
                text=text.strip()))
        matrix = np.array(getattr(self.problem, key), dtype=np.float64)
        if matrix.ndim == 1:
            matrix[c.col] = value
        else:
            matrix[c.row, c.col] = value
        changes: dict[str, Any] = {key: matrix}
        self._change(replace(self.problem, **changes))
        return f"{'source' if key == 'source' else b.title}[{c.row + 1}, {c.col + 1}] = {typed(value)}"

    def undo(self) -> str:
        if not self.history:
            raise AttntraceError(_("nothing to undo"))
        self.before, self.problem = self.problem, self.history.pop()
        self._keep()
        left = len(self.history)
        return ngettext("undone; {n} change left to undo", "undone; {n} changes left to undo", left).format(n=left)

    def toggle_scale(self) -> str:
        """no scaling, or the problem's own (sqrt(d_k) when it had none)"""
        own, p = self.original.scale, self.problem
        scale = False if p.scale is not False else (own if own is not False else True)
        self._change(self._cached(("scaled", id(p)), p, lambda: replace(p, scale=scale)))  # the same problem each time
        return _("scale: none") if self.problem.scale is False else _("scale: {scale}").format(scale=self.scale_words())

    def cycle_mask(self) -> str:
        """the next of: no mask, causal, a window, the problem's padding, the problem's own masks"""
        own = self.original
        window = own.window if own.window is not None else 1
        choices: list[tuple[masks.Mask, ...]] = [()]
        if own.source is None:
            choices.append((masks.Causal(),))
        choices.append((masks.Window(window),))
        if own.padding is not None:
            choices.append((masks.Padding(own.padding),))
        if own.mask not in choices:
            choices.insert(1, own.mask)
        p = self.problem
        now = choices.index(p.mask) if p.mask in choices else -1
        self._change(self._cached(("masked", id(p)), p, lambda: replace(p, mask=choices[(now + 1) % len(choices)])))
        return _("masks: none") if not self.problem.mask else _("masks: {masks}").format(masks=self.mask_words())

    def _change(self, new: Problem) -> None:
        """take a changed problem, once the engine has traced it (a problem it refuses is never taken)"""
        self.view(new)
        self.history.append(self.problem)
        self.before, self.problem = self.problem, new
        self._keep()

    def more_precision(self, delta: int) -> str:
        precision = self.precision + delta
        if not 0 <= precision <= MAX_PRECISION:
            raise AttntraceError(_("the precision goes from 0 to {most} decimals").format(most=MAX_PRECISION))
        previous, self.precision = self.precision, precision
        try:
            self.view()  # with carried rounding, every intermediate is rounded anew
        except AttntraceError:
            self.precision = previous
            raise
        self._keep()
        return ngettext("precision: {n} decimal", "precision: {n} decimals", precision).format(n=precision)

    def toggle_temperature(self) -> None:
        self.tempered = not self.tempered

    def warmer(self, delta: int) -> str:
        """the next temperature up (delta 1) or down (-1)"""
        at = min(range(len(TEMPERATURES)), key=lambda k: abs(TEMPERATURES[k] - self.temperature))
        if not 0 <= at + delta < len(TEMPERATURES):
            raise AttntraceError(_("the temperature goes from {low} to {high}").format(low=f"{TEMPERATURES[0]:g}",
                                                                                      high=f"{TEMPERATURES[-1]:g}"))
        self.temperature = TEMPERATURES[at + delta]
        self.tempered = True
        return _("temperature T = {t}").format(t=f"{self.temperature:g}")

    def toggle_explaining(self) -> None:
        self.explaining = not self.explaining

    @property
    def side_open(self) -> bool:
        """the side panel shows something: the arithmetic, the softmax at a temperature or the online softmax"""
        return self.explaining or self.tempered or self.flashing or self.decoding

    def toggle_flash(self) -> None:
        self.flashing = not self.flashing

    def next_block(self, delta: int) -> str:
        """the online softmax's next block (delta 1) or previous (-1); the panel opens on it"""
        pages = self._flashed(self.problem, self.row + 1, self.precision)
        at = min(self.flash_block, len(pages) - 2) + delta
        if not 0 <= at <= len(pages) - 2:
            raise AttntraceError(_("the online softmax goes from block 1 to the output O / ℓ"))
        self.flash_block, self.flashing = at, True
        return pages[at + 1].heading

    def flash_page(self) -> tuple[str, list[str]]:
        """the online softmax's page shown (a block, the sink or O / ℓ) for the input and head followed: its heading
        and its lines, as `attntrace flash --explain` writes them"""
        pages = self._flashed(self.problem, self.row + 1, self.precision)
        page = pages[min(self.flash_block, len(pages) - 2) + 1]
        lines = [item.text for item in page.items if isinstance(item, Note)]
        if self.problem.dims.heads > 1:
            who = head_words(self.head + 1)
            lines = [line[len(who):] for line in lines if line.startswith(who)]
        return page.heading, lines

    def toggle_decoding(self) -> None:
        """the decode step of the input followed, shown or hidden; a problem decode refuses says why and stays hidden"""
        if not self.decoding:
            self._decoded(self.problem, self.row + 1, self.precision)
        self.decoding = not self.decoding

    def decode_lines(self) -> list[str]:
        """the decode step that generates the input followed, for the head followed, as `attntrace decode --input t
        --explain` writes it"""
        pages = self._decoded(self.problem, self.row + 1, self.precision)
        lines = [item.text for page in pages for item in page.items if isinstance(item, Note)]
        heads = self.problem.dims.heads
        if heads > 1:
            who, others = head_words(self.head + 1), tuple(head_words(a + 1) for a in range(heads))
            lines = [line[len(who):] if line.startswith(who) else line for line in lines
                     if line.startswith(who) or not line.startswith(others)]
        return lines

    def _decoded(self, p: Problem, position: int, precision: int) -> list[Step]:
        """decode --explain's pages for a position (from 1)"""
        return self._cached(("decode", id(p), position, precision), p,  # type: ignore[no-any-return]
                            lambda: explain_decode_steps(decode(p, position=position), precision))

    def _flashed(self, p: Problem, query: int, precision: int) -> list[Step]:
        """flash --explain's pages for an input (from 1): the legend, each block, the sink if any, O / ℓ"""
        return self._cached(("flash", id(p), query, precision), p,  # type: ignore[no-any-return]
                            lambda: explain_flash_steps(flash(self._traced(p, query, None)), precision))

    # words

    def arithmetic(self) -> list[str]:
        """the selected cell's arithmetic, as `attntrace explain` writes it, then how those lines are written"""
        if self.cell is None:
            return [_("this step has no table")]
        c, b = self.cell, self.blocks()[self.cell.block]
        if self.step <= 2:
            return [_("{cell} = {value} is given, not computed: e changes it").format(
                cell=f"{b.title}[{c.row + 1}, {c.col + 1}]", value=fixed(b.values[c.row, c.col], self.precision))]
        query, wanted = self._where(b, c)
        steps = self._explained(self.problem, query, self.precision, self.carried_precision)
        texts = [item.text for s in steps for item in s.items if isinstance(item, Note)]
        legend = [item.text for item in steps[0].items if isinstance(item, Note) and " = " not in item.text]  # how the
        # lines are written: step 3's first notes, the only ones without a result
        return [text for text in texts if wanted(text)] + [""] + legend

    def _explained(self, p: Problem, query: int, precision: int, carried: int | None) -> list[Step]:
        """explain's steps for an input (from 1)"""
        return self._cached(("explain", id(p), query, precision, carried), p,  # type: ignore[no-any-return]
                            lambda: explain_steps(self._traced(p, query, carried), precision))

    def _where(self, b: Block, c: Selected) -> tuple[int, Callable[[str], bool]]:
        """the input (from 1) whose arithmetic holds the cell, and which of its lines are the cell's"""
        d = self.problem.dims
        i = c.row + 1 if self.step in (3, 8) else self.row + 1  # steps 3 and 8 hold every input, a row each
        col = c.col + 1
        if b.answer is None:  # what the problem's settings give: rope's angles, an ALiBi bias, a logit on its way
            hp = head_words(self.head + 1) if d.heads > 1 else ""
            if self.step == 3:  # an angle: of q_i in its own table, else of k_j (in self-attention, of q_j too)
                angles = [k for k, given in enumerate(self.blocks()) if given.answer is None and given.rows != ("ω",)]
                letter = "q" if len(angles) == 2 and c.block == angles[0] else "k"  # the queries' first, as run shows
                vector = f"{letter}{c.row + 1 if letter == 'k' else self.row + 1}"
                name = f"{hp}{angle_words(vector, b.cols[c.col])} = "
                return self.row + 1, lambda t: t.startswith(name)
            return i, lambda t: t.startswith((f"{hp}score({i},{col}) ", f"{hp}capped({i},{col}) "))
        head, key, _row = b.answer
        hp = head_words(head) if head is not None and d.heads > 1 else ""
        if self.step == 3:
            name = f"{hp}{key[0]}{c.row + 1}'[{col}] = " if key.endswith("_rotated") else f"{hp}{key}{c.row + 1}[{col}] = "
            return (i if key[0] == "q" else self.row + 1), lambda t: t.startswith(name)
        if key in ("scores", "scaled"):
            return i, lambda t: t.startswith((f"{hp}score({i},{col}) ", f"{hp}capped({i},{col}) "))
        if key == "weights":
            return i, lambda t: t.startswith(f"{hp}w({i},{col}) = ")
        if key == "weighted":
            return i, lambda t: t.startswith(f"{hp}w({i},{c.row + 1}) · v{c.row + 1}[{col}] = ")
        projected = f"{output_cell(i, col)} = concat"
        if head is not None:
            return i, lambda t: t.startswith(f"{hp}{output_cell(i, col)} = ") and not t.startswith(projected)
        if key == "concat" or self.problem.w_o is None:  # a head's output, copied into the concatenation
            part = f"{head_words(c.col // d.d_v + 1)}{output_cell(i, c.col % d.d_v + 1)} = "
            return i, lambda t: t.startswith(part)
        return i, lambda t: t.startswith(projected)

    def temperature_block(self) -> Block:
        """the followed input's softmax row, at T = 1 and at the temperature: softmax(scaled score / T)"""
        key = ("temperature", id(self.problem), self.row, self.head, self.temperature, self.carried_precision)
        return self._cached(key, self.problem, self._tempered)  # type: ignore[no-any-return]

    def _tempered(self) -> Block:
        t = self._trace(self.problem, self.row + 1)
        h, i = t.heads[self.head], self.row + 1
        allowed = None if t.allowed is None else t.allowed[0:1]
        z = h.scaled[0:1]  # [1, m], -inf where masked
        values = np.vstack([softmax(z, allowed), softmax(z / self.temperature, allowed)])
        hp = head_words(self.head + 1) if self.problem.dims.heads > 1 else ""
        s = " / s" if t.divisor != 1.0 else ""
        return Block(_("{head}w({i}, j) = softmax over j of score({i}, j){s} / T").format(head=hp, i=i, s=s), "weights",
                     ("T = 1", f"T = {self.temperature:g}"), self.problem.key_labels, values)

    def scale_words(self) -> str:
        scale = self.problem.scale
        if scale is True:
            return f"÷ sqrt(d_k = {self.problem.dims.d_k})"
        return "none" if scale is False else f"÷ {scale:g}"

    def mask_words(self) -> str:
        words = []
        for m in self.problem.mask:
            if isinstance(m, masks.Window):
                words.append(_("window {size}").format(size=m.size))
            elif isinstance(m, masks.Padding):
                words.append(_("padding {keys}").format(keys=",".join(str(j + 1) for j, pad in enumerate(m.flags) if pad)))
            else:
                words.append(_(MASKS.get(m.name, m.name)))
        return _(", ").join(words) or "none"

    def status(self) -> str:
        """input i, head a, precision, scale, masks, the temperature (once t has shown it), edits: one line"""
        return " · ".join(self.status_parts())

    def status_parts(self) -> list[str]:
        """the status line's parts, each kept whole on a row when the line wraps"""
        p, d = self.problem, self.problem.dims
        head = self.whose if self.whose is not None and d.heads == 1 else _("head {head}/{heads}").format(
            head=self.head + 1, heads=d.heads)
        precision = _("precision {p}, carried") if self.carry_rounding else _("precision {p}")
        parts = [_("input {i}/{n} ({label})").format(i=self.row + 1, n=d.n, label=p.labels[self.row]), head,
                 precision.format(p=self.precision),
                 _("scale none") if p.scale is False else _("scale {scale}").format(scale=self.scale_words()),
                 _("masks none") if not p.mask else _("masks {masks}").format(masks=self.mask_words())]
        if self.tempered or self.temperature != 1.0:  # the temperature only the side panel's softmax is taken at
            parts.append(_("temperature T = {t}").format(t=f"{self.temperature:g}"))
        if self.history:
            changes = len(self.history)
            parts.append(ngettext("{n} change (u undoes)", "{n} changes (u undoes)", changes).format(n=changes))
        return parts

    def cell_words(self) -> str:
        """the selected cell: "cell [2, 3] of K = X · W_K", rows and columns from 1"""
        if self.cell is None:
            return _("no table in this step")
        return _("cell [{row}, {col}] of {table}").format(row=self.cell.row + 1, col=self.cell.col + 1,
                                                          table=self.blocks()[self.cell.block].title)

    def problem_text(self) -> str:
        """the problem as it stands, as a problem file"""
        return dumps(problem_to_dict(self.problem))


def _identity(b: Block) -> object:
    """what a table is across two problems: what it answers, or its title"""
    return b.answer if b.answer is not None else b.title


def typed(value: float) -> str:
    """a number as one types it: whole ones without a point, others in their shortest exact form"""
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
