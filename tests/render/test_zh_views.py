"""The steps, tables and notes of run, step and validate in Chinese: headings as the tutorial words them, 80 display
columns, the worked example's note, and data (JSON, CSV cells) the same in every language."""

import io
import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from attntrace import language
from tests.conftest import ROOT, SAMPLES
from tests.render.test_golden import _golden

PROBLEMS = {"worked_example": None, "xihuan": SAMPLES / "homework" / "problem.json"}  # the built-in example, and
# a problem of Chinese tokens
EVERY_SAMPLE = [None, *sorted(SAMPLES.glob("*.json")), SAMPLES / "homework" / "problem.json", SAMPLES / "worked_example_csv"]
HEADINGS = ["步骤 1：准备输入", "步骤 2：初始化权重", "步骤 3：推导键、查询和值", "步骤 4：计算输入 1 的注意力得分（x1）",
            "步骤 5：计算 softmax（输入 1）", "步骤 6：将得分和值相乘（输入 1）", "步骤 7：将加权值相加得到输出 1",
            "步骤 8：对每个输入重复步骤 4–7，即 softmax(Q K^T) V"]
NOTE_EN = 'the article "8 steps to self-attention" gets [2.0, 7.0, 1.5] here'
NOTE_ZH = "原文《一文读懂自注意力机制》在这里得到 [2.0, 7.0, 1.5]"


def _args(problem, *more):
    return ([] if problem is None else [str(problem.relative_to(ROOT))]) + list(more)


@pytest.mark.parametrize("command", [["run"], ["step", "--input", "2"]])
@pytest.mark.parametrize("case", PROBLEMS)
def test_chinese_plain_output_matches_the_golden_file(attntrace, case, command):
    os.chdir(ROOT)
    r = attntrace(command[0], *_args(PROBLEMS[case], *command[1:]), "--lang", "zh")
    assert r.code == 0, r.err
    _golden(f"zh_{'_'.join(c.lstrip('-') for c in command)}_{case}", r.out)


@pytest.mark.parametrize("case", PROBLEMS)
def test_chinese_tables_for_an_80_column_terminal_in_ascii_match_the_golden_file(case):
    """run --format table as an 80-column terminal shows it, with ASCII lines and bars"""
    from attntrace.core.engine import trace
    from attntrace.files.problemfile import load
    from attntrace.render.document import Style, render, trace_document

    language.use("zh")
    path = PROBLEMS[case]
    pages = render(trace_document(trace(load(None if path is None else str(path)))), "table",
                   Style(4, colour=False, width=80, ascii=True))
    text = "".join(pages)
    assert all(cell_len(line) <= 80 for line in text.splitlines())
    assert "热力图：条形和底色" in text and "━" not in text
    _golden(f"zh_table_ascii_{case}_80", text)


def test_the_step_headings_are_the_tutorials(attntrace):
    lines = attntrace("run", "--lang", "zh").out.splitlines()
    for heading in HEADINGS:
        at = lines.index(heading)
        assert lines[at + 1] == "=" * cell_len(heading)  # underlined to its display width
    assert "步骤 4 · score(1, j) = q1 · k_j  [1 x 3]" in lines  # words translated, formulas kept
    assert "步骤 7 · 输出 1 = Σ_j w(1, j) · v_j  [1 x 3]" in lines
    assert "核对：softmax(Q K^T) V 与逐行算出的输出相同（误差在 1e-9 以内）" in lines


@pytest.mark.parametrize("command", [["run"], ["step", "--input", "1"], ["step", "--input", "2"]])
@pytest.mark.parametrize("problem", EVERY_SAMPLE, ids=lambda p: "built-in" if p is None else p.name)
def test_every_line_of_chinese_plain_output_fits_80_display_columns(attntrace, problem, command):
    os.chdir(ROOT)
    r = attntrace(command[0], *_args(problem, *command[1:]), "--lang", "zh")
    assert r.code == 0, r.err
    wide = [line for line in r.out.splitlines() if cell_len(line) > 80]
    assert not wide and "步骤 " in r.out


@pytest.mark.parametrize("fmt", ["json", "csv"])
@pytest.mark.parametrize("command", [["run"], ["step", "--input", "2"]])
@pytest.mark.parametrize("problem", EVERY_SAMPLE, ids=lambda p: "built-in" if p is None else p.name)
def test_json_is_the_same_bytes_and_csv_the_same_cells_in_either_language(attntrace, problem, command, fmt):
    os.chdir(ROOT)
    args = [command[0], *_args(problem, *command[1:]), "--format", fmt]
    english, chinese = attntrace(*args).out, attntrace(*args, "--lang", "zh").out
    if fmt == "json":
        assert chinese == english and json.loads(chinese)
        return

    def cells(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith(("#", '"#'))]

    assert cells(chinese) == cells(english)
    assert any(line.startswith("# 步骤 ") for line in chinese.splitlines())  # a table's title is for a person


@pytest.mark.parametrize("lang, note", [("en", NOTE_EN), ("zh", NOTE_ZH)])
def test_the_worked_example_says_why_its_output_is_not_the_articles(attntrace, lang, note):
    out = attntrace("run", "--lang", lang).out
    flat = " ".join(out.split())
    step_7, rest = flat.split(note, 1)[0], flat.split(note, 1)[1]
    assert step_7.strip().endswith("x1 1.9366 6.6831 1.5951")  # right under step 7's output 1, which it quotes
    for said in ("[0.0, 0.5, 0.5]", "--carry-rounding --precision 1", "[0.1, 0.5, 0.5]", "2.1 7.2 1.8"):
        assert said in rest.split("步骤 4" if lang == "zh" else "Step 4")[0]
    assert flat.count(note) == 1


def test_the_numbers_of_the_note_are_the_tools_own(attntrace):
    """carried one-decimal rounding gives the softmax row and output 1 the note quotes"""
    out = attntrace("run", "--carry-rounding", "--precision", "1").out
    assert "x1  0.1  0.5  0.5" in out.split("Step 5 · w(1, j) = softmax over j")[1].split("\n\n")[0]
    assert "x1  2.1  7.2  1.8" in out.split("Step 7 · output 1 =")[1].split("\n\n")[0]
    exact = attntrace("run").out.split("Step 7 · output 1 =")[1].split("\n\n")[0]
    assert "x1  1.9366  6.6831  1.5951" in exact


@pytest.mark.parametrize("args", [
    ["step", "--input", "2"], ["step", "--input", "1"], ["run", "--carry-rounding", "--precision", "1"], ["run", "--scale"],
    ["run", SAMPLES / "scaled.json"], ["worksheet", "--key", "--format", "plain"], ["worksheet", "--format", "markdown"],
])
def test_the_note_is_only_where_its_numbers_are_shown(attntrace, args):
    """in a run only (the docs show step --input 1 as it was), not with rounding carried or other settings, nor in a
    worksheet (it holds answers)"""
    r = attntrace(*args)
    assert r.code == 0, r.err
    assert "8 steps to self-attention" not in " ".join(r.out.split())


def test_the_note_is_in_the_markdown_and_csv_of_the_run(attntrace):
    assert NOTE_EN in attntrace("run", "--format", "markdown").out
    assert NOTE_ZH in attntrace("run", "--format", "markdown", "--lang", "zh").out
    assert f"# {NOTE_ZH}" in attntrace("run", "--format", "csv", "--lang", "zh").out


def test_validate_in_chinese(attntrace):
    os.chdir(ROOT)
    out = attntrace("validate", "samples/cross.json", "--lang", "zh").out
    assert out.splitlines()[0] == "samples/cross.json：有效的题目（交叉注意力，source 有 m = 4 行）"
    assert "d_k      每个头 2" in out and "scale    true（得分除以 sqrt(d_k)）" in out and "mask     没有" in out
    assert attntrace("validate", "samples/scaled.json", "--lang", "zh").out.splitlines()[0] == \
        "samples/scaled.json：有效的题目（自注意力）"


def _wide(tmp_path, n: int = 3, d: int = 30):
    path = tmp_path / "wide.json"
    path.write_text(json.dumps({"x": [[(i * 7 + j) % 5 - 2 for j in range(d)] for i in range(n)],
                                "tokens": ["我", "喜欢", "猫"][:n]}), encoding="utf-8")
    return path


def test_a_split_table_names_its_columns_in_chinese(attntrace, tmp_path):
    out = attntrace("run", _wide(tmp_path), "--lang", "zh").out
    assert "（列 1 到 8）" in out.splitlines()
    table = attntrace("run", _wide(tmp_path), "--lang", "zh", "--format", "table").out
    assert "（列 1 到" in table


def test_hidden_rows_and_columns_are_said_in_chinese(attntrace, tmp_path):
    path = tmp_path / "huge.json"
    path.write_text(json.dumps({"x": [[(i + j) % 3 for j in range(70)] for i in range(70)]}), encoding="utf-8")
    out = attntrace("step", path, "--input", "1", "--lang", "zh").out
    assert "… 隐藏了 6 列；--format json 显示全部（显示的是前 32 列和后 32 列）" in out.replace("\n  ", "")
    assert "⋯ 隐藏 6 列 ⋯" in out
    md = attntrace("run", path, "--lang", "zh", "--format", "markdown").out
    assert "| ⋮ 隐藏 6 行 |" in md and "*… 隐藏了 6 行；--format json 显示全部*" in md


def test_a_chinese_worksheet_with_split_tables_is_read_back(attntrace, tmp_path):
    """check reads a plain worksheet's runs of columns under their Chinese "（列 a 到 b）" lines"""
    problem = _wide(tmp_path)
    key = attntrace("worksheet", problem, "--key", "--format", "plain", "--lang", "zh").out
    assert "（列 1 到 10）" in key
    sheet = tmp_path / "sheet.txt"
    sheet.write_text(key, encoding="utf-8")
    for lang in ("zh", "en"):
        r = attntrace("check", sheet, problem, "--format", "json", "--lang", lang)
        assert r.code == 0 and json.loads(r.out)["passed"], r.err


def test_the_heatmap_legend_in_chinese(attntrace):
    out = attntrace("run", "--lang", "zh", "--format", "table", "--ascii").out
    assert "热力图：条形和底色 = 权重与本行最大权重之比，从小到大依次为 .:-=+*#@" in out


@pytest.mark.parametrize(("options", "bars"), [(("--ascii",), ".:-=+*#@"), ((), "▁▂▃▄▅▆▇█")])
def test_the_heatmap_legend_names_every_symbol_it_draws(attntrace, options, bars):
    from attntrace.render.table import ASCII_BARS, BARS

    assert bars in (ASCII_BARS, BARS)
    out = attntrace("run", "--format", "table", *options, env={"ATTNTRACE_ASCII": ""}).out
    assert f"from the least to the largest: {bars}" in " ".join(out.split())
    drawn = {ch for ch in out.split("heatmap:")[0] if ch in BARS}  # the Unicode bars drawn are those it names
    assert drawn <= set(bars) and (drawn or options)


@given(st.lists(st.sampled_from(["我", "喜欢", "注意力", "得分", "，", "。", "（", "）", "x1", "1.9366", "softmax", " "]),
                max_size=60), st.integers(10, 80))
def test_chinese_text_is_wrapped_to_its_display_width_and_nothing_is_lost(parts, columns):
    from attntrace.views.text import wrapped

    text = "".join(parts).strip()
    lines = wrapped(text, columns, "  ")
    assert all(cell_len(line) <= columns for line in lines)
    assert "".join(line.strip() for line in lines).replace(" ", "") == text.replace(" ", "")


def test_a_rich_table_of_chinese_titles_fits_its_width():
    from attntrace.core.engine import trace
    from attntrace.files.problemfile import load
    from attntrace.render import table
    from attntrace.views.walkthrough import run_steps

    language.use("zh")
    buffer = io.StringIO()
    console = table.console(buffer, False, 40)
    for step in run_steps(trace(load(str(SAMPLES / "two_heads.json")))):
        console.print(table.render_step(step, 4, 40, table.Look(ascii=True)), crop=False)
    assert max(cell_len(line) for line in buffer.getvalue().splitlines()) <= 40
