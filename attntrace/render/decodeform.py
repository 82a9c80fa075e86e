"""The JSON form of decoding with a KV cache: per head, each step's cache (positions from 1, in slot order), weights
and output; the costs and the check beside them. Its keys never change with the language; it never holds NaN or inf
(a number that is not finite is null)."""

from __future__ import annotations

from typing import Any

import numpy as np

from attntrace.core.decode import TOLERANCE, Decoded
from attntrace.render.jsonform import floats, to_lists


def _number(value: float) -> Any:
    return floats(np.array(value))


def decode_to_dict(d: Decoded) -> dict[str, Any]:
    """the documented JSON form of a decoding"""
    return to_lists(decode_form(d))  # type: ignore[no-any-return]


def decode_form(d: Decoded) -> dict[str, Any]:
    """decode_to_dict with its lists of numbers as arrays, each written at once (orjson) rather than number by number"""
    heads = []
    for head in d.heads:
        steps = []
        for step in head.steps:
            shown: dict[str, Any] = {"t": step.t, "cache": np.array(step.cache, dtype=np.int64),
                                     "weights": step.weights, "output": step.output}
            if step.sink_weight is not None:
                shown["sink_weight"] = _number(step.sink_weight)
            shown.update(q=step.q, k=step.k, v=step.v, scores=step.scores, logits=step.scaled, evicted=step.evicted)
            steps.append(shown)
        entry: dict[str, Any] = {"head": head.head + 1, "kv_head": head.kv_block + 1}
        if head.sink is not None:
            entry["sink"] = _number(head.sink)
        heads.append({**entry, "steps": steps})
    return {
        "heads": heads,
        "window": d.window,
        "sinks": d.sinks,
        "slots": d.slots,
        "costs": [{"t": c.t, "cache_numbers": c.numbers, "cache_bytes": {"float16": c.float16, "float32": c.float32},
                   "multiply_adds": {"with_cache": c.with_cache, "recomputed": c.recomputed}} for c in d.costs],
        "output": d.output,
        "reference": d.reference,
        "max_diff": _number(d.max_diff),
        "tolerance": TOLERANCE,
    }
