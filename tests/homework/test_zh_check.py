"""check in Chinese: the report, its diagnoses and notes, the class summary and sheet errors; JSON, the gradebook and
Gradescope files the same in both languages; Chinese worksheets and full-width input read in either language."""

import csv
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import hand
from tests.conftest import SAMPLES
from tests.homework.test_check import ONE, TWO, _class, _write
from tests.homework.test_filled import assert_carried, carried, edit_cells, parse, printed

WIDE = str.maketrans("0123456789.-", "０１２３４５６７８９．－")


def _check(attntrace, tmp_path, sheet, problem, *args):
    return attntrace("check", _write(tmp_path, "sheet.json", sheet), _write(tmp_path, "problem.json", problem), *args)


def test_a_right_sheet_in_chinese(attntrace, tmp_path):
    r = _check(attntrace, tmp_path, hand.sheet(ONE, 2), ONE, "--lang", "zh")
    assert r.code == 0, r.err
    assert "按 2 位小数批改，从所写数字的位数推断\n步骤 3  Q             正确\n" in r.out
    assert "步骤 4  缩放后的得分  正确\n" in r.out and r.out.endswith("成绩：7 / 7 · 通过\n")
    assert not re.search(r"right|step|score", r.out.split("\n", 1)[1])


def test_a_wrong_sheet_in_chinese_names_the_mistake_in_chinese(attntrace, tmp_path):
    r = _check(attntrace, tmp_path, hand.sheet(TWO, 2, mask="none"), TWO, "--lang", "zh")
    assert r.code == 1, r.err
    assert "步骤 4  头 1 · 缩放后的得分       错误：16 个已填写的单元格中有 6 个不对\n" in r.out
    assert "步骤 5  头 1 · 权重               连带错误：由你自己的缩放后的得分推出\n" in r.out
    assert "          头 1 · 缩放后的得分[birds → sing]：写的是 0.03，应为 已掩码（留空）\n" in r.out
    assert "诊断：漏了掩码：关注了掩码遮住的键（最先出现在头 1 · 缩放后的得分中）\n" in r.out
    assert "· 未通过\n" in r.out


def test_cells_are_named_in_words_in_chinese_and_by_their_keys_in_english_and_json(attntrace, tmp_path):
    sheet = hand.sheet(TWO, 2, mask="none")
    sheet["output"][0][0] += 1  # the final output off too: "output[...]" in English, 输出[...] in Chinese
    zh, en = (_check(attntrace, tmp_path, sheet, TWO, "--lang", lang).out for lang in ("zh", "en"))
    assert "头 1 · 缩放后的得分[birds → sing]：" in zh and "scaled[" not in zh
    assert "head 1 · scaled[birds → sing]: 0.03 written" in en
    assert re.search(r"^ +输出\[[^],]+, 1\]：", zh, re.M) and not re.search(r"output\[", zh)
    assert re.search(r"^ +output\[[^],]+, 1\]: ", en, re.M)
    data = json.loads(_check(attntrace, tmp_path, sheet, TWO, "--format", "json", "--lang", "zh").out)
    names = [cell["name"] for item in data["items"] for cell in item["cells"]]
    assert "head 1 · scaled[birds → sing]" in names and any(name.startswith("output[") for name in names)


def test_json_and_gradescope_are_the_same_in_both_languages(attntrace, tmp_path):
    sheet = hand.sheet(TWO, 2, mask="none")
    outputs = {}
    for lang in ("en", "zh"):
        scope = tmp_path / f"{lang}.json"
        r = _check(attntrace, tmp_path, sheet, TWO, "--format", "json", "--gradescope", scope, "--lang", lang)
        assert r.code == 1, r.err
        outputs[lang] = (r.out, scope.read_text(encoding="utf-8"))
    assert outputs["en"] == outputs["zh"]
    report = json.loads(outputs["zh"][0])
    assert report["diagnosis"].startswith("the mask was left out") and report["mistakes"] == ["mask left out"]
    assert {item["verdict"] for item in report["items"]} == {"right", "wrong", "consequence"}


def test_the_class_summary_and_the_gradebook_in_chinese_and_json_the_same_in_both(attntrace, tmp_path):
    room = _class(tmp_path)
    (room / "dee.json").unlink()  # an unreadable sheet's error is for a person, in the language chosen
    books = {}
    for lang in ("en", "zh"):
        books[lang] = tmp_path / f"{lang}.csv"
        r = attntrace("check", room, "--gradebook", books[lang], "--lang", lang)
        assert r.code == 1, r.err
    assert "\n班级：批改了 3 份答卷；1 份通过\n平均成绩：" in r.out
    assert "\n3 份答卷中有 2 份：漏了掩码\n" in r.out and "\n  头 1 · 缩放后的得分       1 份正确、2 份错误\n" in r.out, r.out
    for lang in books:  # a BOM first, so that a spreadsheet reads it as UTF-8
        assert books[lang].read_bytes().startswith(b"\xef\xbb\xbf")
    rows = {lang: list(csv.reader(books[lang].open(encoding="utf-8-sig"))) for lang in books}
    assert rows["en"][0][:4] == ["sheet", "student", "score", "max_score"] and rows["en"][0][-1] == "diagnosis"
    assert rows["zh"][0][:4] == ["答卷", "学生", "成绩", "满分"] and rows["zh"][0][-1] == "诊断"
    assert "head 1 scaled" in rows["en"][0] and "头 1 · 缩放后的得分" in rows["zh"][0]
    assert [row[:4] for row in rows["en"][1:]] == [row[:4] for row in rows["zh"][1:]]  # sheets, students, scores
    verdicts = {lang: {cell for row in rows[lang][1:] for cell in row[4:-1]} for lang in rows}
    assert {"right", "wrong", "consequence"} <= verdicts["en"] and {"正确", "错误", "连带错误"} <= verdicts["zh"]
    assert not any(cell.isascii() and cell for cell in verdicts["zh"])
    diagnoses = {lang: [row[-1] for row in rows[lang][1:]] for lang in rows}
    assert "the mask was left out" in "".join(diagnoses["en"])
    assert any("漏了掩码" in d for d in diagnoses["zh"]) and not any("mask was left out" in d for d in diagnoses["zh"])
    reports = {lang: attntrace("check", room, "--format", "json", "--lang", lang).out for lang in books}
    assert reports["en"] == reports["zh"] and '"verdict": "consequence"' in reports["en"]


@pytest.mark.parametrize(("sheet", "words"), [
    ({"heads": [{"head": 3}]}, "答卷给出了头 3，但题目只有 2 个头"),
    ({"query": 0}, "query 必须是所回答输入的编号，从 1 开始；得到的是 0"),
    ({"heads": [{"head": 1, "q": [[1, 2], [3]]}]}, "第 2 行有 1 个值，而第 1 行有 2 个"),
    ({"outptu": 1}, '未知的字段“outptu”；你是不是想写“output”？'),
])
def test_sheet_errors_in_chinese(attntrace, tmp_path, sheet, words):
    r = _check(attntrace, tmp_path, sheet, TWO, "--lang", "zh")
    assert r.code == 2 and words in r.err and r.err.count("\n") == 1, r.err


def chinese(key_text: str, name: str = "李明") -> str:
    """a worksheet as `worksheet --lang zh` prints it: its heading, a 姓名： line, the instructions in Chinese, then the
    English sentence check reads, and the tables"""
    heading, rest = key_text.split("\n", 1)
    english = next(line for line in rest.splitlines() if line.startswith("Compute self-attention"))
    return rest.replace(english, "计算每个输入的自注意力。每个中间结果舍入到 2 位小数，并把舍入后的值带入下一步。\n\n"
                                 "（attntrace check 读取下面这一行和上面的 Name: 行，请保持原样。）\n" + english, 1).join(
        [heading.replace("· ANSWER KEY", "· 练习单") + f"\n\n姓名：{name}\n", ""])


@pytest.mark.parametrize("fmt", ["markdown", "plain"])
@pytest.mark.parametrize("check_lang", ["en", "zh"])
def test_a_chinese_worksheet_filled_with_the_key_passes_in_either_language(attntrace, tmp_path, fmt, check_lang):
    key = printed(attntrace, SAMPLES / "causal.json", fmt)
    path = tmp_path / f"sheet.{'md' if fmt == 'markdown' else 'txt'}"
    path.write_text(chinese(key), encoding="utf-8")
    r = attntrace("check", path, SAMPLES / "causal.json", "--format", "json", "--lang", check_lang)
    assert r.code == 0, r.err
    report = json.loads(r.out)
    assert report["passed"] and report["student"] == "李明" and report["notes"] == []


def fullwidth(text: str, fmt: str, draw) -> str:
    """each cell of the worksheet typed as a Chinese input method may: full-width digits, ． or 。 for the point, －"""
    def typed(title, label, cell):
        if not re.fullmatch(r"-?\d+\.\d+", cell):
            return cell
        wide = cell.translate(WIDE)
        return draw(st.sampled_from([cell, wide, wide.replace("．", "。"), cell.replace(".", "．")]))

    return edit_cells(text, fmt, typed)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), fmt=st.sampled_from(["markdown", "plain"]))
def test_full_width_cells_read_back_to_the_same_numbers(attntrace, data, fmt):
    path = SAMPLES / "causal.json"
    text = fullwidth(printed(attntrace, path, fmt), fmt, data.draw)
    sheet = parse(text, path)
    assert_carried(sheet, carried(path, 2))
    forms = [words for chars, words in (("０１２３４５６７８９", "full-width digits"), ("．", "． as a decimal point"))
             if any(c in text for c in chars)]
    assert sheet.notes == ((f"read as typed by a Chinese input method: {', '.join(forms)}",) if forms else ())


@pytest.mark.parametrize("separator", ["、", "，"])
def test_numbers_typed_with_a_chinese_comma_between_them_are_read_with_one_note(attntrace, tmp_path, separator):
    key = printed(attntrace, SAMPLES / "causal.json", "plain")
    lines = [line if not line.strip() or line.lstrip()[0].isdigit() or "·" in line or line.rstrip().endswith("]")
             else re.sub(r"(?<=\d)\s+(?=[-\d])", separator, line) for line in key.splitlines()]
    assert sum(separator in line for line in lines) > 10
    path = tmp_path / "sheet.txt"
    typed = [re.sub(r"\S+$", lambda m: m[0].translate(WIDE), line) if separator in line else line for line in lines]
    path.write_text("\n".join(typed) + "\n", encoding="utf-8")
    for lang in ("en", "zh"):
        r = attntrace("check", path, SAMPLES / "causal.json", "--lang", lang)
        assert r.code == 0, r.err
    described = {"、": "ideographic commas (、)", "，": "full-width commas (，)"}[separator]
    chinese = {"、": "顿号（、）", "，": "全角逗号（，）"}[separator]
    assert f"\n注：按中文输入法的输入读取：全角数字、全角小数点（．）、{chinese}\n" in r.out, r.out
    r = attntrace("check", path, SAMPLES / "causal.json", "--format", "json")
    assert json.loads(r.out)["notes"] == [f"read as typed by a Chinese input method: full-width digits, ． as a decimal "
                                          f"point, {described}"]


def test_an_unreadable_sheet_is_said_in_chinese_and_its_json_error_stays_english(attntrace, tmp_path):
    room = _class(tmp_path)  # dee.json cannot be read
    reports = {lang: attntrace("check", room, "--format", "json", "--lang", lang) for lang in ("en", "zh")}
    assert reports["en"].code == reports["zh"].code == 2
    assert reports["en"].out == reports["zh"].out  # data: the error in the JSON is the same in every language
    assert json.loads(reports["en"].out)["unreadable"][0]["error"].isascii()
    assert any("\u4e00" <= ch <= "\u9fff" for ch in reports["zh"].err)  # the line on stderr is for a person
    book = tmp_path / "book.csv"
    attntrace("check", room, "--gradebook", book, "--lang", "zh")
    assert "无法读取：" in book.read_text(encoding="utf-8-sig")
