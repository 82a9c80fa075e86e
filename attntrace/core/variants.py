"""The attention of today's decoders, as numpy: rotary positions (RoPE), ALiBi biases and soft-capping.

RoPE follows Hugging Face Llama's `rotate_half` ("half": dimension i turns with i + d/2) or the RoFormer paper and
GPT-J ("adjacent": 2i with 2i + 1), both with frequencies base^(-2i/d), or a model's own frequencies (Llama 3 scales
the slow ones: llama3_frequencies). ALiBi is Press et al.'s −slope · |i − j| with
the paper's slopes; soft-capping is Gemma 2's c · tanh(scores / c).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from attntrace.errors import AttntraceError, said
from attntrace.language import _

PAIRS = ("half", "adjacent")


@dataclass(frozen=True)
class Rope:
    """rotary position embedding of q and k: the base of its frequencies, how dimensions pair, and each position"""

    base: float = 10000.0
    pairs: str = "half"
    positions: tuple[float, ...] | None = None  # the queries' (and in self-attention the keys'); None: 0 … n-1
    source_positions: tuple[float, ...] | None = None  # the keys' in cross-attention
    frequencies: tuple[float, ...] | None = None  # each pair's turn per position, d_k/2 of them; None: base^(-2i/d_k)

    def __post_init__(self) -> None:
        base = self.base
        if isinstance(base, bool) or not isinstance(base, (int, float)) or not math.isfinite(base) or base <= 1:
            raise AttntraceError(_("rope base = {value} must be a number above 1 (10000 in most models)").format(
                value=said(base)))
        if self.pairs not in PAIRS:
            raise AttntraceError(_('rope pairs = {value} must be "half" (Llama) or "adjacent" (RoFormer, GPT-J)').format(
                value=said(self.pairs)))
        for key in ("positions", "source_positions"):
            value = getattr(self, key)
            if value is not None:
                object.__setattr__(self, key, _positions(value, key))
        if self.frequencies is not None:
            turns = _positions(self.frequencies, "frequencies")
            if not turns or min(turns) <= 0:
                raise AttntraceError(_("rope frequencies must be positive numbers, one per pair of dimensions (d_k/2)"))
            object.__setattr__(self, "frequencies", turns)
            for key in ("positions", "source_positions"):
                positions = getattr(self, key)
                if positions is not None:
                    angles(np.array(positions), np.array(turns), key)
        object.__setattr__(self, "base", float(base))

    def pair_frequencies(self, d: int) -> np.ndarray:
        """[d/2] each pair's turn per position: the frequencies given, else base^(-2i/d)"""
        if self.frequencies is not None:
            return np.array(self.frequencies)
        return frequencies(d, self.base)

    def settings(self) -> dict[str, Any]:
        """the problem file's "rope" value"""
        out: dict[str, Any] = {"base": self.base, "pairs": self.pairs}
        if self.positions is not None:
            out["positions"] = list(self.positions)
        if self.source_positions is not None:
            out["source_positions"] = list(self.source_positions)
        if self.frequencies is not None:
            out["frequencies"] = list(self.frequencies)
        return out


def coerce_rope(value: Any) -> Rope | None:
    """a problem's "rope": false/None (none), true (the defaults), a dict of settings, or a Rope"""
    if value is None or value is False:
        return None
    if value is True:
        return Rope()
    if isinstance(value, Rope):
        return value
    if isinstance(value, dict):
        unknown = set(value) - {"base", "pairs", "positions", "source_positions", "frequencies"}
        if unknown:
            raise AttntraceError(_('rope has an unknown key "{key}"; its keys are base, pairs, positions, '
                                   "source_positions and frequencies").format(key=sorted(unknown)[0]))
        return Rope(**value)
    raise AttntraceError(_("rope = {value} must be true, false, or settings such as {example}").format(
        value=said(value), example='{"base": 10000, "pairs": "half", "positions": [0, 1, 2]}'))


def _positions(value: Any, key: str) -> tuple[float, ...]:
    """rope's positions, source_positions or frequencies: a list of finite numbers (never true or false, which numpy
    would take for 1 and 0)"""
    each = _("one per pair of dimensions") if key == "frequencies" else _("one per input")
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise AttntraceError(_("rope {key} = {value} must be a list of numbers, {each}").format(
            key=key, value=said(value), each=each))
    for j, item in enumerate(value):
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, float, np.integer, np.floating)) \
                or not math.isfinite(item):
            raise AttntraceError(_("rope {key} value {index} is {value}; it must be a finite number, {each}").format(
                key=key, index=j + 1, value=said(item), each=each))
    return tuple(float(p) for p in value)


def frequencies(d: int, base: float) -> np.ndarray:
    """[d/2] the turn per position of each pair: base^(-2i/d)"""
    return base ** (-np.arange(0, d, 2, dtype=np.float64) / d)


def llama3_frequencies(d: int, base: float, factor: float, low_freq_factor: float, high_freq_factor: float,
                       original_positions: float) -> np.ndarray:
    """[d/2] Llama 3's frequencies (rope_type "llama3"): base^(-2i/d) where a pair turns fast (a wavelength below
    original_positions / high_freq_factor), divided by factor where it turns slowly (above original_positions /
    low_freq_factor), and between the two a blend of both, weighted by how many turns the pair makes in
    original_positions"""
    turns = frequencies(d, base)
    wavelength = 2 * math.pi / turns
    blend = (original_positions / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
    blended = (1 - blend) * turns / factor + blend * turns
    slow, fast = wavelength > original_positions / low_freq_factor, wavelength < original_positions / high_freq_factor
    return np.where(slow, turns / factor, np.where(fast, turns, blended))


def angles(positions: np.ndarray, turns: np.ndarray, key: str = "") -> np.ndarray:
    """[n] positions, [d/2] each pair's turn per position -> [n, d/2] the angle each pair turns by at each position;
    an angle past float64 names the rope key of its position (key: positions or source_positions; "": 0 … n-1)"""
    with np.errstate(over="ignore", invalid="ignore"):
        turned = positions[:, None] * turns[None, :]
    if not np.isfinite(turned).all():
        i, j = (int(c) for c in np.argwhere(~np.isfinite(turned))[0])
        where = _("rope {key} value {index} ({position})") if key else _("input {index}'s position ({position})")
        where = where.format(key=key, index=i + 1, position=f"{positions[i]:g}")
        size = math.log10(abs(positions[i])) + math.log10(abs(turns[j]))
        said_angle = _("rope frequencies value {index} ({turn}) × {where} is an angle of about {size}, past the largest "
                       "float64 (1.8e308); give smaller rope frequencies or {key} (a pair turns by position × frequency "
                       "radians)") if key else _(
            "rope frequencies value {index} ({turn}) × {where} is an angle of about {size}, past the largest float64 "
            "(1.8e308); give smaller rope frequencies (a pair turns by position × frequency radians)")
        raise AttntraceError(said_angle.format(index=j + 1, turn=f"{turns[j]:g}", where=where, key=key,
                                               size=f"{10 ** (size % 1):.1f}e{math.floor(size)}"))
    return turned


def pair_index(d: int, pairs: str) -> tuple[np.ndarray, np.ndarray]:
    """the two dimensions of each of the d/2 pairs: (i, i + d/2) for "half", (2i, 2i + 1) for "adjacent\""""
    if pairs == "half":
        return np.arange(d // 2), np.arange(d // 2) + d // 2
    return np.arange(0, d, 2), np.arange(1, d, 2)


def rotate(x: np.ndarray, theta: np.ndarray, pairs: str) -> np.ndarray:
    """[n, d], [n, d/2] -> [n, d]: each pair (a, b) turned by its angle: (a cos θ − b sin θ, b cos θ + a sin θ)"""
    first, second = pair_index(x.shape[1], pairs)
    cos, sin = np.cos(theta), np.sin(theta)
    out = np.empty_like(x)
    out[:, first] = x[:, first] * cos - x[:, second] * sin
    out[:, second] = x[:, second] * cos + x[:, first] * sin
    return out


def alibi_slopes(heads: int) -> np.ndarray:
    """[heads] the ALiBi paper's slopes: 2^(-8/h), 2^(-16/h), … for h a power of two; otherwise those of the power of
    two below, then every other slope of the power above"""
    def powers(n: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]

    if math.log2(heads).is_integer():
        return np.array(powers(heads))
    below = 2 ** math.floor(math.log2(heads))
    return np.array(powers(below) + powers(2 * below)[0::2][:heads - below])


def alibi_bias(slope: float, rows: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """[n_q, m] −slope · |i − j| for the query rows against the keys (both positions from 0)"""
    return -slope * np.abs(rows[:, None] - keys[None, :]).astype(np.float64)
