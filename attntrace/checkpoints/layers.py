"""The pieces of a transformer block besides attention, in float64 numpy: the norms and the activations."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from attntrace.errors import AttntraceError
from attntrace.language import _

_erf = np.frompyfunc(math.erf, 1, 1)


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """[n, d] -> [n, d]: each row to mean 0 and variance 1, then scaled and shifted"""
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """[n, d] -> [n, d]: each row divided by its root mean square, then scaled (Llama's RMSNorm, in float64)"""
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * weight


def gelu(x: np.ndarray) -> np.ndarray:
    """exact GELU: x · Φ(x) = x/2 · (1 + erf(x / sqrt 2))"""
    return 0.5 * x * (1.0 + np.asarray(_erf(x / math.sqrt(2.0)), dtype=np.float64))


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GPT-2's GELU: x/2 · (1 + tanh(sqrt(2/π) · (x + 0.044715 x³)))"""
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * (x * x * x))))  # x³ as products:
    # a power of a float array is a call of pow() for each number, thirty times as long


def silu(x: np.ndarray) -> np.ndarray:
    """x · sigmoid(x), written with tanh so that no exponential overflows"""
    return x * 0.5 * (1.0 + np.tanh(x / 2.0))


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "gelu": gelu, "gelu_new": gelu_tanh, "gelu_pytorch_tanh": gelu_tanh, "silu": silu, "swish": silu, "relu": relu,
}


def activation(name: object, where: str) -> Callable[[np.ndarray], np.ndarray]:
    """the activation config.json names (Hugging Face's names)"""
    if isinstance(name, str) and name in ACTIVATIONS:
        return ACTIVATIONS[name]
    raise AttntraceError(_("{file}: the activation {name} is not one attntrace computes; it knows {names}").format(
        file=where, name=repr(name), names=", ".join(ACTIVATIONS)))
