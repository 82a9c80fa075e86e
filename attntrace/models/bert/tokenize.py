"""The model's own tokenizer: wordpieces with [CLS] and [SEP], ids, segment ids, attention mask, unique labels."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attntrace.errors import AttntraceError
from attntrace.models.bert.files import INSTALL

SUFFIX = "·"  # between a repeated wordpiece and its position: "the", "the·8"


@dataclass(frozen=True)
class Encoding:
    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    type_ids: tuple[int, ...]
    mask: tuple[int, ...]  # 1 = a real token, 0 = padding
    special: tuple[bool, ...]  # the tokens the tokenizer adds around a sentence ([CLS], [SEP]), wherever they are

    @property
    def labels(self) -> tuple[str, ...]:
        """the tokens made unique for tables and files: a repeat gets "·" and its position from 1 (the, the·8)"""
        return unique_labels(self.tokens)


def unique_labels(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """each token as itself the first time, then with "·" and its position (from 1, as --input counts); never equal"""
    used: set[str] = set()
    labels = []
    for i, token in enumerate(tokens):
        label = token
        while label in used:  # a wordpiece spelled like an earlier label ("the·8") takes one more suffix
            label = f"{label}{SUFFIX}{i + 1}"
        used.add(label)
        labels.append(label)
    return tuple(labels)


def encode(directory: Path, sentence: str, max_tokens: int, name: str = "the model") -> Encoding:
    """encode one sentence as the model's tokenizer does when called on it, unpadded; longer than max_tokens is an error"""
    try:
        from tokenizers import Tokenizer
        from tokenizers.implementations import BertWordPieceTokenizer
    except ImportError:
        raise AttntraceError(f"tokenizing needs the tokenizers package; install it with: {INSTALL}") from None
    tokenizer: Any
    if (directory / "tokenizer.json").exists():
        tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    elif (directory / "vocab.txt").exists():
        settings_path = directory / "tokenizer_config.json"
        settings = json.loads(settings_path.read_text(encoding="utf-8")) if settings_path.exists() else {}
        tokenizer = BertWordPieceTokenizer(str(directory / "vocab.txt"),
                                           lowercase=bool(settings.get("do_lower_case", True)))
    else:
        raise AttntraceError(f"{directory}: no tokenizer.json or vocab.txt")
    tokenizer.no_padding()
    tokenizer.no_truncation()
    if not sentence.strip():
        raise AttntraceError("the sentence is empty")
    e = tokenizer.encode(sentence)
    if len(e.ids) > max_tokens:
        raise AttntraceError(f"the sentence is {len(e.ids):,} tokens with [CLS] and [SEP], more than the {max_tokens} "
                             f"positions {name} has; shorten it")
    added = {token for token, flag in zip(e.tokens, e.special_tokens_mask) if flag}
    return Encoding(tuple(e.tokens), tuple(e.ids), tuple(e.type_ids), tuple(e.attention_mask),
                    tuple(token in added for token in e.tokens))
