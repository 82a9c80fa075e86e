"""Building a checked Problem from a JSON file, a CSV directory, NumPy files or stdin."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from attntrace.errors import AttntraceError
from attntrace.files import csvfile, jsonfile, values
from attntrace.files.npyfile import load_npy, load_npz
from attntrace.files.text import read_text
from attntrace.model.problem import MASKS, Problem, dims, example

MATRIX_KEYS = ("x", "w_q", "w_k", "w_v", "source", "w_o")
BIAS_KEYS = ("b_q", "b_k", "b_v", "b_o")
SETTING_KEYS = ("heads", "scale", "mask", "window", "padding", "layout", "tokens", "source_tokens", "name")
KEYS = MATRIX_KEYS + BIAS_KEYS + SETTING_KEYS
LAYOUTS = ("x_w", "torch")


def load(path: str | None, matrices: dict[str, str | None] | None = None) -> Problem:
    """the problem in path (None = the built-in example), with matrices replaced from their own files"""
    paths = {k: v for k, v in (matrices or {}).items() if v is not None}
    if path is None:
        problem = example()
        origin = "the built-in example"
    else:
        origin = "stdin" if path == "-" else path
        p = Path(path)
        if path != "-" and not p.exists():
            raise AttntraceError(f"{path}: no such file or directory")
        data, notes = _read(path, p)
        problem = _build(data, origin, notes)
    if paths:
        problem = _with_matrices(problem, paths, origin)
    return problem


def from_dict(data: Any, origin: str) -> Problem:
    """a checked problem from parsed JSON; every error names origin and the key"""
    return _build(_parse_dict(data, origin), origin, ())


def _read(path: str, p: Path) -> tuple[Any, tuple[str, ...]]:
    if path == "-":
        return jsonfile.parse(read_text("-"), "stdin"), ()
    if p.is_dir():
        return _read_dir(p)
    suffix = p.suffix.lower()
    if suffix == ".npz":
        return load_npz(path), ()
    if suffix in (".csv", ".npy"):
        array, notes = _read_matrix(path, "x")
        return {"x": array}, notes
    return jsonfile.parse(read_text(path), path), ()


def _read_dir(p: Path) -> tuple[dict[str, Any], tuple[str, ...]]:
    """a directory of x.csv, w_q.csv, ... (or .npy), tokens.txt and an attntrace.json for settings"""
    data: dict[str, Any] = {}
    notes: list[str] = []
    settings = p / "attntrace.json"
    if settings.exists():
        parsed = jsonfile.parse(read_text(settings), str(settings))
        if not isinstance(parsed, dict):
            raise AttntraceError(f"{settings}: the top level must be an object of settings")
        data.update(parsed)
    for key in MATRIX_KEYS + BIAS_KEYS:
        for suffix in (".csv", ".npy"):
            f = p / f"{key}{suffix}"
            if f.exists():
                if key in data:
                    raise AttntraceError(f"{f}: {key} is also given in {settings}; keep one")
                data[key], more = _read_matrix(str(f), key)
                notes.extend(more)
    for key in ("tokens", "source_tokens"):
        f = p / f"{key}.txt"
        if f.exists():
            data[key] = [t.strip() for t in read_text(f).splitlines() if t.strip()]
    if "x" not in data:
        raise AttntraceError(f"{p}: no x.csv or x.npy in this directory; it needs at least the inputs x")
    return data, tuple(notes)


def _read_matrix(path: str, key: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """one matrix from a .csv, .npy or .json file"""
    suffix = Path(path).suffix.lower()
    if suffix == ".npy":
        return values.array(load_npy(path), f"{path}: {key}", 2), ()
    if suffix == ".csv":
        array, note = csvfile.parse(read_text(path), path, key)
        return array, (note,) if note else ()
    if suffix == ".json":
        return values.matrix(jsonfile.parse(read_text(path), path), f"{path}: {key}"), ()
    raise AttntraceError(f"{path}: unknown kind of file for {key}; use .csv, .npy or .json")


def _with_matrices(problem: Problem, matrices: dict[str, str], origin: str) -> Problem:
    loaded: dict[str, Any] = {}
    for key, path in matrices.items():
        loaded[key], notes = _read_matrix(path, key)
        problem = replace(problem, notes=problem.notes + notes)
    problem = replace(problem, **loaded)
    return checked(problem, origin)


def checked(problem: Problem, origin: str) -> Problem:
    """the problem, once its shapes and settings agree; otherwise one error naming origin"""
    try:
        dims(problem)
    except AttntraceError as e:
        raise AttntraceError(f"{origin}: {e}") from None
    return problem


def _parse_dict(data: Any, origin: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else type(data).__name__
        raise AttntraceError(f'{origin}: the top level must be an object such as {{"x": [[...]]}}, got {kind}')
    return data


def _build(data: Any, origin: str, notes: tuple[str, ...]) -> Problem:
    data = _parse_dict(data, origin)
    try:
        problem = _problem(data)
    except AttntraceError as e:
        raise AttntraceError(f"{origin}: {e}") from None
    return checked(replace(problem, notes=notes), origin)


def _problem(data: dict[str, Any]) -> Problem:
    for key in data:
        if key not in KEYS and key != "$schema":
            raise AttntraceError(_unknown(key))
    if data.get("x") is None:
        raise AttntraceError('x is missing; give the inputs as "x": [[...], [...]], one row per input')
    arrays: dict[str, Any] = {}
    for key in MATRIX_KEYS:
        if data.get(key) is not None:
            value = data[key]
            arrays[key] = values.array(value, key, 2) if isinstance(value, np.ndarray) else values.matrix(value, key)
    for key in BIAS_KEYS:
        if data.get(key) is not None:
            value = data[key]
            arrays[key] = values.array(value, key, 1) if isinstance(value, np.ndarray) else values.vector(value, key)
    layout = data.get("layout", "x_w")
    if layout not in LAYOUTS:
        raise AttntraceError(f'layout = {_show(layout)}; use "x_w" (d_in x d_out, the default) or "torch" (out x in)')
    if layout == "torch":
        for key in ("w_q", "w_k", "w_v", "w_o"):
            if key in arrays:
                arrays[key] = arrays[key].T
    return Problem(
        **arrays,
        heads=_heads(data.get("heads", 1)),
        scale=_scale(data.get("scale", True)),
        mask=_mask(data.get("mask", [])),
        window=_window(data.get("window")),
        padding=None if data.get("padding") is None else values.flags(data["padding"], "padding"),
        tokens=None if data.get("tokens") is None else values.labels(data["tokens"], "tokens"),
        source_tokens=None if data.get("source_tokens") is None else values.labels(data["source_tokens"], "source_tokens"),
        name=_name(data.get("name")),
    )


def _unknown(key: str) -> str:
    lowered = {k.lower(): k for k in KEYS}
    from difflib import get_close_matches  # only on this error path: it costs start-up time

    guess = lowered.get(key.lower()) or next(iter(get_close_matches(key, KEYS, n=1)), None)
    hint = f'; did you mean "{guess}"?' if guess else f"; known keys are {', '.join(KEYS)}"
    return f'unknown key "{key}"{hint}'


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, np.integer):
        return int(value)
    return None


def _heads(value: Any) -> int:
    heads = _whole(value)
    if heads is None or heads < 1:
        raise AttntraceError(f"heads = {_show(value)} must be a whole number of at least 1")
    return heads


def _window(value: Any) -> int | None:
    if value is None:
        return None
    window = _whole(value)
    if window is None or window < 0:
        raise AttntraceError(f"window = {_show(value)} must be a whole number of at least 0")
    return window


def _scale(value: Any) -> bool | float:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and math.isfinite(value) and value > 0:
        return float(value)
    raise AttntraceError(f"scale = {_show(value)} must be true (divide by sqrt(d_k)), false, or a positive number")


def _mask(value: Any) -> tuple[str, ...]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise AttntraceError(f'mask must be a name or a list of names ({", ".join(MASKS)})')
    return tuple(dict.fromkeys(names))


def _name(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise AttntraceError(f"name must be a string, got {_show(value)}")


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return repr(value)
