"""An attention problem: the matrices and settings, checked for shape before anything is computed."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from attntrace.errors import AttntraceError

MASKS = ("causal", "window", "padding")


@dataclass(frozen=True)
class Problem:
    """x and the weights in x · W layout (d_in x d_out), with every variant's setting"""

    x: np.ndarray  # [n, d_model]
    w_q: np.ndarray | None = None  # [d_model, d_k]; None = identity
    w_k: np.ndarray | None = None  # [d_src, d_k]
    w_v: np.ndarray | None = None  # [d_src, d_v]
    b_q: np.ndarray | None = None  # [d_k]
    b_k: np.ndarray | None = None  # [d_k]
    b_v: np.ndarray | None = None  # [d_v]
    source: np.ndarray | None = None  # [m, d_src]; None = self-attention
    heads: int = 1
    w_o: np.ndarray | None = None  # [d_v, d_out]
    b_o: np.ndarray | None = None  # [d_out]
    scale: bool | float = True
    mask: tuple[str, ...] = ()
    window: int | None = None
    padding: tuple[bool, ...] | None = None
    tokens: tuple[str, ...] | None = None
    source_tokens: tuple[str, ...] | None = None
    name: str | None = None
    notes: tuple[str, ...] = field(default=(), compare=False)

    @property
    def kv_input(self) -> np.ndarray:
        """what K and V are derived from: the source in cross-attention, else x"""
        return self.x if self.source is None else self.source

    @property
    def masks(self) -> tuple[str, ...]:
        """the masks in force: those named, plus window and padding when their values are set"""
        named = set(self.mask)
        if self.window is not None:
            named.add("window")
        if self.padding is not None:
            named.add("padding")
        return tuple(m for m in MASKS if m in named)

    @property
    def labels(self) -> tuple[str, ...]:
        return self.tokens or tuple(f"x{i + 1}" for i in range(len(self.x)))

    @property
    def key_labels(self) -> tuple[str, ...]:
        if self.source is None:
            return self.labels
        return self.source_tokens or tuple(f"s{j + 1}" for j in range(len(self.source)))


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


def _cols(w: np.ndarray | None, default: int) -> int:
    return default if w is None else w.shape[1]


def divisor(problem: Problem, d_k: int) -> float:
    """what the scores are divided by: sqrt(d_k) for scale=true, 1 for false, else the number"""
    if problem.scale is True:
        return math.sqrt(d_k)
    if problem.scale is False:
        return 1.0
    return float(problem.scale)


def dims(problem: Problem) -> Dims:
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
            raise AttntraceError(
                f"{name} has {w.shape[0]} rows but {feeds} has {rows} columns ({what} needs them equal)"
            )
    d_kq = _cols(problem.w_q, d_model)
    d_kk = _cols(problem.w_k, d_src)
    if d_kq != d_kk:
        q_name = "w_q" if problem.w_q is not None else "x (no w_q, so Q = X)"
        k_name = "w_k" if problem.w_k is not None else f"{kv_name} (no w_k, so K = {kv_name})"
        raise AttntraceError(f"{k_name} has {d_kk} columns but {q_name} has {d_kq} (q · k needs the same d_k)")
    d_k, d_v = d_kq, _cols(problem.w_v, d_src)
    for name, b, size, of in (("b_q", problem.b_q, d_k, "d_k"), ("b_k", problem.b_k, d_k, "d_k"), ("b_v", problem.b_v, d_v, "d_v")):
        if b is not None and b.shape[0] != size:
            raise AttntraceError(f"{name} has {b.shape[0]} values but {of} = {size}")
    heads = problem.heads
    if isinstance(heads, bool) or not isinstance(heads, int) or heads < 1:
        raise AttntraceError(f"heads = {heads!r} must be a whole number of at least 1")
    for what, size in (("d_k", d_k), ("d_v", d_v)):
        if size % heads:
            raise AttntraceError(f"heads = {heads} does not divide {what} = {size}")
    d_out = d_v
    if problem.w_o is not None:
        if problem.w_o.shape[0] != d_v:
            raise AttntraceError(
                f"w_o has {problem.w_o.shape[0]} rows but the concatenated heads have {d_v} columns (d_v = {d_v})"
            )
        d_out = problem.w_o.shape[1]
    if problem.b_o is not None:
        if problem.w_o is None:
            raise AttntraceError("b_o is set but w_o is not; give w_o or remove b_o")
        if problem.b_o.shape[0] != d_out:
            raise AttntraceError(f"b_o has {problem.b_o.shape[0]} values but w_o has {d_out} columns")
    _check_settings(problem, n, m)
    return Dims(n, m, d_model, d_src, d_k // heads, d_v // heads, heads, d_out)


def _check_settings(problem: Problem, n: int, m: int) -> None:
    scale = problem.scale
    if not isinstance(scale, bool):
        if not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
            raise AttntraceError(f"scale = {scale!r} must be true, false or a positive number")
    for name in problem.mask:
        if name not in MASKS:
            from difflib import get_close_matches  # only on this error path: it costs start-up time

            guess = get_close_matches(name, MASKS, n=1)
            hint = f'did you mean "{guess[0]}"?' if guess else f"use {', '.join(MASKS)}"
            raise AttntraceError(f'unknown mask "{name}"; {hint}')
    if "causal" in problem.mask and problem.source is not None:
        raise AttntraceError('mask "causal" is for self-attention only; remove it or remove source')
    if "window" in problem.mask and problem.window is None:
        raise AttntraceError('mask "window" needs window: W (keys with |i - j| <= W are seen)')
    if problem.window is not None and (
        isinstance(problem.window, bool) or not isinstance(problem.window, int) or problem.window < 0
    ):
        raise AttntraceError(f"window = {problem.window!r} must be a whole number of at least 0")
    if "padding" in problem.mask and problem.padding is None:
        raise AttntraceError('mask "padding" needs padding: [true/false per key]')
    if problem.padding is not None and len(problem.padding) != m:
        raise AttntraceError(f"padding has {len(problem.padding)} values but there are {m} keys")
    if problem.tokens is not None and len(problem.tokens) != n:
        raise AttntraceError(f"tokens has {len(problem.tokens)} labels but x has {n} rows")
    if problem.source_tokens is not None:
        if problem.source is None:
            raise AttntraceError("source_tokens is set but source is not")
        if len(problem.source_tokens) != m:
            raise AttntraceError(f"source_tokens has {len(problem.source_tokens)} labels but source has {m} rows")


def example() -> Problem:
    """the worked example of "8 steps to self-attention": 3 inputs of size 4, no scaling"""
    return Problem(
        x=np.array([[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]], dtype=np.float64),
        w_q=np.array([[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]], dtype=np.float64),
        w_k=np.array([[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]], dtype=np.float64),
        w_v=np.array([[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]], dtype=np.float64),
        scale=False,
        name="worked example",
    )


def override(problem: Problem, *, scale: bool | float | None = None, mask: tuple[str, ...] | None = None,
             window: int | None = None, heads: int | None = None) -> Problem:
    """the problem with the caller's settings in place of the file's (None keeps the file's)"""
    changes: dict[str, Any] = {}
    if scale is not None:
        changes["scale"] = scale
    if mask is not None:
        changes["mask"] = tuple(m for m in mask if m != "none")
        if "window" not in mask and window is None:
            changes["window"] = None
        if "padding" not in mask:
            changes["padding"] = None
    if window is not None:
        changes["window"] = window
    if heads is not None:
        changes["heads"] = heads
    return replace(problem, **changes) if changes else problem
