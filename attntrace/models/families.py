"""The model families attntrace traces, by config.json's model_type, and a model's directory loaded as one of them."""

from __future__ import annotations

from pathlib import Path

from attntrace.errors import AttntraceError
from attntrace.models.bert.forward import Bert
from attntrace.models.gpt2 import GPT2
from attntrace.models.llama import Gemma2, Llama, Mistral, Qwen2
from attntrace.models.model import Model, read_json
from attntrace.models.tensors import open_weights
from attntrace.render.escape import visible

FAMILIES: dict[str, type[Model]] = {"bert": Bert, "gpt2": GPT2, "llama": Llama, "qwen2": Qwen2, "mistral": Mistral,
                                    "gemma2": Gemma2}


def load(directory: Path, name: str, model_type: str | None = None) -> Model:
    """the model in directory, titled name; model_type stands in for a config.json that names none (old BERTs)"""
    if not (directory / "config.json").is_file():
        raise AttntraceError(f"{directory}: no config.json; a model's directory holds config.json, its weights "
                             "(model.safetensors, or shards and their index) and tokenizer.json")
    config = read_json(directory / "config.json")
    kind = config.get("model_type", model_type)
    if kind not in FAMILIES:
        said = "no model_type" if kind is None else f"model_type {visible(repr(kind)[:60])}"
        raise AttntraceError(f"{directory / 'config.json'}: {said}; attntrace traces {', '.join(FAMILIES)} models")
    return FAMILIES[kind](config, open_weights(directory), directory, name)
