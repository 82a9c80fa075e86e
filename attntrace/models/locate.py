"""Where a model is: a directory given as such, or a model id already in the local Hugging Face cache (its layout read
directly, offline: nothing is ever downloaded)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from attntrace.errors import AttntraceError
from attntrace.render.escape import visible

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
    """the snapshot folder of model_id's main revision in the cache (or its only snapshot), None if it has none"""
    if not _MODEL_ID.fullmatch(model_id) or ".." in model_id:
        return None
    repo = (cache or hub_cache()) / ("models--" + model_id.replace("/", "--"))
    snapshots = repo / "snapshots"
    ref = repo / "refs" / "main"
    if ref.is_file():
        commit = ref.read_text(encoding="utf-8", errors="replace").strip()
        if re.fullmatch(r"[\w.-]+", commit) and (snapshots / commit).is_dir():
            return snapshots / commit
    found = sorted(p for p in snapshots.iterdir() if p.is_dir()) if snapshots.is_dir() else []
    return found[0] if len(found) == 1 else None


def find(model: str) -> Path:
    """MODEL as the command line gives it: a directory, or the id of a model in the local Hugging Face cache"""
    path = Path(model)
    if path.is_dir():
        return path
    if path.exists():
        raise AttntraceError(f"{model} is a file; MODEL is a model's directory (config.json, weights, tokenizer.json) "
                             "or the id of a model in the Hugging Face cache")
    snapshot = cached(model)
    if snapshot is not None:
        return snapshot
    shown = visible(model[:200])
    fetch = f"; attntrace never downloads: fetch it first with hf download {shown}" if _MODEL_ID.fullmatch(model) else ""
    raise AttntraceError(f"{shown}: no such directory, and no such model in the Hugging Face cache ({hub_cache()})"
                         f"{fetch}")
