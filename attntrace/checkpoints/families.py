"""The model families attntrace traces, by config.json's model_type, and a model's directory loaded as one of them."""

from __future__ import annotations

from pathlib import Path

from attntrace.checkpoints.bert.forward import Bert
from attntrace.checkpoints.gpt2 import GPT2
from attntrace.checkpoints.jsonfile import read_json, shown
from attntrace.checkpoints.llama import Gemma2, Llama, Mistral, Qwen2
from attntrace.checkpoints.model import Model
from attntrace.checkpoints.tensors import open_weights
from attntrace.errors import AttntraceError
from attntrace.files.paths import kind
from attntrace.language import N_, _

FAMILIES: dict[str, type[Model]] = {"bert": Bert, "gpt2": GPT2, "llama": Llama, "qwen2": Qwen2, "mistral": Mistral,
                                    "gemma2": Gemma2}


def load(directory: Path, name: str, model_type: str | None = None) -> Model:
    """the model in directory, titled name; model_type stands in for a config.json that names none (old BERTs)"""
    found = kind(directory)
    if found != "directory":
        said = (_("{folder}: no such folder; a model's directory holds config.json, its weights (model.safetensors, "
                  "or shards and their index) and tokenizer.json") if found == "missing" else
                _("{folder}: not a folder; a model's directory holds config.json, its weights (model.safetensors, or "
                  "shards and their index) and tokenizer.json"))
        raise AttntraceError(said.format(folder=directory))
    if kind(directory / "config.json") == "missing":
        raise AttntraceError(_("{folder}: no config.json; a model's directory holds config.json, its weights "
                               "(model.safetensors, or shards and their index) and tokenizer.json").format(folder=directory))
    config = read_json(directory / "config.json", N_("a model's config.json (a JSON object)"))
    family = config.get("model_type", model_type)
    if not isinstance(family, str) or family not in FAMILIES:
        said = (_("{file}: no model_type; attntrace traces {families} models") if family is None else
                _("{file}: model_type {value}; attntrace traces {families} models"))
        raise AttntraceError(said.format(file=directory / "config.json", value=shown(family),
                                         families=", ".join(FAMILIES)))
    return FAMILIES[family](config, open_weights(directory), directory, name)
