"""Reading a student's answer sheet: the trace's JSON layout (any subset), one input's, or a CSV directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from attntrace.errors import AttntraceError
from attntrace.load import csvfile, jsonfile
from attntrace.load.text import read_text

HEAD_KEYS = ("q", "k", "v", "scores", "scaled", "weights", "output")


@dataclass(frozen=True)
class Answers:
    """what the student gave: per head (from 0) and key, and the final output; query for one input's answers"""

    heads: dict[int, dict[str, np.ndarray]]
    output: np.ndarray | None
    query: int | None


def _cells(value: Any, where: str) -> np.ndarray:
    """a matrix whose cells are numbers, or null for a cell left blank (or masked)"""
    if isinstance(value, list) and value and not isinstance(value[0], list):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(r, list) for r in value):
        raise AttntraceError(f"{where} must be a matrix (a list of rows)")
    width = len(value[0])
    out = np.full((len(value), width), np.nan)
    for i, row in enumerate(value):
        if len(row) != width:
            raise AttntraceError(f"{where} row {i + 1} has {len(row)} values, row 1 has {width}")
        for j, cell in enumerate(row):
            if cell is None:
                continue
            if isinstance(cell, bool) or not isinstance(cell, (int, float)):
                raise AttntraceError(f"{where}[{i}][{j}]: expected a number or null, got {cell!r}")
            out[i, j] = float(cell)
    return out


def from_dict(data: Any, origin: str) -> Answers:
    if not isinstance(data, dict):
        raise AttntraceError(f"{origin}: an answer sheet is a JSON object, like the output of --format json")
    heads: dict[int, dict[str, np.ndarray]] = {}
    top = {k: _cells(data[k], f"{origin}: {k}") for k in HEAD_KEYS if k != "output" and data.get(k) is not None}
    if top:
        heads[0] = top
    for index, head in enumerate(data.get("heads") or []):
        if not isinstance(head, dict):
            raise AttntraceError(f"{origin}: heads[{index}] must be an object with q, k, v, scores, weights, output")
        number = head.get("head", index + 1)
        given = {k: _cells(head[k], f"{origin}: heads[{index}].{k}") for k in HEAD_KEYS if head.get(k) is not None}
        heads.setdefault(int(number) - 1, {}).update(given)
    output = None if data.get("output") is None else _cells(data["output"], f"{origin}: output")
    query = data.get("query")
    if query is not None and (isinstance(query, bool) or not isinstance(query, int)):
        raise AttntraceError(f"{origin}: query must be the input's number, from 1")
    if not heads and output is None:
        raise AttntraceError(f"{origin}: no answers found; give any of {', '.join(HEAD_KEYS)} or heads[]")
    return Answers(heads, output, query)


def load(path: str) -> Answers:
    """an answer sheet from a JSON file (or - for stdin), or a directory of q.csv, k.csv, ... output.csv"""
    p = Path(path)
    if path != "-" and not p.exists():
        raise AttntraceError(f"{path}: no such file or directory")
    if p.is_dir():
        data: dict[str, Any] = {}
        for key in HEAD_KEYS:
            f = p / f"{key}.csv"
            if f.exists():
                data[key] = csvfile.parse(read_text(f), str(f), key)[0].tolist()
        settings = p / "answers.json"
        if settings.exists():
            extra = jsonfile.parse(read_text(settings), str(settings))
            if isinstance(extra, dict):
                data.update(extra)
        return from_dict(data, path)
    return from_dict(jsonfile.parse(read_text(path), "stdin" if path == "-" else path), path)
