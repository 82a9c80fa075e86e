"""The BERT encoder (MiniLM included) in numpy, float64 (float32 products before a large model's traced layer):
embeddings and LayerNorm, then post-norm layers with GELU."""

from __future__ import annotations

from typing import Any

import numpy as np

from attntrace.checkpoints.attend import Layer, attend_projected
from attntrace.checkpoints.jsonfile import shown
from attntrace.checkpoints.layers import activation, layer_norm
from attntrace.checkpoints.model import Model, Shape
from attntrace.checkpoints.tokenize import Encoding
from attntrace.core.masks import Padding
from attntrace.core.problem import Problem
from attntrace.errors import AttntraceError
from attntrace.language import _


class Bert(Model):
    """a BERT encoder; its weights are stored out x in (nn.Linear) and transposed when a problem is made"""

    family = "bert"
    marker = "embeddings.word_embeddings.weight"
    prefixes = ("", "bert.")

    def check(self) -> None:
        kind = self.setting("position_embedding_type", default="absolute")
        if kind != "absolute":
            raise AttntraceError(_("{file}: position_embedding_type {kind}; attntrace reads BERT models with absolute "
                                   "positions").format(file=self.directory / "config.json", kind=repr(kind)))
        self.act = activation(self.setting("hidden_act", default="gelu"), str(self.directory / "config.json"))
        self.eps = self.positive("layer_norm_eps", default=1e-12)

    def check_sizes(self) -> None:
        if self.hidden % self.heads:
            raise AttntraceError(_("{file}: num_attention_heads = {heads} does not divide hidden_size = {hidden}").format(
                file=self.directory / "config.json", heads=shown(self.heads), hidden=self.hidden))

    def shapes(self) -> dict[str, Shape]:
        hidden, inner = ("hidden_size", self.hidden), ("intermediate_size", self.count("intermediate_size"))
        shapes: dict[str, Shape] = {
            "embeddings.word_embeddings.weight": (("vocab_size", self.size("vocab_size")), hidden),
            "embeddings.position_embeddings.weight": (("max_position_embeddings", self.positions), hidden),
            "embeddings.token_type_embeddings.weight": (("type_vocab_size", self.size("type_vocab_size")), hidden),
            "embeddings.LayerNorm.weight": (hidden,), "embeddings.LayerNorm.bias": (hidden,)}
        p = "encoder.layer.#."
        for key, out, into in (("attention.self.query", hidden, hidden), ("attention.self.key", hidden, hidden),
                               ("attention.self.value", hidden, hidden), ("attention.output.dense", hidden, hidden),
                               ("intermediate.dense", inner, hidden), ("output.dense", hidden, inner)):
            shapes[f"{p}{key}.weight"], shapes[f"{p}{key}.bias"] = (out, into), (out,)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[f"{p}{norm}.weight"] = shapes[f"{p}{norm}.bias"] = (hidden,)
        return shapes

    def check_encoding(self, e: Encoding) -> None:
        super().check_encoding(e)
        self.within(e, e.type_ids, "embeddings.token_type_embeddings.weight", "token type id")

    @property
    def hidden(self) -> int:
        return self.count("hidden_size")

    @property
    def positions(self) -> int:
        return self.count("max_position_embeddings", default=512)

    @property
    def wordpiece(self) -> bool:
        return True

    def embed(self, e: Encoding) -> np.ndarray:
        """[n, hidden]: word + position + segment embeddings, then LayerNorm"""
        ids = np.array(e.ids)
        x = (self.get("embeddings.word_embeddings.weight", ids)
             + self.get("embeddings.position_embeddings.weight", np.arange(len(ids)))
             + self.get("embeddings.token_type_embeddings.weight", np.array(e.type_ids)))
        return layer_norm(x, self.get("embeddings.LayerNorm.weight"), self.get("embeddings.LayerNorm.bias"), self.eps)

    def attention(self, h: np.ndarray, layer: int, head: int | None, e: Encoding) -> Problem:
        """the layer's self-attention on h itself (BERT normalises after attention, not before)"""
        p = f"encoder.layer.{layer - 1}.attention."
        size = self.hidden // self.heads
        rows = slice(None) if head is None else slice((head - 1) * size, head * size)  # out x in: a head is rows
        full = head is None
        return Problem(
            x=h,
            w_q=self.get(p + "self.query.weight", rows).T, b_q=self.get(p + "self.query.bias", rows),
            w_k=self.get(p + "self.key.weight", rows).T, b_k=self.get(p + "self.key.bias", rows),
            w_v=self.get(p + "self.value.weight", rows).T, b_v=self.get(p + "self.value.bias", rows),
            heads=self.heads if full else 1,
            w_o=self.get(p + "output.dense.weight").T if full else None,
            b_o=self.get(p + "output.dense.bias") if full else None,
            scale=True, mask=self.settings(e).mask, tokens=e.labels,
            name=self.title(layer, head),
        )

    def settings(self, e: Encoding) -> Layer:
        """every layer's attention settings: the padding of a batch's shorter sentences masked, where there is any"""
        padding = tuple(m == 0 for m in e.mask)
        return Layer(heads=self.heads, kv_heads=self.heads, mask=(Padding(padding),) if any(padding) else ())

    def self_attention(self, h: np.ndarray, layer: int, e: Encoding,
                       dtype: type[np.floating[Any]] = np.float64) -> np.ndarray:
        """[n, hidden]: the layer's attention on h itself, every head and the output dense layer, in dtype"""
        p = f"encoder.layer.{layer - 1}.attention."
        q, k, v = (self.linear(p + f"self.{w}", h, dtype=dtype) for w in ("query", "key", "value"))
        return self.linear(p + "output.dense", attend_projected(self.settings(e), q, k, v), dtype=dtype)

    def block(self, h: np.ndarray, layer: int, e: Encoding, dtype: type[np.floating[Any]] = np.float64) -> np.ndarray:
        """attention, add & norm, feed-forward, add & norm"""
        p = f"encoder.layer.{layer - 1}."
        h = layer_norm(h + self.self_attention(h, layer, e, dtype), self.get(p + "attention.output.LayerNorm.weight"),
                       self.get(p + "attention.output.LayerNorm.bias"), self.eps)
        inner = self.act(self.linear(p + "intermediate.dense", h, dtype=dtype))
        out = self.linear(p + "output.dense", inner, dtype=dtype)
        return layer_norm(h + out, self.get(p + "output.LayerNorm.weight"), self.get(p + "output.LayerNorm.bias"),
                          self.eps)
