"""A sentence run through a model up to a layer: what `attntrace model` and `attntrace bert` trace a head of."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from attntrace.checkpoints.families import load
from attntrace.checkpoints.model import Model
from attntrace.checkpoints.tokenize import Encoding, encode
from attntrace.core.problem import Problem
from attntrace.errors import AttntraceError, ExitStatus, OutOfRange
from attntrace.language import _

LARGE = 300_000_000  # weights: in a model of more, the layers before the traced one multiply in float32
Progress = Callable[[int, int], None]  # told (k, L) as layer k is done, on the way to layer L, the one traced


def out_of_range(name: str, value: int, top: int, whose: str) -> OutOfRange:
    e = OutOfRange(name, value, top, whose)
    e.exit_code = ExitStatus.USAGE  # a layer or head out of range is a wrong option value
    return e


def check_place(model: Model, layer: int, head: int | None) -> None:
    """the layer and the head (from 1; None: every head) are the model's"""
    if not 1 <= layer <= model.layers:
        raise out_of_range("layer", layer, model.layers, "this model has layers")
    if head is not None and not 1 <= head <= model.heads:
        raise out_of_range("head", head, model.heads, "this model has heads")


@dataclass(frozen=True)
class Entering:
    """the model, the sentence's tokens, and the hidden state h entering the layer (from 1)"""

    model: Model
    encoding: Encoding
    layer: int
    h: np.ndarray  # [n, hidden]

    def problem(self, head: int | None) -> Problem:
        """one head (from 1, checked by entering) as a problem, or every head of the layer with W_O when head is None"""
        with np.errstate(all="ignore"):  # a norm that overflows leaves x infinite, which the engine names
            return self.model.attention(self.h, self.layer, head, self.encoding)


def entering(directory: Path, name: str, sentence: str, layer: int, head: int | None = None,
             model_type: str | None = None, float64: bool = False, progress: Progress | None = None) -> Entering:
    """load the model, check layer and head, tokenize the sentence and run it up to layer (see hidden_entering)"""
    model = load(directory, name, model_type)
    check_place(model, layer, head)
    encoding = encode(directory, sentence, model.positions, name, wordpiece=model.wordpiece)
    model.check_encoding(encoding)
    return Entering(model, encoding, layer, hidden_entering(model, encoding, layer, float64, progress))


def earlier_dtype(model: Model, float64: bool = False) -> type[np.floating[Any]]:
    """what the layers before the traced one multiply their weights in: float32 in a model of more than LARGE weights
    (as transformers runs it; bfloat16 and float16 weights widen to float32 exactly), unless float64 is asked for;
    float64 in a smaller one, where it costs little"""
    return np.float32 if not float64 and model.tensors.count > LARGE else np.float64


def hidden_entering(model: Model, encoding: Encoding, layer: int, float64: bool = False,
                    progress: Progress | None = None) -> np.ndarray:
    """[n, hidden]: the hidden state that enters layer (from 1), each earlier layer's weights read as it runs and its
    pages of the files given back after it; in float32 (see earlier_dtype), a layer whose float32 numbers overflow is
    run again in float64. progress is told (k, layer) as each earlier layer k is done (layer checked by entering)"""
    dtype = earlier_dtype(model, float64)
    with np.errstate(all="ignore"):  # weights large enough to overflow float64 are said below, never warned of
        h = model.embed(encoding)
        for earlier in range(1, layer):
            if not np.isfinite(h).all():
                break
            after = model.block(h, earlier, encoding, dtype)
            if dtype is not np.float64 and not np.isfinite(after).all():
                after = model.block(h, earlier, encoding)
            h = after
            model.tensors.release()
            if progress is not None:
                progress(earlier, layer)
    if not np.isfinite(h).all():
        raise AttntraceError(_("{folder}: the weights make the hidden state entering layer {layer} overflow (numbers "
                               "past 1.8e308); they are not a trained model's").format(folder=model.directory, layer=layer))
    return h
