"""In Chinese, no command writes an English sentence for a person: every word of Latin letters left is a maths name,
an option or command name, a file name, a problem's name or a label of the user's own."""

import json
import re
import shutil

import pytest

from tests.conftest import SAMPLES

# names that are the same in both languages: maths, formats, settings a problem file spells, units
KEPT = set("""Q K V W_Q W_K W_V W_O b_q b_k b_v b_o d_k d_v d_model d_src softmax sqrt max exp log tanh attntrace
JSON CSV SVG HTML ASCII UTF-8 NumPy npz npy json csv md txt svg html markdown plain table rope alibi ALiBi RoPE softcap
causal window padding scale mask heads kv_heads true false null MB GB KB TB BERT GPT Llama Qwen Mistral Gemma MiniLM
Hugging Face transformers tokenizer hf zh en Enter Tab Backspace Esc Ctrl PowerShell Get-Content Set-Content utf8
Encoding Unicode UNK CLS SEP NaN Infinity inf nan ID id ids FILE MODEL SENTENCE NAME SHEET PROBLEM ROSTER DIR PATH
PATHS Gradescope LANG LC_ALL LC_MESSAGES ATTNTRACE_LANG ATTNTRACE_ASCII NO_COLOR ATTNTRACE_MAX_MB COLUMNS""".split())
# the values options take and problem files spell, shown as they are typed
KEPT |= set("""auto always never dark light integers normal xavier kaiming symmetric permute similarity temperature
scores scaled weights output final none half interleaved linear llama3 wordpiece""".split())


def english_sentences(text: str, kept: set[str]) -> list[str]:
    """the lines holding two or more English words in a row that are none of the kept names"""
    found = []
    for line in text.splitlines():
        line = re.sub(r"attntrace( [^\s：，。]+)+.*$", " ", line)  # a command line, shown as it is typed
        if line.count('"') % 2:  # the end of a quoted sentence an example's line broke
            line = line.split('"', 1)[1]
        plain = re.sub(r'(--?[\w-]+|\S+\.(json|csv|md|txt|npz|npy|svg|html)\b|\S*/\S*|[\w.-]+@\S+|\[[^]]*\||"[^"]*")',
                       " ", line)
        words = re.findall(r"[A-Za-z][A-Za-z'_-]*", plain)
        run = 0
        for word in words:
            english = len(word) > 2 and "_" not in word and word.lower() not in {k.lower() for k in kept}
            run = run + 1 if english else 0
            if run >= 2:
                found.append(line)
                break
    return found


def _labels(path) -> set[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    words = set()
    for value in (data.get("tokens") or []) + [data.get("name") or ""]:
        words.update(re.findall(r"[A-Za-z][A-Za-z'_-]*", str(value)))
    return words


COMMANDS = [
    ["run"], ["step", "--input", "2"], ["explain", "--input", "1"], ["run", "{scaled}"], ["step", "{causal}", "-i", "3"],
    ["explain", "{scaled}", "-i", "2", "--carry-rounding", "--precision", "2"], ["validate", "{two_heads}"],
    ["experiment", "symmetric"], ["experiment", "permute"], ["experiment", "similarity"], ["experiment", "temperature"],
    ["worksheet", "{scaled}"], ["worksheet", "{causal}", "--key", "--format", "plain"], ["run", "{labels}"],
    ["check", "{ben}"], ["check", "{ana}"], ["check", "{homework}"], ["new", "--tokens", "3", "--seed", "1"],
    ["run", "--format", "markdown"], ["run", "--format", "csv"], ["step", "-i", "1", "--explain"],
    ["assign", "{roster}", "--seed", "1", "-o", "{class}"], ["check", "{class}"],
    ["bert", "The cat sat on the mat", "--layer", "1", "--head", "1", "--who"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_no_english_sentence_in_chinese(attntrace, tmp_path, args):
    homework = tmp_path / "homework"
    shutil.copytree(SAMPLES / "homework", homework)
    (tmp_path / "roster.txt").write_text("ana\nben\n")
    if "{class}" in args and "assign" not in args:
        assert attntrace("assign", tmp_path / "roster.txt", "--seed", "1", "-o", tmp_path / "class").code == 0
    names = {"roster": tmp_path / "roster.txt", "class": tmp_path / "class", "scaled": SAMPLES / "scaled.json",
              "causal": SAMPLES / "causal.json", "labels": SAMPLES / "labels.json",
             "two_heads": SAMPLES / "two_heads.json", "ben": homework / "ben.json", "ana": homework / "ana.json",
             "homework": homework}
    line = [a.format(**names) for a in args]
    r = attntrace(*line, "--lang", "zh")
    assert r.code in (0, 1), r.err
    kept = set(KEPT) | {"The", "cat", "sat", "the", "mat", "ana", "ben", "keys"}  # the sentence's tokens, the ids
    for path in (SAMPLES / "scaled.json", SAMPLES / "causal.json", SAMPLES / "labels.json", SAMPLES / "two_heads.json",
                 SAMPLES / "homework" / "problem.json", SAMPLES / "worked_example.json"):
        kept |= _labels(path)
    for sheet in homework.glob("*.json"):
        kept.update(re.findall(r"[A-Za-z]+", json.loads(sheet.read_text(encoding="utf-8")).get("student") or ""))
    assert english_sentences(r.out + r.err, kept) == []


@pytest.mark.parametrize("command", ["", "run", "step", "explain", "flash", "experiment", "validate", "schema", "new",
                                     "check", "worksheet", "assign", "bert", "model", "explore", "decode"])
def test_no_english_sentence_in_chinese_help(attntrace, command):
    r = attntrace(*([command] if command else []), "--help", "--lang", "zh")
    assert r.code == 0
    assert english_sentences(r.out, KEPT | {"Example", "Examples"}) == []
    placeholders = re.findall(r"(?<![\w-])(?:OPTIONS|COMMAND|ARGS|TEXT|INTEGER|FLOAT|RANGE|BOOLEAN)(?![\w-])", r.out)
    assert placeholders == [] and "[required]" not in r.out and "default:" not in r.out
    assert not re.search(r"^\S.*[^：]$", r.out.splitlines()[0]) or r.out.startswith("用法：attntrace")
    headings = [line for line in r.out.splitlines() if re.fullmatch(r"\S+[:：]", line)]
    assert all(heading.endswith("：") for heading in headings), headings  # 参数：, 选项：, 命令：


def punctuation_slips(text: str) -> list[str]:
    """the lines whose Chinese sentences end or join with ASCII marks, or with two marks in a row"""
    slips = []
    for line in text.splitlines():
        if (re.search(r"[\u4e00-\u9fff）》”][.,;:?!](\s|$)", line) or re.search(r"[。？！，；：][.。？！?!]", line)
                or re.search(r"'[.?!;](\s|$|[\u4e00-\u9fff])", line) or re.search(r"[。？！] [\u4e00-\u9fff]", line)):
            slips.append(line)
    return slips


# click's own usage errors: a missing argument, a bad type, an unknown option with a suggestion, an unknown command
USAGE_ERRORS = [["check"], ["step", "--input", "x2"], ["run", "--precision", "x"], ["check", "a.json", "--rtol", "x"],
                ["run", "--colr"], ["run", "--pading"], ["class"], ["runn"], ["run", "-p", "99"], ["run", "a", "b"],
                ["step"], ["run", "--format", "xml"], ["new", "--tokens", "0"], ["assign", "r.txt"]]


@pytest.mark.parametrize("args", USAGE_ERRORS, ids=" ".join)
def test_click_s_own_usage_errors_are_chinese_sentences(attntrace, args):
    r = attntrace(*args, "--lang", "zh")
    assert r.code == 2 and r.out == "" and r.err.count("\n") == 1 and r.err.startswith("attntrace: ")
    said = r.err.removeprefix("attntrace: ")
    assert english_sentences(re.sub(r"'[^']*'", " ", said), KEPT) == [], said  # 'xml', 'runn': as typed, or names
    assert not re.search(r"\b(integer|float|text|Did you mean|Missing|No such|Try|Invalid)\b", said), said
    assert punctuation_slips(said) == [], said
    assert said.rstrip("\n").endswith("运行“attntrace" + (f" {args[0]}" if args[0] in ("run", "step", "check", "new",
                                                                                   "assign") else "") + " --help”查看帮助。")
    assert said.count("？") <= 1 and "？。" not in said and "。。" not in said


def test_a_non_ascii_character_in_json_is_named_in_chinese(attntrace, tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"x": [[1，2]]}', encoding="utf-8")
    r = attntrace("run", path, "--lang", "zh")
    assert r.code == 1 and "U+FF0C（全角逗号）" in r.err and "fullwidth" not in r.err
    assert "U+FF0C (fullwidth comma)" in attntrace("run", path).err  # Unicode's own name, in English
    path.write_text('{"x": [[1, 2]]\u00a0}', encoding="utf-8")
    assert "U+00A0（不换行空格）" in attntrace("run", path, "--lang", "zh").err
