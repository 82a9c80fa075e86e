"""Reading and checking problems in Chinese: the errors of bad problem files, the notes, validate and schema."""

import json

import numpy as np
import pytest

from attntrace import language
from attntrace.core.problem import Problem
from attntrace.errors import AttntraceError, OutOfRange
from attntrace.words import counted, plural
from tests.conftest import SAMPLES


def _error(r) -> str:
    """the one error line of a failed run"""
    assert r.code == 1 and r.out == "", (r.code, r.out)
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.err, r.err
    return lines[0]


def test_a_missing_file_is_said_in_chinese(attntrace, tmp_path):
    missing = tmp_path / "none.json"
    assert _error(attntrace("run", "--lang", "zh", missing)) == f"attntrace: {missing}：没有这个文件或文件夹"
    assert _error(attntrace("run", missing)) == f"attntrace: {missing}: no such file or directory"


@pytest.mark.parametrize("text, said", [
    ('{"x": [[1, 2],]}', " 第 1 行第 14 列的 JSON 无效：“]”前有逗号，而 JSON 不允许末尾逗号，请删除它"),
    ('{"x": [[1, 2]], // note\n}', " 第 1 行第 17 列的 JSON 无效：这是注释，而 JSON 不允许注释，请删除它"),
    ('{"x": [[True]]}', " 第 1 行第 9 列的 JSON 无效：True 是 Python 的写法；JSON 写作 true"),
    ('{"x": [[1]], "x": [[2]]}', ': 字段 "x" 出现了两次；请只保留一个'),
])
def test_bad_json_is_said_in_chinese(attntrace, tmp_path, text, said):
    f = tmp_path / "p.json"
    f.write_text(text, encoding="utf-8")
    assert _error(attntrace("run", "--lang", "zh", f)) == f"attntrace: {f}{said}"


def test_a_bad_csv_cell_is_named_in_chinese(attntrace, tmp_path):
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "x.csv").write_text("1,2\n3,abc\n", encoding="utf-8")
    line = _error(attntrace("run", "--lang", "zh", folder))
    assert line == f'attntrace: {folder / "x.csv"} 第 2 行第 2 列：应为数字，实为 "abc"；请在这里写一个数字'
    (folder / "x.csv").write_text("1,2\n3\n", encoding="utf-8")
    line = _error(attntrace("run", "--lang", "zh", folder))
    assert line == f'attntrace: {folder / "x.csv"} 第 2 行：x 有 1 个值，而第一行有 2 个'


def test_a_shape_mismatch_counts_in_chinese(attntrace, tmp_path):
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"x": [[1, 0], [0, 1]], "w_q": [[1], [0], [2]]}), encoding="utf-8")
    line = _error(attntrace("run", "--lang", "zh", f))
    assert line == f"attntrace: {f}: w_q 有 3 行，但 x 有 2 列（Q = X · W_Q 要求两者相等）"
    english = _error(attntrace("run", f))
    assert english == f"attntrace: {f}: w_q has 3 rows but x has 2 columns (Q = X · W_Q needs them equal)"


@pytest.mark.parametrize("data, said", [
    ({"x": [[1, 0], [0, "NaN"]]}, "x 第 2 行第 2 列是 NaN；每个值都必须是有限数"),
    ({"x": [[1, 0]], "b_q": [1, "Infinity"]}, "b_q 第 2 个值是 Infinity；每个值都必须是有限数"),
])
def test_a_value_that_is_not_finite_is_named_in_chinese(attntrace, tmp_path, data, said):
    f = tmp_path / "p.json"
    f.write_text(json.dumps(data).replace('"NaN"', "NaN").replace('"Infinity"', "Infinity"), encoding="utf-8")
    assert _error(attntrace("run", "--lang", "zh", f)) == f"attntrace: {f}: {said}"


def test_padding_of_the_wrong_length_counts_keys_in_chinese(attntrace, tmp_path):
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"x": [[1, 0], [0, 1]], "padding": [True]}), encoding="utf-8")
    assert _error(attntrace("run", "--lang", "zh", f)) == f"attntrace: {f}: padding 有 1 个值，但键有 2 个"
    assert _error(attntrace("run", f)) == f"attntrace: {f}: padding has 1 value but there are 2 keys"


def test_csv_notes_say_the_separator_and_the_full_width_characters_in_chinese(attntrace, tmp_path):
    x = tmp_path / "x.csv"
    x.write_text("１;０\n－２;３．５\n", encoding="utf-8")
    r = attntrace("run", "--lang", "zh", "--x", x, "--format", "json")
    assert r.code == 0, r.err
    assert f"注：已识别 {x} 中的全角数字、全角负号（－）和全角小数点（．）\n" in r.err
    assert f"注：{x} 中的数值按分号（;）分隔读取\n" in r.err
    english = attntrace("run", "--x", x, "--format", "json")
    assert english.out == r.out  # the data is the same in both languages
    assert f"note: {x}: read full-width digits, － as a minus sign and ． as a decimal point\n" in english.err
    assert f"note: {x}: values read as separated by semicolons (;)\n" in english.err


def test_a_csv_header_is_noted_in_chinese(attntrace, tmp_path):
    x = tmp_path / "x.csv"
    x.write_text("a,b\n1,0\n0,1\n", encoding="utf-8")
    r = attntrace("validate", "--lang", "zh", "--x", x)
    assert r.code == 0 and f"注：{x} 的第 1 行（a, b）被读作表头\n" in r.err


def test_validate_names_the_built_in_example_in_chinese(attntrace, tmp_path):
    w = tmp_path / "wq.csv"
    w.write_text("1,0,1\n1,0,0\n0,0,1\n0,1,1\n", encoding="utf-8")
    r = attntrace("validate", "--lang", "zh", "--w-q", w)
    assert r.code == 0 and r.out.startswith(f"内置示例（带 --w-q {w}）")
    assert "注：没有给出 FILE，x, w_k, w_v 和设置（scale false）取自内置示例" in r.err
    bad = tmp_path / "bad.json"
    bad.write_text('{"x": [[1, 2]], "heads": 0}', encoding="utf-8")
    assert _error(attntrace("validate", "--lang", "zh", bad)) == f"attntrace: {bad}: heads = 0 必须是不小于 1 的整数"


def test_an_unknown_key_is_said_in_chinese(attntrace, tmp_path):
    f = tmp_path / "p.json"
    f.write_text('{"x": [[1]], "w_qq": [[1]]}', encoding="utf-8")
    assert _error(attntrace("validate", "--lang", "zh", f)) == f'attntrace: {f}: 未知的字段 "w_qq"；你是指“w_q”吗？'


def test_the_schema_describes_in_chinese_with_the_same_keys(attntrace):
    zh, en = attntrace("schema", "--lang", "zh"), attntrace("schema")
    assert zh.code == en.code == 0
    chinese, english = json.loads(zh.out), json.loads(en.out)
    assert chinese["properties"]["x"]["description"] == "输入 X，n x d_model，每个输入一行"
    assert english["properties"]["x"]["description"] == "the inputs X, n x d_model, one row per input"

    def without_descriptions(value):
        if isinstance(value, dict):
            return {k: without_descriptions(v) for k, v in value.items() if k != "description"}
        return [without_descriptions(v) for v in value] if isinstance(value, list) else value

    assert without_descriptions(chinese) == without_descriptions(english)


def test_json_output_is_the_same_in_both_languages(attntrace):
    sample = SAMPLES / "two_heads.json"
    zh, en = attntrace("run", "--lang", "zh", sample, "--format", "json"), attntrace("run", sample, "--format", "json")
    assert zh.code == en.code == 0 and zh.out == en.out


def test_counts_are_said_in_chinese_without_a_plural():
    language.use("zh")
    try:
        assert [counted(n, "row") for n in (1, 3, 1234)] == ["1 行", "3 行", "1,234 行"]
        assert counted(2, "value") == "2 个值" and counted(1, "key/value block") == "1 个键/值块"
        assert counted(2, "gizmo") == "2 gizmos"  # a noun the catalogue does not count stays English
        assert plural(2, "cell") == "2 cells"  # for what a machine reads, in any language
    finally:
        language.use("en")
    assert [counted(n, "row") for n in (1, 3, 1234)] == ["1 row", "3 rows", "1,234 rows"]


def test_out_of_range_is_said_in_chinese_and_keeps_its_name_for_the_command_line():
    language.use("zh")
    try:
        e = OutOfRange("query", 5, 3, "this problem has inputs")
        assert str(e) == "查询 5 超出范围；本题目的输入为 1 到 3"
        assert e.name == "query" and e.as_option("--input") == "--input 5 超出范围；本题目的输入为 1 到 3"
    finally:
        language.use("en")


def test_an_overflow_names_its_step_in_chinese():
    from attntrace.core.engine import trace

    language.use("zh")
    try:
        with pytest.raises(AttntraceError) as e:
            trace(Problem(x=np.array([[1e200, 1e200]]), w_q=np.array([[1e200], [1e200]]),
                          w_k=np.array([[1.0], [1.0]]), w_v=np.array([[1.0], [1.0]])))
        assert str(e.value) == "步骤 3：q[x1, 1] = x1 · W_Q[:, 1] 超出了 float64 的范围（≈ 2e400），请把输入或 W_Q 缩小"
    finally:
        language.use("en")


def test_an_experiment_finds_in_chinese(attntrace):
    r = attntrace("experiment", "--lang", "zh", "permute")
    assert r.code == 0, r.err
    assert "顺序：x3, x2, x1\n" in r.out and "相等：单靠自注意力是置换等变的；它需要位置编码才能知道词序" in r.out


def test_new_notes_in_chinese_and_writes_the_same_problem(attntrace):
    zh, en = attntrace("new", "--lang", "zh", "--seed", "1"), attntrace("new", "--seed", "1")
    assert zh.code == en.code == 0
    zh_problem, en_problem = json.loads(zh.out), json.loads(en.out)
    assert {**zh_problem, "name": None} == {**en_problem, "name": None}  # the same problem; only its title is Chinese
    assert zh_problem["name"] == "3 个输入，d_model = 4，d_k = 3，d_v = 3，1 个头（整数）"
    assert '注："scale" 为 false：整数练习和示例一样，不把得分除以 sqrt(d_k)' in zh.err
