"""What marking gives: the rule cells are judged by, each intermediate's verdict and wrong cells, a sheet's report;
and the problem a sheet is marked against, its exact and carried traces computed once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal

import numpy as np

from attntrace.core import intermediates
from attntrace.core.arithmetic import round_half_up
from attntrace.core.engine import trace
from attntrace.core.problem import Problem
from attntrace.core.trace import Trace
from attntrace.homework.said import Said, ngettext
from attntrace.homework.sheet import Sheet
from attntrace.language import N_
from attntrace.memory import check_trace

EXACT_FROM = 9  # a cell written with this many decimals or more is exact work, judged to within 1e-9
RIGHT, WRONG, CONSEQUENCE, NOT_ANSWERED = "right", "wrong", "consequence", "not answered"
VERDICTS = {RIGHT: N_("right"), WRONG: N_("wrong"), CONSEQUENCE: N_("consequence"), NOT_ANSWERED: N_("not answered")}


@dataclass(frozen=True)
class Rule:
    """how cells are judged: rounded half away from zero at the student's precision, or within rtol/atol (exact work)"""

    precision: int | None = None  # the teacher's --precision: overrides the sheet's and the digits written
    rtol: float | None = None
    atol: float | None = None
    follow_through: bool = True  # a consequence earns the step's points
    points: dict[str, float] = field(default_factory=dict)  # per step key, or "final"; default 1 each

    @property
    def tolerance(self) -> bool:
        return self.rtol is not None or self.atol is not None


@dataclass(frozen=True)
class Cell:
    row: int  # from 0
    column: int
    name: str  # "weights[喜欢 → 猫]"
    given: float  # NaN: left blank
    expected: float  # -inf: masked (should be left blank)
    precision: int  # the decimals the cell is judged at
    basis: str = ""  # what expected comes from when not the true value: "your own scaled scores"
    carried: float | None = None  # the hand calculation's value with the rounding carried (the key's), when it differs
    written: int | None = None  # the decimals given is quoted at, as the student wrote it; None: precision

    @property
    def quoted(self) -> int:
        return self.precision if self.written is None else self.written


@dataclass
class Item:
    """one intermediate asked for, and its verdict"""

    head: int | None  # from 1; None for the final output
    key: str
    name: str
    verdict: str = NOT_ANSWERED
    note: str = ""
    given: int = 0  # cells written that are asked for
    written: int = 0  # every cell written, a masked one included (for a wrong step's count)
    asked: int = 0  # cells asked for (a masked scaled cell is asked to be left blank, not counted)
    off: list[Cell] = field(default_factory=list)  # the cells that are wrong
    max_points: float = 1.0

    @property
    def step(self) -> int:
        return 7 if self.head is None else intermediates.STEP_OF[self.key]

    @property
    def complete(self) -> bool:
        return self.given >= self.asked

    @property
    def points(self) -> float:
        """full points for a right step (a consequence too, with follow-through), in proportion to the cells given"""
        return round(self.earned, 4)

    @property
    def earned(self) -> float:
        """points unrounded, so that a sheet's score is the sum's rounding, not a sum of roundings"""
        return self.max_points * min(1.0, self.given / max(self.asked, 1))


@dataclass
class Report:
    sheet: str
    problem: str
    precision: int  # the decimals the sheet was judged at
    precision_from: str  # "sheet", "teacher", "digits", "tolerance"
    query: int | None
    items: list[Item]
    diagnosis: str | None = None
    mistakes: tuple[str, ...] = ()  # short names of the mistakes named, for a class summary
    notes: list[str] = field(default_factory=list)
    follow_through: bool = True
    student: str | None = None

    @property
    def passed(self) -> bool:
        return all(item.verdict == RIGHT and item.complete for item in self.items)

    @property
    def score(self) -> float:
        earned = {RIGHT} | ({CONSEQUENCE} if self.follow_through else set())
        return round(sum(item.earned for item in self.items if item.verdict in earned), 4)

    @property
    def max_score(self) -> float:
        return round(sum(item.max_points for item in self.items), 4)


def written_precision(a: np.ndarray) -> np.ndarray:
    """the decimals each written cell shows (0.25 -> 2, 3.0 -> 0, 1e-05 -> 5); -1 where blank or masked"""
    out = np.full(a.shape, -1, dtype=int)
    for index, value in np.ndenumerate(a):
        if np.isfinite(value):
            exponent = Decimal(repr(float(value))).normalize().as_tuple().exponent
            out[index] = max(0, -int(exponent))
    return out


def inferred_precision(sheet: Sheet) -> int | None:
    """the decimals most cells were written with (ties: the larger), whole numbers aside as they say nothing of it;
    None for a sheet with no number"""
    written = [d[d >= 0] for d in (written_precision(a) for a in sheet.cells.values())]
    every = np.concatenate(written).astype(int) if written else np.zeros(0, dtype=int)
    if every.size == 0:
        return None
    counts = np.bincount(every[every > 0]) if (every > 0).any() else np.bincount(every)
    return int(len(counts) - 1 - np.argmax(counts[::-1]))


def rounds_to(given: np.ndarray, value: np.ndarray, cell_precision: np.ndarray) -> np.ndarray:
    """True where given is value rounded half away from zero at cell_precision (exact work: within 1e-9)"""
    tiny = 1e-9 * (1.0 + np.abs(np.where(np.isfinite(value), value, 0.0)))
    out = np.zeros(given.shape, dtype=bool)
    for p in np.unique(cell_precision):
        at = cell_precision == p
        if p >= EXACT_FROM:
            out[at] = np.abs(given[at] - value[at]) <= tiny[at]
        else:
            out[at] = np.abs(given[at] - round_half_up(value[at], int(p))) <= tiny[at]
    return out


def precision_of(sheet: Sheet, rule: Rule) -> tuple[int, str]:
    if rule.tolerance:
        return EXACT_FROM, "tolerance"
    if rule.precision is not None:
        return rule.precision, "teacher"
    if sheet.precision is not None:
        return sheet.precision, "sheet"
    inferred = inferred_precision(sheet)
    return (2 if inferred is None else min(inferred, EXACT_FROM)), "digits"


def close(g: np.ndarray, values: np.ndarray, bound: np.ndarray, cell_precision: np.ndarray) -> np.ndarray:
    """g within the propagated error of values, plus half a unit of its own rounding"""
    finite = np.isfinite(values)
    base = np.where(finite, values, 0.0)
    unit = 0.5 * 10.0 ** -np.minimum(cell_precision, EXACT_FROM + 3)
    near = np.abs(g - base) <= bound + unit + 1e-9 * (1.0 + np.abs(base))
    return np.where(finite, near, ~np.isfinite(g))



class Traces:
    """the problem sheets are marked against; the exact and carried traces are computed once and shared"""

    def __init__(self, problem: Problem, origin: str) -> None:
        self.problem = problem
        self.origin = origin
        self._traces: dict[tuple[int | None, int | None], Trace] = {}

    def traced(self, query: int | None, carry_rounding: int | None = None) -> Trace:
        key = (query, carry_rounding)
        if key not in self._traces:
            check_trace(self.problem, query)
            self._traces[key] = trace(self.problem, query=query, carry_rounding=carry_rounding)
        return self._traces[key]


def rounded_fewer(sheet: Sheet, rule: Rule, report: Report, again: Callable[[Sheet, Rule], Report]) -> None:
    """an online-softmax or decoding sheet written to fewer decimals than it asks for (or --precision does): marked
    again at the decimals written, the rounding named, after the mistake those numbers make, if any"""
    own = inferred_precision(replace(sheet, precision=None))
    if report.passed or rule.tolerance or own is None or own >= report.precision:  # the numbers at their own
        # decimals are the evidence: a mistake named at more is the rounding's shadow
        return
    fewer = replace(sheet, precision=own)
    marked = again(fewer, replace(rule, precision=None if rule.precision is None else fewer.precision))
    rounding = Said(N_("the numbers were rounded to {places}, not the {precision} --precision asks for, so every "
                       "step carries a larger rounding error") if rule.precision is not None else
                    N_("the numbers were rounded to {places}, not the {precision} the sheet asks for, so every step "
                       "carries a larger rounding error"), places=ngettext("{n} decimal", "{n} decimals", own),
                    precision=report.precision)
    if marked.diagnosis:
        report.diagnosis = Said(N_("{mistake}; {rounding}"), mistake=marked.diagnosis, rounding=rounding)
    elif marked.passed:
        report.diagnosis = rounding
    else:
        return
    report.mistakes = tuple(dict.fromkeys((*marked.mistakes, "rounded to fewer decimals")))


@dataclass(frozen=True)
class Kind:
    """a kind of worksheet: how a filled one is read, which sheets are of it, and how such a sheet is marked"""

    name: str
    read: Callable[[str, str, Problem | None], Sheet | None]  # a filled worksheet of this kind; None: another kind's
    holds: Callable[[Sheet], bool]  # whether a sheet (read from JSON too) answers this kind
    mark: Callable[[Traces, Sheet, Rule], Report]
