"""A sentence run through a BERT-family model up to a layer: what `attntrace bert` traces a head of."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attntrace.errors import OutOfRange
from attntrace.model.problem import Problem
from attntrace.models.bert.files import DEFAULT_NAME, Model, default_model_dir, load_model
from attntrace.models.bert.forward import attention_problem, hidden_entering
from attntrace.models.bert.tokenize import Encoding, encode


@dataclass(frozen=True)
class Entering:
    """the model, the sentence's wordpieces, and the hidden state x entering the layer (from 1)"""

    model: Model
    encoding: Encoding
    layer: int
    x: np.ndarray  # [n, hidden]

    def problem(self, head: int | None) -> Problem:
        """one head (from 1) as a problem, or every head of the layer with W_O when head is None"""
        if head is not None and not 1 <= head <= self.model.heads:
            raise OutOfRange("head", head, self.model.heads, "this model has heads")
        return attention_problem(self.model, self.encoding, self.x, self.layer, head)


def model_name(directory: Path | None) -> str:
    return str(directory) if directory is not None else DEFAULT_NAME


def entering(sentence: str, layer: int, head: int | None = None, directory: Path | None = None) -> Entering:
    """load the model (all-MiniLM-L6-v2 unless a directory is given), check layer and head, run up to layer"""
    where = directory or default_model_dir()
    model = load_model(where, None if directory else DEFAULT_NAME)
    if not 1 <= layer <= model.layers:
        raise OutOfRange("layer", layer, model.layers, "this model has layers")
    if head is not None and not 1 <= head <= model.heads:
        raise OutOfRange("head", head, model.heads, "this model has heads")
    encoding = encode(where, sentence, int(model.config.get("max_position_embeddings", 512)), model.name)
    return Entering(model, encoding, layer, hidden_entering(model, encoding, layer))
