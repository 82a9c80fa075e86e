"""The one table of a head's intermediates: each key, the step that computes it, and its name in words."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Intermediate:
    """one intermediate a head computes: a field of HeadTrace, a key of the JSON and of an answer sheet"""

    key: str  # "scaled"
    step: int  # 4: the step of the eight that computes it
    name: str  # "scaled scores": what a report calls it


INTERMEDIATES = (
    Intermediate("q", 3, "Q"),
    Intermediate("k", 3, "K"),
    Intermediate("v", 3, "V"),
    Intermediate("q_rotated", 3, "Q turned by position"),  # with rope only
    Intermediate("k_rotated", 3, "K turned by position"),
    Intermediate("scores", 4, "scores"),
    Intermediate("scaled", 4, "scaled scores"),
    Intermediate("weights", 5, "weights"),
    Intermediate("output", 7, "output"),
)
KEYS = tuple(i.key for i in INTERMEDIATES)  # in the order a student computes them
STEP = {i.key: i.step for i in INTERMEDIATES}
NAME = {i.key: i.name for i in INTERMEDIATES}
