"""GPT-2 in numpy, float64 (float32 products in the layers before a large model's traced one): learned positions,
pre-norm layers, one fused c_attn for Q, K and V, GELU (tanh form). Its Conv1D weights are stored in x out, the x · W
layout a problem takes, so nothing is transposed."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from attntrace.checkpoints.attend import Layer, attend_projected
from attntrace.checkpoints.layers import activation, layer_norm
from attntrace.checkpoints.model import Model, Shape
from attntrace.checkpoints.tokenize import Encoding
from attntrace.core.masks import Causal
from attntrace.core.problem import Problem
from attntrace.errors import AttntraceError
from attntrace.language import _


class GPT2(Model):
    family = "gpt2"
    marker = "wte.weight"
    prefixes = ("", "transformer.")

    def check_sizes(self) -> None:
        if self.hidden % self.heads:
            raise AttntraceError(_("{file}: n_head = {heads} does not divide n_embd = {hidden}").format(
                file=self.directory / "config.json", heads=self.heads, hidden=self.hidden))

    def check(self) -> None:
        self.act = activation(self.setting("activation_function", default="gelu_new"), str(self.directory / "config.json"))
        self.eps = self.positive("layer_norm_epsilon", default=1e-5)

    def shapes(self) -> dict[str, Shape]:
        hidden = ("n_embd", self.hidden)
        inner = ("n_inner", self.count("n_inner", default=4 * self.hidden))
        shapes: dict[str, Shape] = {"wte.weight": (("vocab_size", self.size("vocab_size")), hidden),
                                   "wpe.weight": (("n_positions", self.positions), hidden)}
        for key in ("ln_1", "ln_2"):
            shapes[f"h.#.{key}.weight"] = shapes[f"h.#.{key}.bias"] = (hidden,)
        for key, into, out in (("attn.c_attn", hidden, ("3·n_embd", 3 * self.hidden)), ("attn.c_proj", hidden, hidden),
                               ("mlp.c_fc", hidden, inner), ("mlp.c_proj", inner, hidden)):
            shapes[f"h.#.{key}.weight"], shapes[f"h.#.{key}.bias"] = (into, out), (out,)  # Conv1D: in x out
        return shapes

    @property
    def layers(self) -> int:
        return self.count("n_layer", "num_hidden_layers")

    @property
    def heads(self) -> int:
        return self.count("n_head", "num_attention_heads")

    @property
    def hidden(self) -> int:
        return self.count("n_embd", "hidden_size")

    @property
    def positions(self) -> int:
        return self.count("n_positions", "max_position_embeddings")

    def embed(self, e: Encoding) -> np.ndarray:
        """[n, hidden]: token + position embeddings"""
        ids = np.array(e.ids)
        return self.get("wte.weight", ids) + self.get("wpe.weight", np.arange(len(ids)))

    def scale(self, layer: int) -> bool | float:
        """what the scores are divided by: sqrt(d_k), and also the layer's number with scale_attn_by_inverse_layer_idx"""
        by_root = bool(self.setting("scale_attn_weights", default=True))
        if not self.setting("scale_attn_by_inverse_layer_idx", default=False):
            return by_root
        return float(layer) * (math.sqrt(self.hidden // self.heads) if by_root else 1.0)

    def attention(self, h: np.ndarray, layer: int, head: int | None, e: Encoding) -> Problem:
        """the layer's attention on ln_1(h); c_attn's columns are Q's, K's and V's side by side"""
        p = f"h.{layer - 1}."
        x = layer_norm(h, self.get(p + "ln_1.weight"), self.get(p + "ln_1.bias"), self.eps)
        size = self.hidden // self.heads
        first, last = (0, self.hidden) if head is None else ((head - 1) * size, head * size)

        def part(which: int) -> slice:  # which: 0 for Q, 1 for K, 2 for V
            return slice(which * self.hidden + first, which * self.hidden + last)

        full = head is None
        return Problem(
            x=x,
            w_q=self.get(p + "attn.c_attn.weight", (slice(None), part(0))), b_q=self.get(p + "attn.c_attn.bias", part(0)),
            w_k=self.get(p + "attn.c_attn.weight", (slice(None), part(1))), b_k=self.get(p + "attn.c_attn.bias", part(1)),
            w_v=self.get(p + "attn.c_attn.weight", (slice(None), part(2))), b_v=self.get(p + "attn.c_attn.bias", part(2)),
            heads=self.heads if full else 1,
            w_o=self.get(p + "attn.c_proj.weight") if full else None,
            b_o=self.get(p + "attn.c_proj.bias") if full else None,
            scale=self.scale(layer), mask=self.settings(layer).mask, tokens=e.labels, name=self.title(layer, head),
        )

    def settings(self, layer: int) -> Layer:
        """the attention settings of layer (from 1): causal, scaled as scale() says"""
        return Layer(heads=self.heads, kv_heads=self.heads, mask=(Causal(),), scale=self.scale(layer))

    def self_attention(self, h: np.ndarray, layer: int, e: Encoding,
                       dtype: type[np.floating[Any]] = np.float64) -> np.ndarray:
        """[n, hidden]: the layer's attention on ln_1(h), every head and c_proj, its projections in dtype"""
        p = f"h.{layer - 1}."
        x = layer_norm(h, self.get(p + "ln_1.weight"), self.get(p + "ln_1.bias"), self.eps)
        q, k, v = np.split(self.linear(p + "attn.c_attn", x, stored="in x out", dtype=dtype), 3, axis=1)
        return self.linear(p + "attn.c_proj", attend_projected(self.settings(layer), q, k, v), stored="in x out",
                           dtype=dtype)

    def block(self, h: np.ndarray, layer: int, e: Encoding, dtype: type[np.floating[Any]] = np.float64) -> np.ndarray:
        """h + attention(ln_1(h)), then + MLP(ln_2(·))"""
        p = f"h.{layer - 1}."
        h = h + self.self_attention(h, layer, e, dtype)
        y = layer_norm(h, self.get(p + "ln_2.weight"), self.get(p + "ln_2.bias"), self.eps)
        inner = self.act(self.linear(p + "mlp.c_fc", y, stored="in x out", dtype=dtype))
        return h + self.linear(p + "mlp.c_proj", inner, stored="in x out", dtype=dtype)
