"""Worksheets of FlashAttention's online softmax: per head and query, a row per block of keys for the running m, ℓ and
O, then O / ℓ; the key is the recurrence worked by hand, each value written rounded and carried into the next block."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from attntrace.core.arithmetic import round_half_up
from attntrace.core.flash import _joined, blocks, default_block
from attntrace.core.trace import Trace
from attntrace.escape import visible
from attntrace.homework.marking import Item
from attntrace.homework.sheet import FLASH_KEYS, Key
from attntrace.homework.worksheet import intro
from attntrace.language import N_, _
from attntrace.render.jsonform import floats
from attntrace.views.page import Block, Note, Step

if TYPE_CHECKING:
    from attntrace.render.document import Document



class _Item(Item):
    """an online-softmax item: its step is the softmax's and the output's"""

    @property
    def step(self) -> int:
        return 7 if self.key == "flash_output" else 6


class Worked(NamedTuple):
    """one head's recurrence for the traced rows, rounded and carried: m, ℓ [n_q, nb], O [n_q, nb, d_v], O / ℓ"""

    m: np.ndarray
    ell: np.ndarray
    o: np.ndarray
    output: np.ndarray


def step(m_old: np.ndarray, l_old: np.ndarray, o_old: np.ndarray, s: np.ndarray, v: np.ndarray,
         precision: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """one block joined to the state written before it, as a student writes it: m exact, ℓ and O rounded"""
    _top, m_new, _rescale, _sums, l_new, o_new = _joined(m_old, l_old, o_old, s, v)
    return m_new, round_half_up(l_new, precision), round_half_up(o_new, precision)


def divided(o: np.ndarray, ell: np.ndarray, precision: int) -> np.ndarray:
    """O / ℓ rounded (0 where ℓ = 0, a row with no key)"""
    with np.errstate(all="ignore"):
        out = np.divide(o, ell[..., None], out=np.zeros_like(o), where=ell[..., None] != 0)
    return round_half_up(out, precision)


def worked(scaled: np.ndarray, v: np.ndarray, block: int, precision: int) -> Worked:
    """the hand-worked recurrence of scores [n_q, m] over values [m, d_v], B keys at a time, rounding carried"""
    n_q, d_v = scaled.shape[0], v.shape[1]
    bounds = blocks(scaled.shape[1], block)
    m, ell, o = np.full(n_q, -np.inf), np.zeros(n_q), np.zeros((n_q, d_v))
    ms, ls, os_ = np.empty((n_q, len(bounds))), np.empty((n_q, len(bounds))), np.empty((n_q, len(bounds), d_v))
    for b, (start, stop) in enumerate(bounds):
        m, ell, o = step(m, ell, o, scaled[:, start:stop], v[start:stop], precision)
        ms[:, b], ls[:, b], os_[:, b] = m, ell, o
    return Worked(ms, ls, os_, divided(o, ell, precision))


def works(t: Trace, block: int, precision: int) -> list[Worked]:
    """every head's hand-worked recurrence, from the trace's scaled scores and values (rounded when carried)"""
    return [worked(round_half_up(h.scaled, precision), round_half_up(h.v, precision), block, precision)
            for h in t.heads]


def answer_sheet(t: Trace, block: int, blank: bool, precision: int) -> dict[str, Any]:
    """the JSON answer sheet: per head flash_m, flash_l [query][block], flash_o [query][block][d_v] and flash_output
    [query][d_v]; blank: every cell null"""

    def cells(values: np.ndarray) -> Any:
        listed = floats(np.where(np.isfinite(values), values, np.nan)) if values.size else []
        return _nulls(listed) if blank else listed

    heads = [{"head": a, "flash_m": cells(w.m), "flash_l": cells(w.ell), "flash_o": cells(w.o),
              "flash_output": cells(w.output)} for a, w in enumerate(works(t, block, precision), start=1)]
    return {"name": t.problem.name, **({"student": None} if blank else {}), "query": t.query, "precision": precision,
            "block": block, "tokens": list(t.problem.labels), "heads": heads}


def _nulls(value: Any) -> Any:
    return [_nulls(v) for v in value] if isinstance(value, list) else None


def steps(t: Trace, block: int, precision: int) -> list[Step]:
    """a page per head and query: its scores and values given, the table of m, ℓ, O per block, and O / ℓ"""
    bounds = blocks(t.dims.m, block)
    keys = tuple(visible(label) for label in t.problem.key_labels)
    out = []
    for a, (h, w) in enumerate(zip(t.heads, works(t, block, precision)), start=1):
        d_v = h.v.shape[1]
        o_cols = tuple(f"O[{c}]" for c in range(1, d_v + 1))
        labels = keys
        for r, row in enumerate(t.rows):
            head = _what(a, row + 1, len(t.heads))
            rows = tuple(_("block {block} (keys {first}–{last})").format(block=b + 1, first=start + 1, last=stop)
                         for b, (start, stop) in enumerate(bounds))
            table = np.column_stack([w.m[r], w.ell[r], w.o[r]])
            out.append(Step(0, head, (
                Block(_("{what}: scores s (scaled)").format(what=head), "scores", ("s",), labels,
                      round_half_up(h.scaled[r:r + 1], precision)),
                Block(_("{what}: values V").format(what=head), "v", labels, tuple(f"v[{c}]" for c in range(1, d_v + 1)),
                      round_half_up(h.v, precision)),
                Block(_(TABLE).format(what=head), "weighted", rows, ("m", "ℓ", *o_cols),
                      table, (a, "flash", r)),
                Block(_(OUTPUT).format(what=head), "output", ("O / ℓ",), o_cols, w.output[r:r + 1],
                      (a, "flash_output", r)))))
    return out


RULES = N_("Take the keys {block} at a time, in order. Start with m = −∞, ℓ = 0, O = 0. For each block: m_new = "
           "max(m, the block's largest score); ℓ = ℓ·e^(m − m_new) + Σ e^(s − m_new); O = O·e^(m − m_new) + "
           "Σ e^(s − m_new)·v. A block whose every key is masked leaves m, ℓ and O as they were. At the end, the "
           "output is O / ℓ.")
TABLE = N_("{what}: m, ℓ and O after each block")
OUTPUT = N_("{what}: output O / ℓ")


def _what(head: int, query: int, heads: int) -> str:
    return _("head {head}, query {query}").format(head=head, query=query) if heads > 1 else _("query {query}").format(
        query=query)


def rules(block: int) -> str:
    """the recurrence to work, in words"""
    return _(RULES).format(block=block)


def document(t: Trace, block: int | None, precision: int, key: bool, student: str | None = None) -> Document:
    """the worksheet of the online softmax: the problem's instructions, the recurrence, and a page per head and query"""
    from attntrace.render.document import Document

    block = default_block(t.dims.m) if block is None else block
    pages = steps(t, block, precision)
    first = pages[0]
    pages[0] = Step(first.number, first.heading, (Note(rules(block), "text"), *first.items))
    return Document(pages, answer_sheet(t, block, blank=not key, precision=precision),
                    preface=lambda fmt: intro(t, precision, key, fmt == "markdown", student))


NAMES = {"flash_m": N_("m after each block"), "flash_l": N_("ℓ after each block"), "flash_o": N_("O after each block"),
         "flash_output": N_("output O / ℓ")}


class _Cells:
    """one head's cells of one key: given, judged right or a consequence of the student's own numbers, or wrong"""

    def __init__(self) -> None:
        self.given = self.asked = 0
        self.wrong: list[tuple[int, int, float, float]] = []  # row, column, given, expected
        self.consequence = False

    def judge(self, row: int, col: int, given: float, key: float, own: float, precision: int) -> bool:
        """whether the cell is right or a consequence; counted either way"""
        self.asked += 1
        if not np.isfinite(given):
            return True
        self.given += 1
        if _rounds(given, key, precision):
            return True
        if _rounds(given, own, precision):
            self.consequence = True
            return True
        self.wrong.append((row, col, given, key))
        return False


def _rounds(given: float, value: float, precision: int) -> bool:
    if not np.isfinite(value):
        return False
    return abs(given - float(round_half_up(np.array(value), precision))) <= 1e-9 * (1 + abs(value))


class _Own(NamedTuple):
    """a block joined to the student's own numbers before it, with each classic mistake beside the right way"""

    m: float  # max(m before, the block's largest)
    top: float  # the block's largest score alone
    ell: float
    o: np.ndarray
    unscaled_ell: float  # the rescale factor forgotten
    unscaled_o: np.ndarray
    normalised_o: np.ndarray  # the block's sum divided in at once


def _joined_own(m_old: float, l_old: float, o_old: np.ndarray, m_new: float, s: np.ndarray, v: np.ndarray) -> _Own:
    with np.errstate(all="ignore"):
        top = float(np.max(s)) if s.size else -np.inf
        m_exp = max(m_old, top)
        if top == -np.inf:
            return _Own(m_exp, top, l_old, o_old, l_old, o_old, o_old)
        base = m_new if np.isfinite(m_new) else m_exp
        factor = float(np.exp(m_old - base)) if np.isfinite(m_old) else 0.0
        p = np.where(np.isfinite(s), np.exp(s - base), 0.0)
        add, total = p @ v, float(p.sum())
        return _Own(m_exp, top, l_old * factor + total, o_old * factor + add, l_old + total, o_old + add,
                    o_old * factor + (add / total if total else add))


def mark(marker: Any, sheet: Any, rule: Any) -> Any:
    """an online-softmax sheet marked cell by cell: right when it is the key's carried value at the precision, a
    consequence when it follows from the student's own m, ℓ and O before it, and the first classic mistake named"""
    from attntrace.homework.marking import Report, _precision
    from attntrace.homework.said import Said

    t = marker.traced(sheet.query)
    precision, source = _precision(sheet, rule)
    key = works(t, sheet.block, precision)
    bounds = blocks(t.dims.m, sheet.block)
    nb, diagnosis = len(bounds), None
    mistakes: tuple[str, ...] = ()
    items: list[Item] = []
    for a, (h, w) in enumerate(zip(t.heads, key), start=1):
        s_all, v = round_half_up(h.scaled, precision), round_half_up(h.v, precision)
        d_v = v.shape[1]
        judged = {k: _Cells() for k in FLASH_KEYS}
        given = {k: _given(sheet.cells.get((a, k)), len(t.rows) * (nb if k == "flash_o" else 1),
                           nb if k in ("flash_m", "flash_l") else d_v) for k in FLASH_KEYS}
        for r in range(len(t.rows)):
            m, ell, o = -np.inf, 0.0, np.zeros(d_v)
            for b, (start, stop) in enumerate(bounds):
                g_m, g_l, g_o = given["flash_m"][r, b], given["flash_l"][r, b], given["flash_o"][r * nb + b]
                s = s_all[r, start:stop]
                first = _joined_own(m, ell, o, np.nan, s, v[start:stop])
                ok_m = judged["flash_m"].judge(r, b, g_m, w.m[r, b], first.m, precision)
                m_new = g_m if np.isfinite(g_m) else first.m
                own = _joined_own(m, ell, o, m_new, s, v[start:stop])
                ok_l = judged["flash_l"].judge(r, b, g_l, w.ell[r, b], own.ell, precision)
                ok_o = all([judged["flash_o"].judge(r * nb + b, c, g_o[c], w.o[r, b, c], own.o[c], precision)
                            for c in range(d_v)])
                if diagnosis is None and not (ok_m and ok_l and ok_o):
                    diagnosis, mistakes = _named(own, m, g_m, g_l, g_o, ok_m, ok_l, ok_o, precision, b + 1)
                m, ell = m_new, (g_l if np.isfinite(g_l) else own.ell)
                o = np.where(np.isfinite(g_o), g_o, own.o)
            out = divided(o, np.array(ell), precision)
            for c in range(d_v):
                judged["flash_output"].judge(r, c, given["flash_output"][r, c], w.output[r, c], float(out[c]), precision)
        items += judged_items(judged, FLASH_KEYS, NAMES, _Item, a, precision)
    report = Report(sheet.origin, marker.problem.name or marker.origin, precision, source, sheet.query, items,
                    follow_through=rule.follow_through, student=sheet.student, notes=list(sheet.notes))
    report.diagnosis = None if diagnosis is None else Said(diagnosis[0], **diagnosis[1])
    report.mistakes = mistakes
    return report


def judged_items(judged: dict[str, _Cells], keys: tuple[str, ...], names: dict[str, str], kind: type[Item], head: int,
                 precision: int) -> list[Any]:
    """one marked item per key of a head: its verdict, and the wrong cells named"""
    from attntrace.homework.marking import CONSEQUENCE, NOT_ANSWERED, RIGHT, WRONG, Cell

    items = []
    for k in keys:
        cells = judged[k]
        verdict = NOT_ANSWERED if not cells.given else WRONG if cells.wrong else CONSEQUENCE if cells.consequence else RIGHT
        name = _("head {head} {key}").format(head=head, key=_(names[k]))
        items.append(kind(head, k, name, verdict, given=cells.given, written=cells.given, asked=cells.asked,
                          off=[Cell(i, j, f"{name}[{i + 1}, {j + 1}]", float(g), float(e), precision)
                               for i, j, g, e in cells.wrong]))
    return items


def _given(cells: np.ndarray | None, rows: int, cols: int) -> np.ndarray:
    """the student's cells, NaN where blank or not given"""
    out = np.full((rows, cols), np.nan)
    if cells is not None:
        r, c = min(rows, cells.shape[0]), min(cols, cells.shape[1])
        out[:r, :c] = cells[:r, :c]
    return out


def _named(own: _Own, m_old: float, g_m: float, g_l: float, g_o: np.ndarray, ok_m: bool, ok_l: bool, ok_o: bool,
           precision: int, block: int) -> tuple[tuple[str, dict[str, Any]] | None, tuple[str, ...]]:
    """the classic mistake the block's first wrong numbers prove, if any: the message and its short name"""
    if not ok_m and np.isfinite(m_old) and own.top < m_old and _rounds(g_m, own.top, precision):
        return (N_("the running maximum was not carried: m after block {block} is that block's own largest score, "
                   "not the larger of it and m before"), {"block": block}), ("maximum not carried",)
    o_fits = np.isfinite(g_o)
    if (not ok_l and _rounds(g_l, own.unscaled_ell, precision)) or (
            not ok_o and o_fits.any() and all(_rounds(g, x, precision) for g, x in zip(g_o[o_fits],
                                                                                      own.unscaled_o[o_fits]))):
        return (N_("the rescale factor was forgotten: in block {block} ℓ and O before it must be multiplied by "
                   "e^(m_old − m_new)"), {"block": block}), ("rescale factor forgotten",)
    if not ok_o and o_fits.any() and all(_rounds(g, x, precision) for g, x in zip(g_o[o_fits],
                                                                                  own.normalised_o[o_fits])):
        return (N_("the sum was normalised per block: in block {block} O adds the block's Σ e^(s − m)·v divided by "
                   "its own sum; divide by ℓ only at the end"), {"block": block}), ("normalised per block",)
    return None, ()


def read(text: str, origin: str, problem: Any) -> Any:
    """a filled worksheet --flash, in any language attntrace prints, as a sheet; None if the text is not one"""
    import re

    from attntrace.homework import filled
    from attntrace.homework.sheet import Sheet
    from attntrace.language import LANGUAGES, speaking

    lines = text.lstrip("\ufeff").splitlines()
    flat = filled._spaceless("".join(lines))
    for lang in LANGUAGES:
        with speaking(lang):
            pattern = re.escape(filled._spaceless(_(RULES))).replace(re.escape("{block}"), r"(\d+)")
            found = re.search(pattern, flat)
            if found is None:
                continue
            d = problem.dims
            nb = len(blocks(d.m, int(found[1])))
            answered: dict[int, dict[int, tuple[np.ndarray, np.ndarray]]] = {}
            for a in range(1, d.heads + 1):
                for q in range(1, d.n + 1):
                    what = _what(a, q, d.heads)
                    table = _table(lines, _(TABLE).format(what=what), nb, 2 + d.d_v)
                    if table is not None:
                        output = _table(lines, _(OUTPUT).format(what=what), 1, d.d_v)
                        answered.setdefault(a, {})[q] = (table, np.full((1, d.d_v), np.nan) if output is None else output)
            queries = sorted({q for per in answered.values() for q in per})
            query = queries[0] if len(queries) == 1 and d.n > 1 else None
            rows = queries if query is not None else list(range(1, d.n + 1))
            cells: dict[Key, np.ndarray] = {}
            for a, per in answered.items():
                got = [per.get(q, (np.full((nb, 2 + d.d_v), np.nan), np.full((1, d.d_v), np.nan))) for q in rows]
                cells[(a, "flash_m")] = np.array([g[0][:, 0] for g in got])
                cells[(a, "flash_l")] = np.array([g[0][:, 1] for g in got])
                cells[(a, "flash_o")] = np.vstack([g[0][:, 2:] for g in got])
                cells[(a, "flash_output")] = np.vstack([g[1] for g in got])
            return Sheet(origin, cells, query=query, student=filled._student(lines), heads=tuple(answered),
                         block=int(found[1]))
    return None


def _table(lines: list[str], title: str, rows: int, cols: int) -> np.ndarray | None:
    """the numbers of the table under title (markdown or plain), NaN where blank; None if there is no such table"""
    from attntrace.homework import filled

    wanted = filled._spaceless(title)
    at = next((i for i, line in enumerate(lines) if filled._spaceless(line.strip("*# ")).startswith(wanted)), None)
    if at is None:
        return None
    body: list[str] = []
    for line in lines[at + 1:]:
        if not line.strip():
            if body:
                break
            continue
        body.append(line)
    if body and body[0].lstrip().startswith("|"):
        data = [[c.strip() for c in line.strip().strip("|").split("|")][1:] for line in body[2:] if line.strip().startswith("|")]
    else:
        data = [line.split()[-cols:] for line in body[1:]]
    out = np.full((rows, cols), np.nan)
    for i, row in enumerate(data[:rows]):
        for j, cell in enumerate(row[:cols]):
            try:
                out[i, j] = float(cell.replace("−", "-"))
            except ValueError:
                pass
    return out
