"""Llama and the decoders built like it (Qwen2, Mistral, Gemma 2) in numpy, float64 (float32 products in the layers
before a large model's traced one: session.earlier_dtype): RMSNorm before attention and MLP, rotary positions ("half"
pairs, as rotate_half), grouped-query attention, a gated MLP. Qwen2 adds biases to Q, K and V; Mistral (and Qwen2
where its config says) lets a query see only the last sliding_window keys; Gemma 2 soft-caps the scores, slides in
every other layer and norms after attention and around the MLP too."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from attntrace.checkpoints.attend import Layer, attend_projected
from attntrace.checkpoints.jsonfile import huge, real, shown
from attntrace.checkpoints.layers import activation, rms_norm
from attntrace.checkpoints.model import Model, Shape
from attntrace.checkpoints.tokenize import Encoding
from attntrace.core.masks import Causal, Mask, Window
from attntrace.core.problem import Problem
from attntrace.core.variants import Rope, llama3_frequencies
from attntrace.errors import AttntraceError
from attntrace.language import _

ROPE_TYPES = ("default", "linear", "llama3")  # the frequencies base^(-2i/d), with positions as they are or divided by a
# factor, or Llama 3's scaled frequencies
LLAMA3 = ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")


class Llama(Model):
    """weights stored out x in (nn.Linear), transposed when a problem is made"""

    family = "llama"
    marker = "embed_tokens.weight"
    prefixes = ("", "model.")

    def check_sizes(self) -> None:
        where = self.directory / "config.json"
        if self.setting("head_dim") is None and self.hidden % self.heads:
            raise AttntraceError(_("{file}: num_attention_heads = {heads} does not divide hidden_size = {hidden}, and no "
                                   "head_dim says how wide a head is").format(
                                       file=where, heads=shown(self.heads), hidden=self.hidden))
        if self.heads % self.kv_heads:
            raise AttntraceError(_("{file}: num_key_value_heads = {kv_heads} does not divide num_attention_heads = "
                                   "{heads}").format(file=where, kv_heads=self.kv_heads, heads=self.heads))
        if self.head_dim % 2:
            raise AttntraceError(_("{file}: a head of {n} dimensions cannot turn in pairs (rotary positions)").format(
                file=where, n=self.head_dim))

    def check(self) -> None:
        where = self.directory / "config.json"
        query = self.prefix + "layers.0.self_attn.q_proj.weight"
        if query not in self.tensors:  # its shape, checked, bounds head_dim before the rotary frequencies are computed
            raise AttntraceError(_("{folder}: the weights have no {name}, which a {family} model has").format(
                folder=self.directory, name=query, family=self.family))
        self.act = activation(self.setting("hidden_act", default="silu"), str(where))
        self.eps = self.positive("rms_norm_eps", default=1e-6)
        self.base, self.factor, self.frequencies = self._rope()

    def shapes(self) -> dict[str, Shape]:
        hidden, inner = ("hidden_size", self.hidden), ("intermediate_size", self.count("intermediate_size"))
        q = ("num_attention_heads·head_dim", self.heads * self.head_dim)
        kv = ("num_key_value_heads·head_dim", self.kv_heads * self.head_dim)
        shapes: dict[str, Shape] = {"embed_tokens.weight": (("vocab_size", self.size("vocab_size")), hidden)}
        for norm in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                     "post_feedforward_layernorm"):
            shapes[f"layers.#.{norm}.weight"] = (hidden,)
        for key, out, into in (("self_attn.q_proj", q, hidden), ("self_attn.k_proj", kv, hidden),
                               ("self_attn.v_proj", kv, hidden), ("self_attn.o_proj", hidden, q),
                               ("mlp.gate_proj", inner, hidden), ("mlp.up_proj", inner, hidden),
                               ("mlp.down_proj", hidden, inner)):
            shapes[f"layers.#.{key}.weight"], shapes[f"layers.#.{key}.bias"] = (out, into), (out,)
        return shapes

    def _rope(self) -> tuple[float, float, tuple[float, ...] | None]:
        """the rotary base (rope_theta, under rope_parameters in newer configs, at the top in older ones), the factor
        positions are divided by, and each pair's frequency where the model scales them (Llama 3; else None)"""
        where = self.directory / "config.json"
        rope: Any = self.setting("rope_parameters", "rope_scaling", default={})
        if not isinstance(rope, dict):
            raise AttntraceError(_("{file}: rope_parameters must be a JSON object").format(file=where))
        kind = rope.get("rope_type", rope.get("type", "default"))
        if kind not in ROPE_TYPES:
            raise AttntraceError(_("{file}: rope_type {kind} changes the rotary frequencies, which attntrace does not "
                                   "compute; it reads {kinds} and {last}").format(
                                       file=where, kind=shown(kind), kinds=", ".join(ROPE_TYPES[:-1]), last=ROPE_TYPES[-1]))
        if rope.get("partial_rotary_factor", 1.0) != 1.0:
            raise AttntraceError(_("{file}: partial_rotary_factor {value}; attntrace turns every dimension of a "
                                   "head").format(file=where, value=shown(rope["partial_rotary_factor"])))
        given = rope.get("rope_theta", self.setting("rope_theta", default=10000.0))
        factor = rope.get("factor", 1.0) if kind == "linear" else 1.0
        scaling: dict[str, Any] = {key: rope.get(key) for key in LLAMA3} if kind == "llama3" else {}
        numbers, said = {}, {}
        for key, value in (("rope_theta", given), ("factor", factor), *scaling.items()):
            said[key] = shown(value)
            number = real(value)
            error = huge(where, key, value)
            if error is not None:
                raise error
            if number is None or not number > 0:
                raise AttntraceError(_("{file}: {key} = {value} must be a positive number").format(
                    file=where, key=key, value=shown(value)))
            numbers[key] = number
        if numbers["factor"] < 1:
            raise AttntraceError(_("{file}: factor = {value} must be at least 1: {kind} scaling stretches the positions a "
                                   "model was trained on, as transformers also requires").format(
                                       file=where, value=said["factor"], kind=kind))
        base = numbers["rope_theta"]
        if not base > 1:
            raise AttntraceError(_("{file}: rope_theta = {value} must be above 1 (10000 in most models): each pair turns "
                                   "by a power of it").format(file=where, value=shown(given)))
        if not scaling:
            return base, numbers["factor"], None
        if not numbers["low_freq_factor"] < numbers["high_freq_factor"]:
            raise AttntraceError(_("{file}: low_freq_factor {low} must be below high_freq_factor {high}").format(
                file=where, low=shown(scaling["low_freq_factor"]), high=shown(scaling["high_freq_factor"])))
        with np.errstate(all="ignore"):  # a factor of 1e-300 makes frequencies that overflow: said below instead
            turns = llama3_frequencies(self.head_dim, base, *(numbers[key] for key in LLAMA3))
            finite = bool(np.isfinite(turns).all() and np.isfinite(turns * self.positions).all())
        if not finite:
            raise AttntraceError(_("{file}: the llama3 rope_parameters make rotary frequencies too large to compute").format(
                file=where))
        return base, 1.0, tuple(turns.tolist())

    @property
    def kv_heads(self) -> int:
        return self.count("num_key_value_heads", "num_attention_heads")

    @property
    def hidden(self) -> int:
        return self.count("hidden_size")

    @property
    def head_dim(self) -> int:
        return self.count("head_dim", default=self.hidden // self.heads)

    @property
    def positions(self) -> int:
        return self.count("max_position_embeddings")

    def window(self, layer: int) -> int | None:
        """the sliding window of layer (from 1): a query sees itself and the window - 1 keys before it; None: all"""
        return None

    def embed(self, e: Encoding) -> np.ndarray:
        return self.get("embed_tokens.weight", np.array(e.ids))

    def masks(self, layer: int) -> tuple[Mask, ...]:
        """causal, and within the window: query i sees keys i - W < j <= i"""
        window = self.window(layer)
        return (Causal(),) if window is None else (Causal(), Window(window - 1))

    def norm(self, key: str, h: np.ndarray) -> np.ndarray:
        """the RMSNorm whose weight is key"""
        return rms_norm(h, self.get(key), self.eps)

    @property
    def scale(self) -> bool | float:
        """what the scores are divided by: True, sqrt(d_k)"""
        return True

    @property
    def softcap(self) -> float | None:
        """the soft cap of the scores; None: none"""
        return None

    def attention(self, h: np.ndarray, layer: int, head: int | None, e: Encoding) -> Problem:
        """the layer's attention on input_layernorm(h); head a (from 1) reads key/value block (a - 1) // (heads / kv_heads)"""
        p = f"layers.{layer - 1}."
        x = self.norm(p + "input_layernorm.weight", h)
        d = self.head_dim
        if head is None:
            q_rows = kv_rows = slice(None)
        else:
            block = (head - 1) // (self.heads // self.kv_heads)
            q_rows, kv_rows = slice((head - 1) * d, head * d), slice(block * d, (block + 1) * d)  # out x in: rows
        full = head is None
        b_o = self.optional(p + "self_attn.o_proj.bias") if full else None
        settings = self.settings(layer, len(x))
        return Problem(
            x=x,
            w_q=self.get(p + "self_attn.q_proj.weight", q_rows).T, b_q=self.optional(p + "self_attn.q_proj.bias", q_rows),
            w_k=self.get(p + "self_attn.k_proj.weight", kv_rows).T, b_k=self.optional(p + "self_attn.k_proj.bias", kv_rows),
            w_v=self.get(p + "self_attn.v_proj.weight", kv_rows).T, b_v=self.optional(p + "self_attn.v_proj.bias", kv_rows),
            heads=self.heads if full else 1, kv_heads=self.kv_heads if full else None,
            w_o=self.get(p + "self_attn.o_proj.weight").T if full else None, b_o=b_o,
            rope=settings.rope, scale=settings.scale, softcap=settings.softcap, mask=settings.mask, tokens=e.labels,
            name=self.title(layer, head),
        )

    def settings(self, layer: int, n: int) -> Layer:
        """the attention settings of layer (from 1) for n tokens: rotary positions, scale, soft cap and masks"""
        rope = Rope(base=self.base, pairs="half", positions=tuple(i / self.factor for i in range(n)),
                    frequencies=self.frequencies)
        return Layer(heads=self.heads, kv_heads=self.kv_heads, mask=self.masks(layer), scale=self.scale, rope=rope,
                     softcap=self.softcap)

    def self_attention(self, h: np.ndarray, layer: int, e: Encoding,
                       dtype: type[np.floating[Any]] = np.float64) -> np.ndarray:
        """[n, hidden]: the layer's attention on input_layernorm(h), every head and W_O, its projections in dtype"""
        p = f"layers.{layer - 1}."
        x = self.norm(p + "input_layernorm.weight", h)
        q, k, v = (self.linear(p + f"self_attn.{w}_proj", x, dtype=dtype) for w in "qkv")
        return self.linear(p + "self_attn.o_proj", attend_projected(self.settings(layer, len(x)), q, k, v), dtype=dtype)

    def block(self, h: np.ndarray, layer: int, e: Encoding, dtype: type[np.floating[Any]] = np.float64) -> np.ndarray:
        """h + attention(RMSNorm(h)), then + down(act(gate(y)) · up(y)) with y = RMSNorm(·)"""
        p = f"layers.{layer - 1}."
        h = h + self.self_attention(h, layer, e, dtype)
        y = self.norm(p + "post_attention_layernorm.weight", h)
        gate, up = self.linear(p + "mlp.gate_proj", y, dtype=dtype), self.linear(p + "mlp.up_proj", y, dtype=dtype)
        return h + self.linear(p + "mlp.down_proj", self.act(gate) * up, dtype=dtype)


class Qwen2(Llama):
    """Llama with biases on Q, K and V; a sliding window only where use_sliding_window (or layer_types) says"""

    family = "qwen2"

    def window(self, layer: int) -> int | None:
        if not self.setting("use_sliding_window", default=False):
            return None  # transformers sets sliding_window to None then, whatever else config.json says
        kinds = self.setting("layer_types")
        if isinstance(kinds, list) and len(kinds) >= layer:
            sliding = kinds[layer - 1] == "sliding_attention"
        else:
            first = self.setting("max_window_layers", default=28)  # transformers' default
            sliding = not isinstance(first, int) or layer - 1 >= first
        size = self.setting("sliding_window")
        return _window(self, size) if sliding and size is not None else None


class Mistral(Llama):
    """Llama with a sliding window in every layer when its config sets sliding_window"""

    family = "mistral"

    def window(self, layer: int) -> int | None:
        size = self.setting("sliding_window")
        return None if size is None else _window(self, size)


class Gemma2(Llama):
    """Llama with Gemma 2's ways: embeddings times sqrt(hidden_size); RMSNorm weights as 1 + w; a norm after attention
    and around the MLP as well; scores divided by sqrt(query_pre_attn_scalar) and soft-capped; a sliding window in the
    layers layer_types names (by default the odd ones, from 1)"""

    family = "gemma2"

    def check(self) -> None:
        super().check()
        where = self.directory / "config.json"
        self.act = activation(self.setting("hidden_activation", "hidden_act", default="gelu_pytorch_tanh"), str(where))
        if self.setting("use_bidirectional_attention", default=False):
            raise AttntraceError(_("{file}: use_bidirectional_attention is set; attntrace traces Gemma 2 as the causal "
                                   "decoder it is").format(file=where))
        self.scalar = self.real("query_pre_attn_scalar", default=256.0)
        cap = self.setting("attn_logit_softcapping")
        self.cap = None if cap is None else real(cap)
        if cap is not None and (self.cap is None or not self.cap > 0):
            raise AttntraceError(_("{file}: {key} = {value} must be a positive number").format(
                file=where, key="attn_logit_softcapping", value=shown(cap)))
        if not self.scalar > 0:
            raise AttntraceError(_("{file}: {key} = {value} must be a positive number").format(
                file=where, key="query_pre_attn_scalar", value=f"{self.scalar:g}"))

    @property
    def scale(self) -> bool | float:
        return True if self.scalar == self.head_dim else math.sqrt(self.scalar)

    @property
    def softcap(self) -> float | None:
        return self.cap

    def norm(self, key: str, h: np.ndarray) -> np.ndarray:
        return rms_norm(h, 1.0 + self.get(key), self.eps)

    def embed(self, e: Encoding) -> np.ndarray:
        return super().embed(e) * math.sqrt(self.hidden)

    def window(self, layer: int) -> int | None:
        kinds = self.setting("layer_types")
        sliding = kinds[layer - 1] == "sliding_attention" if isinstance(kinds, list) and len(kinds) >= layer \
            else layer % 2 == 1  # transformers' default: layers 1, 3, 5, ... slide
        size = self.setting("sliding_window")
        return _window(self, size) if sliding and size is not None else None

    def block(self, h: np.ndarray, layer: int, e: Encoding, dtype: type[np.floating[Any]] = np.float64) -> np.ndarray:
        """h + norm(attention(norm(h))), then + norm(down(act(gate(y)) · up(y))) with y = norm(·)"""
        p = f"layers.{layer - 1}."
        h = h + self.norm(p + "post_attention_layernorm.weight", self.self_attention(h, layer, e, dtype))
        y = self.norm(p + "pre_feedforward_layernorm.weight", h)
        gate, up = self.linear(p + "mlp.gate_proj", y, dtype=dtype), self.linear(p + "mlp.up_proj", y, dtype=dtype)
        down = self.linear(p + "mlp.down_proj", self.act(gate) * up, dtype=dtype)
        return h + self.norm(p + "post_feedforward_layernorm.weight", down)


def _window(model: Model, size: Any) -> int:
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise AttntraceError(_("{file}: {key} = {value} must be a whole number of at least 1").format(
            file=model.directory / "config.json", key="sliding_window", value=repr(size)))
    return size
