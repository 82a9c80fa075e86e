"""The model's own tokenizer (tokenizer.json, or a BERT vocab.txt): its tokens with the special tokens it adds, ids,
segment ids, attention mask, and labels made unique; the words it does not know, said in one line."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attntrace.errors import AttntraceError
from attntrace.files.paths import kind, regular_file
from attntrace.model.problem import unique_labels
from attntrace.models import INSTALL
from attntrace.models.jsonfile import read_json
from attntrace.render.escape import visible


@dataclass(frozen=True)
class Encoding:
    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    type_ids: tuple[int, ...]
    mask: tuple[int, ...]  # 1 = a real token, 0 = padding
    special: tuple[bool, ...]  # the tokens the tokenizer adds around a sentence ([CLS], [SEP], <s>), wherever they are
    source: str = "the tokenizer"  # the file the tokenizer was read from, for messages
    unknown: tuple[str, ...] = ()  # the stretches of the sentence the tokenizer made its unknown token of
    unk: str = ""  # that unknown token ([UNK], <unk>)

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
    return _load(directory, wordpiece)[0]


def _load(directory: Path, wordpiece: bool) -> tuple[Any, Path]:
    """the tokenizer and the file it was read from, each file's type and size checked before the library reads it"""
    try:
        from tokenizers import Tokenizer
        from tokenizers.implementations import BertWordPieceTokenizer
    except ImportError:
        raise AttntraceError(f"tokenizing needs the tokenizers package; install it with: {INSTALL}") from None
    tokenizer: Any
    path = directory / "tokenizer.json"
    if kind(path) != "missing":
        regular_file(path, "a tokenizer.json")
        try:
            tokenizer = Tokenizer.from_file(str(path))
        except Exception as e:  # the tokenizers library says what it cannot read in its own exception type
            raise AttntraceError(f"{path}: not a tokenizer the tokenizers library reads ({_said(e)})") from None
    elif wordpiece and kind(directory / "vocab.txt") != "missing":
        path = directory / "vocab.txt"
        settings_path = directory / "tokenizer_config.json"
        settings = read_json(settings_path, "a tokenizer_config.json (a JSON object)") \
            if kind(settings_path) != "missing" else {}
        lowercase = settings.get("do_lower_case", True)
        tokenizer = BertWordPieceTokenizer(read_vocab(path), lowercase=lowercase if isinstance(lowercase, bool) else True)
    else:
        raise AttntraceError(f"{directory}: no tokenizer.json{' or vocab.txt' if wordpiece else ''}; attntrace "
                             "tokenizes with the model's own tokenizer")
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer, path


def read_vocab(path: Path) -> dict[str, int]:
    """a BERT vocab.txt, one token a line, each numbered by its line; read here, so that the tokenizers library is handed
    a checked vocabulary rather than a file"""
    regular_file(path, "a vocab.txt")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise AttntraceError(f"{path}: not UTF-8 text, expected a vocab.txt (one token a line)") from None
    except OSError as e:
        raise AttntraceError(f"{path}: cannot be read ({e.strerror or e})") from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    vocab: dict[str, int] = {}
    for number, line in enumerate(lines):  # as the tokenizers library reads the file: trailing space dropped, the last
        token = line.rstrip()  # of a repeated token kept
        if any(unicodedata.category(ch) == "Cc" for ch in token):
            raise AttntraceError(f"{path}: line {number + 1} holds control characters; a vocab.txt is text, one token "
                                 "a line")
        vocab[token] = number
    missing = [token for token in ("[UNK]", "[CLS]", "[SEP]") if token not in vocab]
    if missing:
        said = "is empty" if not vocab else f"has no {together(tuple(missing))} line{'s' if len(missing) > 1 else ''}"
        raise AttntraceError(f"{path}: {said}; a BERT vocab.txt lists [UNK], [CLS], [SEP] and every word piece, one a "
                             "line")
    return vocab


def _said(e: Exception) -> str:
    """what the tokenizers library says, in one short line"""
    text = str(e).strip()
    return visible(text.splitlines()[0][:120]) if text else type(e).__name__


def encode(directory: Path, sentence: str, max_tokens: int, name: str = "the model", wordpiece: bool = False) -> Encoding:
    """encode one sentence as the model's tokenizer does when called on it, unpadded, with the special tokens it adds;
    longer than max_tokens is an error"""
    tokenizer, path = _load(directory, wordpiece)
    if not sentence.strip():
        raise AttntraceError("the sentence is empty")
    check_text(sentence)
    try:
        e = tokenizer.encode(sentence)
    except Exception as error:  # a tokenizer.json that loads yet cannot encode (a WordLevel without its [UNK])
        raise AttntraceError(f"{path}: cannot tokenize the sentence ({_said(error)})") from None
    if not e.ids:
        raise AttntraceError(f"{path}: makes no tokens of the sentence; the tokenizer drops every character of it")
    added = {token for token, flag in zip(e.tokens, e.special_tokens_mask) if flag}
    unk = getattr(tokenizer.model, "unk_token", None)
    encoding = Encoding(tuple(e.tokens), tuple(e.ids), tuple(e.type_ids), tuple(e.attention_mask),
                        tuple(token in added for token in e.tokens), str(path),
                        _unknown(sentence, e.tokens, e.offsets, unk) if unk else (), unk or "")
    if len(e.ids) > max_tokens:
        specials = encoding.special_names
        with_them = f" with {together(specials)}" if specials else ""
        raise AttntraceError(f"the sentence is {len(e.ids):,} tokens{with_them}, more than the {max_tokens:,} "
                             f"positions {name} has; shorten it")
    return encoding


def check_text(sentence: str) -> None:
    """a sentence is text: bytes that are not UTF-8 (which the command line passes on as lone surrogates) are named"""
    try:
        sentence.encode("utf-8")
    except UnicodeEncodeError as e:
        byte = ord(sentence[e.start]) - 0xDC00 if 0xDC80 <= ord(sentence[e.start]) <= 0xDCFF else None
        what = f"the byte 0x{byte:02x}" if byte is not None else f"the lone surrogate U+{ord(sentence[e.start]):04X}"
        raise AttntraceError(f"the sentence is not UTF-8 text: {what} at character {e.start + 1}; give the sentence "
                             "in UTF-8") from None


def _unknown(sentence: str, tokens: list[str], offsets: list[tuple[int, int]], unk: str) -> tuple[str, ...]:
    """the stretches of the sentence that became the unknown token, neighbours joined (喜, 欢, 猫 -> 喜欢猫)"""
    spans: list[list[int]] = []
    for token, (start, end) in zip(tokens, offsets):
        if token != unk or end <= start:
            continue
        if spans and spans[-1][1] == start:
            spans[-1][1] = end
        else:
            spans.append([start, end])
    return tuple(dict.fromkeys(sentence[start:end] for start, end in spans))


# the model to suggest for words in a script a model's vocabulary lacks: the script's name in Unicode character names,
# the text it is, and a model of the Hugging Face hub trained on it
SCRIPTS: tuple[tuple[str, str, str], ...] = (
    ("HIRAGANA", "Japanese", "bert-base-multilingual-cased"), ("KATAKANA", "Japanese", "bert-base-multilingual-cased"),
    ("CJK", "Chinese", "bert-base-chinese"), ("HANGUL", "Korean", "klue/bert-base"),
    ("CYRILLIC", "Russian and other Cyrillic", "DeepPavlov/rubert-base-cased"),
    ("ARABIC", "Arabic", "aubmindlab/bert-base-arabertv2"), ("GREEK", "Greek", "nlpaueb/bert-base-greek-uncased-v1"),
    ("HEBREW", "Hebrew", "onlplab/alephbert-base"), ("THAI", "Thai", "bert-base-multilingual-cased"),
    ("DEVANAGARI", "Hindi and other Devanagari", "google/muril-base-cased"),
)


def unknown_note(e: Encoding) -> str | None:
    """one line when the tokenizer made its unknown token of words of the sentence: which, and a model that reads them"""
    count = sum(token == e.unk for token in e.tokens) if e.unk else 0
    if not count or not e.unknown:
        return None
    words = together(tuple(visible(w[:40]) for w in e.unknown[:5])) + (" and more" if len(e.unknown) > 5 else "")
    names = {unicodedata.name(ch, "").split(" ")[0] for word in e.unknown for ch in word}
    found = [(text, model) for script, text, model in SCRIPTS if script in names]
    it, verb = ("it", "is") if len(e.unknown) == 1 else ("them", "are")
    if found:
        text, model = found[0]
        advice = f"a model trained on {text} text, e.g. {model} from the local cache, reads {it}"
    else:
        advice = f"a model with a larger vocabulary, or a byte-level one such as GPT-2 or Qwen2 (no unknown token), reads {it}"
    return (f"{count} of {len(e.tokens)} tokens are {e.unk}: {words} {verb} outside this model's vocabulary; {advice}")
