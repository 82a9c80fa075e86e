"""The JSON form of problems and traces: the machine contract that --format json prints and check reads."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np

from attntrace.model import intermediates
from attntrace.model.problem import Problem
from attntrace.model.trace import Trace

FORMAT = 1
MATRICES = ("x", "w_q", "w_k", "w_v", "b_q", "b_k", "b_v", "source", "w_o", "b_o")


def floats(a: np.ndarray) -> Any:
    """nested lists of Python floats; -0.0 becomes 0.0 and -inf (a masked cell) becomes null"""
    a = np.asarray(a, dtype=np.float64) + 0.0
    out = a.tolist()
    return out if np.isfinite(a).all() else _nulls(out)


def _nulls(value: Any) -> Any:
    if isinstance(value, list):
        return [_nulls(v) for v in value]
    return value if math.isfinite(value) else None


def _compact(a: np.ndarray) -> Any:
    """a problem matrix for people to edit: whole numbers without a trailing .0"""
    a = np.asarray(a, dtype=np.float64) + 0.0
    if np.all(a == np.round(a)) and np.all(np.abs(a) < 2**53):
        return a.astype(np.int64).tolist()
    return a.tolist()


def problem_to_dict(problem: Problem) -> dict[str, Any]:
    """the problem file that reproduces this problem (weights in x · W layout)"""
    out: dict[str, Any] = {}
    if problem.name is not None:
        out["name"] = problem.name
    if problem.tokens is not None:
        out["tokens"] = list(problem.tokens)
    for key in MATRICES:
        value = getattr(problem, key)
        if value is not None:
            out[key] = _compact(value)
    if problem.source_tokens is not None:
        out["source_tokens"] = list(problem.source_tokens)
    if problem.heads != 1:
        out["heads"] = problem.heads
    out["scale"] = problem.scale
    if problem.mask:
        out["mask"] = list(problem.masks)
    for mask in problem.mask:
        out.update(mask.settings())
    return out


def config(t: Trace) -> dict[str, Any]:
    d, p = t.dims, t.problem
    return {
        "n": d.n, "m": d.m, "d_model": d.d_model, "d_src": d.d_src, "d_k": d.d_k, "d_v": d.d_v,
        "heads": d.heads, "d_out": d.d_out, "cross": p.source is not None, "scale": p.scale,
        "divisor": t.divisor, "mask": list(p.masks), "window": p.window,
        "padding": None if p.padding is None else list(p.padding), "carry_rounding": t.decimals,
    }


def trace_to_dict(t: Trace) -> dict[str, Any]:
    """the documented JSON form of a trace; a single-query trace holds that query's rows"""
    heads = [_head_to_dict(t, a) for a in range(len(t.heads))]
    return {
        "format": FORMAT,
        "name": t.problem.name,
        "tokens": list(t.problem.labels),
        "source_tokens": list(t.problem.key_labels) if t.problem.source is not None else None,
        "query": t.query,
        "inputs": [r + 1 for r in t.rows],
        "config": config(t),
        "problem": problem_to_dict(t.problem),
        "heads": heads,
        "concat": floats(t.concat),
        "output": floats(t.output),
        "check": _self_check(t),
        "warnings": list(t.warnings),
    }


def _head_to_dict(t: Trace, a: int) -> dict[str, Any]:
    """head a's (from 0) intermediates under their keys, with step 6's weighted values, for the inputs shown, before the output"""
    h = t.heads[a]
    values = {key: floats(getattr(h, key)) for key in intermediates.KEYS}
    output = values.pop("output")
    weighted = [{"input": i + 1, "values": floats(t.weighted(a, i))} for i in t.self_check.rows]
    return {"head": a + 1, **values, "weighted": weighted, "output": output}


def _self_check(t: Trace) -> dict[str, Any]:
    """the JSON "check": step 8's self-check, under the key the contract documents"""
    c = t.self_check
    return {"max_abs_diff": c.max_abs_diff, "tolerance": c.tolerance, "ok": c.ok, "inputs": [r + 1 for r in c.rows]}


# characters JSON may carry raw that would reorder or break what a terminal shows: bidi controls, line separators
_UNSEEN = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\x7f-\x9f]")


def dumps(data: Any) -> str:
    """one JSON document, never NaN; objects indented, each matrix row on one line"""
    return _dump(data, "") + "\n"


def _dump(value: Any, indent: str) -> str:
    inner = indent + "  "
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_dump(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list) and value and all(isinstance(v, (list, dict)) for v in value):
        return "[\n" + ",\n".join(inner + _dump(v, inner) for v in value) + "\n" + indent + "]"
    return _UNSEEN.sub(lambda m: f"\\u{ord(m[0]):04x}", json.dumps(value, ensure_ascii=False, allow_nan=False))
