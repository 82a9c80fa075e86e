"""Traditional Chinese (zh-TW): chosen by --lang or the locale, written from its own catalogue, Chinese wherever the
Simplified interface is (ASCII lines, worksheets read back), and its plain output pinned; regenerate the golden files
with ATTNTRACE_REGEN_GOLDEN=1 after a deliberate change."""

import gettext
import json
import os
import re

import pytest

from attntrace import choosing, language
from tests.conftest import ROOT, SAMPLES

GOLDEN = ROOT / "tests" / "golden"


@pytest.mark.parametrize("value, expected", [
    ("zh-TW", "zh-TW"), ("zh_TW", "zh-TW"), ("zh-tw", "zh-TW"), ("zh-Hant", "zh-TW"), ("zh_HK", "zh-TW"),
    ("zh_MO", "zh-TW"), ("zh_Hant_TW", "zh-TW"), ("zh_TW.UTF-8", "zh-TW"), ("zh_HK.Big5HKSCS", "zh-TW"),
    ("zh", "zh"), ("zh-CN", "zh"), ("zh_CN", "zh"), ("zh_SG", "zh"), ("zh-Hans", "zh"), ("zh_Hans_HK", "zh"),
    ("zh_CN.UTF-8", "zh"), ("en", "en"), ("en_US.UTF-8", "en"), ("EN", "en"),
    ("fr", None), ("zhx", None), ("", None), ("traditional", None),
])
def test_a_language_is_known_by_any_of_its_names(value, expected):
    assert choosing.known(value) == expected


@pytest.mark.parametrize("environ, expected", [
    ({"LANG": "zh_TW.UTF-8"}, "zh-TW"), ({"LANG": "zh_HK.UTF-8"}, "zh-TW"), ({"LC_ALL": "zh_Hant_TW"}, "zh-TW"),
    ({"LC_MESSAGES": "zh_TW", "LANG": "en_US"}, "zh-TW"), ({"LANG": "zh_SG.UTF-8"}, "zh"), ({"LANG": "zh_CN"}, "zh"),
    ({"ATTNTRACE_LANG": "zh-TW", "LANG": "zh_CN.UTF-8"}, "zh-TW"), ({"ATTNTRACE_LANG": "zh_Hant"}, "zh-TW"),
    ({"ATTNTRACE_LANG": "zh-CN", "LANG": "zh_TW.UTF-8"}, "zh"),
])
def test_the_locale_chooses_traditional_chinese(environ, expected):
    assert choosing.from_locale(environ) == expected


@pytest.mark.parametrize("value", ["zh-TW", "zh_TW", "zh-tw", "zh-Hant", "zh_HK"])
def test_lang_chooses_traditional_chinese_by_any_of_its_names(attntrace, value):
    r = attntrace("run", "--lang", value)
    assert r.code == 0 and r.out.startswith("教學範例\n"), r.err
    assert attntrace("run", f"--lang={value}").out == r.out


@pytest.mark.parametrize("value", ["zh", "zh-CN", "zh_CN", "zh_SG", "zh-Hans"])
def test_lang_chooses_simplified_chinese_by_any_of_its_names(attntrace, value):
    r = attntrace("run", "--lang", value)
    assert r.code == 0 and r.out.startswith("教程示例\n"), r.err


def test_the_locale_alone_gives_traditional_chinese(attntrace):
    r = attntrace("run", "-h", env={"ATTNTRACE_LANG": "", "LANG": "zh_TW.UTF-8"})
    assert r.out.startswith("用法：") and "選項" in r.out and "选项" not in r.out
    assert attntrace("run", env={"ATTNTRACE_LANG": "zh_HK"}).out.startswith("教學範例\n")


def test_click_speaks_traditional_chinese_too(attntrace):
    r = attntrace("run", "--precision", "x2", "--lang", "zh-TW")
    assert r.code == 2 and r.out == "" and "有效" in r.err and "无效" not in r.err, r.err


def test_lang_lists_the_three_languages_in_its_help_and_its_refusal(attntrace):
    assert "--lang [en|zh|zh-TW]" in attntrace("run", "--help").out
    assert "zh-TW（繁體中文）" in attntrace("run", "--help", "--lang", "zh-TW").out
    r = attntrace("run", "--lang", "fr")
    assert r.code == 2 and "'en', 'zh' or 'zh-TW'" in r.err, r.err


def test_english_is_given_back_after_traditional_chinese(attntrace):
    assert attntrace("run", "--lang", "zh-TW").out.startswith("教學範例")
    assert attntrace("run").out.startswith("worked example\n")
    assert attntrace("run", "--lang", "zh").out.startswith("教程示例\n")


@pytest.mark.parametrize("args", [["run", "--format", "json"], ["run", "--format", "csv"],
                                  ["worksheet", "--format", "json", "--key"]])
def test_data_is_the_same_in_traditional_chinese(attntrace, args):
    def data(text):
        return [line for line in text.splitlines() if not line.startswith(("#", '"#'))]

    assert data(attntrace(*args, "--lang", "zh-TW").out) == data(attntrace(*args).out)


def test_ascii_is_the_default_in_traditional_chinese_too(attntrace, terminal):
    terminal(width=80)
    box = set("─│┌┐└┘├┤┬┴┼━┃█▏▎▍▌▋▊▉")
    assert box & set(attntrace("run", "--color", "never").out)
    assert not box & set(attntrace("run", "--lang", "zh-TW", "--color", "never").out)


def test_the_catalogue_module_says_what_the_mo_says():
    from attntrace.locale.zh_TW import messages

    with open(os.path.join(language.FOLDER, "zh_TW", "LC_MESSAGES", "attntrace.mo"), "rb") as f:
        mo = gettext.GNUTranslations(f)
    assert len(messages.MESSAGES) > 1000
    for message, translated in messages.MESSAGES.items():
        assert mo.gettext(message) == translated


def test_rows_are_lie_and_columns_lan_in_taiwan_usage():
    """a table's row is 列 and its column 欄; a file's line stays 行"""
    from attntrace.locale.zh_TW import messages

    said = messages.MESSAGES
    assert said["{key} row {row}, column {column}"] == "{key} 第 {row} 列第 {column} 欄"
    assert said["{name} line {number}, column {column}: expected a number, got {cell}; write a number there"].startswith(
        "{name} 第 {number} 行第 {column} 欄")
    assert "每行一個" in said["Student ids: one a line, or a CSV with an id column."]
    assert "指令列" in said['mask "padding" needs padding: [true/false per key] (from the command line: --padding '
                            'and the keys that are padding, such as 3,4)']


@pytest.mark.parametrize("fmt", ["markdown", "plain"])
@pytest.mark.parametrize("reading_in", ["en", "zh", "zh-TW"])
def test_a_worksheet_printed_in_traditional_chinese_is_checked_in_any_language(attntrace, tmp_path, fmt, reading_in):
    sheet = tmp_path / "sheet.md"
    printed = attntrace("worksheet", SAMPLES / "causal.json", "--key", "--format", fmt, "--lang", "zh-TW")
    assert "練習單" in printed.out
    heading, rest = printed.out.split("\n", 1)
    sheet.write_text(f"{heading}\n\n姓名：陳 美玲\n{rest}", encoding="utf-8")
    right = attntrace("check", sheet, SAMPLES / "causal.json", "--format", "json", "--lang", reading_in)
    assert right.code == 0, right.err
    report = json.loads(right.out)
    assert report["student"] == "陳 美玲" and report["precision"] == 2
    cell = re.compile(r"-?\d+\.\d\d").search(printed.out, printed.out.index("步驟 3 · Q"))
    assert cell is not None
    wrong = printed.out[:cell.start()] + "9.99" + printed.out[cell.end():]
    sheet.write_text(wrong, encoding="utf-8")
    marked = attntrace("check", sheet, SAMPLES / "causal.json", "--format", "json", "--lang", reading_in)
    assert marked.code == 1, marked.err


@pytest.mark.parametrize("printed_in", ["en", "zh"])
def test_a_worksheet_printed_in_another_language_is_checked_in_traditional_chinese(attntrace, tmp_path, printed_in):
    sheet = tmp_path / "sheet.txt"
    sheet.write_text(attntrace("worksheet", SAMPLES / "two_heads.json", "--key", "--format", "plain", "--lang",
                               printed_in).out, encoding="utf-8")
    r = attntrace("check", sheet, SAMPLES / "two_heads.json", "--lang", "zh-TW")
    assert r.code == 0, r.err


CASES = {
    "zh_tw_run_worked_example": ["run"],
    "zh_tw_step_input_2_xihuan": ["step", SAMPLES / "homework" / "problem.json", "--input", "2"],
    "zh_tw_explain_1": ["explain", "--input", "1"],
    "zh_tw_worksheet_xihuan": ["worksheet", SAMPLES / "homework" / "problem.json"],
    "zh_tw_check_ana": ["check", SAMPLES / "homework" / "ana.json"],
    "zh_tw_check_ben": ["check", SAMPLES / "homework" / "ben.json"],
    "zh_tw_check_class": ["check", SAMPLES / "homework"],
}
EXIT = {"zh_tw_check_ben": 1, "zh_tw_check_class": 1}  # a sheet with a mistake


@pytest.mark.parametrize("name", CASES)
def test_plain_output_in_traditional_chinese_matches_the_golden_file(name, attntrace):
    args = [str(a.relative_to(ROOT)) if hasattr(a, "relative_to") else a for a in CASES[name]]
    os.chdir(ROOT)
    r = attntrace(*args, "--lang", "zh-TW")
    assert r.code == EXIT.get(name, 0), r.err
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("ATTNTRACE_REGEN_GOLDEN"):
        path.write_text(r.out, encoding="utf-8")
    assert r.out == path.read_text(encoding="utf-8")
