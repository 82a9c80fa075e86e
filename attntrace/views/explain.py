"""Every cell's arithmetic for one input, written out as a student would: the numbers as the tables show them, and
exactly what those numbers give, so that every line can be redone by hand."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from decimal import ROUND_HALF_UP, Decimal, localcontext
from itertools import chain

import numpy as np

from attntrace.core import arithmetic, integers
from attntrace.core.arithmetic import decimal_of
from attntrace.core.attention import softmax_written
from attntrace.core.trace import Trace
from attntrace.core.variants import pair_index
from attntrace.language import N_, _, ngettext
from attntrace.views.page import Note, Step

LONG = 8  # dot products longer than this show their first 3 terms, a count, and the last term
UNROUNDED = N_("(unrounded: {number})")  # the bracket after a result where the tables' value is another



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
        self.products = False  # a product of step 6 was written other than the tables' weighted value

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
        text, bracket = self._result(exact, table)
        return self.noted(text, bracket)

    def _result(self, exact: Decimal, table: float, whole: bool = True) -> tuple[str, str]:
        """result's text and its bracket ("" when the tables show the same value); whole: it may be written as a whole
        number (each of its numbers was)"""
        unit = Decimal(1).scaleb(-self.precision)
        rounded = exact.quantize(unit, rounding=ROUND_HALF_UP)
        half = not self.carried and abs(exact - rounded) * 2 == unit
        shown = exact if half else rounded
        if whole and shown == shown.to_integral_value() and num(table, self.precision) == str(int(shown)):
            text = str(int(shown))  # a whole number written whole, as the tables' value is
        else:
            text = _unsigned_zero(f"{shown:.{self.precision + half}f}")
        self.halves |= half
        differs = fixed(float(shown), self.precision) != fixed(table, self.precision)
        return text, _(UNROUNDED).format(number=num(table, self.precision)) if differs else ""

    def noted(self, text: str, bracket: str) -> str:
        """a result as written, its bracket after it"""
        self.seen(bracket)
        return f"{text} {bracket}" if bracket else text

    def seen(self, bracket: str) -> None:
        """a bracket written ("" for none): the first is the legend's example"""
        self.bracket = self.bracket or bracket

    def texts(self, values: np.ndarray) -> list[str]:
        """factor() of every value (row by row): each number as written, a negative one in brackets"""
        flat = np.asarray(values, dtype=np.float64).ravel()
        texts = _numbers(flat, self.precision)
        for k in np.flatnonzero(np.signbit(flat)).tolist():
            if texts[k].startswith("-"):
                texts[k] = f"({texts[k]})"
        return texts

    def scaled(self, values: np.ndarray) -> np.ndarray:
        """the numbers as written, times 10^precision: exact integers, of the values' shape"""
        values = np.asarray(values, dtype=np.float64)
        return _rounded(values, self.precision)

    def written(self, exact: np.ndarray, scale: int, tables: np.ndarray, whole: np.ndarray | None = None) -> list[str]:
        """result() of many cells at once, their brackets noted in order; whole: which may be written as whole numbers
        (None: any)"""
        texts, first = self.results(exact, scale, tables, whole)
        if first is not None:
            self.seen(_bracket(texts[first]))
        return texts

    def results(self, exact: np.ndarray, scale: int, tables: np.ndarray,
                whole: np.ndarray | None = None) -> tuple[list[str], int | None]:
        """_result() of many cells at once: exact holds each cell's exact value times 10^scale (scale >= precision), as
        integers; tables the tables' values. Returns each result as written, its bracket after it, and the first with
        a bracket (None: none has), its bracket not yet noted (see noted, written)"""
        p = self.precision
        flat, table = exact.ravel(), np.asarray(tables, dtype=np.float64).ravel()
        may = np.ones(len(flat), dtype=bool) if whole is None else np.asarray(whole, dtype=bool).ravel()
        texts, first = [""] * len(flat), None
        quick = np.zeros(len(flat), dtype=bool)
        if flat.dtype == np.int64 and len(flat):
            unit = 10 ** (scale - p)
            size = np.abs(flat)
            rest = size % unit
            magnitude = size // unit + (rest >= unit - rest)  # rounded half away from zero
            rounded = np.where(flat < 0, -magnitude, magnitude)
            half = (rest == unit - rest) if unit > 1 and not self.carried else np.zeros(len(flat), dtype=bool)
            quick = ~half & (magnitude < 10**15) & np.isfinite(table)  # written from a float exactly
        fast = np.flatnonzero(quick)
        if len(fast):
            shown, value = rounded[fast], table[fast]
            written = _fixed(shown / 10**p, p)  # fewer than 16 digits: the float prints them back exactly
            if p:  # a whole number is written whole when the tables' value is that whole number
                whole_table = (value == np.trunc(value)) & (np.abs(value) < 1e15) & may[fast]
                for k in np.flatnonzero(whole_table & (shown % 10**p == 0) &
                                        (np.where(whole_table, value, 0).astype(np.int64) == shown // 10**p)).tolist():
                    written[k] = str(int(shown[k]) // 10**p)
            differs = np.flatnonzero(np.asarray(_rounded(value, p) != shown, dtype=bool))  # the tables show another
            unrounded = _(UNROUNDED)
            for k, number in zip(differs.tolist(), _numbers(value[differs], p)):
                written[k] = f"{written[k]} {unrounded.format(number=number)}"
            if len(differs):
                first = int(fast[differs[0]])
            if len(fast) == len(flat):
                texts = written
            else:
                for k, i in enumerate(fast.tolist()):
                    texts[i] = written[k]
        for i in np.flatnonzero(~quick).tolist():
            text, bracket = self._result(Decimal(int(flat[i])).scaleb(-scale), float(table[i]), bool(may[i]))
            if bracket:
                text, first = f"{text} {bracket}", i if first is None else min(first, i)
            texts[i] = text
        return texts, first

    def legend(self) -> tuple[Note, ...]:
        """how every line is written: which numbers it uses, how its result is rounded, and what the brackets say"""
        p = self.precision
        if self.carried:
            rounded = ngettext("Each line works from the numbers as the tables show them; its result is rounded to {p} "
                               "decimal, halves away from zero, and carried on as by hand.",
                               "Each line works from the numbers as the tables show them; its result is rounded to {p} "
                               "decimals, halves away from zero, and carried on as by hand.", p)
        else:
            rounded = ngettext("Each line works from the numbers as the tables show them; its result is rounded to {p} "
                               "decimal, halves away from zero.",
                               "Each line works from the numbers as the tables show them; its result is rounded to {p} "
                               "decimals, halves away from zero.", p)
        notes = [Note(rounded.format(p=p))]
        if self.halves:
            notes.append(Note(_("A result exactly halfway between two roundings is written in full.")))
        if self.bracket:
            bracket = (_("A bracket such as {bracket} gives the tables' value where it differs: they start from the "
                         "inputs unrounded.") if self.carried else
                       _("A bracket such as {bracket} gives the tables' value where it differs: they work from the "
                         "unrounded numbers."))
            notes.append(Note(bracket.format(bracket=self.bracket)))
        return tuple(notes)


def _whole(texts: list[str]) -> np.ndarray:
    """which numbers are written as whole numbers (no decimal point)"""
    return np.array(["." not in text for text in texts], dtype=bool)


def _whole_products(t: Trace, a: int, w: _Writer) -> np.ndarray:
    """[m, d_v] which of step 6's products w(i, j) · v_j are of two whole numbers, and so are written whole"""
    h = t.heads[a]
    return _whole(w.texts(h.weights[0, :t.dims.m]))[:, None] & _whole(w.texts(h.v)).reshape(h.v.shape)


def _terms(terms: list[str], count: int) -> str:
    """a sum of count terms as written, from the terms shown (see _shown)"""
    if count <= LONG:
        return " + ".join(terms)
    return " + ".join(terms[:3]) + _more(count) + terms[-1]


def _more(count: int) -> str:
    """what stands for the terms of a sum of count terms that are not written out, between the first 3 and the last"""
    return " + … " + ngettext("({n} more term)", "({n} more terms)", count - 4).format(n=count - 4) + " + "


def _bracket(result: str) -> str:
    """a result's bracket, "" when it has none: a number has no space in it"""
    return result.partition(" ")[2]


def _shown(count: int) -> list[int]:
    """the terms of a sum of count terms that are written out: all, or the first 3 and the last"""
    return list(range(count)) if count <= LONG else [0, 1, 2, count - 1]


def _dots(a: np.ndarray, b: np.ndarray, w: _Writer) -> tuple[list[str], np.ndarray]:
    """every a_r · b[:, c] as written (a row by row, each the terms shown) and its exact value from the written numbers,
    times 10^(2 precision): the terms shown are written, the others only counted. a [rows, n], b [n, cols]"""
    rows, columns, exact = _factors(a, b, w)
    n = a.shape[1]
    if n <= LONG:
        return [" + ".join(f"{x}×{y}" for x, y in zip(row, column)) for row in rows for column in columns], exact
    more = _more(n)
    return [f"{x[0]}×{y[0]} + {x[1]}×{y[1]} + {x[2]}×{y[2]}{more}{x[3]}×{y[3]}" for x in rows for y in columns], exact


def _factors(a: np.ndarray, b: np.ndarray, w: _Writer) -> tuple[list[list[str]], list[list[str]], np.ndarray]:
    """the factors a dot product of a's rows and b's columns shows, as written: each row's and each column's; and the
    products' exact values (see _dots)"""
    n, cols = a.shape[1], b.shape[1]
    shown = _shown(n)
    size = len(shown)
    left, right = w.texts(a[:, shown]), w.texts(b[shown, :])
    rows = [left[r * size:(r + 1) * size] for r in range(a.shape[0])]
    return rows, [right[c::cols] for c in range(cols)], integers.dot(w.scaled(a), w.scaled(b), n)


def _rounded(values: np.ndarray, precision: int) -> np.ndarray:
    """each value as written at fixed decimals, times 10^precision: the integer nearest value · 10^precision, a tie
    to the even one (as format() rounds); from the float product where no tie can be near, else from the text"""
    flat = values.ravel()
    with np.errstate(invalid="ignore", over="ignore"):
        product = flat * 10.0**precision
        tie = np.abs(product - np.floor(product) - 0.5) <= 4 * np.spacing(np.abs(product))  # the float may be off by
        # half a unit in its last place, so a tie within a few of them is settled by the text
        near = ~(np.abs(product) < 2.0**50) | tie
    out = np.rint(np.where(near, 0.0, product)).astype(np.int64)
    awkward = np.flatnonzero(near)
    if not len(awkward):
        return out.reshape(values.shape)
    exact = out.tolist()
    for k, text in zip(awkward.tolist(), _fixed(flat[awkward], precision)):
        exact[k] = int(text.replace(".", ""))
    return integers.exact(exact, values.shape)


def _numbers(flat: np.ndarray, precision: int) -> list[str]:
    """num() of each value: a whole number whole, anything else at fixed decimals, -0 as 0"""
    texts = _fixed(flat, precision)
    for k in np.flatnonzero(np.isfinite(flat) & (flat == np.trunc(flat)) & (np.abs(flat) < 1e15)).tolist():
        texts[k] = str(int(flat[k]))
    for k in np.flatnonzero(np.signbit(flat) & (flat >= -(10.0**-precision))).tolist():  # may round to -0
        texts[k] = _unsigned_zero(texts[k])
    return texts


def _fixed(values: np.ndarray, precision: int) -> list[str]:
    """each value at fixed decimals, as format(v, f".{precision}f") writes it, all in one % (a -0 keeps its sign)"""
    flat = values.ravel().tolist()
    return ("\0".join([f"%.{precision}f"] * len(flat)) % tuple(flat)).split("\0") if flat else []


def explain_steps(t: Trace, precision: int) -> list[Step]:
    """steps 3 to 7 for the one input of a single-query trace, cell by cell, after a line saying how they are written"""
    i = t.rows[0] + 1
    w = _Writer(precision, t.carry_rounding == precision)

    def per_head(write: Callable[[Trace, int, _Writer], list[Note]]) -> tuple[Note, ...]:
        return tuple(chain.from_iterable(write(t, a, w) for a in range(len(t.heads))))

    with localcontext(arithmetic.exact_context()):
        steps = [
            Step(3, _("Step 3 · derive q{i}, and every k_j and v_j").format(i=i), per_head(_derive)),
            Step(4, _("Step 4 · attention scores for input {i}").format(i=i), per_head(_scores)),
            Step(5, _("Step 5 · softmax for input {i}").format(i=i), per_head(_softmax)),
            Step(6, _("Step 6 · weighted values for input {i}").format(i=i), per_head(_weighted)),
        ]
        sums = (*per_head(_output), *_projected(t, w))
        added = (Note(_("Step 7 adds the weighted values as step 6 writes them.")),) if w.products else ()
        steps.append(Step(7, _("Step 7 · output {i}").format(i=i), (*added, *sums)))
    steps[0] = replace(steps[0], items=(*w.legend(), *steps[0].items))
    return steps


def _head(t: Trace, a: int) -> str:
    return head_words(a + 1) if t.dims.heads > 1 else ""


def head_words(number: int) -> str:
    """what a line of head number (from 1) starts with, when the problem has more than one head"""
    return _("head {n} · ").format(n=number)


def angle_words(vector: str, pair: str) -> str:
    """the name of the angle rope turns a pair of a vector by (θ of q1, pair (1,2))"""
    return _("θ of {vector}, pair {pair}").format(vector=vector, pair=pair)


def _derive(t: Trace, a: int, w: _Writer) -> list[Note]:
    """step 3 for head a (from 0): every cell of q_i, and of each k_j and v_j"""
    p, d, h, g = t.problem, t.dims, t.heads[a], t.dims.kv_block(a)
    kv, kv_name = (p.x, "x") if p.source is None else (p.source, "s")
    head, precision = _head(t, a), w.precision
    notes: list[Note] = []
    for name, weight, b, rows, inp, label, values, col0 in (
        ("q", h.w_q, h.b_q, [t.rows[0]], p.x, "x", h.q, a * d.d_k),
        ("k", h.w_k, h.b_k, list(range(d.m)), kv, kv_name, h.k, g * d.d_k),
        ("v", h.w_v, h.b_v, list(range(d.m)), kv, kv_name, h.v, g * d.d_v),
    ):
        count = values.shape[1]
        columns = range(col0 + 1, col0 + count + 1)  # each cell's column in the whole of W (or of x)
        if weight is None:  # a copied cell: q_i[c] is x_i[col0 + c]
            copied = inp[np.ix_(rows, range(col0, col0 + count))]
            sources = [f"[{column}]" for column in columns]
            written, exact, scale = w.texts(copied) if b is not None else [], w.scaled(copied), precision
        elif b is None and weight.shape[0] > LONG:  # most lines: each written at once, its terms and all
            notes.extend(_long_dots(f"{head}{name}", label, rows, f" · W_{name.upper()}[:,", col0, inp[rows], weight,
                                    values, w))
            continue
        else:
            sources = [f" · W_{name.upper()}[:,{column}]" for column in columns]
            written, exact = _dots(inp[rows], weight, w)
            scale = 2 * precision
        if b is not None:
            sources = [f"{source} + b_{name}[{column}]" for source, column in zip(sources, columns)]
            biases = [f" + {text}" for text in w.texts(b)]
            exact = integers.plus(exact, integers.product(w.scaled(b)[None, :], np.array(10 ** (scale - precision))))
        results = iter(w.written(exact, scale, values))
        if weight is None and b is None:  # a copied cell has no arithmetic
            notes.extend([Note(f"{head}{name}{r + 1}[{c}] = {label}{r + 1}{source} = {result}")
                          for r in rows for c, source, result in zip(range(1, count + 1), sources, results)])
        else:  # row by row: zip takes count results a row
            texts = iter(written)
            ends = biases if b is not None else [""] * count
            notes.extend([Note(f"{head}{name}{r + 1}[{c}] = {label}{r + 1}{source} = {text}{end} = {result}")
                          for r in rows for c, source, end, text, result in zip(range(1, count + 1), sources, ends,
                                                                               texts, results)])
    return notes + _rotated(t, a, w)


def _long_dots(cell: str, label: str, rows: list[int], source: str, col0: int, a: np.ndarray, b: np.ndarray,
               values: np.ndarray, w: _Writer) -> list[Note]:
    """step 3's lines for cells that are dot products of more than LONG terms (no bias): as _derive writes them"""
    xs, ys, exact = _factors(a, b, w)
    more = _more(a.shape[1])
    results = iter(w.written(exact, 2 * w.precision, values))
    sources = [(c + 1, f"{source}{col0 + c + 1}] = ") for c in range(b.shape[1])]
    return [Note(f"{cell}{r + 1}[{c}] = {label}{r + 1}{named}{x[0]}×{y[0]} + {x[1]}×{y[1]} + {x[2]}×{y[2]}{more}"
                 f"{x[3]}×{y[3]} = {result}")
            for r, x in zip(rows, xs) for (c, named), y, result in zip(sources, ys, results)]


def _rotated(t: Trace, a: int, w: _Writer) -> list[Note]:
    """rope: the angle of each pair of q_i and of every k_j, then each cell turned by it"""
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
                turn = (f"{at[r_index]:g} · ω{pair + 1} = " if p.rope.frequencies is not None else
                        f"{at[r_index]:g} · {p.rope.base:g}^(-{2 * pair}/{d.d_k}) = " if pair else "")
                notes.append(Note(f"{_head(t, a)}{angle_words(f'{name}{r + 1}', f'({f + 1},{s + 1})')} = {turn}"
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
    dots, exact = _dots(q[:1], k.T, w)
    results, _first = w.results(exact, 2 * w.precision, h.scores[0, :t.dims.m])
    for j, (written, result) in enumerate(zip(dots, results)):
        w.seen(_bracket(result))
        notes.append(Note(f"{head}score({i},{j + 1}) = q{i}{turned} · k{j + 1}{turned} = {written} = {result}"))
        if t.allowed is not None and not t.allowed[0, j]:
            notes.append(Note(_("{head}score({i},{j}) is masked: it becomes -inf, so its weight is 0").format(
                head=head, i=i, j=j + 1)))
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
    texts = w.texts(h.scaled[0, seen])
    powers = dict(zip(seen, texts))
    exps = _terms([f"e^{texts[k]}" for k in _shown(len(seen))], len(seen))
    z = [Decimal(text[1:-1] if text.startswith("(") else text) for text in texts]
    sink = None if t.problem.sink is None else decimal_of(t.problem.sink[a])  # as given, never rounded
    if sink is not None:
        exps = " + ".join(filter(None, [exps, f"e^{sink:f}" if sink >= 0 else f"e^({sink:f})"]))
    weights = softmax_written(z, sink)
    exact = dict(zip(seen, weights))
    notes = [Note(f"{head}w({i},{j + 1}) = e^{powers[j]} / ({exps}) = {w.result(exact[j], h.weights[0, j])}")
             if j in powers else Note(_("{head}w({i},{j}) = 0 (masked)").format(head=head, i=i, j=j + 1))
             for j in range(t.dims.m)]
    if sink is not None and h.sink_weight is not None:
        written = f"{sink:f}" if sink >= 0 else f"({sink:f})"
        share = w.result(softmax_written([*z, sink])[-1], h.sink_weight[0])
        notes.append(Note(_("{head}sink weight({i}) = e^{sink} / ({exps}) = {weight}: the sink joins the denominator "
                            "with no value, so the weights sum to less than 1").format(
            head=head, i=i, sink=written, exps=exps, weight=share)))
    return notes


def _weighted(t: Trace, a: int, w: _Writer) -> list[Note]:
    """step 6 for head a: each weight times each cell of its value"""
    h, i, head = t.heads[a], t.rows[0] + 1, _head(t, a)
    products = t.weighted(a, t.rows[0])  # [m, d_v]
    m, d_v = t.dims.m, t.dims.d_v
    weights, values = w.texts(h.weights[0, :m]), w.texts(h.v)
    exact = integers.product(w.scaled(h.weights[0, :m])[:, None], w.scaled(h.v))
    whole = _whole_products(t, a, w)
    results = w.written(exact, 2 * w.precision, products, whole)
    w.products |= any(" " in result for result in results)  # a bracket: the tables' value differs
    pairs = iter(zip(values, results))  # row by row: d_v of them a row
    return [Note(f"{head}w({i},{j + 1}) · v{j + 1}[{c + 1}] = {weight}×{value} = {result}")
            for j, weight in enumerate(weights) for c, (value, result) in zip(range(d_v), pairs)]


def _output(t: Trace, a: int, w: _Writer) -> list[Note]:
    """step 7 for head a: each cell of the output as the sum of the weighted values step 6 wrote (the tables' value
    after it when it differs)"""
    h, i, head = t.heads[a], t.rows[0] + 1, _head(t, a)
    products = t.weighted(a, t.rows[0])  # [m, d_v]
    m, d_v = products.shape
    shown = _shown(m)
    whole = _whole_products(t, a, w)
    exact = integers.product(w.scaled(h.weights[0, :m])[:, None], w.scaled(h.v))  # step 6's, times 10^(2p)
    texts, _first = w.results(exact[shown], 2 * w.precision, products[shown], whole[shown])
    texts = [_term(text.partition(" ")[0]) for text in texts]  # each term as step 6 wrote it, without its bracket
    added = integers.dot(np.ones((1, m), dtype=np.int64), _as_written(exact, w), m)  # each column's sum
    results = w.written(added, w.precision + 1, h.output[0, :d_v], np.all(whole, axis=0))  # of whole terms: whole
    return [Note(f"{head}{output_cell(i, c + 1)} = {_terms(texts[c::d_v], m)} = {results[c]}") for c in range(d_v)]


def _term(text: str) -> str:
    """a number as a term of a sum: a negative one in brackets"""
    return f"({text})" if text.startswith("-") else text


def _as_written(exact: np.ndarray, w: _Writer) -> np.ndarray:
    """results given as exact integers times 10^(2 precision), as written (see _Writer.results): rounded to the
    precision half away from zero, or in full to one decimal more when exactly halfway without carried rounding;
    times 10^(precision + 1)"""
    unit = 10 ** w.precision
    if exact.dtype == np.int64 and integers.largest(exact) >= integers.LIMIT // 10:
        exact = exact.astype(object)
    size = np.abs(exact)
    rest = size % unit
    tenths = (size // unit + (rest >= unit - rest)) * 10
    if unit > 1 and not w.carried:
        tenths = np.where(rest == unit - rest, size // (unit // 10), tenths)
    return np.where(exact < 0, -tenths, tenths)


def output_cell(i: int, column: int) -> str:
    """cell column of output i, as a line names it: output1[2]"""
    return _("output{i}[{column}]").format(i=i, column=column)


def _projected(t: Trace, w: _Writer) -> list[Note]:
    """the rest of step 7 with W_O: each cell of the final output from the concatenated heads"""
    p, i = t.problem, t.rows[0] + 1
    if p.w_o is None:
        return []
    written, exact = _dots(t.concat[:1], p.w_o, w)
    named = [f"concat{i} · W_O[:,{c + 1}]" for c in range(t.dims.d_out)]
    if p.b_o is not None:
        biases = w.texts(p.b_o)
        named = [f"{text} + b_o[{c + 1}]" for c, text in enumerate(named)]
        written = [f"{text} + {bias}" for text, bias in zip(written, biases)]
        exact = integers.plus(exact, integers.product(w.scaled(p.b_o)[None, :], np.array(10**w.precision)))
    results = w.written(exact, 2 * w.precision, t.output[0, :t.dims.d_out])
    return [Note(f"{output_cell(i, c + 1)} = {named[c]} = {written[c]} = {results[c]}") for c in range(t.dims.d_out)]
