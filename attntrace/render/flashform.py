"""The JSON form of `attntrace flash`: per head and query, each block's keys, scores and the running m, ℓ and O after
it, then O / ℓ; a -inf (a masked score, m before any key) is null, never a number JSON lacks. Its keys never change
with the language."""

from __future__ import annotations

from typing import Any

import numpy as np

from attntrace.core.flash import Flash, Recurrence
from attntrace.render.jsonform import floats, to_lists
from attntrace.views.walkthrough import warnings


def _number(value: float) -> float | None:
    """a float, or null for -inf"""
    return floats(np.array(value))  # type: ignore[no-any-return]


def _query(f: Flash, h: Recurrence, traced: np.ndarray, j: int) -> dict[str, Any]:
    """one query row's blocks, sink and output (j: its index among the traced rows)"""
    blocks = []
    for b, (start, stop) in enumerate(f.bounds):
        blocks.append({
            "keys": np.arange(start + 1, stop + 1), "scores": h.scores[j, start:stop],
            "max": _number(h.block_max[j, b]), "m": _number(h.m[j, b]), "rescale": float(h.rescale[j, b]),
            "sum": float(h.sums[j, b]), "l": float(h.ell[j, b]), "o": h.o[j, b], "skipped": bool(h.skipped[j, b]),
        })
    out: dict[str, Any] = {"query": f.trace.rows[j] + 1, "blocks": blocks}
    if h.sink is not None:
        assert h.sink_m is not None and h.sink_rescale is not None and h.sink_sum is not None
        assert h.sink_ell is not None and h.sink_o is not None
        out["sink"] = {"logit": h.sink, "m": _number(h.sink_m[j]), "rescale": float(h.sink_rescale[j]),
                       "sum": float(h.sink_sum[j]), "l": float(h.sink_ell[j]), "o": h.sink_o[j]}
    out.update({"l": float(h.final_ell[j]), "o": h.final_o[j], "output": h.output[j], "step7_output": traced[j],
                "max_diff": float(np.max(np.abs(h.output[j] - traced[j])))})
    return out


def flash_to_dict(f: Flash) -> dict[str, Any]:
    """the documented JSON form of an online softmax"""
    return to_lists(flash_form(f))  # type: ignore[no-any-return]


def flash_form(f: Flash) -> dict[str, Any]:
    """flash_to_dict with its lists of numbers as arrays, each written at once (orjson) rather than number by number"""
    t = f.trace
    heads = []
    for a, h in enumerate(f.heads):
        head: dict[str, Any] = {"head": a + 1}
        if h.sink is not None:
            head["sink"] = h.sink
        head["queries"] = [_query(f, h, t.heads[a].output, j) for j in range(len(t.rows))]
        heads.append(head)
    return {
        "name": t.problem.name, "tokens": list(t.problem.labels),
        "source_tokens": list(t.problem.key_labels) if t.problem.source is not None else None,
        "query": t.query, "inputs": [r + 1 for r in t.rows], "block": f.block,
        "blocks": [list(range(start + 1, stop + 1)) for start, stop in f.bounds],
        "heads": heads, "concat": f.concat, "output": f.output, "step7_output": t.output,
        "max_diff": f.max_diff, "tolerance": f.tolerance, "ok": f.ok, "warnings": warnings(t),
    }
