"""The command line and the model errors in Chinese (--lang zh): every command's help and option help, usage errors,
notes and model errors; help wrapped by display width, so no line of it is wider than the terminal."""

import gettext
import json
import re
import shutil

import pytest
import typer
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from attntrace.cli.commands import COMMANDS, build
from attntrace.cli.helpwidth import fill, wrap
from attntrace.language import FOLDER
from tests.conftest import ROOT

ZH = gettext.translation("attntrace", FOLDER, languages=["zh_CN"])
CJK = re.compile(r"[\u4e00-\u9fff]")
MODELS = ROOT / "tests" / "fixtures" / "models"


def flat(text: str) -> str:
    """text without its white space: what wrapping leaves of a help text, wherever its lines were broken"""
    return re.sub(r"\s+", "", text)


def helps(name: str) -> list[str]:
    """the English help of every option and argument of a command ("": the app itself), as the CLI shows them"""
    from attntrace.cli.commands import described
    from attntrace.cli.reading import lang_option

    command = typer.main.get_command(build([name]) if name else build([]))
    if name:
        command = command.commands[name]  # type: ignore[attr-defined]
    described(command)
    return [p.help for p in [*command.params, lang_option()] if getattr(p, "help", None)]


@pytest.mark.parametrize("name", ["", *COMMANDS])
def test_every_help_is_in_chinese_and_at_most_80_columns(attntrace, name):
    r = attntrace(*([name] if name else []), "--help", "--lang", "zh", env={"COLUMNS": "80"})
    assert r.code == 0 and r.out.startswith("用法：")
    for text in helps(name):
        said = ZH.gettext(text)
        assert CJK.search(said), text  # translated
        assert flat(said) in flat(r.out), said
    if name:
        short, _ = COMMANDS[name]
        assert flat(ZH.gettext(short)) not in ("", flat(short))
    widths = [cell_len(line) for line in r.out.splitlines()]
    assert max(widths) <= 80, [line for line in r.out.splitlines() if cell_len(line) > 80]


def test_the_list_of_commands_and_the_epilogs_are_in_chinese(attntrace):
    top = attntrace("--help", "--lang", "zh", env={"COLUMNS": "80"})
    assert "对每个输入走完 8 个步骤。" in top.out and "追踪本地 Hugging Face 模型的一个头。" in top.out
    run = attntrace("run", "--help", "--lang", "zh", env={"COLUMNS": "80"})
    assert "示例：attntrace run samples/causal.json --precision 2 > answers.txt" in run.out
    assert "  [FILE]  题目：" in run.out and "A problem" not in run.out
    check = attntrace("check", "--help", "--lang", "zh", env={"COLUMNS": "80"})
    assert "按学生的精度逐步批改答卷" in check.out and flat("退出码为 0") in flat(check.out)


@pytest.mark.parametrize("name", ["", "run", "check", "model"])
def test_english_help_stays_as_click_writes_it(attntrace, name):
    r = attntrace(*([name] if name else []), "--help", env={"COLUMNS": "80"})
    assert r.code == 0 and r.out.startswith("Usage:") and not CJK.search(r.out)
    assert max(len(line) for line in r.out.splitlines()) <= 80


@pytest.mark.parametrize("args, says", [
    (["run", "--precision", "x"], "运行“attntrace run --help”查看帮助。"),
    (["check", "a.json", "--points", "foo=1"], "“foo”不是步骤；请用 q, k, v"),
    (["check", "a.json", "--tolerance", "0.1", "--rtol", "0.1"], "请给出 --tolerance 或 --rtol/--atol，不要同时给出"),
    (["experiment", "nope"], "“nope”不是 symmetric, permute"),
    (["validate"], "缺少 FILE：请给出题目文件"),
    (["new", "--labels", "a,b", "--tokens", "3"], "--labels 给出 2 个标签，但 --tokens 是 3"),
    (["run", "--theme", "light"], "主题是导出文件的背景"),
    (["step", "--input", "1", "--explain", "-f", "json"], "算式只能以文字写出"),
])
def test_usage_errors_are_in_chinese(attntrace, args, says):
    r = attntrace(*args, "--lang", "zh")
    assert r.code == 2 and r.out == ""
    assert len(r.err.splitlines()) == 1 and r.err.startswith("attntrace: ") and says in r.err, r.err


def test_a_usage_error_in_english_is_unchanged(attntrace):
    r = attntrace("check", "a.json", "--points", "foo=1")
    assert r.code == 2 and "\"foo\" is not a step; use q, k, v" in r.err and "Try 'attntrace check --help'" in r.err


def test_the_unknown_word_note_is_in_chinese(attntrace):
    pytest.importorskip("tokenizers")
    r = attntrace("model", MODELS / "bert", "I 喜欢猫 very much", "--who", "--lang", "zh")
    assert r.code == 0
    notes = [line for line in r.err.splitlines() if "[UNK]" in line]
    assert notes == ["注：14 个词元中有 3 个是 [UNK]：喜欢猫 不在这个模型的词表中；用中文文本训练的模型（例如本地缓存中的 "
                     "bert-base-chinese）能读懂它们"]
    english = attntrace("model", MODELS / "bert", "I 喜欢猫 very much", "--who")
    assert "谁关注谁" in r.out and "Who attends to whom" in english.out
    assert [line for line in r.out.splitlines() if "→" in line] == [line for line in english.out.splitlines() if "→" in line]


def test_model_errors_are_in_chinese(attntrace, tmp_path):
    pytest.importorskip("tokenizers")
    missing = attntrace("model", tmp_path / "nowhere", "the cat", "--lang", "zh")
    assert missing.code == 1 and "没有这个文件夹" in missing.err and "Hugging Face 缓存" in missing.err
    folder = tmp_path / "bert"
    shutil.copytree(MODELS / "bert", folder)
    (folder / "config.json").unlink()
    r = attntrace("model", folder, "the cat", "--lang", "zh")
    assert r.code == 1 and r.err == f"attntrace: {folder}：没有 config.json；模型文件夹包含 config.json、权重" \
                                    "（model.safetensors，或分片及其索引）和 tokenizer.json\n"
    shutil.copytree(MODELS / "bert", tmp_path / "heads")
    config = tmp_path / "heads" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "num_attention_heads": 5}))
    r = attntrace("model", tmp_path / "heads", "the cat", "--lang", "zh")
    assert r.code == 1 and "num_attention_heads = 5 不整除 hidden_size" in r.err
    assert attntrace("model", tmp_path / "bert", " ", "--lang", "zh").err.count("\n") == 1


def test_data_is_the_same_in_both_languages(attntrace, tmp_path):
    pytest.importorskip("tokenizers")
    en = attntrace("model", MODELS / "bert", "the cat sat", "-f", "json")
    zh = attntrace("model", MODELS / "bert", "the cat sat", "-f", "json", "--lang", "zh")
    assert en.code == zh.code == 0 and en.out == zh.out
    out = tmp_path / "head.json"
    made = attntrace("model", MODELS / "bert", "the cat sat", "--extract", out, "--lang", "zh")
    assert made.code == 0 and made.err.startswith(f"已写入 {out}：") and "attntrace run" in made.err
    assert json.loads(out.read_text())["name"] == json.loads(en.out)["name"]


words = st.lists(st.one_of(st.text("abcdefgh-,.", min_size=1, max_size=30), st.text("注意力得分权重，。（）", min_size=1,
                                                                                      max_size=40)), max_size=30)


@given(words, st.integers(10, 60), st.integers(0, 6))
def test_wrapped_lines_fit_and_keep_every_character(pieces, width, indent):
    text = " ".join(pieces)
    lines = fill(text, width, " " * indent, " " * indent).split("\n")
    assert all(cell_len(line) <= width for line in lines if line.strip()), lines
    assert flat("".join(lines)) == flat(text)


def test_wrapping_breaks_between_chinese_characters_never_before_closing_punctuation():
    lines = fill("一二三四，五六", 8).split("\n")
    assert lines == ["一二三", "四，五六"]
    assert wrap("甲乙\n\n\b\n  原样  保留", 20, paragraphs=True) == "甲乙\n\n  原样  保留"


@pytest.mark.parametrize("width", range(8, 40))
def test_wrapping_never_ends_a_line_with_an_opening_bracket(width):
    for text in ("班级文件夹：在其中为每个学生写一个文件夹。 [必需]", "同网络的初始化（xavier）与《一文读懂自注意力机制》中的例题"):
        lines = fill(text, width).split("\n")
        assert not any(line.rstrip().endswith(("[", "（", "《")) for line in lines), lines
        assert flat("".join(lines)) == flat(text)


def test_the_pause_prompt_and_file_errors_are_in_chinese(attntrace, terminal, tmp_path):
    terminal(keys="q")
    paused = attntrace("run", "--pause", "--lang", "zh")
    assert paused.code == 0 and "-- Enter：下一步 | q：退出 --" in paused.err  # ASCII, as the tables are in Chinese
    out = tmp_path / "missing" / "x.txt"
    r = attntrace("run", "-o", out, "--lang", "zh")
    assert r.code == 1 and r.err == f"attntrace: 无法写入 {out}：文件夹 {out.parent} 不存在\n"
    same = attntrace("run", "samples/scaled.json", "-o", "samples/scaled.json", "--lang", "zh")
    assert same.code == 2 and "是输入 samples/scaled.json；请给 -o 另一个文件" in same.err
