"""Worksheets of decoding with a KV cache: per step t and head, the positions the cache holds, the weights of q_t over
them and the output; the key is worked by hand, each value written rounded and carried into the next."""

from __future__ import annotations

import itertools
import math
import re
from typing import Any, NamedTuple

import numpy as np

from attntrace.core.arithmetic import Carried, round_half_up
from attntrace.core.attention import exps
from attntrace.core.attention import logits as logits_of
from attntrace.core.decode import Decoded, DecodeHead, kept, sink_logits
from attntrace.core.decode import decode as decoded
from attntrace.core.engine import trace
from attntrace.core.problem import Problem, divisor
from attntrace.escape import visible
from attntrace.homework import judging
from attntrace.homework.flashsheet import divided_again
from attntrace.homework.flashsheet import sink_rule as flash_sink_rule
from attntrace.homework.instructions import spaceless
from attntrace.homework.judging import BLANK, CONSEQUENCE, RIGHT, UNASKED, WRONG, Span, half, rounded
from attntrace.homework.results import Item, Kind, Report, Rule, Traces, precision_of, rounded_fewer
from attntrace.homework.said import Said
from attntrace.homework.sheet import DECODE_KEYS, Key, Sheet, SheetError
from attntrace.homework.tables import Page, Reading, another_problem, filled_pages, nothing_found, numbered, read_kind
from attntrace.homework.worksheet import heading_lines
from attntrace.language import N_, _, speaking
from attntrace.render.document import Document
from attntrace.views.page import Block, Note, Section


class Worked(NamedTuple):
    """one head's step t worked by hand: the positions cached (slot order), the weights and the output, rounded"""

    cache: tuple[int, ...]
    logits: np.ndarray  # [t] the printed logits of q_t against every position 1 … t
    weights: np.ndarray
    output: np.ndarray


def printed(problem: Problem, precision: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """each head's logits [n, n] (row t − 1: q_t against keys 1 … t) and values as the handout prints them: the scaled
    scores of the trace with the rounding carried, as the online-softmax handout prints them too"""
    carried = trace(problem, carry_rounding=precision)
    return [(round_half_up(h.scaled, precision), round_half_up(h.v, precision)) for h in carried.heads]


def works(problem: Problem, window: int | None, sinks: int, precision: int) -> tuple[Decoded, list[list[Worked]]]:
    """every head's every step decoded exactly, and worked by hand: decoding under carried rounding, the weights over
    the printed logits rounded, each w · v rounded before the sum (as step 6)"""
    cached = decoded(problem, window, sinks)
    key = decoded(problem, window, sinks, arithmetic=Carried(precision))
    return cached, [[Worked(step.cache, logits[step.t - 1, :step.t], step.weights, step.output) for step in head.steps]
                    for (logits, _v), head in zip(printed(problem, precision), key.heads)]


def answer_sheet(problem: Problem, window: int | None, sinks: int, blank: bool, precision: int) -> dict[str, Any]:
    """the JSON answer sheet: per head decode_cache, decode_weights (a list per step t, as long as the cache) and
    decode_output [t][d_v]; blank: every cell null"""
    _decoded, worked = works(problem, window, sinks, precision)

    def cells(rows: list[Any]) -> list[Any]:
        listed = [[float(x) if not isinstance(x, int) else x for x in row] for row in rows]
        return [[None for _ in row] for row in listed] if blank else listed

    heads = [{"head": a, "decode_cache": cells([list(w.cache) for w in steps]),
              "decode_weights": cells([w.weights.tolist() for w in steps]),
              "decode_output": cells([w.output.tolist() for w in steps])} for a, steps in enumerate(worked, start=1)]
    return {"name": problem.name, **({"student": None} if blank else {}), "precision": precision, "window": window,
            "sinks": sinks, "tokens": list(problem.labels), "heads": heads}


def steps(problem: Problem, window: int | None, sinks: int, precision: int) -> list[Section]:
    """a page per step t and head: q_t's logits against keys 1 … t and the values given; the cache, weights, output"""
    d, worked = works(problem, window, sinks, precision)
    values = [v for _logits, v in printed(problem, precision)]
    labels = tuple(visible(label) for label in problem.labels)
    out = []
    for t in range(1, d.dims.n + 1):
        for a, (head, steps_) in enumerate(zip(d.heads, worked), start=1):
            w = steps_[t - 1]
            what = _what(t, a, len(d.heads))
            slots = tuple(_("slot {slot}").format(slot=i) for i in range(1, len(w.cache) + 1))
            d_v = head.v.shape[1]
            out.append(Section(what, (
                Block(_(LOGITS).format(what=what), "scores", ("s",),
                      labels[:t], w.logits[None, :]),
                Block(_("{what}: values V").format(what=what), "v", labels[:t],
                      tuple(f"v[{c}]" for c in range(1, d_v + 1)), values[a - 1][:t]),
                Block(_(CACHE).format(what=what), "x", (_("position"),), slots,
                      np.array([w.cache], dtype=float), (a, "decode_cache", t - 1)),
                Block(_(WEIGHTS).format(what=what), "weights", ("w",), slots, w.weights[None, :],
                      (a, "decode_weights", t - 1)),
                Block(_(OUTPUT).format(what=what), "output", ("o",),
                      tuple(f"o[{c}]" for c in range(1, d_v + 1)), w.output[None, :], (a, "decode_output", t - 1)))))
    return out


WHOLE = N_("At step t, token t's k and v join the cache before its query is scored: query t sees keys 1 … t. Write "
           "the positions held, the softmax of q_t's logits over them, and Σ w·v.")
WINDOW = N_("At step t, token t's k and v join the cache before its query is scored; the cache keeps the last {window} "
            "(query t sees keys t − {window} + 1 … t), a new token taking the slot of the oldest. Write the positions "
            "held in slot order, the softmax of q_t's logits over them, and Σ w·v.")
SINKS = N_("At step t, token t's k and v join the cache before its query is scored; the cache keeps tokens 1 … {sinks} "
           "and the last {window} (query t sees keys t − {window} + 1 … t), a new token taking the slot of the oldest "
           "past the first {sinks}. Write the positions held in slot order, the softmax of q_t's logits over them, and "
           "Σ w·v.")
LOGITS = N_("{what}: logits of q_t against keys 1 … t")
CACHE, WEIGHTS, OUTPUT = N_("{what}: positions the cache holds"), N_("{what}: weights"), N_("{what}: output")


ROUNDING = N_("Round every number you write to {precision} decimals, halves away from zero, and carry the rounded "
             "numbers on: the weights from the logits printed, the output from your rounded weights (each w · v may be "
             "rounded before the sum).")
SINK = N_("This problem has a learned attention sink with logit {sink}: it joins each softmax as one more score with no "
          "value, e^({sink} − m) in the denominator, so the weights over the cache sum to less than 1.")
SINKS_EACH = N_("This problem has a learned attention sink in each head (logits {sinks}): it joins each softmax as one "
                "more score with no value, e^(sink − m) in the denominator, so the weights over the cache sum to less "
                "than 1.")


def rounding(precision: int) -> str:
    """the rounding rule, in words"""
    return _(ROUNDING).format(precision=precision)


def sink_rule(logits: tuple[float | None, ...]) -> str | None:
    """where the learned sink enters decoding's softmax, with each head's logit; None without one"""
    return flash_sink_rule(logits, SINK, SINKS_EACH)


def rules(window: int | None, sinks: int) -> str:
    """the convention of the cache, in words"""
    if window is None:
        return _(WHOLE)
    return _(WINDOW).format(window=window) if not sinks else _(SINKS).format(window=window, sinks=sinks)


def _what(t: int, head: int, heads: int) -> str:
    return _("step {t}, head {head}").format(t=t, head=head) if heads > 1 else _("step {t}").format(t=t)


def read(text: str, origin: str, problem: Problem | None) -> Sheet | None:
    """a filled worksheet --decode, in any language attntrace prints, as a sheet; None if the text is not one"""
    if problem is None:
        return None
    return read_kind(text, origin, lambda: [_(SINKS), _(WINDOW), _(WHOLE)],
                     lambda reading, found: _read(reading, found, problem))


def _read(reading: Reading, found: dict[str, str], problem: Problem) -> Sheet:
    """a filled worksheet --decode, read in the language its rules are written in"""
    window = int(found["window"]) if found.get("window") else None
    sinks = int(found["sinks"]) if found.get("sinks") else 0
    d = problem.dims
    with speaking(reading.user):
        fits(window, sinks, d.n, reading.origin)
    another_problem(reading, [_(CACHE).format(what=_what(d.n + 1, a, d.heads)) for a in range(1, d.heads + 1)],
                    problem.name)
    told = re.search(numbered(_(ROUNDING)), spaceless("".join(reading.lines)))
    precision = int(told[1]) if told else reading.precision()
    printed_ = printed(problem, 2 if precision is None else precision)
    places = [(a, t, _what(t, a, d.heads), len(kept(t, window, sinks))) for a in range(1, d.heads + 1)
              for t in range(1, d.n + 1)]
    pages = [Page(((_(LOGITS).format(what=what), printed_[a - 1][0][t - 1:t, :t]),
                   (_("{what}: values V").format(what=what), printed_[a - 1][1][:t])),
                  ((_(CACHE).format(what=what), 1, c), (_(WEIGHTS).format(what=what), 1, c),
                   (_(OUTPUT).format(what=what), 1, d.d_v)))
             for a, t, what, c in places]
    width = max(len(kept(t, window, sinks)) for t in range(1, d.n + 1))
    cells: dict[Key, np.ndarray] = {(a, k): np.full((d.n, d.d_v if k == "decode_output" else width), np.nan)
                                    for a in range(1, d.heads + 1) for k in DECODE_KEYS}
    found_tables = filled_pages(reading, pages, precision or 2, problem.name)
    for (a, t, _title, _c), tables in zip(places, found_tables):
        for key, table in zip(DECODE_KEYS, tables):
            if table is not None:
                cells[(a, key)][t - 1, :table.shape[1]] = table[0]
    if all(table is None for tables in found_tables for table in tables):
        nothing_found(reading, problem.name)
    return Sheet(reading.origin, cells, precision=precision, student=reading.student(), notes=tuple(reading.notes),
                 heads=tuple(range(1, d.heads + 1)), decode=(window, sinks))


def fits(window: int | None, sinks: int, n: int, origin: str) -> None:
    """a sheet's window and sinks fit the problem, or one line naming the sheet"""
    if window is not None and window < 1:
        raise SheetError(_("{sheet}: window must be a whole number of at least {least}; got {value}").format(
            sheet=origin, least=1, value=window))
    if sinks and window is None:
        raise SheetError(_("{sheet}: sinks {sinks} keeps the first tokens beside a window, and the sheet gives no "
                           "window").format(sheet=origin, sinks=sinks))
    if sinks and sinks >= n:
        raise SheetError(_("{sheet}: sinks {sinks} would keep every one of the problem's {n} tokens; this sheet "
                           "answers another problem").format(sheet=origin, sinks=sinks, n=n))


def document(problem: Problem, window: int | None, sinks: int, precision: int, key: bool,
             student: str | None = None) -> Document:
    """the worksheet of decoding: the problem's name and name line, the convention, and a page per step and head"""
    pages = steps(problem, window, sinks, precision)
    first = pages[0]
    sink = sink_rule(sink_logits(problem, None, problem.dims.heads))
    notes = (Note(rules(window, sinks), "text"), Note(rounding(precision), "text"),
             *([] if sink is None else [Note(sink, "text")]))
    pages[0] = Section(first.heading, (*notes, *first.items))
    return Document(pages, answer_sheet(problem, window, sinks, blank=not key, precision=precision),
                    preface=lambda fmt: "\n".join(heading_lines(problem, key, fmt == "markdown", student)) + "\n")


NAMES = {"decode_cache": N_("positions the cache holds"), "decode_weights": N_("weights over the cache"),
         "decode_output": N_("output at each step")}
OWN = {"decode_cache": N_("your own cache"), "decode_weights": N_("your own cache"),
       "decode_output": N_("your own cache and weights")}


class _Item(Item):
    """a decoding item: the cache is step 3's keys, the weights step 6's, the output step 7's"""

    @property
    def step(self) -> int:
        return {"decode_cache": 3, "decode_weights": 6}.get(self.key, 7)


class Numbers(NamedTuple):
    """one head's numbers a decoding sheet is worked from and judged against"""

    sets: tuple[tuple[np.ndarray, np.ndarray], ...]  # (logits [n, n], values [n, d_v]): as printed, true rounded, true
    sink: float | None
    true: DecodeHead  # the head's exact decoding
    key: list[Worked]


def numbers(problem: Problem, window: int | None, sinks: int, precision: int, divisor: float = 1.0) -> list[Numbers]:
    """every head's numbers; divisor: the logits divided by it once more (the scaling applied when the problem has
    none, or, by 1 / s, forgotten)"""
    exact, carried = trace(problem), trace(problem, carry_rounding=precision)
    d, worked = works(problem, window, sinks, precision)
    out = []
    for h, c, true, key in zip(exact.heads, carried.heads, d.heads, worked):
        def scores(head: Any) -> np.ndarray:
            if divisor == 1.0:
                return head.scaled
            return logits_of(head.scores, exact.divisor * divisor, head.bias, problem.softcap)

        out.append(Numbers(((round_half_up(scores(c), precision), round_half_up(c.v, precision)),
                            (round_half_up(scores(h), precision), round_half_up(h.v, precision)),
                            (scores(h), h.v), *divided_again(c, precision, divisor)), true.sink, true, key))
    return out


def judge(n: Numbers, given: dict[str, np.ndarray], precision: int, variant: str | None = None,
          ) -> tuple[dict[str, np.ndarray], list[list[int]], dict[str, np.ndarray]]:
    """every cell's verdict [steps, slots or d_v] (judging's codes): the cache exactly; the weights and output worked
    from the student's own cache and weights (the key's where blank); and the positions each step's weights are over"""
    steps, d_v = len(n.key), n.sets[0][1].shape[1]
    width = max(given["decode_cache"].shape[1], given["decode_weights"].shape[1], max(len(w.cache) for w in n.key))
    codes = {"decode_cache": np.full((steps, width), UNASKED), "decode_weights": np.full((steps, width), UNASKED),
             "decode_output": np.zeros((steps, d_v), dtype=int)}
    truths = variant is None
    u = half(precision)
    used: list[list[int]] = []
    shown = {key: np.full(codes[key].shape, np.nan) for key in DECODE_KEYS}  # what a wrong cell should have held
    for t, w in enumerate(n.key):
        shown["decode_cache"][t, :len(w.cache)] = w.cache
    with np.errstate(all="ignore"):
        for t, w in enumerate(n.key, start=1):
            c = len(w.cache)
            row = _padded(given["decode_cache"][t - 1], width)
            written = np.isfinite(row)
            cache = codes["decode_cache"][t - 1]
            if written.any():
                right = np.zeros(width, bool)
                right[:c] = row[:c] == np.array(w.cache)
                cache[:] = np.where(right, RIGHT, np.where(written | (np.arange(width) < c), WRONG, UNASKED))
            else:
                cache[:c] = BLANK
            # the positions the weights are over: the student's (as many as the slots or weights they wrote), a slot
            # left blank taken as the key's
            g_w = _padded(given["decode_weights"][t - 1], width)
            last = max([0, *(int(np.isfinite(r).nonzero()[0][-1]) + 1 for r in (row, g_w) if np.isfinite(r).any())])
            filled = [row[j] if written[j] else w.cache[j] if j < c else np.nan for j in range(last or c)]
            valid = all(np.isfinite(x) and x == int(x) and 1 <= x <= t for x in filled) and len(set(filled)) == len(
                filled)
            positions = [int(x) for x in filled] if valid else list(w.cache)
            used.append(positions)
            same = positions == list(w.cache)
            cache_ok = bool(np.isin(cache, (RIGHT, BLANK, UNASKED)).all())
            rows = np.array(positions) - 1
            k = len(positions)
            span = Span((k,))
            centre = None
            for index, (logits, _v) in enumerate(n.sets):
                z = logits[t - 1, rows]
                sink = None if variant == "no_sink" else n.sink
                top = max(np.max(z), sink) if sink is not None else np.max(z)
                e = exps(z, top)
                e_sink = 0.0 if sink is None else exps(np.asarray(sink), top)
                for round_e, round_total in itertools.product((False, True), repeat=2):
                    ee, es = (rounded(e, precision), rounded(np.array(e_sink), precision)) if round_e else (e, e_sink)
                    total = ee.sum() + es
                    total = rounded(np.array(total), precision) if round_total else total
                    weights = ee / total if total else np.zeros(k)
                    span.add(weights)
                    if index == 0 and not (round_e or round_total):
                        centre = rounded(weights, precision)
            got = np.full(k, np.nan)
            got[:min(k, len(g_w))] = g_w[:k]
            true_w = [n.true.steps[t - 1].weights, w.weights] if truths and same else []
            cw = judging.verdicts(got, true_w, span.holds(got, precision), np.array(cache_ok), precision)
            weights_row = codes["decode_weights"][t - 1]
            weights_row[:k] = cw
            extra = np.isfinite(g_w) & (np.arange(width) >= k)  # weights past the cache: nothing there to weigh
            weights_row[extra] = WRONG
            weights_ok = cache_ok and bool(np.isin(cw, (RIGHT, BLANK)).all()) and not extra.any()
            assert centre is not None
            w_used = np.where(np.isfinite(got), got, centre)
            span_o = Span((d_v,))
            own_o = None
            for _logits, values in n.sets:
                v = values[rows]
                for round_products in (False, True):
                    products = w_used[:, None] * v
                    out = (rounded(products, precision) if round_products else products).sum(axis=0)
                    if variant == "sink_valued" and n.sink is not None:
                        out = out + (1.0 - w_used.sum()) * values[0]
                    span_o.add(out)
                    own_o = rounded(out, precision) if own_o is None else own_o
            assert own_o is not None
            shown["decode_weights"][t - 1, :k] = w.weights if same else centre
            shown["decode_output"][t - 1] = w.output if same else own_o
            span_o.slack = u * np.abs(n.sets[0][1][rows][np.isfinite(got)]).sum(axis=0)
            g_o = given["decode_output"][t - 1]
            true_o = [n.true.steps[t - 1].output, w.output] if truths and same else []
            codes["decode_output"][t - 1] = judging.verdicts(g_o, true_o, span_o.holds(g_o, precision),
                                                             np.array(weights_ok), precision)
            if not same and truths:  # worked from their own cache: at best a consequence
                for key in ("decode_weights", "decode_output"):
                    codes[key][t - 1] = np.where(codes[key][t - 1] == RIGHT, CONSEQUENCE, codes[key][t - 1])
    return codes, used, shown


def _padded(row: np.ndarray, width: int) -> np.ndarray:
    out = np.full(width, np.nan)
    out[:len(row)] = row
    return out


def _given(sheet: Sheet, head: int, steps: int, d_v: int) -> dict[str, np.ndarray]:
    """a head's cells, NaN where not given; a table of another length refuses the sheet"""
    out = {}
    for key in DECODE_KEYS:
        cells = sheet.cells.get((head, key))
        if cells is None:
            cells = np.full((steps, d_v if key == "decode_output" else 1), np.nan)
        elif cells.shape[0] != steps or key == "decode_output" and cells.shape[1] != d_v:
            raise SheetError(_("{sheet}: head {head} {key} is {rows} x {columns}, where this problem asks for {want_rows} "
                               "x {want_columns} (one row per step); check it against the problem it answers").format(
                sheet=sheet.origin, head=head, key=key, rows=cells.shape[0], columns=cells.shape[1], want_rows=steps,
                want_columns=d_v if key == "decode_output" else _("the cache's size")))
        out[key] = cells
    return out


def mark(marker: Traces, sheet: Sheet, rule: Rule) -> Report:
    """a decoding sheet marked cell by cell by the eight steps' rules (judging.py): the cache exactly, the weights and
    output worked from the student's own cache and weights; the first classic mistake named; a sheet written to fewer
    decimals than asked is marked again at its own"""
    report = _marked(marker, sheet, rule)
    rounded_fewer(sheet, rule, report, lambda fewer, again: _marked(marker, fewer, again))
    return report


def _marked(marker: Traces, sheet: Sheet, rule: Rule) -> Report:
    """a decoding sheet marked at one precision"""
    assert sheet.decode is not None
    window, sinks = sheet.decode
    fits(window, sinks, marker.problem.dims.n, sheet.origin)
    precision, source = precision_of(sheet, rule)
    heads = numbers(marker.problem, window, sinks, precision)
    d = marker.problem.dims
    for number in sheet.heads:
        if not 1 <= number <= len(heads):
            raise SheetError(_("{sheet}: head {head} is out of range; this problem has heads 1 to {heads}").format(
                sheet=sheet.origin, head=number, heads=len(heads)))
    given = [_given(sheet, a, d.n, d.d_v) for a in range(1, len(heads) + 1)]
    judged = [judge(n, g, precision) for n, g in zip(heads, given)]
    items: list[Item] = []
    many = len(heads) > 1
    for a, (g, (codes, _used, shown)) in enumerate(zip(given, judged), start=1):
        for key in DECODE_KEYS:
            shape = codes[key].shape
            written = np.full(shape, np.nan)
            rows, cols = min(shape[0], g[key].shape[0]), min(shape[1], g[key].shape[1])
            written[:rows, :cols] = g[key][:rows, :cols]
            name = Said(N_("head {head} {key}"), head=a, key=Said(NAMES[key])) if many else Said(NAMES[key])
            marked = judging.item(_Item, a, key, name, codes[key], written, shown[key],
                                      0 if key == "decode_cache" else precision, _namer(name, key), Said(OWN[key]))
            if marked is not None:
                items.append(marked)
    report = Report(sheet.origin, marker.problem.name or marker.origin, precision, source, None, items,
                    follow_through=rule.follow_through, student=sheet.student, notes=list(sheet.notes))
    report.diagnosis, report.mistakes = _diagnosis(marker.problem, heads, given, judged, window, sinks, precision)
    return report


def _namer(name: Said, key: str) -> Any:
    """a cell as a student reads it: by step and slot, or step and column"""
    def named(i: int, j: int) -> Said:
        where = (Said(N_("step {t}, column {column}"), t=i + 1, column=j + 1) if key == "decode_output" else
                 Said(N_("step {t}, slot {slot}"), t=i + 1, slot=j + 1))
        return Said("{name} [{where}]", name=name, where=where)

    return named


def _diagnosis(problem: Problem, heads: list[Numbers], given: list[dict[str, np.ndarray]],
               judged: list[tuple[dict[str, np.ndarray], list[list[int]], dict[str, np.ndarray]]], window: int | None, sinks: int,
               precision: int) -> tuple[Said | None, tuple[str, ...]]:
    """the first classic mistake the first wrong numbers prove: a cache that misses what the convention keeps, or
    the step judged again with a mistake made, its cells then fitting where they did not"""
    for a, (g, (codes, used, _shown)) in enumerate(zip(given, judged)):
        for t in range(1, len(used) + 1):
            wrong = [key for key in DECODE_KEYS if (codes[key][t - 1] == WRONG).any()]
            if not wrong:
                continue
            if "decode_cache" in wrong:
                row = g["decode_cache"][t - 1]
                theirs = {int(x) for x in row[np.isfinite(row)] if x == int(x)}
                if len(theirs) < len(used[t - 1]) and len(wrong) == 1:  # a slot left blank, the weights over it
                    return None, ()
                return _named(theirs, t, window, sinks)
            variants: list[tuple[str, float]] = []
            if "decode_weights" in wrong:
                if heads[a].sink is not None:
                    variants.append(("no_sink", 1.0))
                if problem.scale is not False and divisor(problem, problem.dims.d_k) != 1.0:
                    variants.append(("unscaled", 1.0 / divisor(problem, problem.dims.d_k)))
                if problem.scale is False:
                    variants.append(("scaled_when_none", math.sqrt(problem.dims.d_k)))
            elif heads[a].sink is not None:
                variants.append(("sink_valued", 1.0))
            fitting = []  # (wrong cells left on the whole sheet, order, variant) of each mistake that fits there
            for order, (variant, by) in enumerate(variants):
                n = numbers(problem, window, sinks, precision, by)[a] if by != 1.0 else heads[a]
                again = judge(n, g, precision, None if variant in ("unscaled", "scaled_when_none") else variant)[0]
                if not any((again[key][t - 1] == WRONG).any() for key in DECODE_KEYS):
                    fitting.append((sum(int((c == WRONG).sum()) for c in again.values()), order, variant))
            return _variant_said(problem, min(fitting)[2], t) if fitting else (None, ())
    return None, ()


def _variant_said(problem: Problem, variant: str, t: int) -> tuple[Said, tuple[str, ...]]:
    dk = f"√d_k = √{problem.dims.d_k} = {math.sqrt(problem.dims.d_k):.4g}"
    if variant == "no_sink":
        return Said(N_("the learned sink was left out of the softmax: at step {t} it joins the denominator as one more "
                       "score, e^(sink − m), with no value, so the weights over the cache sum to less than 1"),
                    t=t), ("sink left out",)
    if variant == "sink_valued":
        return Said(N_("the sink was given a value: it joins the softmax's denominator but takes no value, so output {t} "
                       "is Σ_j w(t,j) · v_j over the cache alone"), t=t), ("sink given a value",)
    if variant == "unscaled":
        return Said(N_("the scaling was forgotten: the scores were not divided by {divisor}"),
                    divisor=dk if problem.scale is True else f"{divisor(problem, problem.dims.d_k):g}"), (
            "scaling forgotten",)
    return Said(N_("the scores were divided by {dk}, but this problem has no scaling"), dk=dk), ("scaled when not asked",)


def _named(theirs: set[int], t: int, window: int | None, sinks: int) -> tuple[Said | None, tuple[str, ...]]:
    """the classic mistake a wrong cache proves: the new token left out, the sink tokens dropped, or the window one
    too long or too short"""
    right = set(kept(t, window, sinks))
    if t not in theirs and theirs <= right | ({t - window} if window else set()):
        return Said(N_("the new token was left out of its own cache: at step {t} its k and v join the cache before "
                       "its query is scored, so query {t} sees key {t}"), t=t), ("new token left out",)
    if sinks and theirs == set(kept(t, window, 0)) != right:
        return Said(N_("the sink tokens were dropped from the cache: the first {sinks} stay in it for good beside the "
                       "last {window}, so query {t} sees keys {kept}"), sinks=sinks, window=window, t=t,
                    kept=", ".join(str(p) for p in sorted(right))), ("sink tokens dropped",)
    if window is not None:
        for other in (window - 1, window + 1):
            if other >= 1 and theirs == set(kept(t, other, sinks)) != right:
                return Said(N_("the window is off by one: with a window of {window}, query {t} sees keys {first} … {t} "
                               "({window} keys), not {count}"), window=window, t=t, first=t - window + 1,
                            count=other), ("window off by one",)
    return None, ()


KIND = Kind("decode", read, lambda sheet: sheet.decode is not None, mark)
