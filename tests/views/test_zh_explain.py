"""explain and step --explain in Chinese: the words around the arithmetic are translated, the arithmetic and every
number are those of the English, and every line fits in 80 columns as a terminal shows Chinese."""

from __future__ import annotations

import os
import re

import pytest
from rich.cells import cell_len

from tests.conftest import ROOT, SAMPLES
from tests.render.test_golden import _golden

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
BRACKET = re.compile(r" \((unrounded: \S+|masked)\)$")  # words after a line's maths
CASES = {
    "example": ["--input", "1"],
    "scaled_carried": [SAMPLES / "scaled.json", "--input", "2", "--carry-rounding", "--precision", "2"],
    "causal": [SAMPLES / "causal.json", "--input", "2"],
    "two_heads": [SAMPLES / "two_heads.json", "--input", "2", "--precision", "2", "--carry-rounding"],
    "cross": [SAMPLES / "cross.json", "--input", "1"],
}


def both(attntrace, *args) -> tuple[str, str]:
    """explain's output in English and in Chinese"""
    en, zh = attntrace("explain", *args), attntrace("explain", "--lang", "zh", *args)
    assert en.code == zh.code == 0, en.err + zh.err
    return en.out, zh.out


@pytest.mark.parametrize("case", CASES)
def test_chinese_words_the_same_numbers_and_no_line_past_80_columns(attntrace, case):
    en, zh = both(attntrace, *CASES[case])
    assert "步骤 4 · 计算输入" in zh and "的注意力得分" in zh and "Step" not in zh and "decimal" not in zh
    assert "每行用表中显示的数计算，结果四舍五入到" in zh
    assert NUMBER.findall(zh) == NUMBER.findall(en)
    arithmetic = [BRACKET.sub("", line) for line in en.splitlines()[2:] if " = " in line and not line.startswith(" ")]
    assert arithmetic
    for line in arithmetic:  # the maths as it is in English, a head's name and an output's aside
        assert line.replace("head ", "头 ").replace("output", "输出") in zh
    assert not re.search(r"output\d", zh)  # an output's cell is named in Chinese: 输出1[2]
    assert all(cell_len(line) <= 80 for line in zh.splitlines()), max(zh.splitlines(), key=cell_len)


def test_the_brackets_masks_and_heads_are_said_in_chinese(attntrace):
    _, causal = both(attntrace, SAMPLES / "causal.json", "--input", "2")
    assert "score(2,3) 被掩码：它变为 -inf，所以权重为 0" in causal and "w(2,3) = 0（被掩码）" in causal
    _, heads = both(attntrace, SAMPLES / "two_heads.json", "--input", "2", "--precision", "2", "--carry-rounding")
    assert "\n头 1 · score(2,1) = q2 · k1 = " in heads and "\n头 2 · w(2,1) = " in heads
    _, example = both(attntrace, "--input", "1")
    assert "\n表格中的值若与此不同，会在括号里注明，如（未舍入：0.1901），因为表格是用未舍入的\n  数计算的。\n" in example
    assert "\nw(1,1) · v1[3] = 0.0634×3 = 0.1902 （未舍入：0.1901）\n" in example


def test_carried_rounding_is_said_in_chinese(attntrace, tmp_path):
    path = tmp_path / "fractions.json"
    path.write_text('{"x": [[0.26, 1.34], [1.15, 0.45]], "w_q": [[1, 0], [0, 1]], "w_k": [[1, 0], [0, 1]], '
                    '"w_v": [[1, 0], [0, 1]]}', encoding="utf-8")
    en, zh = both(attntrace, path, "--input", "1", "--carry-rounding", "--precision", "1")
    assert "\n每行用表中显示的数计算，结果四舍五入到 1 位小数，并像手算一样继续用舍入后的数。\n" in zh
    assert "会在括号里注明，如（未舍入：1.2），因为表格从未舍入的输入算起。" in zh.replace("\n  ", "")
    assert "\nk2[1] = x2 · W_K[:,1] = 1.1×1 + 0.5×0 = 1.1 （未舍入：1.2）\n" in zh
    assert NUMBER.findall(zh) == NUMBER.findall(en)


def test_a_long_sum_counts_its_hidden_terms_in_chinese(attntrace, tmp_path):
    import json

    width = 12
    problem = {"x": [[1] * width], "w_q": [[1]] * width, "w_k": [[1]] * width, "w_v": [[1]] * width}
    path = tmp_path / "long.json"
    path.write_text(json.dumps(problem), encoding="utf-8")
    en, zh = both(attntrace, path, "--input", "1")
    assert "1×1 + 1×1 + 1×1 + … (8 more terms) + 1×1 = 12" in en
    assert "1×1 + 1×1 + 1×1 + … （另 8 项） + 1×1 = 12" in zh


def test_step_explain_is_explain(attntrace):
    explain = attntrace("explain", "--lang", "zh", SAMPLES / "causal.json", "--input", "3")
    step = attntrace("step", "--explain", "--lang", "zh", SAMPLES / "causal.json", "--input", "3")
    assert step.code == explain.code == 0 and step.out == explain.out and "步骤 5 · 计算输入 3 的 softmax" in step.out


def test_explain_in_chinese_matches_the_golden_file(attntrace):
    os.chdir(ROOT)
    r = attntrace("explain", "--input", "1", "--lang", "zh")
    assert r.code == 0, r.err
    _golden("explain_1_zh", r.out)
