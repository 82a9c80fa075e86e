"""A worksheet's heading, name line and instructions read back whatever language it was printed in and check runs in:
by the catalogue's own sentences, wrapped anywhere, with its tables' titles mapped across languages."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attntrace import language
from attntrace.core.engine import trace
from attntrace.files.problemfile import load as load_problem
from attntrace.homework import filled, instructions, layout, worksheet
from attntrace.homework.sheet import SheetError
from attntrace.language import speaking
from attntrace.views import walkthrough as steps
from attntrace.views.page import Block
from tests.conftest import SAMPLES
from tests.homework.test_filled import assert_carried, carried


def told(text: str) -> list[instructions.Told]:
    flat, _starts = instructions.flattened(text.splitlines())
    return instructions.read_instructions(flat)


@settings(max_examples=60, deadline=None)
@given(sample=st.sampled_from(["causal.json", "two_heads.json", "worked_example.json"]),
       precision=st.integers(0, 12), query=st.sampled_from([None, 1, 2, 3]),
       scale=st.sampled_from([None, True, False, 2.5, 0.125, 3.0]), printed_in=st.sampled_from(["en", "zh"]),
       reading_in=st.sampled_from(["en", "zh"]), markdown=st.booleans(), data=st.data())
def test_instructions_read_back_in_either_language_however_wrapped(sample, precision, query, scale, printed_in,
                                                                    reading_in, markdown, data):
    problem = load_problem(str(SAMPLES / sample))
    if scale is not None:
        problem = replace(problem, scale=scale)
    t = trace(problem, query=query, carry_rounding=precision)
    with speaking(printed_in):
        text = worksheet.intro(t, precision, False, markdown, "李 明")
    top, said = text.rstrip("\n").rsplit("\n\n", 1)  # the heading and name line; the instructions
    breaks = data.draw(st.lists(st.integers(1, len(said) - 1), max_size=8))
    for at in sorted(set(breaks), reverse=True):  # wrapped at a space or beside a Chinese character, never in a word
        if not (said[at - 1] + said[at]).isascii() or " " in said[at - 1:at + 1]:
            said = said[:at] + "\n  " + said[at:]
    lines = f"{top}\n\n{said}\n".splitlines()
    with speaking(reading_in):
        found = told("\n".join(lines))
        assert [(found.language, found.query, found.precision) for found in found] == [(printed_in, query, precision)]
        instructions.same_instructions(t, precision, found[0], "sheet.md")  # the same scale, mask and heads: no error
        assert instructions.student(top.splitlines()) == "李 明"
        assert instructions.heading(lines[0])


@pytest.mark.parametrize("line", ["姓名：李明", "姓名:李明", "**姓名：** 李明", "Name: 李明", "name :李明", "姓名 ： 李明"])
def test_a_name_line_in_either_language_is_read(line):
    for lang in ("en", "zh"):
        with speaking(lang):
            assert instructions.student([line]) == "李明"


@pytest.mark.parametrize("check_lang, words", [
    ("zh", "练习单写的是“将得分除以 2”，但用来批改的题目写的是“将得分除以 sqrt(d_k)”"),
    ("en", 'the worksheet says "将得分除以 2" but the problem it is checked against says "将得分除以 sqrt(d_k)"'),
])
def test_a_chinese_worksheet_of_another_scale_is_refused_quoting_its_own_words(attntrace, tmp_path, check_lang, words):
    sheet = tmp_path / "sheet.md"
    out = attntrace("worksheet", SAMPLES / "causal.json", "--scale-by", "2", "--lang", "zh", "-o", sheet)
    assert out.code == 0, out.err
    result = attntrace("check", sheet, SAMPLES / "causal.json", "--lang", check_lang)
    assert result.code == 2 and words in result.err and result.err.count("\n") == 1, result.err


def test_a_chinese_worksheet_of_another_mask_or_heads_is_refused(attntrace, tmp_path):
    sheet = tmp_path / "sheet.txt"
    out = attntrace("worksheet", SAMPLES / "causal.json", "--format", "plain", "--lang", "zh", "-o", sheet)
    assert out.code == 0, out.err
    result = attntrace("check", sheet, SAMPLES / "scaled.json", "--lang", "zh")
    assert result.code == 2 and "练习单写的是“掩码：causal（输入 i 只关注键 1 到 i）。”，但用来批改的题目没有这一项" in result.err
    sheet.write_text(attntrace("worksheet", SAMPLES / "scaled.json", "--lang", "zh").out, encoding="utf-8")
    two = attntrace("check", sheet, SAMPLES / "two_heads.json", "--lang", "zh")
    assert two.code == 2 and "练习单没有写头，但用来批改的题目写的是“头：2 个" in two.err, two.err


def test_a_chinese_worksheet_with_its_instructions_gone_is_refused_in_chinese(attntrace, tmp_path):
    sheet = tmp_path / "sheet.md"
    key = attntrace("worksheet", SAMPLES / "causal.json", "--key", "--lang", "zh").out
    sheet.write_text(key.replace("为每个输入计算自注意力。", ""), encoding="utf-8")
    result = attntrace("check", sheet, SAMPLES / "causal.json", "--lang", "zh")
    assert result.code == 2 and "这看起来不像 attntrace 练习单（没有“为每个输入计算自注意力……四舍五入到 N 位小数”这一段）" \
        in result.err


@pytest.fixture
def chinese_titles(monkeypatch):
    """worksheet_steps with its tables titled otherwise in Chinese, as a translation of the titles would have them"""
    original = steps.worksheet_steps

    def titled(t):
        out = original(t)
        if language.current() != "zh":
            return out
        return [replace(step, items=tuple(replace(item, title=f"表 {item.title}") if isinstance(item, Block) else item
                                          for item in step.items)) for step in out]

    monkeypatch.setattr(steps, "worksheet_steps", titled)
    for module in (filled, layout, worksheet):
        monkeypatch.setattr(module, "worksheet_steps", titled)


@pytest.mark.parametrize("fmt", ["markdown", "plain"])
@pytest.mark.parametrize("printed_in, reading_in", [("zh", "en"), ("en", "zh"), ("zh", "zh")])
def test_tables_titled_in_another_language_are_found_by_their_titles(chinese_titles, fmt, printed_in, reading_in):
    path = SAMPLES / "two_heads.json"
    t = carried(path, 2, query=2)
    with speaking(printed_in):
        text = worksheet.render(t, 2, True, fmt)
    assert ("表 " in text) == (printed_in == "zh")
    with speaking(reading_in):
        sheet = filled.parse(text, "sheet.md", load_problem(str(path)))
    assert sheet.notes == () and sheet.query == 2
    assert_carried(sheet, t)


def test_the_earlier_chinese_form_keeps_being_read_when_its_english_sentence_is_all_there_is(attntrace, tmp_path):
    """an earlier worksheet whose Chinese paragraph a teacher deleted: the English sentence alone is enough"""
    text = (SAMPLES.parent / "tests" / "fixtures" / "worksheets" / "causal_zh_filled_before.md").read_text(encoding="utf-8")
    paragraphs = text.split("\n\n")
    sheet = tmp_path / "sheet.md"
    sheet.write_text("\n\n".join(paragraphs[:2] + paragraphs[3:]), encoding="utf-8")
    result = attntrace("check", sheet, SAMPLES / "causal.json", "--format", "json", "--lang", "zh")
    assert result.code == 0 and json.loads(result.out)["student"] == "李明", result.err


def test_a_worksheet_heading_is_known_in_either_language():
    for lang in ("en", "zh"):
        with speaking(lang):
            assert all(instructions.heading(line) for line in ("# 练习单：x", "练习单: x", "Worksheet: x", "## Worksheet:x"))
            assert not any(instructions.heading(line) for line in ("练习", "# Work sheet", "{", "Name: x"))
    with pytest.raises(SheetError, match="does not look like an attntrace worksheet"):
        filled.parse("# 练习单：x\n\n姓名：李明\n", "x.md", load_problem(str(SAMPLES / "causal.json")))
