"""An attention problem: the matrices and settings, checked for shape before anything is computed."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from attntrace.core.masks import Mask, Padding, Window, coerce, padding_mismatch
from attntrace.core.variants import Rope, coerce_rope
from attntrace.errors import AttntraceError, said
from attntrace.language import N_, _, ngettext
from attntrace.words import counted

MATRICES = ("x", "w_q", "w_k", "w_v", "source", "w_o")  # a problem's matrices (2-D), as its file names them
BIASES = ("b_q", "b_k", "b_v", "b_o")  # and its biases (1-D)
MAX_LABEL = 200  # characters in a token label: a word or a short phrase (a longer one is a mistake, and fills every table)
MAX_NAME = 1000  # characters in a problem's name


@dataclass(frozen=True, eq=False)  # it holds arrays, which have no ==: one is equal only to itself
class Problem:
    """x and the weights in x · W layout (d_in x d_out), with every variant's setting; checked when made.

    Matrices may be given as lists, numpy arrays or anything with __array__; mask as masks (Causal(), Window(2),
    Padding(flags)) or names ("causal").
    """

    x: np.ndarray  # [n, d_model]
    w_q: np.ndarray | None = None  # [d_model, d_k · heads]; None = identity
    w_k: np.ndarray | None = None  # [d_src, d_k · heads]
    w_v: np.ndarray | None = None  # [d_src, d_v · heads]
    b_q: np.ndarray | None = None  # [d_k · heads]
    b_k: np.ndarray | None = None  # [d_k · heads]
    b_v: np.ndarray | None = None  # [d_v · heads]
    source: np.ndarray | None = None  # [m, d_src]; None = self-attention
    heads: int = 1
    w_o: np.ndarray | None = None  # [d_v · heads, d_out]
    b_o: np.ndarray | None = None  # [d_out]
    scale: bool | float = True
    mask: tuple[Mask, ...] = ()
    kv_heads: int | None = None  # grouped-query attention: W_K, W_V hold kv_heads blocks; None: one per head
    rope: Rope | None = None  # rotary positions of q and k (True: the defaults)
    alibi: bool = False  # the ALiBi bias −slope · |i − j| added to the scaled scores
    softcap: float | None = None  # scores become c · tanh(scores / c) after scaling and bias
    sink: tuple[float, ...] | None = None  # a learned logit per head in each row's softmax, with no value (gpt-oss); a
    # single number is every head's
    tokens: tuple[str, ...] | None = None
    source_tokens: tuple[str, ...] | None = None
    name: str | None = None
    dims: Dims = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for key in MATRICES:
            object.__setattr__(self, key, _array(getattr(self, key), key, 2))
        for key in BIASES:
            object.__setattr__(self, key, _array(getattr(self, key), key, 1))
        if not (isinstance(self.mask, tuple) and not self.mask):
            object.__setattr__(self, "mask", coerce(self.mask))
        if self.rope is not None:
            object.__setattr__(self, "rope", coerce_rope(self.rope))
        for key in ("heads", "kv_heads"):
            if isinstance(getattr(self, key), np.integer):
                object.__setattr__(self, key, int(getattr(self, key)))
        for key in ("tokens", "source_tokens"):
            value = getattr(self, key)
            if value is not None:
                object.__setattr__(self, key, tuple(str(t) for t in value))
        _check_lengths(self)
        object.__setattr__(self, "dims", _checked(self))
        if self.sink is not None:
            object.__setattr__(self, "sink", _sinks(self.sink, self.dims.heads))

    @property
    def kv_input(self) -> np.ndarray:
        """what K and V are derived from: the source in cross-attention, else x"""
        return self.x if self.source is None else self.source

    @property
    def masks(self) -> tuple[str, ...]:
        """the names of the masks in force"""
        return tuple(m.name for m in self.mask)

    @property
    def window(self) -> int | None:
        if not self.mask:
            return None
        return next((int(m.size) for m in self.mask if isinstance(m, Window)), None)

    @property
    def padding(self) -> tuple[bool, ...] | None:
        if not self.mask:
            return None
        return next((m.flags for m in self.mask if isinstance(m, Padding)), None)

    @cached_property  # asked for by every table of a trace: made once
    def labels(self) -> tuple[str, ...]:
        """the inputs' row labels: the tokens, a repeated one told apart ("the", "the·3"), or x1, x2, ..."""
        return unique_labels(self.tokens) if self.tokens else tuple(f"x{i + 1}" for i in range(len(self.x)))

    @cached_property
    def key_labels(self) -> tuple[str, ...]:
        if self.source is None:
            return self.labels
        return unique_labels(self.source_tokens) if self.source_tokens else tuple(
            f"s{j + 1}" for j in range(len(self.source)))


SUFFIX = "·"  # between a repeated token and its position: "the", "the·8"


def unique_labels(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """each token as itself the first time, then with "·" and its position (from 1, as --input counts); never equal"""
    used: set[str] = set()
    labels = []
    for i, token in enumerate(tokens):
        label = token
        while label in used:  # a token spelled like an earlier label ("the·8") takes one more suffix
            label = f"{label}{SUFFIX}{i + 1}"
        used.add(label)
        labels.append(label)
    return tuple(labels)


def _array(value: Any, key: str, ndim: int) -> np.ndarray | None:
    """a float64 array of the given rank (a bias may be one row or column), every value finite"""
    if value is None:
        return None
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise AttntraceError(_("{key} must hold numbers only, as a list of rows").format(key=key)) from None
    if ndim == 1 and a.ndim == 2 and 1 in a.shape:
        a = a.reshape(-1)
    if a.ndim != ndim or a.size == 0:
        said_shape = ngettext("{key} must be a matrix (a list of rows), got {n} dimension of shape {shape}",
                              "{key} must be a matrix (a list of rows), got {n} dimensions of shape {shape}", a.ndim) \
            if ndim == 2 else ngettext("{key} must be a vector (a list of numbers), got {n} dimension of shape {shape}",
                                       "{key} must be a vector (a list of numbers), got {n} dimensions of shape {shape}",
                                       a.ndim)
        raise AttntraceError(said_shape.format(key=key, n=a.ndim, shape=a.shape))
    if not np.isfinite(a).all():
        i = np.argwhere(~np.isfinite(a))[0]
        if ndim == 2:
            raise AttntraceError(_("{key} row {row}, column {column} is {value}; give a finite number").format(
                key=key, row=i[0] + 1, column=i[1] + 1, value=a[tuple(i)]))
        raise AttntraceError(_("{key} value {index} is {value}; give a finite number").format(
            key=key, index=i[0] + 1, value=a[tuple(i)]))
    return a


def _check_lengths(problem: Problem) -> None:
    """labels and a name of a sane length: each label is printed in every row and column it names"""
    for key in ("tokens", "source_tokens"):
        for i, label in enumerate(getattr(problem, key) or ()):
            if len(label) > MAX_LABEL:
                raise AttntraceError(_("{key}[{i}] (label {label}) is {length} characters long; a label may have at "
                                       "most {most} (shorten it)").format(key=key, i=i, label=i + 1,
                                                                         length=f"{len(label):,}", most=MAX_LABEL))
    if problem.name is not None and len(str(problem.name)) > MAX_NAME:
        raise AttntraceError(_("name is {length} characters long; a name may have at most {most}").format(
            length=f"{len(str(problem.name)):,}", most=MAX_NAME))


def problem_error(origin: str, e: AttntraceError) -> AttntraceError:
    """e, said about origin (a file, or the command that built the problem)"""
    return AttntraceError(f"{origin}: {e}", e.exit_code)


@dataclass(frozen=True)
class Dims:
    """the sizes of a problem; d_k and d_v are per head"""

    n: int
    m: int
    d_model: int
    d_src: int
    d_k: int
    d_v: int
    heads: int
    d_out: int
    kv_heads: int = 1  # key/value blocks: query head a (from 0) uses block a // (heads / kv_heads)

    def kv_block(self, head: int) -> int:
        """the key/value block (from 0) that query head `head` (from 0) uses, as Hugging Face's repeat_kv orders them"""
        return head // (self.heads // self.kv_heads)


def _width(w: np.ndarray | None, default: int) -> int:
    return default if w is None else w.shape[1]


class Scaled(Protocol):
    """what divisor() reads: a Problem, or a model layer's settings"""

    @property
    def scale(self) -> bool | float: ...


def divisor(problem: Scaled, d_k: int) -> float:
    """what the scores are divided by: sqrt(d_k) for scale=true, 1 for false, else the number"""
    if problem.scale is True:
        return math.sqrt(d_k)
    if problem.scale is False:
        return 1.0
    return float(problem.scale)


def dims(problem: Problem) -> Dims:
    """the sizes of a problem (checked when it was made)"""
    return problem.dims


def _checked(problem: Problem) -> Dims:
    """check every shape and setting against the others; raise one clear error for the first wrong one"""
    x, kv = problem.x, problem.kv_input
    kv_name = "x" if problem.source is None else "source"
    n, d_model = x.shape
    m, d_src = kv.shape
    for name, w, rows, feeds, what in (
        ("w_q", problem.w_q, d_model, "x", "Q = X · W_Q"),
        ("w_k", problem.w_k, d_src, kv_name, f"K = {kv_name} · W_K" if kv_name == "source" else "K = X · W_K"),
        ("w_v", problem.w_v, d_src, kv_name, f"V = {kv_name} · W_V" if kv_name == "source" else "V = X · W_V"),
    ):
        if w is not None and w.shape[0] != rows:
            raise AttntraceError(_("{name} has {rows} but {feeds} has {columns} ({what} needs them equal)").format(
                name=name, rows=counted(w.shape[0], "row"), feeds=feeds, columns=counted(rows, "column"), what=what))
    heads = problem.heads
    if isinstance(heads, bool) or not isinstance(heads, int) or heads < 1:
        raise AttntraceError(_("heads = {value} must be a whole number of at least 1").format(value=said(heads)))
    kv_heads = heads if problem.kv_heads is None else problem.kv_heads
    if isinstance(kv_heads, bool) or not isinstance(kv_heads, int) or kv_heads < 1 or heads % kv_heads:
        raise AttntraceError(_("kv_heads = {value} must be a whole number that divides heads = {heads} "
                               "(1: multi-query attention; heads: ordinary multi-head)").format(value=said(kv_heads),
                                                                                              heads=heads))
    width_q = _width(problem.w_q, d_model)  # every head's columns together: d_k · heads
    width_k = _width(problem.w_k, d_src)  # d_k · kv_heads
    if width_q % heads:
        raise AttntraceError(_("heads = {heads} does not divide d_k = {d_k}").format(heads=heads, d_k=width_q))
    if width_k * heads != width_q * kv_heads:
        q_name = "w_q" if problem.w_q is not None else _("x (no w_q, so Q = X)")
        k_name = "w_k" if problem.w_k is not None else _("{name} (no w_k, so K = {name})").format(name=kv_name)
        if kv_heads == heads:
            raise AttntraceError(_("{k_name} has {width_k} columns but {q_name} has {width_q} (q · k needs the same "
                                   "d_k)").format(k_name=k_name, width_k=width_k, q_name=q_name, width_q=width_q))
        raise AttntraceError(_("{k_name} has {width_k} columns but {blocks} of d_k = {d_k} need {need}").format(
            k_name=k_name, width_k=width_k, blocks=counted(kv_heads, "key/value block"), d_k=width_q // heads,
            need=kv_heads * (width_q // heads)))
    width_v = _width(problem.w_v, d_src)  # d_v · kv_heads
    for name, b, size, of in (("b_q", problem.b_q, width_q, "d_k"), ("b_k", problem.b_k, width_k, "d_k"),
                              ("b_v", problem.b_v, width_v, "d_v")):
        if b is not None and b.shape[0] != size:
            raise AttntraceError(_("{name} has {values} but {of} = {size}").format(
                name=name, values=counted(b.shape[0], "value"), of=of, size=size))
    if width_v % kv_heads:
        raise AttntraceError(_("{name} = {value} does not divide d_v = {d_v}").format(
            name="kv_heads" if kv_heads != heads else "heads", value=kv_heads, d_v=width_v))
    width_v = width_v // kv_heads * heads  # the heads' outputs side by side
    d_out = width_v
    if problem.w_o is not None:
        if problem.w_o.shape[0] != width_v:
            raise AttntraceError(_("w_o has {rows} but the concatenated heads have {columns} (d_v = {d_v})").format(
                rows=counted(problem.w_o.shape[0], "row"), columns=counted(width_v, "column"), d_v=width_v))
        d_out = problem.w_o.shape[1]
    if problem.b_o is not None:
        if problem.w_o is None:
            raise AttntraceError(_("b_o is set but w_o is not; give w_o or remove b_o"))
        if problem.b_o.shape[0] != d_out:
            raise AttntraceError(_("b_o has {values} but w_o has {columns}").format(
                values=counted(problem.b_o.shape[0], "value"), columns=counted(d_out, "column")))
    _check_settings(problem, n, m)
    _check_variants(problem, n, m, width_q // heads)
    return Dims(n, m, d_model, d_src, width_q // heads, width_v // heads, heads, d_out, kv_heads)


def _check_variants(problem: Problem, n: int, m: int, d_k: int) -> None:
    rope = problem.rope
    if rope is not None:
        if d_k % 2:
            raise AttntraceError(_("rope turns pairs of dimensions, so d_k must be even; it is {d_k}").format(d_k=d_k))
        if rope.positions is not None and len(rope.positions) != n:
            raise AttntraceError(_("rope positions has {values} but x has {rows}").format(
                values=counted(len(rope.positions), "value"), rows=counted(n, "row")))
        if rope.frequencies is not None and len(rope.frequencies) != d_k // 2:
            raise AttntraceError(_("rope frequencies has {values} but a head turns {pairs} of dimensions (d_k = {d_k}); "
                                   "give one per pair").format(values=counted(len(rope.frequencies), "value"),
                                                               pairs=counted(d_k // 2, "pair"), d_k=d_k))
        if problem.source is not None:
            if rope.source_positions is None:
                raise AttntraceError(_("rope in cross-attention needs the source's positions: give rope "
                                       '{"source_positions": [...]}, one per source row'))
            if len(rope.source_positions) != m:
                raise AttntraceError(_("rope source_positions has {values} but source has {m} rows").format(
                    values=counted(len(rope.source_positions), "value"), m=m))
        elif rope.source_positions is not None:
            raise AttntraceError(_("rope source_positions is set but source is not"))
    if not isinstance(problem.alibi, (bool, np.bool_)):
        raise AttntraceError(_("alibi = {value} must be true or false").format(value=said(problem.alibi)))
    cap = problem.softcap
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, (int, float)) or not math.isfinite(cap)
                            or cap <= 0):
        raise AttntraceError(_("softcap = {value} must be a positive number (Gemma 2 uses 50)").format(value=said(cap)))


def _sinks(value: Any, heads: int) -> tuple[float, ...]:
    """the sink logit of each head: one number for every head, or a list of one per head, each finite"""
    def number(item: Any) -> bool:
        return isinstance(item, (int, float, np.integer, np.floating)) and not isinstance(item, (bool, np.bool_))

    if number(value):
        if not math.isfinite(value):
            raise AttntraceError(_("sink = {value} must be a finite number (a logit, such as 0.5)").format(
                value=said(value)))
        return (float(value),) * heads
    if not isinstance(value, (list, tuple, np.ndarray)) or np.ndim(value) != 1:
        shown = _("an object") if isinstance(value, dict) else _("a list of lists") if isinstance(
            value, (list, tuple, np.ndarray)) else said(value)[:40]
        raise AttntraceError(_("sink = {value} must be a number (one logit for every head) or a list of one number per "
                               "head").format(value=shown))
    for i, item in enumerate(value):
        if not number(item) or not math.isfinite(item):
            raise AttntraceError(_("{key} value {index} is {value}; give a finite number").format(
                key="sink", index=i + 1, value=said(item)[:40]))
    if len(value) != heads:
        raise AttntraceError(_("sink has {values} but heads = {heads}; give one per head, or one number for every "
                               "head").format(values=counted(len(value), "value"), heads=heads))
    return tuple(float(item) for item in value)


def _check_settings(problem: Problem, n: int, m: int) -> None:
    scale = problem.scale
    if not isinstance(scale, bool):
        if not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
            shown = f'"{scale}"' if isinstance(scale, str) else repr(scale)
            raise AttntraceError(_("scale = {value} must be true (divide by sqrt(d_k)), false, or a positive number")
                                 .format(value=shown))
    if "causal" in problem.masks and problem.source is not None:
        raise AttntraceError(_('mask "causal" is for self-attention only; remove it or remove source'))
    if problem.padding is not None and len(problem.padding) != m:
        raise AttntraceError(padding_mismatch(len(problem.padding), m))
    if problem.tokens is not None and len(problem.tokens) != n:
        raise AttntraceError(_("tokens has {labels} but x has {rows}").format(
            labels=counted(len(problem.tokens), "label"), rows=counted(n, "row")))
    if problem.source_tokens is not None:
        if problem.source is None:
            raise AttntraceError(_("source_tokens is set but source is not"))
        if len(problem.source_tokens) != m:
            raise AttntraceError(_("source_tokens has {labels} but source has {rows}").format(
                labels=counted(len(problem.source_tokens), "label"), rows=counted(m, "row")))


EXAMPLE = N_("worked example")  # the built-in example's name: data, as every problem's; shown in the chosen language


def example() -> Problem:
    """the worked example of "8 steps to self-attention": 3 inputs of size 4, no scaling"""
    return Problem(
        x=np.array([[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]], dtype=np.float64),
        w_q=np.array([[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]], dtype=np.float64),
        w_k=np.array([[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]], dtype=np.float64),
        w_v=np.array([[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]], dtype=np.float64),
        scale=False,
        name=EXAMPLE,
    )
