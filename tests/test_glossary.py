"""The glossary (docs/glossary.md) kept: no Chinese message uses a word it forbids, no Chinese output an English word
outside maths, option, file and format names and the user's labels, and no Traditional output a Simplified-only
character."""

import importlib.util
import json
import re
import shutil
from functools import cache

import pytest

from attntrace import language
from tests.conftest import ROOT, SAMPLES
from tests.test_zh_everywhere import COMMANDS, KEPT, _labels


@cache
def catalogue_script():
    """scripts/catalogue.py as a module: it reads the glossary"""
    spec = importlib.util.spec_from_file_location("catalogue", ROOT / "scripts" / "catalogue.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def forbidden(lang: str) -> list[str]:
    return [word for row in catalogue_script().glossary() for word in row[f"{lang} forbidden"]]


def test_the_glossary_has_the_settled_terms():
    pytest.importorskip("babel")
    rows = {row["english"][0]: row for row in catalogue_script().glossary()}
    for english, zh, tw in [("query", "查询", "查詢"), ("key", "键", "鍵"), ("mask", "掩码", "遮罩"),
                            ("rescale factor", "校正因子", "校正因子"), ("running maximum", "当前最大值", "目前最大值"),
                            ("KV cache", "KV 缓存", "KV 快取"), ("parameter", "参数", "參數"), ("scalar", "标量", "純量"),
                            ("row (of a table or matrix)", "行", "列"), ("column (of a table or matrix)", "列", "欄")]:
        assert rows[english]["zh"][0] == zh and rows[english]["zh-TW"][0] == tw, english
    assert "缩放因子" in rows["rescale factor"]["zh forbidden"] and "引數" in rows["parameter"]["zh-TW forbidden"]
    assert len(rows) > 50


@pytest.mark.parametrize("lang", ["zh", "zh-TW"])
def test_no_message_uses_a_forbidden_word(lang):
    pytest.importorskip("babel")
    from babel.messages.pofile import read_po

    with open(ROOT / "attntrace" / "locale" / language.LOCALES[lang] / "LC_MESSAGES" / "attntrace.po", "rb") as f:
        catalog = read_po(f)
    found = []
    for message in catalog:
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        found += [f"{word}: {string}" for string in strings for word in forbidden(lang) if word in (string or "")]
    assert found == []


def run(attntrace, tmp_path, args: list[str], lang: str):
    """a command of test_zh_everywhere's list in a language, as that test runs it: its text, the English words its
    problems and sheets hold (labels, names), and their labels as written"""
    homework = tmp_path / "homework"
    shutil.copytree(SAMPLES / "homework", homework)
    (tmp_path / "roster.txt").write_text("ana\nben\n")
    if "{class}" in args and "assign" not in args:
        # assigned in the same language: a problem's title is written in the language it was assigned in
        assert attntrace("assign", tmp_path / "roster.txt", "--seed", "1", "-o", tmp_path / "class", "--lang",
                         lang).code == 0
    names = {"roster": tmp_path / "roster.txt", "class": tmp_path / "class", "scaled": SAMPLES / "scaled.json",
             "causal": SAMPLES / "causal.json", "labels": SAMPLES / "labels.json",
             "two_heads": SAMPLES / "two_heads.json", "ben": homework / "ben.json", "ana": homework / "ana.json",
             "homework": homework}
    r = attntrace(*[a.format(**names) for a in args], "--lang", lang)
    assert r.code in (0, 1), r.err
    kept = set(KEPT) | {"The", "cat", "sat", "the", "mat", "ana", "ben", "keys"}
    labels = {"The cat sat on the mat", "ana", "ben"}
    for path in (SAMPLES / "scaled.json", SAMPLES / "causal.json", SAMPLES / "labels.json", SAMPLES / "two_heads.json",
                 SAMPLES / "homework" / "problem.json", SAMPLES / "worked_example.json"):
        kept |= _labels(path)
        data = json.loads(path.read_text(encoding="utf-8"))
        labels |= {str(value) for value in (data.get("tokens") or []) + [data.get("name") or ""] if value}
    for sheet in homework.glob("*.json"):
        student = json.loads(sheet.read_text(encoding="utf-8")).get("student") or ""
        kept.update(re.findall(r"[A-Za-z]+", student))
        labels.add(student)
    return r.out + r.err, kept, labels


# words that are names in every language, as typed: the maths, a library, a paper, a model's parts, formats, streams,
# the commands and what their help names
NAMES = set("""float logit logits token tokens cos nat nats FlashAttention StreamingLLM gpt-oss numpy torch huggingface_hub
safetensors vocab repeat_kv seed KV LF CRLF stdin stdout stderr Schema Transformer PATHS follow-through on zh-TW
all-MiniLM-L""".split())
# the formulas' names of a score before and after its bias or cap, as the worksheets print them in every language
NAMES |= {"score", "bias", "capped"}
NAMES |= set("run step explain experiment validate schema new check worksheet assign bert model explore flash decode".split())


def english_words(text: str, kept: set[str]) -> list[str]:
    """each English word of two letters or more that is no kept name, with its line: test_zh_everywhere's rule, made
    strict (one word is enough)"""
    kept = {word.lower() for word in kept | NAMES}
    found = []
    for line in text.splitlines():
        line = re.sub(r"attntrace( [^\s：，。]+)+.*$", " ", line)  # a command line, shown as it is typed
        if line.count('"') % 2:  # the end of a quoted sentence an example's line broke
            line = line.split('"', 1)[1]
        line = re.sub(r"\[(默认|預設)[:：][^]]*]", " ", line)  # an option's default, as it is typed
        plain = re.sub(r'((?<![\w-])--?[A-Za-z][\w-]*|\S+\.(json|csv|md|txt|npz|npy|svg|html)\b|\S*/\S*|[\w.-]+@\S+|'
                       r'\[[^]]*\||"[^"]*"|UTF-8)', " ", line)
        found += [f"{word}: {line.strip()}" for word in re.findall(r"[A-Za-z][A-Za-z'_-]*[A-Za-z]", plain)
                  if "_" not in word and word.lower() not in kept and not word.startswith("no-")]
    return found


# the commands whose words the glossary settles most (blocks, running maximum and sum, the rescale factor, the cache)
MORE = [["flash"], ["flash", "{causal}"], ["decode", "{causal}"]]


def _cases(make_id):
    out = []
    for args in COMMANDS + MORE:
        for lang in ("zh", "zh-TW"):
            out.append(pytest.param(args, lang, id=f"{lang}-{make_id(args)}"))
    return out


@pytest.mark.parametrize("args, lang", _cases(" ".join))
def test_no_english_word_and_no_forbidden_word_in_chinese_output(attntrace, tmp_path, args, lang):
    text, kept, _labels_written = run(attntrace, tmp_path, args, lang)
    assert [word for word in forbidden(lang) if word in text] == []
    assert english_words(text, kept) == []


HELPS = ["", "run", "step", "explain", "experiment", "validate", "schema", "new", "check", "worksheet", "assign", "bert",
         "model", "explore"]


@pytest.mark.parametrize("command, lang", [pytest.param(command, lang, id=f"{lang}-{command or 'attntrace'}")
                                           for command in HELPS for lang in ("zh", "zh-TW")])
def test_no_english_word_and_no_forbidden_word_in_chinese_help(attntrace, command, lang):
    r = attntrace(*([command] if command else []), "--help", "--lang", lang)
    assert r.code == 0
    assert [word for word in forbidden(lang) if word in r.out] == []
    assert english_words(r.out, KEPT | NAMES | {"Example", "Examples"}) == []


@cache
def simplified_only() -> frozenset[str]:
    """the characters that are Simplified only: OpenCC's s2t changes them, and t2s gives them back"""
    opencc = pytest.importorskip("opencc", reason="opencc (the test extra) tells Simplified from Traditional characters")
    s2t, t2s = opencc.OpenCC("s2t").convert, opencc.OpenCC("t2s").convert
    text = "".join(chr(c) for c in range(0x4E00, 0xA000))
    return frozenset(c for c, t in zip(text, s2t(text)) if t != c and t2s(t) == c)


# Traditional words holding a character that is also the Simplified form of another (里 for 裡, 后 for 後)
TRADITIONAL_WORDS = ("西里爾",)


def simplified_in(text: str) -> list[str]:
    """each Simplified-only character of the text, with its line"""
    simplified = simplified_only()
    for word in TRADITIONAL_WORDS:
        text = text.replace(word, " ")
    return [f"{c}: {line}" for line in text.splitlines() for c in line if c in simplified]


@pytest.mark.parametrize("args", COMMANDS + MORE, ids=" ".join)
def test_no_simplified_character_in_traditional_output(attntrace, tmp_path, args):
    text, _kept, labels = run(attntrace, tmp_path, args, "zh-TW")
    for label in sorted(labels, key=len, reverse=True):  # the user's own words, as they wrote them
        text = text.replace(label, " ")
    assert simplified_in(text) == []


@pytest.mark.parametrize("command", HELPS)
def test_no_simplified_character_in_traditional_help(attntrace, command):
    assert simplified_in(attntrace(*([command] if command else []), "--help", "--lang", "zh-TW").out) == []


def test_the_traditional_catalogue_has_no_simplified_character():
    from attntrace.locale.zh_TW import messages

    strings = list(messages.MESSAGES.values()) + [s for forms in messages.PLURALS.values() for s in forms]
    assert simplified_in("\n".join(strings)) == []


@pytest.mark.parametrize("simplified, english, traditional", [
    ("{key} 第 {row} 行第 {column} 列", "{key} row {row}, column {column}", "{key} 第 {row} 列第 {column} 栏"),
    ("{name} 第 {line} 行第 {column} 列", "{name} line {line}, column {column}", "{name} 第 {line} 行第 {column} 栏"),
    ("{name} 第 {number} 行：而第一行有", "{name} line {number}: the first row has", "{name} 第 {number} 行：而第一列有"),
    ("每行一个，列出 [UNK]", "one a line, lists [UNK]", "每行一个，列出 [UNK]"),
    ("正在运行，另行给出，命令行中，换行", "running, given apart, on the command line, a row break",
     "正在运行，另行给出，命令行中，换行"),
    ("由列表组成的列表，并列，BERT 系列，序列", "a list of lists, side by side, BERT-family, sequence",
     "由列表组成的列表，并列，BERT 系列，序列"),
    ("⋮ 隐藏 {n} 行", "⋮ {n} hidden", "⋮ 隐藏 {n} 列"),
])
def test_rows_and_columns_take_taiwan_words_by_what_the_english_says(simplified, english, traditional):
    pytest.importorskip("babel")
    assert catalogue_script().rows_and_columns(simplified, english) == traditional


def test_a_glossary_correction_leaves_the_right_word_that_holds_the_wrong_one():
    pytest.importorskip("babel")
    corrected = catalogue_script().corrected
    assert corrected("第 2 塊，區塊，分塊", [("分塊", "分區塊"), ("塊", "區塊")]) == "第 2 區塊，區塊，分區塊"
    assert corrected("十六進位制數", [("十六進位制", "十六進位")]) == "十六進位數"
