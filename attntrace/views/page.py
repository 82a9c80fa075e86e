"""The page model every renderer reads: titled blocks of numbers and notes, grouped into steps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from attntrace.language import _


@dataclass(frozen=True, eq=False)  # it holds arrays, which have no ==: one is equal only to itself
class Block:
    """one titled matrix; kind picks its colour (x, w, q, k, v, scores, weights, weighted, output)"""

    title: str
    kind: str
    rows: tuple[str, ...]
    cols: tuple[str, ...]
    values: np.ndarray  # 2-D; -inf marks a masked cell
    answer: tuple[int | None, str, int | None] | None = None  # (head from 1 or None for the final output, key,
    # the row of the trace's arrays shown, or None for all of them): what a worksheet's blank table asks for
    data_rows: tuple[str, ...] | None = None  # the labels as data (CSV) where the shown ones are words in the
    data_cols: tuple[str, ...] | None = None  # reader's language: the same in every language (None: as shown)

    @property
    def csv_rows(self) -> tuple[str, ...]:
        return self.rows if self.data_rows is None else self.data_rows

    @property
    def csv_cols(self) -> tuple[str, ...]:
        return self.cols if self.data_cols is None else self.data_cols


NoteKind = Literal["text", "self_check", "hidden", "tutorial"]  # words; step 8's self-check; the inputs a run does not
# walk through; why the worked example's output differs from the article's (it gives an answer away)


@dataclass(frozen=True)
class Note:
    """a line of words; its kind lets a view keep or drop it without reading it (a worksheet drops the self-check)"""

    text: str
    kind: NoteKind = "text"


@dataclass(frozen=True, eq=False)  # it holds arrays, which have no ==: one is equal only to itself
class Step:
    """one pause point: a step (for one input, in steps 4-7) and what it shows"""

    number: int
    heading: str
    items: tuple[Block | Note, ...] = ()

    @property
    def prefix(self) -> str:
        """what each table title starts with: "Step 3 · ", or nothing outside the eight steps"""
        return _("Step {number} · ").format(number=self.number) if self.number else ""


@dataclass(frozen=True, eq=False)
class Section(Step):
    """a pause point that is not one of the eight steps (a block of the online softmax, a decoding step, an
    experiment): a heading and what it shows, numbered 0 for the renderers"""

    number: int = field(default=0, init=False)
