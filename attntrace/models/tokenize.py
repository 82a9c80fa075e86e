"""The model's own tokenizer (tokenizer.json, or a BERT vocab.txt): its tokens with the special tokens it adds, ids,
segment ids, attention mask, and labels made unique."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attntrace.errors import AttntraceError
from attntrace.model.problem import unique_labels
from attntrace.models import INSTALL


@dataclass(frozen=True)
class Encoding:
    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    type_ids: tuple[int, ...]
    mask: tuple[int, ...]  # 1 = a real token, 0 = padding
    special: tuple[bool, ...]  # the tokens the tokenizer adds around a sentence ([CLS], [SEP], <s>), wherever they are

    @property
    def labels(self) -> tuple[str, ...]:
        """the tokens made unique for tables and files: a repeat gets "·" and its position from 1 (the, the·8)"""
        return unique_labels(self.tokens)

    @property
    def special_names(self) -> tuple[str, ...]:
        """the special tokens the tokenizer added, each once, in order"""
        return tuple(dict.fromkeys(t for t, flag in zip(self.tokens, self.special) if flag))


def together(names: tuple[str, ...]) -> str:
    """"[CLS] and [SEP]", "<s>", "a, b and c" """
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def load_tokenizer(directory: Path, wordpiece: bool = False) -> Any:
    """the tokenizer in directory's tokenizer.json; with wordpiece, a BERT vocab.txt will do"""
    try:
        from tokenizers import Tokenizer
        from tokenizers.implementations import BertWordPieceTokenizer
    except ImportError:
        raise AttntraceError(f"tokenizing needs the tokenizers package; install it with: {INSTALL}") from None
    tokenizer: Any
    if (directory / "tokenizer.json").is_file():
        try:
            tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        except Exception as e:  # the tokenizers library says what it cannot read in its own exception type
            raise AttntraceError(f"{directory / 'tokenizer.json'}: not a tokenizer the tokenizers library reads "
                                 f"({str(e).splitlines()[0][:120] if str(e) else type(e).__name__})") from None
    elif wordpiece and (directory / "vocab.txt").is_file():
        settings_path = directory / "tokenizer_config.json"
        settings = json.loads(settings_path.read_text(encoding="utf-8")) if settings_path.is_file() else {}
        tokenizer = BertWordPieceTokenizer(str(directory / "vocab.txt"),
                                           lowercase=bool(settings.get("do_lower_case", True)))
    else:
        raise AttntraceError(f"{directory}: no tokenizer.json{' or vocab.txt' if wordpiece else ''}; attntrace "
                             "tokenizes with the model's own tokenizer")
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def encode(directory: Path, sentence: str, max_tokens: int, name: str = "the model", wordpiece: bool = False) -> Encoding:
    """encode one sentence as the model's tokenizer does when called on it, unpadded, with the special tokens it adds;
    longer than max_tokens is an error"""
    tokenizer = load_tokenizer(directory, wordpiece)
    if not sentence.strip():
        raise AttntraceError("the sentence is empty")
    e = tokenizer.encode(sentence)
    added = {token for token, flag in zip(e.tokens, e.special_tokens_mask) if flag}
    encoding = Encoding(tuple(e.tokens), tuple(e.ids), tuple(e.type_ids), tuple(e.attention_mask),
                        tuple(token in added for token in e.tokens))
    if len(e.ids) > max_tokens:
        specials = encoding.special_names
        with_them = f" with {together(specials)}" if specials else ""
        raise AttntraceError(f"the sentence is {len(e.ids):,} tokens{with_them}, more than the {max_tokens:,} "
                             f"positions {name} has; shorten it")
    return encoding
