"""The JSON Schema of a problem file, as printed by `attntrace schema`."""

from __future__ import annotations

from typing import Any

from attntrace.core.masks import KINDS as MASKS
from attntrace.language import _

_NUMBER = {"type": "number"}
_MATRIX = {"type": "array", "minItems": 1, "items": {"type": "array", "minItems": 1, "items": _NUMBER}}
_VECTOR = {"type": "array", "minItems": 1, "items": _NUMBER}
_LABELS = {"type": "array", "items": {"type": "string"}}


def schema() -> dict[str, Any]:
    def matrix(text: str) -> dict[str, Any]:
        return {**_MATRIX, "description": text}

    def vector(text: str) -> dict[str, Any]:
        return {**_VECTOR, "description": text}

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "attntrace problem",
        "type": "object",
        "required": ["x"],
        "additionalProperties": False,
        "properties": {
            "$schema": {"type": "string"},
            "name": {"type": "string", "description": _("shown in titles")},
            "x": matrix(_("the inputs X, n x d_model, one row per input")),
            "w_q": matrix(_("W_Q, d_model x d_k; missing = identity")),
            "w_k": matrix(_("W_K, d_model x d_k (d_src x d_k with a source); missing = identity")),
            "w_v": matrix(_("W_V, d_model x d_v (d_src x d_v with a source); missing = identity")),
            "b_q": vector(_("bias added to Q, d_k values")),
            "b_k": vector(_("bias added to K, d_k values")),
            "b_v": vector(_("bias added to V, d_v values")),
            "source": matrix(_("cross-attention: K and V come from this m x d_src matrix")),
            "heads": {"type": "integer", "minimum": 1, "default": 1,
                      "description": _("split the columns of W_Q, W_K, W_V into this many equal blocks")},
            "kv_heads": {"type": "integer", "minimum": 1,
                         "description": _("grouped-query attention: W_K, W_V (and b_k, b_v) hold this many blocks of "
                                        "d_k and d_v columns; query head a (from 0) uses block a // (heads / kv_heads), "
                                        "as Hugging Face's repeat_kv; 1 = multi-query; default: heads")},
            "rope": {"oneOf": [{"type": "boolean"}, {
                "type": "object", "additionalProperties": False, "properties": {
                    "base": {"type": "number", "exclusiveMinimum": 1, "default": 10000},
                    "pairs": {"enum": ["half", "adjacent"], "default": "half",
                              "description": _("half: dimension i turns with i + d_k/2 (Llama's rotate_half); "
                                             "adjacent: 2i with 2i + 1 (RoFormer, GPT-J)")},
                    "positions": {**_VECTOR, "description": _("one per input; default 0 … n-1")},
                    "source_positions": {**_VECTOR, "description": _("one per source row (cross-attention)")},
                    "frequencies": {**_VECTOR, "items": {"type": "number", "exclusiveMinimum": 0},
                                    "description": _("each pair's turn per position, one per pair (d_k/2), as a model "
                                                   "scales them (Llama 3); default base^(-2i/d_k)")}}}],
                     "description": _("rotary position embedding of q and k, after projection and bias, before the "
                                    "scores; frequencies base^(-2i/d_k) unless given; d_k must be even")},
            "alibi": {"type": "boolean", "default": False,
                      "description": _("add -slope_a · |i - j| to the scaled scores, with the ALiBi paper's head slopes")},
            "softcap": {"type": "number", "exclusiveMinimum": 0,
                        "description": _("after scaling and bias the scores become c · tanh(scores / c) (Gemma 2)")},
            "sink": {"oneOf": [_NUMBER, _VECTOR],
                     "description": _("a learned logit joining each row's softmax with no value, so the weights sum to "
                                    "less than 1 (gpt-oss): one number for every head, or one per head")},
            "w_o": matrix(_("output projection applied to the concatenated heads, d_v x d_out")),
            "b_o": vector(_("bias added after W_O, d_out values")),
            "scale": {"oneOf": [{"type": "boolean"}, {"type": "number", "exclusiveMinimum": 0}], "default": True,
                      "description": _("true: divide scores by sqrt(d_k); false: no scaling; a number: divide by it")},
            "mask": {"oneOf": [{"enum": list(MASKS)}, {"type": "array", "items": {"enum": list(MASKS)}}],
                     "description": _("causal (self-attention only), window, padding; combinable")},
            "window": {"type": "integer", "minimum": 0, "description": _("window mask: key j is seen when |i - j| <= window")},
            "padding": {"type": "array", "items": {"type": "boolean"},
                        "description": _("one per key; true = padded, never attended")},
            "layout": {"enum": ["x_w", "torch"], "default": "x_w",
                       "description": _("torch: weights are stored out x in, as nn.Linear does, and are transposed")},
            "tokens": {**_LABELS, "description": _("labels of the n inputs")},
            "source_tokens": {**_LABELS, "description": _("labels of the m source rows")},
        },
    }
