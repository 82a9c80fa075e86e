"""attntrace as a Python library: trace a problem given as arrays or a file, in a notebook or a script."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from attntrace.core import decode as core_decode
from attntrace.core import trace as core_trace
from attntrace.core.arithmetic import MAX_PRECISION
from attntrace.core.flash import Flash
from attntrace.core.flash import flash as online
from attntrace.core.problem import BIASES, MATRICES, Problem
from attntrace.errors import AttntraceError, Setting, whole
from attntrace.files.problemfile import from_dict
from attntrace.files.problemfile import load as load_problem
from attntrace.language import N_, _
from attntrace.memory import check_flash, check_trace
from attntrace.pages import DECODING, TRACE, Kind, Page, traced
from attntrace.render.document import FORMATS
from attntrace.views.walkthrough import warnings

if TYPE_CHECKING:
    from pathlib import Path  # more than 2% of start-up, which a plain run does without


def _rendered(work: Any, kind: Kind, format: str, precision: Any) -> str:
    """what the command line prints for the work in a format, checked as the command line checks it"""
    if format not in FORMATS:
        raise AttntraceError(_('unknown format "{format}"; use {formats}').format(format=format,
                                                                                   formats=", ".join(FORMATS)))
    return Page(work, kind, format, _precision(precision)).text()


class Trace(core_trace.Trace):
    """a trace as the library hands it out: the core's read-only data, with its warnings, its JSON form and what the
    command line prints for it"""

    @classmethod
    def of(cls, t: core_trace.Trace) -> Trace:
        """the same trace, with the library's methods"""
        return cls(**{f.name: getattr(t, f.name) for f in fields(t) if f.init})

    @property
    def warnings(self) -> tuple[str, ...]:
        """what is worth a warning, in words"""
        return tuple(warnings(self))

    def to_dict(self) -> dict[str, Any]:
        """the documented JSON form"""
        from attntrace.render.jsonform import trace_to_dict

        return trace_to_dict(self)

    def render(self, format: str = "plain", precision: int = 4) -> str:
        """what the command line prints for this trace"""
        return _rendered(self, TRACE, format, precision)

    def _repr_html_(self) -> str:
        """the coloured tables, when a notebook shows a trace"""
        from attntrace.render.document import trace_html  # rich, which records the tables

        return trace_html(self)


def _kind(value: Any) -> str:
    """a value in a message: what it is, and the start of how it reads"""
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _precision(precision: Any) -> int:
    """the decimals a render shows: a whole number from 0 to MAX_PRECISION, as the command line's --precision"""
    try:
        decimals = whole("precision", precision, 0)
    except Setting:
        decimals = None
    if decimals is None or decimals > MAX_PRECISION:
        raise Setting(N_("{setting} must be a whole number from 0 to {most}"),
                      {"setting": ("precision", repr(precision))}, most=MAX_PRECISION)
    return decimals


def _plain(value: Any) -> Any:
    """lists and numpy arrays of numbers as they are; anything else with __array__ (a torch tensor, say) as a numpy
    array; a numpy number, or a 0-d array, as the Python number it holds; an array of text as a list"""
    if isinstance(value, np.generic):
        return value.item()
    if hasattr(value, "__array__") and not isinstance(value, np.ndarray):
        value = np.asarray(value, dtype=np.float64)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    if isinstance(value, np.ndarray) and value.dtype.kind in "USO":
        return value.tolist()
    return value


Given = Problem | str | os.PathLike[str] | Mapping[str, Any] | None  # a problem as trace(), flash() and decode() take it


def load(path: str | Path | None = None) -> Problem:
    """the problem in a file (JSON, a CSV directory, .npz, or - for stdin); None: the built-in worked example"""
    return load_problem(None if path is None else str(path))


def trace(problem: Given = None, *, query: int | None = None, carry_rounding: int | None = None,
          **given: Any) -> Trace:
    """every intermediate of the eight steps, for every input or only input `query` (from 1).

    problem: a Problem, the path of a file any command reads (JSON, a CSV directory, .npz, - for stdin), a dict of a
    problem file's keys, or None to build one from the keyword arguments, which are the problem file's keys
    (x, w_q, w_k, w_v, b_q, b_k, b_v, source, w_o, b_o as lists, numpy arrays or tensors; scale, mask, window,
    padding, heads, tokens, source_tokens, name, layout); with a problem, they replace its own.
    carry_rounding: round every intermediate to this many decimals and carry it on, as a hand calculation does.
    """
    return Trace.of(traced(_given(problem, given, "trace()"), query, carry_rounding))


def _given(problem: Given, given: dict[str, Any], origin: str) -> Problem:
    """the problem (a Problem, a file any command reads, or a dict of a problem file's keys), or one built from the
    keyword arguments, with them in place of its own"""
    keys = isinstance(problem, Mapping)  # a problem given as a dict is its keys alone, even none
    if isinstance(problem, (str, bytes, os.PathLike)):
        problem = load(os.fsdecode(problem))
    elif isinstance(problem, Mapping):
        given, problem = {**problem, **given}, None
    elif problem is not None and not isinstance(problem, Problem):
        raise AttntraceError(_("{origin}: the problem is a Problem, a file's path or a dict of a problem file's keys "
                               "(or None: the worked example), not {value}").format(origin=origin,
                                                                                    value=_kind(problem)))
    data = {key: _plain(value) for key, value in given.items()}
    if problem is None:
        return from_dict(data, origin) if data or keys else load(None)
    if not data:
        return problem
    from attntrace.render.jsonform import problem_to_dict

    merged = {**problem_to_dict(problem), **data}
    for key in MATRICES + BIASES:
        value = getattr(problem, key)
        if key not in data and value is not None:
            merged[key] = value  # exactly, not through JSON numbers
    return from_dict(merged, origin)


def flash(problem: Given = None, *, block: int | None = None, query: int | None = None, **given: Any) -> Flash:
    """FlashAttention's online softmax for every input, or only input `query` (from 1): per head and query the running
    maximum, rescale factor, running sum and output after each block of `block` keys (None: two blocks), O / ℓ at
    the end, and its largest difference from step 7's output (max_diff). problem and keywords as trace() takes them."""
    problem = _given(problem, given, "flash()")
    query, block = whole("query", query), whole("block", block, 1)
    check_flash(problem, query, block)
    return online(Trace.of(traced(problem, query)), block)


class Decoding(core_decode.Decoded):
    """decoding with a KV cache as the library hands it out: the core's data, with its JSON form and what the command
    line prints for it"""

    def to_dict(self) -> dict[str, Any]:
        """the documented JSON form (attntrace decode --format json)"""
        from attntrace.render.decodeform import decode_to_dict

        return decode_to_dict(self)

    def render(self, format: str = "plain", precision: int = 4) -> str:
        """what attntrace decode prints"""
        return _rendered(self, DECODING, format, precision)


def decode(problem: Given = None, *, window: int | None = None, sinks: int = 0, query: int | None = None,
           sink: float | Sequence[float] | None = None, **keys: Any) -> Decoding:
    """decoding with a KV cache: each step's cache, weights and output, per head, and its cost.

    problem and keys as trace() takes them; window: keep the last W tokens (query t sees t − W + 1 … t); sinks: with a
    window, also keep tokens 1 … S; query: only the step of this token (from 1); sink: a learned sink logit, one
    number or one per head (default the problem's own, if it has one).
    """
    problem = _given(problem, keys, "decode()")
    check_trace(problem)  # each step's weights are kept, as a trace's are
    done = core_decode.decode(problem, window=window, sinks=sinks, position=query, sink=sink)
    return Decoding(**{f.name: getattr(done, f.name) for f in fields(done)})


def model_head(model: str | Path | None, sentence: str, layer: int = 1, head: int | None = 1, *,
               query: int | None = None, carry_rounding: int | None = None, bert: bool = False,
               float64: bool = False, **settings: Any) -> ModelHead:
    """trace a head (from 1; None: every head of the layer, with W_O) of a local Hugging Face model on a sentence:
    the trace, the sentence's tokens and its title.

    model: a directory, the id of a model in the local Hugging Face cache or an installed package's model name
    (bert=True: a BERT directory, None for all-MiniLM-L6-v2); query: only this input (from 1); carry_rounding: round
    every intermediate to this many decimals and carry it on, as by hand; float64: the layers before the traced one
    multiply in float64 even in a model of more than 300 million weights (which multiplies them in float32, as
    transformers does; the traced layer is float64 always); settings (scale, mask, window) replace the model's own.
    """
    from attntrace.checkpoints import head as heads  # a real model's readers: every family's, safetensors, tokenizers

    found = heads.model_head(model, sentence, layer, head, query=query, carry_rounding=carry_rounding, bert=bert,
                             float64=float64, **settings)
    return ModelHead(Trace.of(found.trace), found.tokens, found.title)


@dataclass(frozen=True)
class ModelHead:
    """a model's head traced on a sentence: the trace, the sentence's tokens and the title to show above it"""

    trace: Trace
    tokens: tuple[str, ...]
    title: str
