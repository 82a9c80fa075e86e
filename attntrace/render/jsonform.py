"""The JSON form of problems and traces: the machine contract that --format json prints and check reads. Its keys
never change with the language."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

import numpy as np

from attntrace.core import intermediates
from attntrace.core.problem import Problem
from attntrace.core.trace import FORMAT, Trace
from attntrace.views.walkthrough import warnings

JSON_ARRAYS = ("x", "w_q", "w_k", "w_v", "b_q", "b_k", "b_v", "source", "w_o", "b_o")  # a problem's arrays, in the
# order its JSON form writes them (each bias after its weight)


def floats(a: np.ndarray) -> Any:
    """nested lists of Python floats; -0.0 becomes 0.0 and -inf (a masked cell) becomes null"""
    a = np.asarray(a, dtype=np.float64) + 0.0
    out = a.tolist()
    return out if np.isfinite(a).all() else _nulls(out)


def _nulls(value: Any) -> Any:
    if isinstance(value, list):
        return [_nulls(v) for v in value]
    return value if math.isfinite(value) else None


def to_lists(value: Any) -> Any:
    """a JSON form with its arrays as nested lists of Python numbers (floats as floats() gives them)"""
    if isinstance(value, Derived):
        value = value.whole()
    if isinstance(value, np.ndarray):
        return floats(value) if value.dtype.kind == "f" else value.tolist()
    if isinstance(value, dict):
        return {k: to_lists(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_lists(v) for v in value]
    return value


def _compact(a: np.ndarray) -> np.ndarray:
    """a problem matrix for people to edit: whole numbers without a trailing .0"""
    a = np.asarray(a, dtype=np.float64)  # not copied: a float matrix is written as it is, -0.0 as 0.0
    if np.all(a == np.round(a)) and np.all(np.abs(a) < 2**53):
        return (a + 0.0).astype(np.int64)
    return a


def problem_to_dict(problem: Problem) -> dict[str, Any]:
    """the problem file that reproduces this problem (weights in x · W layout)"""
    return to_lists(problem_form(problem))  # type: ignore[no-any-return]


def problem_form(problem: Problem) -> dict[str, Any]:
    """problem_to_dict with its matrices as arrays, to be written a block of rows at a time"""
    out: dict[str, Any] = {}
    if problem.name is not None:
        out["name"] = problem.name
    if problem.tokens is not None:
        out["tokens"] = list(problem.tokens)
    for key in JSON_ARRAYS:
        value = getattr(problem, key)
        if value is not None:
            out[key] = _compact(value)
    if problem.source_tokens is not None:
        out["source_tokens"] = list(problem.source_tokens)
    if problem.heads != 1:
        out["heads"] = problem.heads
    if problem.kv_heads is not None:
        out["kv_heads"] = problem.kv_heads
    if problem.rope is not None:
        out["rope"] = problem.rope.settings()
    if problem.alibi:
        out["alibi"] = True
    if problem.softcap is not None:
        out["softcap"] = problem.softcap
    if problem.sink is not None:  # one number when every head has the same
        out["sink"] = problem.sink[0] if len(set(problem.sink)) == 1 else list(problem.sink)
    out["scale"] = problem.scale
    if problem.mask:
        out["mask"] = list(problem.masks)
    for mask in problem.mask:
        out.update(mask.settings())
    return out


def config(t: Trace) -> dict[str, Any]:
    d, p = t.dims, t.problem
    sink = {} if p.sink is None else {"sink": list(p.sink)}  # each head's
    return {
        "n": d.n, "m": d.m, "d_model": d.d_model, "d_src": d.d_src, "d_k": d.d_k, "d_v": d.d_v,
        "heads": d.heads, "d_out": d.d_out, "cross": p.source is not None, "scale": p.scale,
        "divisor": t.divisor, "mask": list(p.masks), "window": p.window,
        "padding": None if p.padding is None else list(p.padding), "carry_rounding": t.carry_rounding,
        "kv_heads": d.kv_heads, "rope": None if p.rope is None else p.rope.settings(), "alibi": bool(p.alibi),
        "softcap": p.softcap, **sink,
    }


def trace_to_dict(t: Trace) -> dict[str, Any]:
    """the documented JSON form of a trace; a single-query trace holds that query's rows"""
    return to_lists(trace_form(t))  # type: ignore[no-any-return]


def trace_form(t: Trace) -> dict[str, Any]:
    """trace_to_dict with the trace's own arrays in place of lists: what --format json writes a block of rows at a time"""
    heads = [_head_form(t, a) for a in range(len(t.heads))]
    return {
        "format": FORMAT,
        "name": t.problem.name,
        "tokens": list(t.problem.labels),
        "source_tokens": list(t.problem.key_labels) if t.problem.source is not None else None,
        "query": t.query,
        "inputs": [r + 1 for r in t.rows],
        "config": config(t),
        "problem": problem_form(t.problem),
        "heads": heads,
        "concat": t.concat,
        "output": t.output,
        "check": _self_check(t),
        "warnings": warnings(t),
    }


def _head_form(t: Trace, a: int) -> dict[str, Any]:
    """head a's (from 0) intermediates under their keys, with step 6's weighted values, for the inputs shown, before the output"""
    h = t.heads[a]
    values = {key: getattr(h, key) for key in intermediates.KEYS if getattr(h, key) is not None}
    output = values.pop("output")
    shape = (h.v.shape[0], h.v.shape[1])  # [m, d_v]
    weighted = [{"input": i + 1, "values": Derived(shape, partial(t.weighted_rows, a, i))} for i in t.self_check.rows]
    out: dict[str, Any] = {"head": a + 1}
    if h.kv_head is not None:  # grouped-query heads: the key/value block this head reads, from 1
        out["kv_head"] = h.kv_head + 1
    for key, value in values.items():  # with rope, q_rotated and k_rotated; with alibi, the bias; scaled: the logits
        if key == "scaled" and h.bias is not None:
            out["bias"] = h.bias
        out[key] = value
        if key == "weights" and h.sink_weight is not None:
            out["sink_weight"] = h.sink_weight
    return {**out, "weighted": weighted, "output": output}


def _self_check(t: Trace) -> dict[str, Any]:
    """the JSON "check": step 8's self-check, under the key the contract documents"""
    c = t.self_check
    out = {"max_abs_diff": c.max_abs_diff, "tolerance": c.tolerance, "ok": c.ok, "inputs": [r + 1 for r in c.rows]}
    if c.from_exact is not None:
        out["from_exact"] = c.from_exact  # carried rounding: the output's largest distance from the unrounded one
    return out


# characters JSON may carry raw that would reorder or break what a terminal shows: bidi controls, line separators
_UNSEEN = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\x7f-\x9f]")


def dumps(data: Any) -> str:
    """one JSON document, never NaN; objects indented, each matrix row on one line"""
    return "".join(chunks(data))


def chunks(data: Any) -> Iterator[str]:
    """dumps(data) piece by piece: an array (as trace_form holds them) a block of rows at a time, never all at once"""
    for piece in pieces(data):
        yield piece if isinstance(piece, str) else piece.text()


def pieces(data: Any) -> Iterator[str | Rows]:
    """chunks(data), each block of rows left to be written when its text is asked for (by whichever process writes it)"""
    yield from _pieces(data, "")
    yield "\n"


@dataclass(frozen=True)
class Derived:
    """a 2-D array worked out a block of rows at a time as it is written, never held whole (step 6's weighted values)"""

    shape: tuple[int, int]
    rows: Callable[[int, int], np.ndarray]  # rows start to stop

    def whole(self) -> np.ndarray:
        return self.rows(0, self.shape[0])


@dataclass(frozen=True)
class Rows:
    """rows start to stop of a 2-D array (or of one derived as it is written), written as JSON lists with `between`
    between them when text() is called"""

    matrix: np.ndarray | Derived
    start: int
    stop: int
    between: str

    @property
    def cells(self) -> int:
        return (self.stop - self.start) * self.matrix.shape[1]

    def text(self) -> str:
        return self.encoded().decode("ascii")

    def encoded(self) -> bytes:
        """text() as bytes (ASCII, so UTF-8 too), for a writer of bytes"""
        m = self.matrix
        return _lines(m[self.start:self.stop] if isinstance(m, np.ndarray) else m.rows(self.start, self.stop),
                      self.between)


def _pieces(value: Any, indent: str) -> Iterator[str | Rows]:
    inner = indent + "  "
    if isinstance(value, np.ndarray) and (value.ndim not in (1, 2) or value.ndim == 2 and not len(value)):
        value = to_lists(value)
    if isinstance(value, Derived) and not value.shape[0]:
        value = []
    if isinstance(value, (np.ndarray, Derived)) and len(value.shape) == 2:
        yield "[\n" + inner
        yield from _rows(value, ",\n" + inner)
        yield "\n" + indent + "]"
    elif isinstance(value, np.ndarray):
        yield from _rows(value[None, :], "")
    elif isinstance(value, dict) and value:
        for number, (k, v) in enumerate(value.items()):
            yield ("{\n" if number == 0 else ",\n") + f"{inner}{json.dumps(k, ensure_ascii=False)}: "
            yield from _pieces(v, inner)
        yield "\n" + indent + "}"
    elif isinstance(value, list) and value and all(isinstance(v, (list, dict, np.ndarray, Derived)) for v in value):
        for number, v in enumerate(value):
            yield ("[\n" if number == 0 else ",\n") + inner
            yield from _pieces(v, inner)
        yield "\n" + indent + "]"
    else:
        text = json.dumps(to_lists(value), ensure_ascii=False, allow_nan=False)
        yield _UNSEEN.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


BLOCK = 1 << 15  # cells formatted at a time: half a megabyte of text, which stays in the processor's cache


def _rows(a: np.ndarray | Derived, between: str) -> Iterator[str | Rows]:
    """the rows of a 2-D array as JSON lists with `between` between them, a block of rows at a time"""
    count, width = a.shape
    step = max(1, BLOCK // max(1, width))
    for start in range(0, count, step):
        if start:
            yield between
        yield Rows(a, start, min(start + step, count), between)


def _lines(block: np.ndarray, between: str) -> bytes:
    """json.dumps of each row (Python's shortest repr of each float, -0.0 as 0.0, null where not finite), joined"""
    if block.dtype.kind == "f":
        block = block + 0.0
    if not _orjson_agrees():
        return _NOT_FINITE.sub("null", str(block.tolist())[1:-1]).replace("], [", f"]{between}[").encode("ascii")
    import orjson  # optional, and a heavy import: only for a big block

    reprs: list[bytes] = []
    if block.dtype.kind == "f":
        size = np.abs(block)
        missing = ~(size < np.inf)
        odd = missing | ((size > _ODD[0]) & (size < _ODD[1]))  # not finite, or written unlike repr() by orjson
        if odd.any():
            shown = str(block[odd].tolist())[1:-1]
            reprs = (_NOT_FINITE.sub("null", shown) if missing.any() else shown).encode("ascii").split(b", ")
            block = np.where(odd, np.nan, block)  # orjson writes each of them as null, replaced below in turn
    block = np.ascontiguousarray(block)  # a column slice is not, and orjson writes only contiguous arrays
    text = b"\n".join([orjson.dumps(row, option=orjson.OPT_SERIALIZE_NUMPY) for row in block])  # a row a line: one
    if reprs:  # byte then stands between rows, quicker to replace than "], ["
        parts = text.split(b"null")
        joined = [b""] * (len(parts) + len(reprs))
        joined[0::2], joined[1::2] = parts, reprs
        text = b"".join(joined)
    return text.replace(b",", b", ").replace(b"\n", between.encode())


# where orjson writes 0.000015 and 1.5e-7 for repr()'s 1.5e-05 and 1.5e-07; below 1e-9 and from 1e-4 up they agree
_ODD = (0.99e-9, 1.01e-4)
_NOT_FINITE = re.compile(r"-?inf|nan")


@cache
def _orjson_agrees() -> bool:
    """whether orjson is there and writes every probe number outside _ODD as repr() does (checked once)"""
    try:
        import orjson  # optional, and a heavy import: only for a big block
    except ImportError:
        return False
    decades = [m * 10.0**e for e in range(-324, 309) for m in (1, 1.5, 2.2250738585072014, 9.999999999999998)]
    probes = np.array([*decades, 5e-324, 1.7976931348623157e308, 1 / 3, 0.1, 9007199254740993.0, 0.0])
    probes = probes[np.isfinite(probes) & ~((probes > _ODD[0]) & (probes < _ODD[1]))]
    probes = np.concatenate([probes, -probes[probes > 0]])
    written = orjson.dumps(probes, option=orjson.OPT_SERIALIZE_NUMPY).decode("ascii")
    return written[1:-1].split(",") == [repr(v) for v in probes.tolist()]

