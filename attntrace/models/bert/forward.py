"""The encoder's forward pass up to a chosen layer, in float64 numpy, and one head of that layer as a Problem."""

from __future__ import annotations

import math

import numpy as np

from attntrace.errors import OutOfRange
from attntrace.model.engine import trace
from attntrace.model.masks import Padding
from attntrace.model.problem import Problem
from attntrace.models.bert.files import Model
from attntrace.models.bert.tokenize import Encoding

_erf = np.frompyfunc(math.erf, 1, 1)


def gelu(x: np.ndarray) -> np.ndarray:
    """exact GELU: x · Φ(x) = x/2 · (1 + erf(x / sqrt 2))"""
    return 0.5 * x * (1.0 + np.asarray(_erf(x / math.sqrt(2.0)), dtype=np.float64))


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def embed(model: Model, e: Encoding) -> np.ndarray:
    """[n, hidden]: word + position + segment embeddings, then LayerNorm"""
    ids = np.array(e.ids)
    x = (model.get("embeddings.word_embeddings.weight")[ids]
         + model.get("embeddings.position_embeddings.weight")[np.arange(len(ids))]
         + model.get("embeddings.token_type_embeddings.weight")[np.array(e.type_ids)])
    eps = float(model.config.get("layer_norm_eps", 1e-12))
    return layer_norm(x, model.get("embeddings.LayerNorm.weight"), model.get("embeddings.LayerNorm.bias"), eps)


def attention_problem(model: Model, e: Encoding, x: np.ndarray, layer: int, head: int | None) -> Problem:
    """layer (from 1) as an attention problem: one head's slices, or every head with W_O when head is None"""
    p = f"encoder.layer.{layer - 1}.attention."
    size = model.hidden // model.heads
    cols = slice(None) if head is None else slice((head - 1) * size, head * size)
    padding = tuple(m == 0 for m in e.mask)
    full = head is None
    return Problem(
        x=x,
        w_q=model.get(p + "self.query.weight")[cols].T, b_q=model.get(p + "self.query.bias")[cols],
        w_k=model.get(p + "self.key.weight")[cols].T, b_k=model.get(p + "self.key.bias")[cols],
        w_v=model.get(p + "self.value.weight")[cols].T, b_v=model.get(p + "self.value.bias")[cols],
        heads=model.heads if full else 1,
        w_o=model.get(p + "output.dense.weight").T if full else None,
        b_o=model.get(p + "output.dense.bias") if full else None,
        scale=True, mask=(Padding(padding),) if any(padding) else (), tokens=e.labels,
        name=f"{model.name} · layer {layer}" + ("" if full else f" · head {head}"),
    )


def block(model: Model, e: Encoding, x: np.ndarray, layer: int) -> np.ndarray:
    """one full encoder layer (from 1): attention, add & norm, feed-forward with exact GELU, add & norm"""
    p = f"encoder.layer.{layer - 1}."
    eps = float(model.config.get("layer_norm_eps", 1e-12))
    attended = trace(attention_problem(model, e, x, layer, None), show=()).output
    h = layer_norm(x + attended, model.get(p + "attention.output.LayerNorm.weight"),
                   model.get(p + "attention.output.LayerNorm.bias"), eps)
    inner = gelu(h @ model.get(p + "intermediate.dense.weight").T + model.get(p + "intermediate.dense.bias"))
    out = inner @ model.get(p + "output.dense.weight").T + model.get(p + "output.dense.bias")
    return layer_norm(h + out, model.get(p + "output.LayerNorm.weight"), model.get(p + "output.LayerNorm.bias"), eps)


def hidden_entering(model: Model, e: Encoding, layer: int) -> np.ndarray:
    """[n, hidden]: the hidden state that enters layer (from 1)"""
    if not 1 <= layer <= model.layers:
        raise OutOfRange("layer", layer, model.layers, "this model has layers")
    x = embed(model, e)
    for earlier in range(1, layer):
        x = block(model, e, x, earlier)
    return x
