"""Masks as values: which keys each query may attend to. A new kind of mask is one class here and one schema entry."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any, ClassVar, Protocol

import numpy as np

from attntrace.errors import AttntraceError, said
from attntrace.language import _, ngettext
from attntrace.words import counted


class Mask(Protocol):
    name: ClassVar[str]

    def allowed(self, rows: np.ndarray, m: int) -> np.ndarray:
        """[len(rows), m] True where query row i (from 0) may attend to key j"""
        ...

    def words(self) -> str:
        """what the mask does, for a student"""
        ...

    def settings(self) -> dict[str, Any]:
        """its problem-file keys besides the name"""
        ...


@dataclass(frozen=True)
class Causal:
    """a query sees only itself and the inputs before it (self-attention only)"""

    name: ClassVar[str] = "causal"

    def allowed(self, rows: np.ndarray, m: int) -> np.ndarray:
        return np.arange(m)[None, :] <= rows[:, None]

    def words(self) -> str:
        return _("causal (input i attends to keys 1 to i only)")

    def settings(self) -> dict[str, Any]:
        return {}


@dataclass(frozen=True)
class Window:
    """a query sees the keys within `size` positions of its own"""

    size: int
    name: ClassVar[str] = "window"

    def __post_init__(self) -> None:
        if isinstance(self.size, bool) or not isinstance(self.size, (int, np.integer)) or self.size < 0:
            raise AttntraceError(_("window = {value} must be a whole number of at least 0").format(value=said(self.size)))

    def allowed(self, rows: np.ndarray, m: int) -> np.ndarray:
        return np.abs(rows[:, None] - np.arange(m)[None, :]) <= self.size

    def words(self) -> str:
        return _("window (input i attends to keys j with |i - j| <= {size})").format(size=self.size)

    def settings(self) -> dict[str, Any]:
        return {"window": int(self.size)}


@dataclass(frozen=True)
class Padding:
    """keys flagged true are never attended (padding tokens)"""

    flags: tuple[bool, ...]
    name: ClassVar[str] = "padding"

    def __post_init__(self) -> None:
        object.__setattr__(self, "flags", tuple(bool(f) for f in self.flags))

    def allowed(self, rows: np.ndarray, m: int) -> np.ndarray:
        if len(self.flags) != m:
            raise AttntraceError(padding_mismatch(len(self.flags), m))
        return np.broadcast_to(~np.asarray(self.flags, dtype=bool)[None, :], (len(rows), m))

    def words(self) -> str:
        return _("padding (keys {keys} are never attended)").format(
            keys=", ".join(str(j + 1) for j, pad in enumerate(self.flags) if pad))

    def settings(self) -> dict[str, Any]:
        return {"padding": list(self.flags)}


KINDS: dict[str, type] = {"causal": Causal, "window": Window, "padding": Padding}


def from_names(names: Iterable[str], window: int | None = None, padding: Iterable[bool] | None = None) -> tuple[Mask, ...]:
    """masks from their names, as a problem file or --mask gives them; a window or padding given turns its mask on"""
    names = list(names)
    wanted = list(dict.fromkeys(n for n in names if n != "none"))
    if "none" in names and wanted:
        others = _(" and ").join(f'"{n}"' for n in wanted)
        raise AttntraceError(_('mask "none" cannot go with {others}; give one or the other').format(others=others))
    for name, value in (("window", window), ("padding", padding)):
        if value is not None and name not in wanted:
            wanted.append(name)
    out: list[Mask] = []
    for name in wanted:
        if name == "causal":
            out.append(Causal())
        elif name == "window":
            if window is None:
                raise AttntraceError(_('mask "window" needs window: W (keys with |i - j| <= W are seen)'))
            out.append(Window(window))
        elif name == "padding":
            if padding is None:
                raise AttntraceError(_('mask "padding" needs padding: [true/false per key] (from the command line: '
                                       '--padding and the keys that are padding, such as 3,4)'))
            out.append(Padding(tuple(padding)))
        else:
            raise AttntraceError(unknown(name))
    return order(out)


def coerce(value: Any) -> tuple[Mask, ...]:
    """a mask, a name, or a list of them, as Problem(mask=...) takes them"""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) or not isinstance(value, (list, tuple)) else list(value)
    out: list[Mask] = []
    for item in items:
        if isinstance(item, str):
            if item != "none":
                out.extend(from_names([item]))
        elif hasattr(item, "allowed") and hasattr(item, "name"):  # a mask value, of any kind
            out.append(item)
        else:
            raise AttntraceError(_("mask = {value}: give a name ({names}) or a mask such as Window(2)").format(
                value=said(item), names=", ".join(KINDS)))
    return order(out)


def order(masks: Iterable[Mask]) -> tuple[Mask, ...]:
    """one mask of each kind, the known kinds in the order of KINDS, then any others"""
    by_kind = {m.name: m for m in masks}
    return tuple(sorted(by_kind.values(), key=lambda m: list(KINDS).index(m.name) if m.name in KINDS else len(KINDS)))


def padding_mismatch(flags: int, m: int) -> str:
    """padding of `flags` values for m keys, said with both counts"""
    return ngettext("padding has {values} but there is {n} key", "padding has {values} but there are {n} keys",
                    m).format(values=counted(flags, "value"), n=f"{m:,}")


def allowed(masks: tuple[Mask, ...], rows: np.ndarray, m: int) -> np.ndarray | None:
    """[len(rows), m] True where query row i may attend to key j; None when nothing is masked"""
    if not masks:
        return None
    out = np.ones((len(rows), m), dtype=bool)
    for mask in masks:
        out &= mask.allowed(rows, m)
    return out


def unknown(name: str) -> str:
    guess = get_close_matches(name, list(KINDS), n=1)
    if guess:
        return _('unknown mask "{name}"; did you mean "{guess}"?').format(name=name, guess=guess[0])
    return _('unknown mask "{name}"; use {names}').format(name=name, names=", ".join(KINDS))
