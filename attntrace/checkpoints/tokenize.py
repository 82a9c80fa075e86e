"""The model's own tokenizer (tokenizer.json, or a BERT vocab.txt): its tokens with the special tokens it adds, ids,
segment ids, attention mask, and labels made unique; the words it does not know, said in one line."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attntrace.checkpoints import INSTALL
from attntrace.checkpoints.jsonfile import read_json
from attntrace.core.problem import unique_labels
from attntrace.errors import AttntraceError
from attntrace.escape import visible
from attntrace.files.paths import kind, regular_file
from attntrace.language import N_, _, ngettext


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
    # TRANSLATORS: what comes between the names of a list but the last two
    return names[0] if len(names) == 1 else _("{names} and {last}").format(names=_(", ").join(names[:-1]), last=names[-1])


def load_tokenizer(directory: Path, wordpiece: bool = False) -> Any:
    """the tokenizer in directory's tokenizer.json; with wordpiece, a BERT vocab.txt will do"""
    return _load(directory, wordpiece)[0]


def _load(directory: Path, wordpiece: bool) -> tuple[Any, Path]:
    """the tokenizer and the file it was read from, each file's type and size checked before the library reads it"""
    try:
        from tokenizers import Tokenizer  # optional, and a heavy import: only when a model's text is tokenized
        from tokenizers.implementations import BertWordPieceTokenizer
    except ImportError:
        raise AttntraceError(_("tokenizing needs the tokenizers package; install it with: {command}").format(
            command=INSTALL)) from None
    tokenizer: Any
    path = directory / "tokenizer.json"
    if kind(path) != "missing":
        regular_file(path, N_("a tokenizer.json"))
        try:
            tokenizer = Tokenizer.from_file(str(path))
        except Exception as e:  # the tokenizers library says what it cannot read in its own exception type
            raise AttntraceError(_("{file}: not a tokenizer the tokenizers library reads ({reason})").format(
                file=path, reason=_said(e))) from None
    elif wordpiece and kind(directory / "vocab.txt") != "missing":
        path = directory / "vocab.txt"
        settings_path = directory / "tokenizer_config.json"
        settings = read_json(settings_path, N_("a tokenizer_config.json (a JSON object)")) \
            if kind(settings_path) != "missing" else {}
        lowercase = settings.get("do_lower_case", True)
        tokenizer = BertWordPieceTokenizer(read_vocab(path), lowercase=lowercase if isinstance(lowercase, bool) else True)
    else:
        said = (_("{folder}: no tokenizer.json or vocab.txt; attntrace tokenizes with the model's own tokenizer")
                if wordpiece else _("{folder}: no tokenizer.json; attntrace tokenizes with the model's own tokenizer"))
        raise AttntraceError(said.format(folder=directory))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer, path


def read_vocab(path: Path) -> dict[str, int]:
    """a BERT vocab.txt, one token a line, each numbered by its line; read here, so that the tokenizers library is handed
    a checked vocabulary rather than a file"""
    regular_file(path, N_("a vocab.txt"))
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise AttntraceError(_("{file}: not UTF-8 text, expected a vocab.txt (one token a line)").format(
            file=path)) from None
    except OSError as e:
        raise AttntraceError(_("{file}: cannot be read ({reason})").format(file=path, reason=e.strerror or e)) from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    vocab: dict[str, int] = {}
    for number, line in enumerate(lines):  # as the tokenizers library reads the file: trailing space dropped, the last
        token = line.rstrip()  # of a repeated token kept
        if any(unicodedata.category(ch) == "Cc" for ch in token):
            raise AttntraceError(_("{file}: line {line} holds control characters; a vocab.txt is text, one token a "
                                   "line").format(file=path, line=number + 1))
        vocab[token] = number
    missing = [token for token in ("[UNK]", "[CLS]", "[SEP]") if token not in vocab]
    if missing:
        said = (_("{file}: is empty; a BERT vocab.txt lists [UNK], [CLS], [SEP] and every word piece, one a line")
                if not vocab else ngettext(
                    "{file}: has no {tokens} line; a BERT vocab.txt lists [UNK], [CLS], [SEP] and every word piece, one "
                    "a line", "{file}: has no {tokens} lines; a BERT vocab.txt lists [UNK], [CLS], [SEP] and every word "
                    "piece, one a line", len(missing)))
        raise AttntraceError(said.format(file=path, tokens=together(tuple(missing))))
    return vocab


def _said(e: Exception) -> str:
    """what the tokenizers library says, in one short line"""
    text = str(e).strip()
    return visible(text.splitlines()[0][:120]) if text else type(e).__name__


def encode(directory: Path, sentence: str, max_tokens: int, name: str = N_("the model"), wordpiece: bool = False) -> Encoding:
    """encode one sentence as the model's tokenizer does when called on it, unpadded, with the special tokens it adds;
    longer than max_tokens is an error"""
    tokenizer, path = _load(directory, wordpiece)
    if not sentence.strip():
        raise AttntraceError(_("the sentence is empty"))
    check_text(sentence)
    try:
        e = tokenizer.encode(sentence)
    except Exception as error:  # a tokenizer.json that loads yet cannot encode (a WordLevel without its [UNK])
        raise AttntraceError(_("{file}: cannot tokenize the sentence ({reason})").format(
            file=path, reason=_said(error))) from None
    if not e.ids:
        raise AttntraceError(_("{file}: makes no tokens of the sentence; the tokenizer drops every character of "
                               "it").format(file=path))
    added = {token for token, flag in zip(e.tokens, e.special_tokens_mask) if flag}
    unk = getattr(tokenizer.model, "unk_token", None)
    encoding = Encoding(tuple(e.tokens), tuple(e.ids), tuple(e.type_ids), tuple(e.attention_mask),
                        tuple(token in added for token in e.tokens), str(path),
                        _unknown(sentence, e.tokens, e.offsets, unk) if unk else (), unk or "")
    if len(e.ids) > max_tokens:
        specials = encoding.special_names
        said = (_("the sentence is {n} tokens with {specials}, more than the {top} positions {model} has; shorten it")
                if specials else _("the sentence is {n} tokens, more than the {top} positions {model} has; shorten it"))
        raise AttntraceError(said.format(n=f"{len(e.ids):,}", specials=together(specials) if specials else "",
                                         top=f"{max_tokens:,}", model=_(name)))
    return encoding


def check_text(sentence: str) -> None:
    """a sentence is text: bytes that are not UTF-8 (which the command line passes on as lone surrogates) are named"""
    try:
        sentence.encode("utf-8")
    except UnicodeEncodeError as e:
        byte = ord(sentence[e.start]) - 0xDC00 if 0xDC80 <= ord(sentence[e.start]) <= 0xDCFF else None
        said = (_("the sentence is not UTF-8 text: the byte {code} at character {at}; give the sentence in UTF-8")
                if byte is not None else
                _("the sentence is not UTF-8 text: the lone surrogate {code} at character {at}; give the sentence in "
                  "UTF-8"))
        code = f"0x{byte:02x}" if byte is not None else f"U+{ord(sentence[e.start]):04X}"
        raise AttntraceError(said.format(code=code, at=e.start + 1)) from None


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
    ("HIRAGANA", N_("Japanese"), "bert-base-multilingual-cased"),
    ("KATAKANA", N_("Japanese"), "bert-base-multilingual-cased"),
    ("CJK", N_("Chinese"), "bert-base-chinese"), ("HANGUL", N_("Korean"), "klue/bert-base"),
    ("CYRILLIC", N_("Russian and other Cyrillic"), "DeepPavlov/rubert-base-cased"),
    ("ARABIC", N_("Arabic"), "aubmindlab/bert-base-arabertv2"),
    ("GREEK", N_("Greek"), "nlpaueb/bert-base-greek-uncased-v1"),
    ("HEBREW", N_("Hebrew"), "onlplab/alephbert-base"), ("THAI", N_("Thai"), "bert-base-multilingual-cased"),
    ("DEVANAGARI", N_("Hindi and other Devanagari"), "google/muril-base-cased"),
)


def unknown_note(e: Encoding) -> str | None:
    """one line when the tokenizer made its unknown token of words of the sentence: which, and a model that reads them"""
    count = sum(token == e.unk for token in e.tokens) if e.unk else 0
    if not count or not e.unknown:
        return None
    words = together(tuple(visible(w[:40]) for w in e.unknown[:5]))
    if len(e.unknown) > 5:
        words = _("{words} and more").format(words=words)
    names = {unicodedata.name(ch, "").split(" ")[0] for word in e.unknown for ch in word}
    found = [(text, model) for script, text, model in SCRIPTS if script in names]
    if found:
        said = ngettext("{count} of {total} tokens are {unk}: {words} is outside this model's vocabulary; a model "
                        "trained on {text} text, e.g. {model} from the local cache, reads it",
                        "{count} of {total} tokens are {unk}: {words} are outside this model's vocabulary; a model "
                        "trained on {text} text, e.g. {model} from the local cache, reads them", len(e.unknown))
    else:
        said = ngettext("{count} of {total} tokens are {unk}: {words} is outside this model's vocabulary; a model with "
                        "a larger vocabulary, or a byte-level one such as GPT-2 or Qwen2 (no unknown token), reads it",
                        "{count} of {total} tokens are {unk}: {words} are outside this model's vocabulary; a model with "
                        "a larger vocabulary, or a byte-level one such as GPT-2 or Qwen2 (no unknown token), reads them",
                        len(e.unknown))
    text, model = found[0] if found else ("", "")
    return said.format(count=count, total=len(e.tokens), unk=e.unk, words=words, text=_(text) if text else "",
                       model=model)
