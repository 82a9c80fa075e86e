"""The one table of a head's intermediates: each key, the step that computes it, and its name in words."""

from __future__ import annotations

from dataclasses import dataclass

from attntrace.language import N_


@dataclass(frozen=True)
class Intermediate:
    """one intermediate a head computes: a field of HeadTrace, a key of the JSON and of an answer sheet"""

    key: str  # "scaled"
    step: int  # 4: the step of the eight that computes it
    name: str  # "scaled scores": what a report calls it (N_-marked: said with _())


INTERMEDIATES = (
    Intermediate("q", 3, "Q"),
    Intermediate("k", 3, "K"),
    Intermediate("v", 3, "V"),
    Intermediate("q_rotated", 3, N_("Q turned by position")),  # with rope only
    Intermediate("k_rotated", 3, N_("K turned by position")),
    Intermediate("scores", 4, N_("scores")),
    Intermediate("scaled", 4, N_("scaled scores")),
    Intermediate("weights", 5, N_("weights")),
    Intermediate("output", 7, N_("output")),
)
KEYS = tuple(i.key for i in INTERMEDIATES)  # in the order a student computes them
STEP_OF = {i.key: i.step for i in INTERMEDIATES}  # the step of the eight that computes each intermediate
NAME = {i.key: i.name for i in INTERMEDIATES}
