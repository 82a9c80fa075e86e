"""What every model family gives a traced sentence: its sizes from config.json, its weights by name (read when used),
and its forward pass a layer at a time, up to the attention of the layer traced as a Problem."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from attntrace.checkpoints.jsonfile import huge, read_json, real, shown
from attntrace.checkpoints.tensors import Tensors
from attntrace.checkpoints.tokenize import Encoding
from attntrace.core.problem import Problem
from attntrace.errors import AttntraceError
from attntrace.escape import visible
from attntrace.language import _

Shape = tuple[tuple[str, "int | None"], ...]  # a tensor's shape as config.json gives it: each size and its name there
__all__ = ["Model", "Shape", "read_json"]


class Model(ABC):
    """a model of one family: config.json's settings and the weights, in the model's own layout, float64 when read"""

    family: ClassVar[str]
    marker: ClassVar[str]  # a tensor every checkpoint of the family holds, named without a prefix
    prefixes: ClassVar[tuple[str, ...]]  # what a checkpoint may put before every name ("model." for ...ForCausalLM)

    def __init__(self, config: dict[str, Any], tensors: Tensors, directory: Path, name: str) -> None:
        self.config, self.tensors, self.directory, self.name = config, tensors, directory, name
        found = next((p for p in self.prefixes if p + self.marker in tensors), None)
        if found is None:
            raise AttntraceError(_("{folder}: the weights have no {name}; config.json says this is a {family} model, and "
                                   "a {family} model has one").format(folder=directory, name=self.marker, family=self.family))
        self.prefix = found
        self.check_sizes()
        self.check_shapes()
        self.check()

    @abstractmethod
    def check(self) -> None:
        """read the settings the forward pass needs; refuse, in one line, a configuration it does not compute"""

    @abstractmethod
    def check_sizes(self) -> None:
        """the sizes in config.json fit together (the heads divide the hidden size), before shapes() uses them"""

    @abstractmethod
    def shapes(self) -> dict[str, Shape]:
        """each tensor the forward pass reads, named without its prefix and with # for a layer's number, and the shape
        config.json gives it"""

    def check_shapes(self) -> None:
        """every tensor the forward pass reads has the shape config.json gives it, checked from the headers before any
        is read: a weights file of another model, or a config.json of another size, is one line"""
        expected = self.shapes()
        for name in self.tensors.names:
            if not name.startswith(self.prefix):
                continue
            dims = expected.get(re.sub(r"(?<=\.)\d+(?=\.)", "#", name[len(self.prefix):]))
            stored = self.tensors.shape(name)
            if dims is not None and (len(stored) != len(dims) or any(
                    size is not None and size != got for (_, size), got in zip(dims, stored))):
                wanted = " x ".join(_("any") if size is None else f"{size:,}" for _s, size in dims)
                raise AttntraceError(_(
                    "{file}: the tensor {name} is {shape}, but {config} makes it {wanted} ({keys}); the weights and "
                    "config.json are of different models").format(
                        file=self.tensors.file(name), name=visible(name), shape=" x ".join(f"{n:,}" for n in stored),
                        config=self.directory / "config.json", wanted=wanted, keys=" x ".join(key for key, _s in dims)))

    def check_encoding(self, e: Encoding) -> None:
        """every id the tokenizer gives has a row in the embedding: a tokenizer of another model is one line"""
        self.within(e, e.ids, self.marker, "id")

    def within(self, e: Encoding, ids: tuple[int, ...], key: str, what: str) -> None:
        rows = self.tensors.shape(self.prefix + key)[0]
        for token, i in zip(e.tokens, ids):
            if not 0 <= i < rows:
                said = (_("{file}: gives the token {token} the id {i}, past the {rows} rows of {name} in {weights}; the "
                          "tokenizer is not this model's") if what == "id" else
                        _("{file}: gives the token {token} the token type id {i}, past the {rows} rows of {name} in {weights}; "
                          "the tokenizer is not this model's"))
                raise AttntraceError(said.format(file=e.source, token=visible(token[:40]), i=f"{i:,}", rows=f"{rows:,}",
                                                 name=self.prefix + key, weights=self.tensors.file(self.prefix + key)))

    # the sizes every family has, under Hugging Face's usual names (GPT-2 has its own)
    @property
    def layers(self) -> int:
        return self.count("num_hidden_layers")

    @property
    def heads(self) -> int:
        return self.count("num_attention_heads")

    @property
    @abstractmethod
    def positions(self) -> int:
        """the longest sentence, in tokens, the model has positions for"""

    @abstractmethod
    def embed(self, e: Encoding) -> np.ndarray:
        """[n, hidden]: the hidden state entering layer 1"""

    @abstractmethod
    def block(self, h: np.ndarray, layer: int, e: Encoding, dtype: type[np.floating[Any]] = np.float64) -> np.ndarray:
        """[n, hidden] -> [n, hidden]: one whole layer (from 1), its weights multiplied in dtype (float32 or float64;
        the norms, the scores and softmax, and the hidden state are float64 either way)"""

    @abstractmethod
    def self_attention(self, h: np.ndarray, layer: int, e: Encoding,
                       dtype: type[np.floating[Any]] = np.float64) -> np.ndarray:
        """[n, hidden]: what the layer's attention adds to h (every head and the output projection), computed as the
        trace of attention(h, layer, None, e) would, its weights multiplied in dtype"""

    @abstractmethod
    def attention(self, h: np.ndarray, layer: int, head: int | None, e: Encoding) -> Problem:
        """the attention of layer (from 1) on the hidden state h entering it: one head (from 1), or every head with
        W_O when head is None"""

    @property
    def wordpiece(self) -> bool:
        """whether a vocab.txt may stand in for tokenizer.json"""
        return False

    def title(self, layer: int, head: int | None) -> str:
        """the trace's name: data (its JSON's name, an extracted problem's), the same in every language"""
        return f"{self.name} · layer {layer}" + ("" if head is None else f" · head {head}")

    def shown_title(self, layer: int, head: int | None) -> str:
        """the title a person reads above the trace, in the chosen language"""
        if head is None:
            return _("{model} · layer {layer}").format(model=self.name, layer=layer)
        return _("{model} · layer {layer} · head {head}").format(model=self.name, layer=layer, head=head)

    # config.json
    def setting(self, *keys: str, default: Any = None) -> Any:
        """the first of keys config.json sets (not null), else default"""
        return next((self.config[k] for k in keys if self.config.get(k) is not None), default)

    def count(self, *keys: str, default: int | None = None) -> int:
        """a whole number of at least 1 from config.json"""
        value = self.setting(*keys, default=default)
        if value is None:
            raise AttntraceError(_("{file}: no {key}, which a {family} model sets").format(
                file=self.directory / "config.json", key=keys[0], family=self.family))
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise AttntraceError(_("{file}: {key} = {value} must be a whole number of at least 1").format(
                file=self.directory / "config.json", key=keys[0], value=shown(value)))
        return value

    def real(self, *keys: str, default: float) -> float:
        """a finite number from config.json"""
        value = self.setting(*keys, default=default)
        number = real(value)
        error = huge(self.directory / "config.json", keys[0], value)
        if error is not None:
            raise error
        if number is None:
            raise AttntraceError(_("{file}: {key} = {value} must be a finite number").format(
                file=self.directory / "config.json", key=keys[0], value=shown(value)))
        return number

    def size(self, key: str) -> int | None:
        """a size config.json may leave out (vocab_size): the weights' own is taken then"""
        return None if self.setting(key) is None else self.count(key)

    def positive(self, *keys: str, default: float) -> float:
        """a finite number above 0 from config.json (a norm's epsilon: below 0 it takes a square root of less than 0)"""
        value = self.real(*keys, default=default)
        if not value > 0:
            raise AttntraceError(_("{file}: {key} = {value} must be a number above 0").format(
                file=self.directory / "config.json", key=keys[0], value=shown(value)))
        return value

    # the weights
    def has(self, key: str) -> bool:
        return self.prefix + key in self.tensors

    def get(self, key: str, index: Any = ()) -> np.ndarray:
        """the tensor key (without its prefix), or the part index selects of it, as float64"""
        name = self.prefix + key
        if name not in self.tensors:
            raise AttntraceError(_("{folder}: the weights have no {name}, which a {family} model has").format(
                folder=self.directory, name=name, family=self.family))
        return self.tensors.get(name, index)

    def optional(self, key: str, index: Any = ()) -> np.ndarray | None:
        """a tensor some checkpoints of the family have (a projection's bias), or None"""
        return self.get(key, index) if self.has(key) else None

    def linear(self, key: str, x: np.ndarray, stored: str = "out x in",
               dtype: type[np.floating[Any]] = np.float64) -> np.ndarray:
        """[n, d_in] -> [n, d_out]: x · W (+ b where the checkpoint has key.bias) in dtype, float32 or float64; stored
        is nn.Linear's layout, "out x in", or Conv1D's, "in x out". W is widened whole, one tensor at a time (in float32
        into the same memory each time), and multiplied once; an infinite or NaN weight is looked for only when the
        product holds one"""
        name = self.prefix + key + ".weight"
        if name not in self.tensors:
            raise AttntraceError(_("{folder}: the weights have no {name}, which a {family} model has").format(
                folder=self.directory, name=name, family=self.family))
        w = self.tensors.borrow32(name) if dtype is np.float32 else self.tensors.get(name, dtype=dtype, checked=False)
        out = x.astype(dtype, copy=False) @ (w.T if stored == "out x in" else w)
        if not np.isfinite(out).all():
            self.tensors.check_finite(name)
        bias = self.optional(key + ".bias")
        return out if bias is None else out + bias
