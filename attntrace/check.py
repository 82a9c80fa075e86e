"""Checking an answer sheet step by step, and naming the convention a wrong answer follows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from attntrace.answers import HEAD_KEYS, Answers
from attntrace.engine import trace
from attntrace.errors import AttntraceError
from attntrace.maths import softmax
from attntrace.problem import Problem
from attntrace.trace import Trace

NAMES = {"q": "Q", "k": "K", "v": "V", "scores": "scores", "scaled": "scaled scores", "weights": "softmax weights",
         "output": "output"}
STEP = {"q": 3, "k": 3, "v": 3, "scores": 4, "scaled": 4, "weights": 5, "output": 7}
Values = dict[tuple[int | None, str], np.ndarray]  # (head, key) -> values; head None is the final output


@dataclass(frozen=True)
class Tolerance:
    """a cell matches when |given - expected| <= atol + rtol * |expected|"""

    rtol: float = 1e-3
    atol: float = 2e-3

    def close(self, given: np.ndarray, expected: np.ndarray) -> np.ndarray:
        """True where the cell matches or was left blank (NaN); masked cells (-inf) expect a blank"""
        blank = np.isnan(given)
        masked = np.isneginf(expected)
        finite = np.where(masked, 0.0, expected)
        near = np.abs(np.where(blank, finite, given) - finite) <= self.atol + self.rtol * np.abs(finite)
        return blank | np.where(masked, blank, near)


@dataclass
class Item:
    """one checked intermediate"""

    head: int | None
    key: str
    given: np.ndarray
    expected: np.ndarray
    verdict: str = "right"  # right, wrong, consequence
    note: str = ""
    cells: list[tuple[int, int, float, float]] = field(default_factory=list)

    @property
    def name(self) -> str:
        if self.head is None:
            return "final output"
        return f"head {self.head + 1} · {NAMES[self.key]}"

    @property
    def step(self) -> int:
        return 8 if self.head is None else STEP[self.key]


@dataclass
class Report:
    items: list[Item]
    diagnosis: str | None = None
    rounding: int | None = None
    query: int | None = None

    @property
    def passed(self) -> bool:
        return all(item.verdict == "right" for item in self.items)


def _values(t: Trace) -> Values:
    out: Values = {(None, "output"): t.output}
    for a, h in enumerate(t.heads):
        for key in HEAD_KEYS:
            out[(a, key)] = getattr(h, key)
    return out


def _given(answers: Answers) -> Values:
    out: Values = {(a, key): v for a, keys in answers.heads.items() for key, v in keys.items()}
    if answers.output is not None:
        out[(None, "output")] = answers.output
    order = list(HEAD_KEYS)
    return dict(sorted(out.items(), key=lambda kv: (kv[0][0] is None, kv[0][0] or 0, order.index(kv[0][1]))))


def _matches(given: Values, expected: Values, tol: Tolerance) -> bool:
    return all(key in expected and expected[key].shape == g.shape and tol.close(g, expected[key]).all()
               for key, g in given.items())


def check(problem: Problem, answers: Answers, tol: Tolerance) -> Report:
    """compare every given intermediate; then explain the first wrong one"""
    t = trace(problem, query=answers.query)
    expected = _values(t)
    given = _given(answers)
    report = Report([], query=answers.query)
    for key, g in given.items():
        if key not in expected:
            raise AttntraceError(f"the answers give head {(key[0] or 0) + 1} but the problem has {len(t.heads)} head(s)")
        e = expected[key]
        if g.shape != e.shape:
            raise AttntraceError(f"{Item(key[0], key[1], g, e).name}: the answer is {g.shape[0]} x {g.shape[1]}, "
                                 f"expected {e.shape[0]} x {e.shape[1]}")
        item = Item(key[0], key[1], g, e)
        ok = tol.close(g, e)
        if not ok.all():
            item.verdict = "wrong"
            item.cells = [(int(i), int(j), float(g[i, j]), float(e[i, j])) for i, j in np.argwhere(~ok)]
        report.items.append(item)
    if report.passed:
        return report
    for decimals in range(0, 7):
        if _matches(given, _values(trace(problem, query=answers.query, decimals=decimals)), tol):
            for item in report.items:
                if item.verdict == "wrong":
                    item.verdict, item.note = "right", f"matches rounding carried at {decimals} decimals"
            report.rounding = decimals
            return report
    _diagnose(problem, t, given, report, tol)
    _consequences(t, given, report, tol)
    return report


def _manual(t: Trace, problem: Problem, scores_of: Callable[[np.ndarray, np.ndarray], np.ndarray],
            allowed: np.ndarray | None, axis: int = -1) -> Values:
    """the intermediates from the right Q, K, V under another convention"""
    out: Values = {}
    outputs = []
    for a, h in enumerate(t.heads):
        scores = scores_of(h.q, h.k)
        scaled = scores / t.divisor
        weights = softmax(scaled, allowed) if axis == -1 else softmax(scaled.T, None if allowed is None else allowed.T).T
        output = weights @ h.v
        out.update({(a, "q"): h.q, (a, "k"): h.k, (a, "v"): h.v, (a, "scores"): scores,
                    (a, "scaled"): scaled if allowed is None else np.where(allowed, scaled, -np.inf),
                    (a, "weights"): weights, (a, "output"): output})
        outputs.append(output)
    concat = np.concatenate(outputs, axis=1)
    out[(None, "output")] = concat if problem.w_o is None else concat @ problem.w_o + (
        0.0 if problem.b_o is None else problem.b_o)
    return out


def _alternatives(problem: Problem, t: Trace) -> list[tuple[str, Callable[[], Values]]]:
    q_of = lambda q, k: q @ k.T  # noqa: E731
    alts: list[tuple[str, Callable[[], Values]]] = []

    def traced(**changes: object) -> Callable[[], Values]:
        return lambda: _values(trace(replace(problem, **changes), query=t.query))  # type: ignore[arg-type]

    if problem.scale is not False:
        alts.append(("the scaling was forgotten: the scores were not divided by "
                     f"{'sqrt(d_k)' if problem.scale is True else problem.scale}", traced(scale=False)))
    else:
        alts.append(("the scores were divided by sqrt(d_k), but this problem has no scaling", traced(scale=True)))
    if t.query is None:
        alts.append(("the softmax was taken down the columns (over the queries) instead of along each row",
                     lambda: _manual(t, problem, q_of, t.allowed, axis=0)))
    for name in ("w_q", "w_k", "w_v"):
        w = getattr(problem, name)
        if w is not None and w.shape[0] == w.shape[1] and not np.array_equal(w, w.T):
            alts.append((f"{name.upper()} was transposed (x · {name.upper()}^T)",
                         traced(**{name: w.T})))
    square = [n for n in ("w_q", "w_k", "w_v") if getattr(problem, n) is not None
              and getattr(problem, n).shape[0] == getattr(problem, n).shape[1]]
    if len(square) > 1:
        alts.append(("the weights were transposed (x · W^T)",
                     traced(**{n: getattr(problem, n).T for n in square})))
    if t.query is None and problem.source is None:
        alts.append(("K was used where Q belongs: the scores are K K^T", traced(w_q=problem.w_k, b_q=problem.b_k)))
        alts.append(("Q and K were swapped: the scores are K Q^T", lambda: _manual(t, problem, lambda q, k: k @ q.T,
                                                                                  t.allowed)))
    if t.allowed is not None:
        inverted = ~t.allowed
        alts.append(("the mask was left out", traced(mask=(), window=None, padding=None)))
        alts.append(("the mask was inverted (the hidden keys were attended, the visible ones hidden)",
                     lambda: _manual(t, problem, q_of, inverted)))
    return alts


def _diagnose(problem: Problem, t: Trace, given: Values, report: Report, tol: Tolerance) -> None:
    first = next(item for item in report.items if item.verdict == "wrong")
    later = {k: v for k, v in given.items() if _order(k) >= _order((first.head, first.key))}
    for name, make in _alternatives(problem, t):
        try:
            alt = make()
        except AttntraceError:
            continue
        if _matches(later, alt, tol):
            report.diagnosis = name
            return
    for name, make in _alternatives(problem, t):
        try:
            alt = make()
        except AttntraceError:
            continue
        key = (first.head, first.key)
        if key in alt and alt[key].shape == first.given.shape and tol.close(first.given, alt[key]).all():
            report.diagnosis = f"{name} (in {first.name}; later steps have further differences)"
            return


def _order(key: tuple[int | None, str]) -> tuple[int, int]:
    return (STEP[key[1]] if key[0] is not None else 8, list(HEAD_KEYS).index(key[1]))


def _consequences(t: Trace, given: Values, report: Report, tol: Tolerance) -> None:
    """a wrong step that follows from the student's own earlier numbers is a consequence, not a new mistake"""
    seen_wrong = False
    for item in report.items:
        if item.verdict != "wrong":
            continue
        if not seen_wrong:
            seen_wrong = True
            continue
        redone = _redo(t, given, item)
        if redone is not None and redone.shape == item.given.shape and tol.close(item.given, redone).all():
            item.verdict, item.note = "consequence", "follows from your earlier numbers"


def _redo(t: Trace, given: Values, item: Item) -> np.ndarray | None:
    """this step recomputed from the student's own earlier answers (the right values where none were given)"""
    if item.head is None:
        return None
    a, h = item.head, t.heads[item.head]
    mine = lambda key: given.get((a, key), getattr(h, key))  # noqa: E731
    if item.key == "scores":
        return mine("q") @ mine("k").T
    if item.key == "scaled":
        return _masked(t, mine("scores") / t.divisor)
    if item.key == "weights":
        scaled = given.get((a, "scaled"))
        base = mine("scores") / t.divisor if scaled is None else np.where(np.isnan(scaled), -np.inf, scaled)
        return softmax(base, t.allowed)
    if item.key == "output":
        return mine("weights") @ mine("v")
    return None


def _masked(t: Trace, scaled: np.ndarray) -> np.ndarray:
    return scaled if t.allowed is None else np.where(t.allowed, scaled, -np.inf)
