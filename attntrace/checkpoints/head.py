"""A head of a real model on a sentence, from Python or the command line: the model found, the sentence tokenized and
run up to the layer, the head's problem made with the settings asked for, and its trace."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from attntrace.checkpoints.bert.files import DEFAULT_NAME, default_model_dir
from attntrace.checkpoints.locate import locate, title
from attntrace.checkpoints.session import Entering, Progress, entering
from attntrace.core.engine import trace
from attntrace.core.problem import Problem, problem_error
from attntrace.core.trace import Trace
from attntrace.errors import AttntraceError
from attntrace.files.paths import resolved
from attntrace.files.settings import override
from attntrace.memory import check_trace


def find(model: str | Path | None, bert: bool = False) -> tuple[Path, str]:
    """the model's directory and the name its traces are titled with: a directory, the id of a model in the local
    Hugging Face cache, or the name of a model an installed package ships; None (bert): all-MiniLM-L6-v2"""
    if bert:
        return (default_model_dir(), DEFAULT_NAME) if model is None else (Path(model), title(Path(model), str(model)))
    name = str(model)
    shown = str(Path(name)) if Path(name).name not in ("", ".", "..") else resolved(name).name  # as titles say it
    directory, titled = locate(name)
    return directory, shown if titled == name else titled


@dataclass(frozen=True)
class Opened:
    """a sentence run up to a layer of a model: one head (or, head None, every head of the layer) to trace"""

    entered: Entering
    name: str  # what the model's traces are titled with
    layer: int
    head: int | None

    @property
    def tokens(self) -> tuple[str, ...]:
        return self.entered.encoding.tokens

    @property
    def title(self) -> str:
        """what a person reads above the trace, in the chosen language (problem.name is data, in English)"""
        return self.entered.model.shown_title(self.layer, self.head)

    def problem(self, **settings: Any) -> Problem:
        """the head's problem with the settings given (scale, mask, window: as a problem file's), its errors said of
        the model"""
        made = self.entered.problem(self.head)  # its errors name the model's own files
        try:
            return override(made, **settings)
        except AttntraceError as e:
            raise problem_error(self.name, e) from None


def enter(found: tuple[Path, str], sentence: str, layer: int = 1, head: int | None = 1,
          model_type: str | None = None, every: bool = False, float64: bool = False,
          progress: Progress | None = None) -> Opened:
    """load the model found, check layer and head, tokenize the sentence and run it up to the layer (from 1); every:
    the whole layer (the head given is checked all the same); float64: the layers before it in float64 whatever the
    model's size; progress: told (k, layer) as each layer before it is done"""
    directory, name = found
    return Opened(entering(directory, name, sentence, layer, head, model_type, float64, progress), name, layer,
                  None if every else head)


@dataclass(frozen=True)
class SentenceHead:
    """a model's head (or every head of a layer) on a sentence: its problem with the settings asked for and its trace,
    each made when first asked for; the sentence's tokens and the title to show above it"""

    opened: Opened
    settings: Mapping[str, Any] = field(default_factory=dict)  # scale, mask, window: as a problem file's
    query: int | None = None  # only this input (from 1)
    carry_rounding: int | None = None  # the decimals every intermediate is rounded to and carried at; None: exact

    @property
    def tokens(self) -> tuple[str, ...]:
        return self.opened.tokens

    @property
    def title(self) -> str:
        return self.opened.title

    @cached_property
    def problem(self) -> Problem:
        return self.opened.problem(**self.settings)

    @cached_property
    def trace(self) -> Trace:
        check_trace(self.problem, self.query)
        return trace(self.problem, query=self.query, carry_rounding=self.carry_rounding)


def model_head(model: str | Path | None, sentence: str, layer: int = 1, head: int | None = 1, *,
               query: int | None = None, carry_rounding: int | None = None, bert: bool = False,
               float64: bool = False, every: bool = False, found: tuple[Path, str] | None = None,
               progress: Progress | None = None, **settings: Any) -> SentenceHead:
    """a head (from 1; None or every: every head of the layer, with W_O) of a local Hugging Face model on a sentence.

    model: a directory, the id of a model in the local Hugging Face cache or an installed package's model name
    (bert=True: a BERT directory, None for all-MiniLM-L6-v2), or found: what find() found for it; query: only this input
    (from 1); carry_rounding: round every intermediate to this many decimals and carry it on, as by hand; float64: the
    layers before the traced one multiply in float64 even in a model of more than 300 million weights (which
    multiplies them in float32, as transformers does: the traced layer is float64 always); progress: told (k, layer)
    as each layer before it is done; settings (scale, mask, window) replace the model's own.
    """
    opened = enter(found or find(model, bert), sentence, layer, head, "bert" if bert else None,
                   every=every or head is None, float64=float64, progress=progress)
    return SentenceHead(opened, settings, query, carry_rounding)
