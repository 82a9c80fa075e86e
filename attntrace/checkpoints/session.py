"""A sentence run through a model up to a layer: what `attntrace model` and `attntrace bert` trace a head of."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attntrace.checkpoints.families import load
from attntrace.checkpoints.model import Model
from attntrace.checkpoints.tokenize import Encoding, encode
from attntrace.core.problem import Problem
from attntrace.errors import AttntraceError, OutOfRange
from attntrace.language import _

USAGE = 2  # a layer or head out of range is a wrong option value


def out_of_range(name: str, value: int, top: int, whose: str) -> OutOfRange:
    e = OutOfRange(name, value, top, whose)
    e.exit_code = USAGE
    return e


@dataclass(frozen=True)
class Entering:
    """the model, the sentence's tokens, and the hidden state h entering the layer (from 1)"""

    model: Model
    encoding: Encoding
    layer: int
    h: np.ndarray  # [n, hidden]

    def problem(self, head: int | None) -> Problem:
        """one head (from 1) as a problem, or every head of the layer with W_O when head is None"""
        if head is not None and not 1 <= head <= self.model.heads:
            raise out_of_range("head", head, self.model.heads, "this model has heads")
        with np.errstate(all="ignore"):  # a norm that overflows leaves x infinite, which the engine names
            return self.model.attention(self.h, self.layer, head, self.encoding)


def entering(directory: Path, name: str, sentence: str, layer: int, head: int | None = None,
             model_type: str | None = None) -> Entering:
    """load the model, check layer and head, tokenize the sentence and run it up to layer"""
    model = load(directory, name, model_type)
    if not 1 <= layer <= model.layers:
        raise out_of_range("layer", layer, model.layers, "this model has layers")
    if head is not None and not 1 <= head <= model.heads:
        raise out_of_range("head", head, model.heads, "this model has heads")
    encoding = encode(directory, sentence, model.positions, name, wordpiece=model.wordpiece)
    model.check_encoding(encoding)
    return Entering(model, encoding, layer, hidden_entering(model, encoding, layer))


def hidden_entering(model: Model, encoding: Encoding, layer: int) -> np.ndarray:
    """[n, hidden]: the hidden state that enters layer (from 1), each earlier layer's weights read as it runs"""
    if not 1 <= layer <= model.layers:
        raise out_of_range("layer", layer, model.layers, "this model has layers")
    with np.errstate(all="ignore"):  # weights large enough to overflow float64 are said below, never warned of
        h = model.embed(encoding)
        for earlier in range(1, layer):
            if not np.isfinite(h).all():
                break
            h = model.block(h, earlier, encoding)
    if not np.isfinite(h).all():
        raise AttntraceError(_("{folder}: the weights make the hidden state entering layer {layer} overflow (numbers "
                               "past 1.8e308); they are not a trained model's").format(folder=model.directory, layer=layer))
    return h
