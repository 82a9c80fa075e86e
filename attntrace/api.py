"""attntrace as a Python library: trace a problem given as arrays or a file, in a notebook or a script."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from attntrace.core.problem import BIASES, MATRICES, Problem
from attntrace.core.trace import Trace


def _plain(value: Any) -> Any:
    """lists and numpy arrays as they are; anything else with __array__ (a torch tensor, say) as a numpy array"""
    if value is None or isinstance(value, (list, tuple, np.ndarray)):
        return value
    if hasattr(value, "__array__"):
        return np.asarray(value, dtype=np.float64)
    return value


def load(path: str | Path | None = None) -> Problem:
    """the problem in a file (JSON, a CSV directory, .npz, or - for stdin); None: the built-in worked example"""
    from attntrace.files.problemfile import load as load_problem

    return load_problem(None if path is None else str(path))


def trace(problem: Problem | None = None, *, query: int | None = None, decimals: int | None = None,
          **given: Any) -> Trace:
    """every intermediate of the eight steps, for every input or only input `query` (from 1).

    problem: a Problem, or None to build one from the keyword arguments, which are the problem file's keys
    (x, w_q, w_k, w_v, b_q, b_k, b_v, source, w_o, b_o as lists, numpy arrays or tensors; scale, mask, window,
    padding, heads, tokens, source_tokens, name, layout); with a problem, they replace its own.
    decimals: round every intermediate to this many decimals and carry it on, as a hand calculation does.
    """
    from attntrace.core.engine import trace as trace_problem
    from attntrace.files.problemfile import from_dict
    from attntrace.views.steps import walk_rows

    data = {key: _plain(value) for key, value in given.items()}
    if problem is None:
        problem = from_dict(data, "trace()") if data else load(None)
    elif data:
        from attntrace.core.contract import problem_to_dict

        merged = {**problem_to_dict(problem), **data}
        for key in MATRICES + BIASES:
            value = getattr(problem, key)
            if key not in data and value is not None:
                merged[key] = value  # exactly, not through JSON numbers
        problem = from_dict(merged, "trace()")
    rows = None if query is not None else walk_rows(len(problem.x))
    return trace_problem(problem, query=query, show=rows, decimals=decimals)
