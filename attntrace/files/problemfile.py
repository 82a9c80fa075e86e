"""Reading a Problem from a JSON file, a CSV directory, NumPy files or stdin; the Problem checks itself."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from difflib import get_close_matches
from typing import TYPE_CHECKING, Any

import numpy as np

from attntrace.core import masks
from attntrace.core.masks import Mask
from attntrace.core.problem import BIASES, MATRICES, MAX_NAME, Problem, example, problem_error
from attntrace.core.trace import FORMAT
from attntrace.errors import AttntraceError
from attntrace.escape import quoted
from attntrace.files import values
from attntrace.files.text import read_text, status
from attntrace.files.values import Literal
from attntrace.language import _

if TYPE_CHECKING:
    from pathlib import Path

# pathlib and the readers of JSON, CSV and NumPy files are imported only when a file is read: the built-in example
# needs none, and together they cost more than 2% of start-up
SETTING_KEYS = ("heads", "kv_heads", "scale", "mask", "window", "padding", "rope", "alibi", "softcap", "sink", "layout",
                "tokens", "source_tokens", "name")
KEYS = MATRICES + BIASES + SETTING_KEYS
LAYOUTS = ("x_w", "torch")


def load(path: str | None, matrices: dict[str, str | None] | None = None) -> Problem:
    """the problem in path (None = the built-in example), with matrices replaced from their own files"""
    return read(path, matrices)[0]


def read(path: str | None, matrices: dict[str, str | None] | None = None) -> tuple[Problem, tuple[str, ...]]:
    """the problem in path and what reading it is worth a note (a CSV header row read as a header).

    Without path, x given among the matrices makes a problem of the given matrices alone, as a file holding just
    them would be (a missing weight is the identity, scale true, no mask, one head); weights alone replace the
    built-in example's.
    """
    paths = {k: v for k, v in (matrices or {}).items() if v is not None}
    where = origin(path, paths)
    if path is None and "x" in paths:
        data, read_notes = _read_matrices(paths)
        data["name"] = _named(paths)
        return from_dict(data, where), read_notes
    notes: tuple[str, ...] = ()
    if path is None:
        problem = example()
        if paths:
            problem = replace(problem, name=_named(paths, problem.name))
            kept = ", ".join(k for k in ("x", "w_q", "w_k", "w_v") if k not in paths)
            notes = (_("without FILE, {kept} and the settings ({settings}) are the built-in example's; give --x too "
                       "for a problem of your matrices alone").format(kept=kept, settings=_settings_text(problem)),)
    else:
        from pathlib import Path  # only when a file is read (see the top)

        if not str(path).strip():  # pathlib would read "" as the current directory
            raise AttntraceError(_('the problem file\'s name is empty ("{path}"); give a file, or none for the built-in '
                                   "example").format(path=path))
        p = Path(path)
        kind = "stdin" if path == "-" else status(p)
        if kind == "missing":
            raise AttntraceError(_("{path}: no such file or directory").format(path=path))
        data, notes = _read(path, p, kind)
        problem = from_dict(data, where)
    if paths:
        problem, more = _with_matrices(problem, paths, where)
        notes += more
    return problem, notes


def origin(path: str | None, matrices: Mapping[str, str | None] | None = None) -> str:
    """how errors name a problem: its file, stdin, the matrices given without a file, or the built-in example"""
    paths = {k: v for k, v in (matrices or {}).items() if v is not None}
    if path is not None:
        return "stdin" if path == "-" else path
    given = " ".join(f"--{key.replace('_', '-')} {value}" for key, value in paths.items())
    if "x" in paths:
        return given
    return _("the built-in example with {options}").format(options=given) if given else _("the built-in example")


def from_dict(data: Any, origin: str) -> Problem:
    """a problem from parsed JSON (or values as the library takes them); every error names origin and the key.

    A trace's JSON (--format json) is read as the problem it holds.
    """
    data = _parse_dict(data, origin)
    if "format" in data and "x" not in data:
        data, origin = _held_problem(data, origin), f'{origin}: "problem"'
    try:
        return _problem(data)
    except AttntraceError as e:
        raise problem_error(origin, e) from None


def _held_problem(trace: dict[str, Any], origin: str) -> dict[str, Any]:
    """the problem a trace's JSON holds; the rest of it is what tracing that problem gives"""
    version = trace["format"]
    if isinstance(version, bool) or version != FORMAT:
        raise AttntraceError(_("{origin}: format = {value} is not a trace format this attntrace reads ({format}); give "
                               "the trace of this version's --format json, or the problem file").format(
            origin=origin, value=_show(version), format=FORMAT))
    problem = trace.get("problem")
    if not isinstance(problem, dict):
        said = _('{origin}: a trace (it has "format") holds its problem under "problem"; this one has none') \
            if problem is None else _('{origin}: a trace (it has "format") holds its problem under "problem"; this one '
                                      'has {value}')
        raise AttntraceError(said.format(origin=origin, value=None if problem is None else _show(problem)))
    return problem


def _named(matrices: dict[str, str], base: str | None = None) -> str:
    """a title saying where the matrices came from: "x from x.csv, w_q from wq.csv", after the example's name"""
    given = ", ".join(f"{key} from {_file_name(path)}" for key, path in matrices.items())
    name = f"{base}, {given}" if base else given
    return name if len(name) <= MAX_NAME else name[:MAX_NAME - 1] + "…"


def _file_name(path: str) -> str:
    """a file's name as text: bytes that are not UTF-8 are shown as �"""
    from pathlib import Path  # only when a file is read (see the top)

    return os.fsencode(Path(path).name).decode("utf-8", errors="replace")


def _settings_text(problem: Problem) -> str:
    return "scale true" if problem.scale is True else "scale false" if problem.scale is False else f"scale {problem.scale:g}"


def _read(path: str, p: Path, kind: str) -> tuple[Any, tuple[str, ...]]:
    from attntrace.files import jsonfile  # only when a file is read (see the top)

    if kind == "stdin":
        return jsonfile.parse(read_text("-"), "stdin", literals=True, member=_as_matrix), ()
    if kind == "directory":
        return _read_dir(p)
    suffix = p.suffix.lower()
    if suffix == ".npz":
        from attntrace.files.npyfile import load_npz  # only when a file is read (see the top)

        return load_npz(path), ()
    if suffix in (".csv", ".npy"):
        array, notes = _read_matrix(path, "x")
        return {"x": array}, notes
    return jsonfile.parse(read_text(path), path, literals=True, member=_as_matrix), ()


def _as_matrix(key: str, value: Any) -> Any:
    """a big file's matrix as its array as soon as it is read, so its Python numbers go before the next is read; a
    value that is not one is kept as it is, for _problem to refuse in its own order"""
    if key not in MATRICES:
        return value
    try:
        return values.matrix(value, key)
    except AttntraceError:
        return value


def _read_dir(p: Path) -> tuple[dict[str, Any], tuple[str, ...]]:
    """a directory of x.csv, w_q.csv, ... (or .npy), tokens.txt and an attntrace.json for settings"""
    from attntrace.files import jsonfile  # only when a file is read (see the top)

    notes: list[str] = []
    settings = p / "attntrace.json"
    data: dict[str, Any] = jsonfile.settings(settings, '{"scale": false}', literals=True)
    for key in MATRICES + BIASES:
        found = [f for f in (p / f"{key}.csv", p / f"{key}.npy") if status(f) != "missing"]
        if len(found) > 1:
            raise AttntraceError(_("{path}: both {first} and {second} give {key}; keep one").format(
                path=p, first=found[0].name, second=found[1].name, key=key))
        for f in found:
            if key in data:
                raise AttntraceError(_("{path}: {key} is also given in {settings}; keep one").format(
                    path=f, key=key, settings=settings))
            data[key], more = _read_matrix(str(f), key)
            notes.extend(more)
    for key in ("tokens", "source_tokens"):
        f = p / f"{key}.txt"
        if status(f) != "missing":
            data[key] = [t.strip() for t in read_text(f).splitlines() if t.strip()]
    if "x" not in data:
        raise AttntraceError(_("{path}: no x.csv or x.npy in this directory; it needs at least the inputs x").format(
            path=p))
    return data, tuple(notes)


def _read_matrix(path: str, key: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """one matrix from a .csv, .npy or .json file"""
    from pathlib import Path  # only when a file is read (see the top)

    from attntrace.files import csvfile, jsonfile  # only when a file is read (see the top)
    from attntrace.files.npyfile import load_npy  # only when a file is read (see the top)

    suffix = Path(path).suffix.lower()
    if suffix == ".npy":
        return values.array(load_npy(path), f"{path}: {key}", 2), ()
    if suffix == ".csv":
        return csvfile.parse(read_text(path), path, key)
    if suffix == ".json":
        parsed = jsonfile.parse(read_text(path), path, literals=True)
        if isinstance(parsed, dict):
            raise AttntraceError(_("{path} holds an object (a problem?), not one matrix for {key} (a list of rows "
                                   "such as [[1, 0], [0, 1]]); a problem file is given as FILE: attntrace run {path}")
                                 .format(path=path, key=key))
        return values.matrix(parsed, f"{path}: {key}"), ()
    raise AttntraceError(_("{path}: unknown kind of file for {key}; use .csv, .npy or .json").format(path=path, key=key))


def _read_matrices(matrices: dict[str, str]) -> tuple[dict[str, Any], tuple[str, ...]]:
    loaded: dict[str, Any] = {}
    notes: tuple[str, ...] = ()
    for key, path in matrices.items():
        loaded[key], more = _read_matrix(path, key)
        notes += more
    return loaded, notes


def _with_matrices(problem: Problem, matrices: dict[str, str], origin: str) -> tuple[Problem, tuple[str, ...]]:
    loaded, notes = _read_matrices(matrices)
    try:
        return replace(problem, **loaded), notes
    except AttntraceError as e:
        raise problem_error(origin, e) from None


def _parse_dict(data: Any, origin: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        kind = _("a list") if isinstance(data, list) else _show(data)
        raise AttntraceError(_('{origin}: the top level must be an object such as {example}, got {kind}').format(
            origin=origin, example='{"x": [[...]]}', kind=kind))
    return data



def _problem(data: dict[str, Any]) -> Problem:
    for key in data:
        if key not in KEYS and key != "$schema":
            if isinstance(key, str):
                values.surrogate(key, _("the key {key}").format(key=quoted(key, 40)))
            raise AttntraceError(_unknown(key))
    for key in ("name", "layout", "mask"):
        _text(data.get(key), key)
    if data.get("x") is None:
        raise AttntraceError(_('x is missing; give the inputs as "x": [[...], [...]], one row per input'))
    arrays: dict[str, Any] = {}
    for key in MATRICES:
        if data.get(key) is not None:
            value = data[key]
            arrays[key] = values.array(value, key, 2) if isinstance(value, np.ndarray) else values.matrix(value, key)
    for key in BIASES:
        if data.get(key) is not None:
            value = data[key]
            arrays[key] = values.array(value, key, 1) if isinstance(value, np.ndarray) else values.vector(value, key)
    layout = data.get("layout", "x_w")
    if layout not in LAYOUTS:
        raise AttntraceError(_('layout = {value}; use "x_w" (d_in x d_out, the default) or "torch" (out x in)').format(
            value=_show(layout)))
    if layout == "torch":
        for key in ("w_q", "w_k", "w_v", "w_o"):
            if key in arrays:
                arrays[key] = arrays[key].T
    return Problem(
        **arrays,
        heads=_whole(data.get("heads", 1), "heads", 1),
        kv_heads=None if data.get("kv_heads") is None else _whole(data["kv_heads"], "kv_heads", 1),
        rope=data.get("rope"),
        alibi=data.get("alibi", False),
        softcap=_scale(data.get("softcap")),
        sink=_sink(data.get("sink")),
        scale=_scale(data.get("scale", True)),
        mask=_masks(data),
        tokens=None if data.get("tokens") is None else values.labels(data["tokens"], "tokens"),
        source_tokens=None if data.get("source_tokens") is None else values.labels(data["source_tokens"], "source_tokens"),
        name=_name(data.get("name")),
    )


def _unknown(key: str) -> str:
    key = str(key)
    lowered = {k.lower(): k for k in KEYS}
    if key in ("positions", "source_positions", "base", "pairs"):  # rope's own settings, written beside it
        return _('unknown key "{key}": it belongs inside "rope", as {example}').format(
            key=key, example=f'"rope": {{"{key}": ...}}')
    guess = lowered.get(key.lower()) or next(iter(get_close_matches(key[:100], KEYS, n=1)), None)
    if guess:
        return _('unknown key {key}; did you mean "{guess}"?').format(key=quoted(key, 40), guess=guess)
    return _("unknown key {key}; known keys are {keys}").format(key=quoted(key, 40), keys=", ".join(KEYS))


def _text(value: Any, key: str) -> None:
    """a setting's strings (name, layout, a mask's names) must be text: no lone surrogate"""
    if isinstance(value, str):
        values.surrogate(value, key)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            if isinstance(item, str):
                values.surrogate(item, f"{key}[{i}]")


def _whole(value: Any, key: str, least: int) -> int:
    """a JSON number that is a whole number (2 or 2.0)"""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise AttntraceError(_("{key} = {value} must be a whole number of at least {least}").format(
        key=key, value=_show(value), least=least))


def _scale(value: Any) -> Any:
    """a positive number as a float; anything else as given, for the Problem to judge"""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if number and value > 0 else value


def _sink(value: Any) -> Any:
    """the sink as given, with a NaN or Infinity read from JSON as the float it names, for the Problem to refuse"""
    if isinstance(value, list):
        return [_sink(item) for item in value]
    return float(value.word) if isinstance(value, Literal) else value


def _masks(data: dict[str, Any]) -> tuple[Mask, ...]:
    """mask (names, or mask values from the library), with window and padding turning theirs on"""
    value = data.get("mask", [])
    if isinstance(value, list) and not value and data.get("window") is None and data.get("padding") is None:
        return ()  # nothing masked
    window = None if data.get("window") is None else _whole(data["window"], "window", 0)
    padding = None if data.get("padding") is None else values.flags(data["padding"], "padding")
    listed = value if isinstance(value, (list, tuple)) else [value]
    given = masks.coerce(value) if not all(isinstance(n, str) for n in listed) else ()
    names = () if given else _mask(list(value) if isinstance(value, tuple) else value)
    return masks.order([*given, *masks.from_names(names, window=window, padding=padding)])


def _mask(value: Any) -> tuple[str, ...]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise AttntraceError(_("mask must be a name or a list of names ({names})").format(names=", ".join(masks.KINDS)))
    return tuple(dict.fromkeys(names))


def _name(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise AttntraceError(_("name must be a string, got {value}").format(value=_show(value)))


def _show(value: Any) -> str:
    if isinstance(value, str):
        return quoted(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (list, tuple, dict, np.ndarray)):
        return _("an object") if isinstance(value, dict) else _("a list")
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:40] + "…"
