"""The model's own tokenizer: wordpieces with [CLS] and [SEP], ids, segment ids and attention mask."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attntrace.errors import AttntraceError
from attntrace.models.bert.files import INSTALL


@dataclass(frozen=True)
class Encoding:
    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    type_ids: tuple[int, ...]
    mask: tuple[int, ...]  # 1 = a real token, 0 = padding


def encode(directory: Path, sentence: str, max_tokens: int) -> Encoding:
    """encode one sentence as the model's tokenizer does when called on it: no padding, truncated to the model's length"""
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
    tokenizer.enable_truncation(max_tokens)
    if not sentence.strip():
        raise AttntraceError("the sentence is empty")
    e = tokenizer.encode(sentence)
    return Encoding(tuple(e.tokens), tuple(e.ids), tuple(e.type_ids), tuple(e.attention_mask))
