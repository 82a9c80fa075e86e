"""Worksheets, assign and the class folder in Chinese: the words for a person translated (a worksheet's heading, name
line and instructions too, which check reads back in either language), the files a machine reads the same in every
language."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

SAMPLES = ROOT / "samples"
FIXTURES = ROOT / "tests" / "fixtures" / "worksheets"
BLANK = "________________"
MATHS = {"sqrt", "d_k", "d_v", "W_Q", "W_K", "W_V", "W_O", "a", "i", "j", "causal", "window", "padding"}  # not words


def printed(attntrace, *args: str | Path) -> str:
    result = attntrace("worksheet", *args)
    assert result.code == 0, result.err
    return result.out


def filled(blank: str, key: str, name: str | None = None) -> str:
    """the blank worksheet's heading, name line and instructions over the key's tables, a name on its name line"""
    head, tables = blank.split("\n\n")[:3], key.split("\n\n")[2:]
    if name is not None:
        head[1] = head[1].replace(BLANK, name)
    return "\n\n".join([*head, *tables])


def preface(text: str, key: bool = False) -> str:
    """what a worksheet says before its tables: its heading, name line (a key has none) and instructions"""
    return "\n\n".join(text.split("\n\n")[:2 if key else 3])


def english_words(text: str, name: str) -> set[str]:
    """the Latin words of a text besides the problem's name and the maths names: English that should be Chinese"""
    return set(re.findall(r"[A-Za-z][A-Za-z_]*", text.replace(name, ""))) - MATHS


@pytest.mark.parametrize("fmt", ["markdown", "plain"])
def test_a_chinese_worksheet_is_in_chinese_only(attntrace, fmt):
    sample, name = SAMPLES / "causal.json", "带因果掩码的解码器自注意力"  # the sample's name, in Chinese
    zh = printed(attntrace, sample, "--lang", "zh", "--format", fmt)
    en = printed(attntrace, sample, "--format", fmt)
    mark = "# " if fmt == "markdown" else ""
    assert zh.startswith(f"{mark}练习单：{name}\n\n姓名：{BLANK}\n\n为每个输入计算自注意力。")
    unwrapped = "".join(zh.split())  # plain text breaks long lines at 80 columns
    assert ("为每个输入计算自注意力。将每个中间结果四舍五入到2位小数，并把舍入后的值带入下一步；将得分除以sqrt(d_k)。"
            "掩码：causal（输入i只关注键1到i）。") in unwrapped
    assert english_words(preface(zh), name) == set()
    assert "Compute self-attention" not in zh and "Name:" not in zh and "attntrace" not in zh
    assert en.startswith(f"{mark}Worksheet: decoder self-attention with a causal mask\n\nName: {BLANK}\n\n"
                         "Compute self-attention for every input.")
    assert "练习单" not in en and "姓名" not in en


def test_a_chinese_key_and_one_input(attntrace):
    zh = printed(attntrace, SAMPLES / "causal.json", "--lang", "zh", "--key", "--input", "2")
    assert zh.startswith("# 练习单：带因果掩码的解码器自注意力 · 答案\n\n"
                         "只计算输入 2 的自注意力（步骤 4 到 7）。将每个中间结果四舍五入到 2 位小数")
    assert "姓名" not in zh and "Compute self-attention" not in zh and "ANSWER KEY" not in zh
    assert english_words(preface(zh, key=True), "") == set()


def test_heads_and_one_decimal_in_chinese(attntrace):
    zh = printed(attntrace, SAMPLES / "two_heads.json", "--lang", "zh", "--precision", "1", "--no-scale")
    assert "四舍五入到 1 位小数，并把舍入后的值带入下一步；不对得分进行缩放。头：2 个，头 a 使用 W_Q 和 W_K" in zh
    assert "Round every intermediate" not in zh and "Heads:" not in zh
    assert english_words(preface(zh), "") == set() and zh.startswith("# 练习单：两个 d_k = 2 的头，由 W_O 合并\n")


@pytest.mark.parametrize("sample, options", [("two_heads.json", ()), ("two_heads.json", ("--input", "2", "-p", "1"))])
def test_the_json_answer_sheet_is_the_same_in_both_languages(attntrace, sample, options):
    for key in ((), ("--key",)):
        args = (SAMPLES / sample, *options, "--format", "json", *key)
        assert printed(attntrace, *args, "--lang", "zh") == printed(attntrace, *args)


@pytest.mark.parametrize("sample, options", [("causal.json", ()), ("two_heads.json", ()),
                                             ("causal.json", ("--input", "3")),
                                             ("two_heads.json", ("--input", "2", "--precision", "1")),
                                             ("causal.json", ("--scale-by", "2.5", "--precision", "1"))])
@pytest.mark.parametrize("fmt", ["markdown", "plain"])
@pytest.mark.parametrize("printed_in", ["zh", "en"])
def test_a_worksheet_filled_with_the_key_passes_check_in_either_language(attntrace, tmp_path, sample, options, fmt,
                                                                         printed_in):
    problem = SAMPLES / sample
    blank = printed(attntrace, problem, *options, "--format", fmt, "--lang", printed_in)
    key = printed(attntrace, problem, *options, "--format", fmt, "--key", "--lang", printed_in)
    path = tmp_path / ("answers.md" if fmt == "markdown" else "answers.txt")
    path.write_text(filled(blank, key, "李明"), encoding="utf-8")
    scaled = ("--scale-by", "2.5") if "--scale-by" in options else ()
    for lang in ("zh", "en"):
        result = attntrace("check", path, problem, *scaled, "--format", "json", "--lang", lang)
        assert result.code == 0, result.out + result.err
        marked = json.loads(result.out)
        assert marked["passed"] is True and marked["student"] == "李明" and marked["notes"] == []


@pytest.mark.parametrize("name, problem", [("causal_zh_filled_before.md", "causal.json"),
                                           ("two_heads_input_2_zh_filled_before.txt", "two_heads.json")])
def test_a_worksheet_handed_out_in_the_earlier_chinese_form_is_still_read(attntrace, name, problem):
    """worksheets once printed in Chinese carried the English sentence and a Name: line too, as these did"""
    path = FIXTURES / name
    assert "\nName: 李明\n" in path.read_text(encoding="utf-8")
    for lang in ("zh", "en"):
        result = attntrace("check", path, SAMPLES / problem, "--format", "json", "--lang", lang)
        assert result.code == 0, result.out + result.err
        marked = json.loads(result.out)
        assert marked["passed"] is True and marked["student"] == "李明" and marked["notes"] == []


def test_a_chinese_worksheet_left_blank_is_read_as_not_answered(attntrace, tmp_path):
    path = tmp_path / "blank.md"
    path.write_text(printed(attntrace, SAMPLES / "causal.json", "--lang", "zh"), encoding="utf-8")
    result = attntrace("check", path, SAMPLES / "causal.json", "--format", "json", "--lang", "zh")
    assert result.code == 1 and json.loads(result.out)["passed"] is False


# --- assign ------------------------------------------------------------------------------------------------------


def roster(tmp_path: Path, text: str, name: str = "roster.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_assign_in_chinese_writes_the_same_problems_and_keys_and_chinese_worksheets(attntrace, tmp_path):
    ids = roster(tmp_path, "ann\n李明\n")
    zh = attntrace("assign", ids, "-o", tmp_path / "zh", "--seed", "5", "--lang", "zh")
    en = attntrace("assign", ids, "-o", tmp_path / "en", "--seed", "5")
    assert zh.code == en.code == 0 and zh.out == en.out == ""
    keys = tmp_path / "zh" / "keys"
    assert zh.err == (f"已在 {tmp_path / 'zh'} 中建立 2 个学生文件夹（各含 problem.json 和 worksheet.md，用于分发），答案另放在 "
                      f"{keys} 中（各含 key.json 和 key.md；这个文件夹请自己保留，不要发给学生）\n"
                      f"用 attntrace check {tmp_path / 'zh'} 批改\n")
    for student in ("ann", "李明"):
        for name in ("problem.json", "keys/{}/key.json"):
            place = name.format(student) if "{}" in name else f"{student}/{name}"
            zh_file, en_file = (json.loads((tmp_path / lang / place).read_text(encoding="utf-8")) for lang in ("zh", "en"))
            assert {**zh_file, "name": None} == {**en_file, "name": None}  # the same problem and answers
            assert en_file["name"] == f"{student}: 3 inputs, d_model = 4, d_k = 3, d_v = 3, 1 head (integers)"
            assert zh_file["name"] == f"{student}（3 个输入，d_model = 4，d_k = 3，d_v = 3，1 个头，整数）"  # its title
        sheet = (tmp_path / "zh" / student / "worksheet.md").read_text(encoding="utf-8")
        assert f"\n姓名：{student}\n" in sheet and "为每个输入计算自注意力" in sheet and "Name:" not in sheet
        assert sheet.startswith(f"# 练习单：{student}（3 个输入，d_model = 4，d_k = 3，d_v = 3，1 个头，整数）\n")
        assert " · 答案\n" in (keys / student / "key.md").read_text(encoding="utf-8")


def test_each_chinese_worksheet_filled_in_with_its_key_passes_check(attntrace, tmp_path):
    out = tmp_path / "class"
    assert attntrace("assign", roster(tmp_path, "ann\n李明\n"), "-o", out, "--seed", "5", "--mask", "causal",
                     "--lang", "zh").code == 0
    for student in ("ann", "李明"):
        sheet = out / student / "worksheet.md"
        key = (out / "keys" / student / "key.md").read_text(encoding="utf-8")
        sheet.write_text(filled(sheet.read_text(encoding="utf-8"), key), encoding="utf-8")
    for lang in ("zh", "en"):
        result = attntrace("check", out, "--format", "json", "--lang", lang)
        assert result.code == 0, result.out + result.err
        marked = json.loads(result.out)["sheets"]
        assert [(s["student"], s["passed"]) for s in marked] == [("ann", True), ("李明", True)]


def test_a_rerun_in_the_other_language_keeps_every_file_and_is_not_refused(attntrace, tmp_path):
    ids, out = roster(tmp_path, "ann\nbo\n"), tmp_path / "class"
    assert attntrace("assign", ids, "-o", out, "--seed", "5", "--lang", "zh").code == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    again = attntrace("assign", ids, "-o", out, "--seed", "5")
    assert again.code == 0, again.err
    assert 'kept every file already there as it was, for 2 students ("ann", "bo"); none was missing' in again.err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    chinese = attntrace("assign", roster(tmp_path, "ann\nbo\ncy\n", "more.txt"), "-o", out, "--seed", "5", "--lang", "zh")
    assert chinese.code == 0 and '2 个学生（"ann", "bo"）已有的文件都原样保留；没有缺少的文件' in chinese.err
    assert "在 " in chinese.err and "中建立 1 个学生文件夹" in chinese.err


def test_a_key_md_of_another_run_with_no_key_json_is_still_refused(attntrace, tmp_path):
    ids, out = roster(tmp_path, "ann\n"), tmp_path / "class"
    assert attntrace("assign", ids, "-o", out, "--seed", "5").code == 0
    (out / "keys" / "ann" / "key.json").unlink()
    (out / "keys" / "ann" / "key.md").write_text("# Worksheet: another\n", encoding="utf-8")
    result = attntrace("assign", ids, "-o", out, "--seed", "5", "--lang", "zh")
    assert result.code == 1 and "key.md：是用与这次不同的种子或选项生成的（什么也没有写）" in result.err


@pytest.mark.parametrize("text, name, words", [
    ("ann\nbo\nann\n", "roster.txt", "roster.txt 第 3 行：学号 \"ann\" 在第 1 行也出现了"),
    ("ann\nAnn\n", "roster.txt",
     "roster.txt 第 2 行：学号 \"Ann\" 在第 1 行以 \"ann\" 的形式也出现了（Windows 和 macOS 不区分大小写"),
    ("ann\na/b\n", "roster.txt", "roster.txt 第 2 行：学号 \"a/b\" 含有 / 或 \\，会变成路径而不是文件夹名"),
    ("keys\n", "roster.txt", "学号 \"keys\" 是存放答案的文件夹的名称（keys/）；请换一种写法，例如 keys-1"),
    ("# nobody\n\n", "roster.txt", "roster.txt：没有学号（每一行都是空行或 # 注释）"),
    ("name,email\nAnn,a@x.edu\n", "class.csv", "class.csv 第 1 行：表头里没有 id 列；现有的列是 \"name\", \"email\""),
    ("id,name,id\n1,Ann,1\n", "class.csv", "class.csv 第 1 行：表头有 2 个 id 列（第 1, 3 个单元格）；只保留一个"),
    ("name,id\nAnn\n", "class.csv", "class.csv 第 2 行没有学号：这一行有 1 个单元格，学号应在第 2 个"),
])
def test_roster_errors_in_chinese(attntrace, tmp_path, text, name, words):
    result = attntrace("assign", roster(tmp_path, text, name), "-o", tmp_path / "class", "--seed", "1", "--lang", "zh")
    assert result.code == 1 and result.out == ""
    assert result.err.startswith("attntrace: ") and words in result.err and result.err.count("\n") == 1
    assert not (tmp_path / "class").exists()


def test_a_class_folder_in_a_file_in_chinese(attntrace, tmp_path):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    out = tmp_path / "file" / "class"
    result = attntrace("assign", roster(tmp_path, "ann\n"), "-o", out, "--seed", "1", "--lang", "zh")
    assert result.code == 1
    assert result.err == f"attntrace: {tmp_path / 'file'}：是一个文件，无法在其中创建文件夹 {out}；请换一个文件夹\n"


def test_a_scale_given_in_chinese(attntrace):
    zh = printed(attntrace, SAMPLES / "causal.json", "--lang", "zh", "--scale-by", "2.5")
    assert "并把舍入后的值带入下一步；将得分除以 2.5。" in zh and "divide the scores" not in zh


def test_class_folder_errors_in_chinese(attntrace, tmp_path):
    (tmp_path / "empty").mkdir()
    result = attntrace("check", tmp_path / "empty", "--lang", "zh")
    assert result.code == 2 and "这个文件夹里没有答卷（.json、.md 或 .txt 文件）" in result.err
    both = attntrace("check", SAMPLES / "causal.json", SAMPLES / "two_heads.json", "--lang", "zh")
    assert both.code == 2 and "都是题目；请只给一个，或把每个 problem.json 放在它的答卷旁边" in both.err
