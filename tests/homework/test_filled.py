"""Reading back a worksheet attntrace printed, with a student's numbers typed into its blank cells."""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attntrace.core.engine import trace
from attntrace.files.problemfile import load as load_problem
from attntrace.homework import cells, filled
from attntrace.homework.kinds import load
from attntrace.homework.sheet import Sheet, SheetError
from attntrace.homework.worksheet import asked
from tests.conftest import SAMPLES

XIHUAN = {  # /work/shared/homework/problems/a_wo_xihuan_mao.json
    "name": "我喜欢猫: one head, d_k = d_v = 2, scaled",
    "tokens": ["我", "喜欢", "猫"],
    "x": [[0.5, -1.2, 0.8, 0.3], [1.1, 0.4, -0.6, 0.9], [-0.7, 0.2, 1.3, -0.4]],
    "w_q": [[0.6, -0.3], [0.2, 0.8], [-0.5, 0.4], [0.9, 0.1]],
    "w_k": [[-0.4, 0.7], [0.5, 0.3], [0.8, -0.6], [0.1, 0.9]],
    "w_v": [[1.2, -0.5], [0.3, 0.6], [-0.8, 0.4], [0.7, 1.1]],
    "scale": True,
}
PROBLEMS = ["worked_example", "scaled", "causal", "two_heads", "cross", "xihuan"]
FORMATS = ["markdown", "plain"]
CELL = re.compile(r"-?\d+\.\d+|-inf|_{8,}")  # a cell of a plain row at 1 or more decimals (labels here are words)


def problem_path(tmp_path, name):
    if name == "xihuan":
        path = tmp_path / "a_wo_xihuan_mao.json"
        path.write_text(json.dumps(XIHUAN, ensure_ascii=False), encoding="utf-8")
        return path
    return SAMPLES / f"{name}.json"


def wide_path(tmp_path):
    """d_k = d_v = 14: a plain row does not fit 80 columns, so its tables are split into runs of columns"""
    rng = np.random.default_rng(7)
    problem = {"name": "wide", "tokens": ["the cat", "sat", "the cat"], "x": rng.integers(-3, 4, (3, 4)).tolist(),
               **{w: rng.integers(-3, 4, (4, 14)).tolist() for w in ("w_q", "w_k", "w_v")}, "scale": True}
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(problem), encoding="utf-8")
    return path


def printed(attntrace, path, fmt, precision=2, key=True, query=None):
    args = ["worksheet", path, "--format", fmt, "--precision", str(precision)]
    args += (["--key"] if key else []) + (["--input", str(query)] if query else [])
    r = attntrace(*args)
    assert r.code == 0, r.err
    return r.out


def carried(path, precision, query=None):
    return trace(load_problem(str(path)), query=query, carry_rounding=precision)


def values(t, key):
    head, step = key
    return t.output if head is None else getattr(t.heads[head - 1], step)


def assert_carried(sheet: Sheet, t) -> None:
    """every asked cell holds the carried trace's value; a masked cell reads as -inf or blank"""
    assert sorted(sheet.cells, key=str) == sorted(asked(t), key=str)
    for key, got in sheet.cells.items():
        want = values(t, key)
        assert got.shape == want.shape, key
        masked = np.isneginf(want)
        assert (np.isneginf(got[masked]) | np.isnan(got[masked])).all(), key
        np.testing.assert_allclose(got[~masked], want[~masked], rtol=0, atol=1e-9, err_msg=str(key))


def edit_cells(text, fmt, change):
    """the worksheet with change(title, row label, cell) applied to every cell of every table"""
    out, title = [], ""
    for line in text.splitlines():
        if fmt == "markdown" and line.startswith("**"):
            title = line
        elif fmt == "plain" and line.rstrip().endswith("]"):
            title = line
        if fmt == "markdown" and line.startswith("| ") and not line.startswith("| |"):
            label, *cells = [c.strip() for c in line.strip().strip("|").split("|")]
            line = "| " + " | ".join([label, *(change(title, label, c) for c in cells)]) + " |"
        elif fmt == "plain" and "·" not in line and CELL.fullmatch(line.split()[-1] if line.split() else ""):
            tokens = line.split()
            count = next(k for k in range(len(tokens), 0, -1) if all(CELL.fullmatch(t) for t in tokens[-k:]))
            label = " ".join(tokens[:-count])
            line = label + "  " + "  ".join(change(title, label, c) for c in tokens[-count:])
        out.append(line)
    return "\n".join(out) + "\n"


def parse(text, path, origin="filled.md"):
    return filled.parse(text, origin, load_problem(str(path)))


@pytest.mark.parametrize("name", PROBLEMS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("precision", [1, 2, 3, 4])
@pytest.mark.parametrize("query", [None, 2])
def test_the_key_reads_back_as_the_carried_trace(attntrace, tmp_path, name, fmt, precision, query):
    path = problem_path(tmp_path, name)
    sheet = parse(printed(attntrace, path, fmt, precision, query=query), path)
    assert_carried(sheet, carried(path, precision, query))
    assert (sheet.query, sheet.precision, sheet.notes) == (query, precision, ())


@pytest.mark.parametrize("name", PROBLEMS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_blank_worksheet_answers_nothing(attntrace, tmp_path, name, fmt):
    path = problem_path(tmp_path, name)
    sheet = parse(printed(attntrace, path, fmt, key=False), path)
    t = carried(path, 2)
    assert sorted(sheet.cells, key=str) == sorted(asked(t), key=str)
    for key, got in sheet.cells.items():
        assert got.shape == values(t, key).shape and np.isnan(got).all(), key


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("query", [None, 2])
def test_a_wide_problem_split_into_runs_of_columns_reads_back(attntrace, tmp_path, fmt, query):
    path = wide_path(tmp_path)
    text = printed(attntrace, path, fmt, query=query)
    if fmt == "plain":
        assert "(columns 1 to" in text
    assert_carried(parse(text, path), carried(path, 2, query))
    blank = parse(printed(attntrace, path, fmt, key=False, query=query), path)
    assert all(np.isnan(m).all() for m in blank.cells.values())


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_wide_worksheet_filled_in_by_hand_reads_back(attntrace, tmp_path, fmt):
    """the blank worksheet splits its columns where its underscores fall, not where the key's numbers do"""
    path = wide_path(tmp_path)
    q = values(carried(path, 2), (1, "q"))
    typed = [f"{v:.2f}" for v in q[1]]

    def fill(title, label, cell):
        return typed.pop(0) if "Q = X · W_Q" in title and label == "sat" else cell

    blank = printed(attntrace, path, fmt, key=False)
    if fmt == "plain":
        def runs(text):
            return [line for line in text.splitlines() if line.startswith("(columns")]
        assert runs(blank) != runs(printed(attntrace, path, fmt))
    sheet = parse(edit_cells(blank, fmt, fill), path)
    assert typed == []
    np.testing.assert_allclose(sheet.cells[(1, "q")][1], q[1], atol=1e-9)
    assert np.isnan(sheet.cells[(1, "q")][[0, 2]]).all()


def test_runs_of_columns_with_repeated_tokens_are_told_apart_by_their_labels(attntrace, tmp_path):
    """a repeated token is labelled with its position ("a·7"), so a run of columns names where it ends"""
    n = 12
    problem = {"name": "repeats", "tokens": ["ab" if i % 2 else "a" for i in range(n)],
               "x": [[i % 3, 1 - i % 2] for i in range(n)], **{w: [[1, 0], [0, 1]] for w in ("w_q", "w_k", "w_v")}}
    path = tmp_path / "repeats.json"
    path.write_text(json.dumps(problem), encoding="utf-8")
    scores = values(carried(path, 2, query=1), (1, "scores"))
    typed = [f"{v:.2f}" for v in scores[0]]
    blank = printed(attntrace, path, "plain", key=False, query=1)
    assert "(columns a to a·7)" in blank and "(columns ab·8 to ab·12)" in blank
    text = edit_cells(blank, "plain", lambda title, label, cell: typed.pop(0) if "q1 · k_j" in title else cell)
    assert typed == []
    np.testing.assert_allclose(parse(text, path).cells[(1, "scores")], scores, atol=1e-9)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_partly_filled_worksheet_answers_what_is_written(attntrace, tmp_path, fmt):
    path = problem_path(tmp_path, "xihuan")
    t = carried(path, 2)
    weights_or_later = ("softmax", "output", "v_j")
    text = edit_cells(printed(attntrace, path, fmt), fmt,
                      lambda title, label, cell: "" if fmt == "markdown" and any(w in title for w in weights_or_later)
                      else "________" if any(w in title for w in weights_or_later) else cell)
    sheet = parse(text, path)
    for key in [(1, "q"), (1, "k"), (1, "v"), (1, "scores"), (1, "scaled")]:
        np.testing.assert_allclose(sheet.cells[key], values(t, key), atol=1e-9)
    assert np.isnan(sheet.cells[(1, "weights")]).all() and np.isnan(sheet.cells[(1, "output")]).all()


def repad(text, fmt, rng: random.Random):
    """every line with its spacing changed at random, as a student's editor might leave it"""
    def gap():
        return " " * rng.randint(1, 5)

    out = []
    for line in text.splitlines():
        if fmt == "markdown" and line.startswith("|"):
            cells = line.strip().strip("|").split("|")
            line = " " * rng.randint(0, 3) + "|" + "|".join(gap() + c.strip() + gap() for c in cells) + "|" + gap()
        elif line.strip():
            line = " " * rng.randint(0, 3) + gap().join(line.split()) + " " * rng.randint(0, 3)
        out.append(line)
    return "\n".join(out)


@pytest.mark.parametrize("fmt", FORMATS)
def test_spacing_and_alignment_changes_are_tolerated(attntrace, tmp_path, fmt):
    texts = {name: printed(attntrace, problem_path(tmp_path, name), fmt) for name in ("two_heads", "xihuan", "causal")}
    texts["wide"] = printed(attntrace, wide_path(tmp_path), fmt)
    paths = {name: problem_path(tmp_path, name) for name in ("two_heads", "xihuan", "causal")} | {"wide": wide_path(tmp_path)}

    @settings(max_examples=15, deadline=None)
    @given(st.sampled_from(sorted(texts)), st.randoms(use_true_random=False))
    def check(name, rng):
        text = repad(texts[name], fmt, rng)
        assert text != texts[name]
        assert_carried(parse(text, paths[name]), carried(paths[name], 2))

    check()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("minus", ["\u2212", "\u2013", "\uff0d"])
def test_a_unicode_minus_reads_as_minus(attntrace, tmp_path, fmt, minus):
    path = problem_path(tmp_path, "causal")
    text = edit_cells(printed(attntrace, path, fmt), fmt, lambda title, label, cell: cell.replace("-", minus))
    assert minus + "inf" in text
    sheet = parse(text, path)
    assert_carried(sheet, carried(path, 2))
    assert any((m < 0).any() for m in sheet.cells.values()) and any(np.isneginf(m).any() for m in sheet.cells.values())
    assert sheet.notes == ()  # a minus sign read is not worth a note, unlike a decimal comma


@pytest.mark.parametrize("fmt", FORMATS)
def test_decimal_commas_are_read_with_one_note(attntrace, tmp_path, fmt):
    path = problem_path(tmp_path, "two_heads")
    text = edit_cells(printed(attntrace, path, fmt), fmt, lambda title, label, cell: cell.replace(".", ","))
    assert "0,50" in text or "1,00" in text
    sheet = parse(text, path)
    assert_carried(sheet, carried(path, 2))
    assert sheet.notes == ("decimal commas read as decimal points",)


@pytest.mark.parametrize("written, value", [
    ("-inf", -np.inf), ("\u2212inf", -np.inf), ("-∞", -np.inf), ("\u2212∞", -np.inf), ("masked", -np.inf),
    ("x", -np.inf), ("—", -np.inf), ("?", np.nan), ("__", np.nan), ("+0.5", 0.5), ("-.5", -0.5), ("1e-1", 0.1),
    ("\uff0d０．５", -0.5), (" 0.5 ", 0.5), ("-", np.nan), ("\u2013", np.nan), ("n/a", np.nan), ("N/A", np.nan),
    ("na", np.nan), ("NA", np.nan),
])
@pytest.mark.parametrize("fmt", FORMATS)
def test_how_a_masked_or_a_blank_cell_may_be_written(attntrace, tmp_path, fmt, written, value):
    path = problem_path(tmp_path, "causal")

    def mark(title, label, cell):
        return written if "score(1, j)" in title and "/" in title and cell == "-inf" else cell

    text = edit_cells(printed(attntrace, path, fmt, query=1), fmt, mark)
    scaled = parse(text, path).cells[(1, "scaled")]
    np.testing.assert_array_equal(scaled[0, 1:], [value] * 3)
    assert np.isfinite(scaled[0, 0])


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("written, why", [("abc", "is not a number"), ("1.2.3", "is not a number"), ("--1", "is not a number"),
                                          ("inf", "is not a number"), ("1e999", "is too large for a number")])
def test_a_cell_that_is_not_a_number_is_not_answered_and_named_in_a_note(attntrace, tmp_path, fmt, written, why):
    path = problem_path(tmp_path, "xihuan")
    seen = []

    def garbage(title, label, cell):
        seen.extend([cell] if "Step 3 · K" in title and label == "喜欢" else [])
        return written if len(seen) == 2 and "Step 3 · K" in title and label == "喜欢" else cell

    sheet = parse(edit_cells(printed(attntrace, path, fmt), fmt, garbage), path)
    assert sheet.notes == (f'"Step 3 · K = X · W_K", row 喜欢, column 2: "{written}" {why}; '
                           "it is marked as not answered",)
    k = sheet.cells[(1, "k")]
    assert np.isnan(k[1, 1]) and np.isfinite(np.delete(k.ravel(), 3)).all()


@pytest.mark.parametrize("fmt", FORMATS)
def test_past_five_cells_that_are_not_numbers_the_rest_are_counted(attntrace, tmp_path, fmt):
    path = problem_path(tmp_path, "xihuan")
    sheet = parse(edit_cells(printed(attntrace, path, fmt), fmt,
                             lambda title, label, cell: "zero" if "Step 3 · Q" in title or "Step 3 · K" in title else cell),
                  path)
    assert len(sheet.notes) == 6 and all(note.endswith("marked as not answered") for note in sheet.notes)
    assert sheet.notes[-1] == "7 more cells that are not a number, marked as not answered"
    assert np.isnan(sheet.cells[(1, "q")]).all() and np.isnan(sheet.cells[(1, "k")]).all()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("sign", ["-", "\u2212", "+"])
def test_a_sign_typed_apart_from_its_number_is_read_with_it(attntrace, tmp_path, fmt, sign):
    path = problem_path(tmp_path, "xihuan")
    t = carried(path, 2)

    def apart(title, label, cell):
        return re.sub(r"^-", sign + " ", cell) if re.fullmatch(r"-?\d+\.\d+", cell) else cell

    sheet = parse(edit_cells(printed(attntrace, path, fmt), fmt, apart), path)
    if sign == "+":  # "+ 0.45" for a negative number is a wrong sign, read as written
        assert (sheet.cells[(1, "q")] >= 0).all() and (t.heads[0].q < 0).any()
    else:
        assert sheet.notes == ()
        assert_carried(sheet, t)


@pytest.mark.parametrize("fmt", FORMATS)
def test_percentages_are_read_as_fractions_with_a_note(attntrace, tmp_path, fmt):
    path = problem_path(tmp_path, "xihuan")
    t = carried(path, 2)

    def percent(title, label, cell):
        return f"{round(float(cell) * 100)}%" if "softmax" in title and re.fullmatch(r"\d\.\d+", cell) else cell

    sheet = parse(edit_cells(printed(attntrace, path, fmt), fmt, percent), path)
    assert sheet.notes == (cells.PERCENTS,)
    assert_carried(sheet, t)
    assert cells.written_decimals("31%") == 2 and cells.written_decimals("12.5 %") == 3
    assert cells.percentage("33.33") == 0.3333 and cells.percentage("1e999999999") == np.inf


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("line", "student"), [
    ("Name: ________________", None), ("Name: 李华", "李华"), ("**Name:** Li Wei ____", "Li Wei"), ("Name:", None),
    ("name :  chen\\_li", "chen_li"),
])
def test_the_name_written_on_a_worksheet_is_the_sheets_student(attntrace, tmp_path, fmt, line, student):
    path = problem_path(tmp_path, "xihuan")
    blank = printed(attntrace, path, fmt, key=False)
    assert blank.count("Name: ________________\n") == 1 and "Name:" not in printed(attntrace, path, fmt)
    sheet = parse(blank.replace("Name: ________________", line), path)
    assert sheet.student == student


def test_a_markdown_row_with_a_cell_missing_is_named_and_the_fix_given(attntrace, tmp_path):
    path = problem_path(tmp_path, "xihuan")
    lines = printed(attntrace, path, "markdown").splitlines()
    at = lines.index(next(line for line in lines if "Step 3 · K = X · W_K" in line))
    row = next(k for k in range(at + 1, len(lines)) if lines[k].lstrip("| ").startswith("喜欢"))
    lines[row] = lines[row].rsplit("|", 2)[0] + "|"
    with pytest.raises(SheetError, match=r'"Step 3 · K = X · W_K", row 喜欢 has 1 cell, the table has 2 columns; .*____'):
        parse("\n".join(lines), path)


@pytest.mark.parametrize("erase", [0, 1])
def test_a_plain_row_with_a_blank_erased_reads_each_number_in_the_column_it_stands_under(attntrace, tmp_path, erase):
    path = problem_path(tmp_path, "xihuan")
    lines = printed(attntrace, path, "plain").splitlines()
    at = lines.index(next(line for line in lines if "Step 3 · K = X · W_K" in line))
    row = next(k for k in range(at + 1, len(lines)) if lines[k].startswith("喜欢"))
    numbers = list(re.finditer(r"\S+", lines[row]))[1:]
    gone = numbers[erase]
    lines[row] = (lines[row][:gone.start()] + " " * len(gone[0]) + lines[row][gone.end():]).rstrip()
    k = parse("\n".join(lines), path).cells[(1, "k")]
    assert np.isnan(k[1, erase]) and k[1, 1 - erase] == float(numbers[1 - erase][0])


@pytest.mark.parametrize("edit", [
    ("| 喜欢 | ", "喜欢 | "),  # the outer pipes dropped
    ("|---|---:|---:|\n| 我 ", "| 我 "),  # the rule dropped
    ("| | 1 | 2 |\n|---|---:|---:|\n| 我 ", "| 我 "),  # the header and the rule dropped
    ("** [3 x 2]\n\n| |", "**\n| |"),  # the shape and the blank line dropped
])
def test_a_markdown_table_edited_by_hand_is_still_read(attntrace, tmp_path, edit):
    path = problem_path(tmp_path, "xihuan")
    text = printed(attntrace, path, "markdown")
    at = text.index("**Step 3 · Q = X · W_Q**")
    end = text.index("**Step 3 · K")
    assert edit[0] in text[at:end]
    assert_carried(parse(text[:at] + text[at:end].replace(*edit) + text[end:], path), carried(path, 2))


@pytest.mark.parametrize("fmt, drop, message", [
    ("markdown", 2, r'"Step 3 · Q = X · W_Q", row 我: found a row labelled "喜欢"; keep every row, in order, with its label'),
    ("plain", 2, r'"Step 3 · Q = X · W_Q", row 我 is missing \(found "喜欢 .*"\); keep the line of column labels and every row'),
    ("plain", 1, r'"Step 3 · Q = X · W_Q", row 我 is missing \(found "喜欢 .*"\); keep the line of column labels and every row'),
])
def test_a_row_or_header_deleted_is_named(attntrace, tmp_path, fmt, drop, message):
    path = problem_path(tmp_path, "xihuan")
    lines = printed(attntrace, path, fmt).splitlines()
    at = next(k for k, line in enumerate(lines) if "Step 3 · Q = X · W_Q" in line)
    drop += at + (2 if fmt == "markdown" else 0)  # markdown: a blank line and the rule as well
    assert "我" in lines[drop] or drop == at + 1
    with pytest.raises(SheetError, match="^filled.md: " + message):
        parse("\n".join(lines[:drop] + lines[drop + 1:]), path)


def test_windows_line_ends_and_a_byte_order_mark_are_read(attntrace, tmp_path):
    path = problem_path(tmp_path, "two_heads")
    text = "\ufeff" + printed(attntrace, path, "plain").replace("\n", "\r\n")
    assert_carried(parse(text, path), carried(path, 2))


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_missing_table_is_not_answered_and_a_moved_one_is_still_read(attntrace, tmp_path, fmt):
    path = problem_path(tmp_path, "scaled")
    text = printed(attntrace, path, fmt)
    parts = re.split(r"\n\n(?=\*\*Step|Step \d · [^\n]*\])", text)
    q = next(p for p in parts if "Q = X · W_Q" in p)
    v = next(p for p in parts if "V = X · W_V" in p)
    moved = "\n\n".join(p for p in parts if p not in (q, v)) + "\n\n" + v + "\n"
    sheet = parse(moved, path)
    t = carried(path, 2)
    assert np.isnan(sheet.cells[(1, "q")]).all()
    np.testing.assert_allclose(sheet.cells[(1, "v")], values(t, (1, "v")), atol=1e-9)
    np.testing.assert_allclose(sheet.cells[(1, "weights")], values(t, (1, "weights")), atol=1e-9)


def set_cells(text, fmt, title_part, written):
    """the worksheet with cells of the table whose title holds title_part written over: {(row label, column from 0): text}"""
    seen = {}

    def change(title, label, cell):
        if title_part not in title:
            return cell
        column = seen[(title, label)] = seen.get((title, label), -1) + 1
        return written.get((label, column), cell)

    return edit_cells(text, fmt, change)


STEP_5 = "Step 5 · w(2, j) = softmax over j"
STEP_8 = "Step 8 · weights = softmax(scores / sqrt(d_k))"


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("in_5, in_8, kept", [(None, "0.99", 0.99), ("0.99", None, 0.99), ("0.47", "0.99", 0.47)])
def test_a_cell_written_twice_differently_keeps_the_one_off_and_notes_both(attntrace, tmp_path, fmt, in_5, in_8, kept):
    """a right value in step 5 must not hide a wrong one in step 8's matrix, or the other way round"""
    path = problem_path(tmp_path, "xihuan")
    right = f"{values(carried(path, 2), (1, 'weights'))[1, 2]:.2f}"
    text = printed(attntrace, path, fmt)
    for title, written in ((STEP_5, in_5), (STEP_8, in_8)):
        text = set_cells(text, fmt, title, {("喜欢", 2): written} if written else {})
    sheet = parse(text, path)
    assert sheet.cells[(1, "weights")][1, 2] == kept
    assert sheet.notes == (f'"{STEP_5}" and "{STEP_8}", row 喜欢, column 猫: written twice, differently: '
                           f"{in_5 or right} and {in_8 or right}; the one off is marked",)


def test_a_masked_cell_is_true_only_as_minus_infinity():
    """the truth of a masked scaled cell is -inf: any number written in it is farther off than -inf"""
    assert filled._off(-np.inf, -np.inf) == 0 and filled._off(0.5, -np.inf) == np.inf
    assert filled._off(-np.inf, 0.5) == np.inf and filled._off(0.47, 0.86) == pytest.approx(0.39)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_wrong_step_6_table_is_noted_once_and_not_marked(attntrace, tmp_path, fmt):
    path = problem_path(tmp_path, "xihuan")
    written = {("我", 0): "0.5", ("喜欢", 1): "-0.02", ("猫", 0): "1.81",  # wrong: the truth is -0.02, 0.02 and -1.81
               ("猫", 1): "0.4749", ("喜欢", 0): "____"}  # 0.47 when rounded, and a blank: neither is off
    sheet = parse(set_cells(printed(attntrace, path, fmt), fmt, "Step 6 · w(2, j) · v_j", written), path)
    assert_carried(sheet, carried(path, 2))
    assert sheet.notes == ('the table "Step 6 · w(2, j) · v_j" has 3 cells that differ from w(i, j) · v_j; '
                           "it is not marked, but check it",)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_wrong_concatenation_before_w_o_is_noted_per_table(attntrace, tmp_path, fmt):
    path = problem_path(tmp_path, "two_heads")
    text = set_cells(printed(attntrace, path, fmt), fmt, "Step 7 · concat(heads) for input 2", {("cat", 3): "2.1"})
    text = set_cells(text, fmt, "Step 8 · concat(heads)", {("sat", 0): "-0.1", ("down", 3): "4"})
    sheet = parse(text, path)
    assert_carried(sheet, carried(path, 2))
    assert sheet.notes == (
        "the table \"Step 7 · concat(heads) for input 2\" has 1 cell that differs from the heads' outputs side by side; "
        "it is not marked, but check it",
        "the table \"Step 8 · concat(heads)\" has 2 cells that differ from the heads' outputs side by side; "
        "it is not marked, but check it",
    )


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("printed_title, edited", [
    ("Step 3 · Q = X · W_Q", "Step 3 · Q = XW_Q"),
    ("Step 4 · score(2, j) / sqrt(d_k) (sqrt(2) = 1.4142)", "Step 4 · score(2, j) / sqrt(d_k) (sqrt(2) = 1,4142)"),
    ("Step 4 · score(2, j) / sqrt(d_k) (sqrt(2) = 1.4142)", "Step 4 · score(2, j) / sqrt(d_k = 2) = 1.4142"),  # 0.1's
    ("Step 8 · output = weights · V", "Step 8 · output = weights V"),
])
def test_a_heading_edited_slightly_is_read_as_the_closest_title_with_a_note(attntrace, tmp_path, fmt, printed_title, edited):
    path = problem_path(tmp_path, "xihuan")
    text = printed(attntrace, path, fmt)
    assert text.count(printed_title) == 1
    sheet = parse(text.replace(printed_title, edited), path)
    assert_carried(sheet, carried(path, 2))
    assert sheet.notes == (f'read the table titled "{edited}" as "{printed_title}"',)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_heading_equally_close_to_two_titles_is_not_guessed(attntrace, tmp_path, fmt):
    path = problem_path(tmp_path, "xihuan")
    text = printed(attntrace, path, fmt)
    guess = "Step 4 · score(i, j) / sqrt(d_k) (sqrt(2) = 1.4142)"
    for i in (1, 2):
        text = text.replace(f"Step 4 · score({i}, j) / sqrt(d_k) (sqrt(2) = 1.4142)", guess)
    sheet = parse(text, path)
    scaled = sheet.cells[(1, "scaled")]
    assert np.isnan(scaled[:2]).all() and np.isfinite(scaled[2]).all()
    not_read = f'the table titled "{guess}" is none of the worksheet\'s tables; its numbers were not read'
    assert sheet.notes == (not_read, not_read)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("key", [True, False])
def test_a_heading_like_no_title_is_noted_only_when_numbers_are_written_under_it(attntrace, tmp_path, fmt, key):
    path = problem_path(tmp_path, "xihuan")
    text = printed(attntrace, path, fmt, key=key).replace("Step 3 · K = X · W_K", "my keys")
    sheet = parse(text, path)
    assert np.isnan(sheet.cells[(1, "k")]).all()
    assert sheet.notes == (('the table titled "my keys" is none of the worksheet\'s tables; its numbers were not read',)
                           if key else ())


def test_a_cell_left_blank_in_one_table_is_taken_from_the_other(attntrace, tmp_path):
    path = problem_path(tmp_path, "xihuan")
    text = edit_cells(printed(attntrace, path, "markdown"), "markdown",
                      lambda title, label, cell: "" if "w(" in title else cell)
    sheet = parse(text, path)
    np.testing.assert_allclose(sheet.cells[(1, "weights")], values(carried(path, 2), (1, "weights")), atol=1e-9)
    assert sheet.notes == ()


@pytest.mark.parametrize("text", ["", "hello\n", "# Worksheet: x\n\n| | 1 |\n|---|---:|\n| a | 1 |\n"])
def test_a_text_that_is_not_a_worksheet_is_refused(tmp_path, text):
    with pytest.raises(SheetError, match=r"^filled.md: this does not look like an attntrace worksheet"):
        parse(text, problem_path(tmp_path, "scaled"))


def test_a_worksheet_is_read_against_its_problem(attntrace, tmp_path):
    text = printed(attntrace, problem_path(tmp_path, "scaled"), "markdown")
    with pytest.raises(SheetError, match=r"^filled.md: a worksheet is read against its problem; give the problem file"):
        filled.parse(text, "filled.md", None)


def test_the_worksheet_of_another_problem_is_refused(attntrace, tmp_path):
    with pytest.raises(SheetError, match="names no heads but the problem it is checked against has .Heads: 2"):
        parse(printed(attntrace, problem_path(tmp_path, "scaled"), "markdown"), problem_path(tmp_path, "two_heads"))
    with pytest.raises(SheetError, match="says .Mask: causal.* but the problem it is checked against has none"):
        parse(printed(attntrace, problem_path(tmp_path, "causal"), "plain"), problem_path(tmp_path, "scaled"))
    with pytest.raises(SheetError, match="--scale"):
        parse(printed(attntrace, problem_path(tmp_path, "worked_example"), "plain"), problem_path(tmp_path, "scaled"))


def test_an_input_out_of_range_is_refused(attntrace, tmp_path):
    text = printed(attntrace, problem_path(tmp_path, "two_heads"), "plain", query=4)
    with pytest.raises(SheetError, match="does not fit the problem"):
        parse(text, problem_path(tmp_path, "cross"))


def test_an_elided_table_is_refused(attntrace, tmp_path):
    n = 67  # 65 and 66 rows are shown whole
    problem = {"name": "long", "tokens": [f"t{i}" for i in range(n)], "x": [[i % 3, 1] for i in range(n)],
               "w_q": [[1, 0], [0, 1]], "w_k": [[1, 0], [0, 1]], "w_v": [[1, 0], [0, 1]], "scale": True}
    path = tmp_path / "long.json"
    path.write_text(json.dumps(problem), encoding="utf-8")
    with pytest.raises(SheetError, match=r'"Step 3 · Q = X · W_Q" has 67 x 2 cells, more than a worksheet shows \(66 '):
        parse(printed(attntrace, path, "plain"), path)


@pytest.mark.parametrize("suffix, fmt", [(".md", "markdown"), (".txt", "plain"), (".markdown", "markdown")])
def test_the_answer_sheet_loader_reads_worksheets(attntrace, tmp_path, suffix, fmt):
    path = problem_path(tmp_path, "xihuan")
    sheet_path = tmp_path / f"filled{suffix}"
    sheet_path.write_text(printed(attntrace, path, fmt, precision=3), encoding="utf-8")
    sheet = load(str(sheet_path), load_problem(str(path)))
    assert sheet.origin == str(sheet_path) and sheet.precision == 3
    assert_carried(sheet, carried(path, 3))


@pytest.mark.parametrize("name", PROBLEMS)
@pytest.mark.parametrize("fmt, suffix", [("markdown", ".md"), ("plain", ".txt")])
@pytest.mark.parametrize("query", [None, 2])
def test_the_key_fed_back_to_check_passes(attntrace, tmp_path, name, fmt, suffix, query):
    path = problem_path(tmp_path, name)
    sheet_path = tmp_path / f"key{suffix}"
    sheet_path.write_text(printed(attntrace, path, fmt, query=query), encoding="utf-8")
    r = attntrace("check", sheet_path, path)
    assert r.code == 0 and "PASS" in r.out, r.out + r.err


def test_check_marks_a_worksheet_with_a_cell_that_is_not_a_number_and_names_it(attntrace, tmp_path):
    path = problem_path(tmp_path, "xihuan")
    sheet_path = tmp_path / "filled.md"
    lines = printed(attntrace, path, "markdown").splitlines()
    at = next(k for k, line in enumerate(lines) if "Step 3 · Q = X · W_Q" in line)
    row = next(k for k in range(at, len(lines)) if lines[k].startswith("| 猫 |"))
    lines[row] = lines[row].rsplit("|", 2)[0] + "| zero |"
    sheet_path.write_text("\n".join(lines), encoding="utf-8")
    r = attntrace("check", sheet_path, path, "--format", "json")
    report = json.loads(r.out)
    assert r.code == 1 and r.err == ""
    assert report["notes"] == ['"Step 3 · Q = X · W_Q", row 猫, column 2: "zero" is not a number; it is marked as not '
                               "answered"]
    q = next(item for item in report["items"] if item["key"] == "q")
    assert q["verdict"] == "right" and q["cells_written"] == q["cells_asked"] - 1
    assert all(item["verdict"] in ("right", "consequence") for item in report["items"])


LABELS = ["a", "b c", "猫", "喜欢", "x|y", "|z", "back\\slash", "1", "-", "Step", "(columns", "__", "the cat", "**", "-inf"]


def test_random_problems_read_back_in_both_formats(attntrace, tmp_path):
    """labels with pipes, backslashes, spaces and numbers, repeated; one or two heads, masks, W_O, wide rows"""
    path = tmp_path / "random.json"

    @settings(max_examples=25, deadline=None)
    @given(st.data())
    def check(data):
        n = data.draw(st.integers(1, 10))
        heads = data.draw(st.integers(1, 2))
        d_model, d_k = data.draw(st.integers(1, 4)), heads * data.draw(st.integers(1, 8))
        rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
        problem = {"name": "random", "tokens": data.draw(st.lists(st.sampled_from(LABELS), min_size=n, max_size=n)),
                   "x": rng.normal(size=(n, d_model)).round(2).tolist(), "heads": heads,
                   **{w: (rng.normal(size=(d_model, d_k)) * 20).round(2).tolist() for w in ("w_q", "w_k", "w_v")},
                   "scale": data.draw(st.sampled_from([True, False, 2.5]))}
        if data.draw(st.booleans()):
            problem["mask"] = ["causal"]
        if heads > 1 and data.draw(st.booleans()):
            problem["w_o"] = rng.normal(size=(d_k, 3)).round(2).tolist()
        path.write_text(json.dumps(problem), encoding="utf-8")
        precision, query = data.draw(st.integers(0, 4)), data.draw(st.sampled_from([None, n]))
        for fmt in FORMATS:
            assert_carried(parse(printed(attntrace, path, fmt, precision, query=query), path), carried(path, precision, query))

    check()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("decimals", [2, 3])
def test_a_step_6_table_that_follows_the_students_own_weights_is_not_noted(attntrace, tmp_path, fmt, decimals):
    """step 6 is judged against what the student's own weights and V give, at the decimals each cell is written with,
    not only against the carried truth: a consequence of an earlier mistake, or work at 3 decimals, is not a slip"""
    path = problem_path(tmp_path, "xihuan")
    text = printed(attntrace, path, fmt)
    v = parse(text, path).cells[(1, "v")]
    own = {"我": "0.30", "喜欢": "0.30", "猫": "0.40"}  # input 2's weights, off from the truth (a consequence, say)
    for table in ("Step 5 · w(2, j)", STEP_8):  # the row of input 2 (喜欢), both places it is asked for
        text = set_cells(text, fmt, table, {("喜欢", j): own[key] for j, key in enumerate(own)})
    step_6 = {(key, c): f"{float(w) * v[j, c]:.{decimals}f}" for j, (key, w) in enumerate(own.items())
              for c in range(v.shape[1])}
    assert parse(set_cells(text, fmt, "Step 6 · w(2, j) · v_j", step_6), path).notes == ()
    slip = {**step_6, ("猫", 1): f"{float(own['猫']) * v[2, 1] + 0.05:.{decimals}f}"}  # one product miscalculated
    assert parse(set_cells(text, fmt, "Step 6 · w(2, j) · v_j", slip), path).notes == (
        'the table "Step 6 · w(2, j) · v_j" has 1 cell that differs from w(i, j) · v_j; it is not marked, but check it',)


def test_a_worksheet_of_another_problem_is_refused_and_one_copied_wrong_is_noted(attntrace, tmp_path):
    path = problem_path(tmp_path, "xihuan")
    sheet = printed(attntrace, path, "markdown")
    other = {**XIHUAN, "x": [[v + 1 for v in row] for row in XIHUAN["x"]]}
    other_path = tmp_path / "other.json"
    other_path.write_text(json.dumps(other, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(SheetError, match=r'filled.md: this worksheet is not of this problem: "Step 1 · X", row 我, column 1 '
                                         r"reads 0.50 where the problem has 1.50 \(and 11 more cells\)"):
        parse(sheet, other_path)
    one_off = {**XIHUAN, "w_k": [[-0.4, 0.7], [0.5, 0.3], [0.8, -0.6], [0.1, 0.8]]}
    one_path = tmp_path / "one.json"
    one_path.write_text(json.dumps(one_off, ensure_ascii=False), encoding="utf-8")
    assert parse(sheet, one_path).notes == ('"Step 2 · W_K", row 4, column 2 reads 0.90 where the problem has 0.80; it is '
                                            "marked against the problem",)
    assert parse(sheet, path).notes == ()


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_worksheet_is_known_by_its_first_line_whatever_its_name_or_from_stdin(attntrace, tmp_path, fmt):
    path = problem_path(tmp_path, "xihuan")
    sheet_path = tmp_path / "filled.plain"
    sheet_path.write_text(printed(attntrace, path, fmt), encoding="utf-8")
    r = attntrace("check", sheet_path, path)
    assert r.code == 0 and "PASS" in r.out, r.out + r.err
    piped = attntrace("check", "-", path, input=sheet_path.read_text(encoding="utf-8"))
    assert piped.code == 0 and piped.out.startswith("stdin · ") and "PASS" in piped.out, piped.out + piped.err


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_table_retitled_as_another_is_noted(attntrace, tmp_path, fmt):
    path = problem_path(tmp_path, "two_heads")
    text = printed(attntrace, path, fmt)
    first, second = "Step 5 · head 1 · w(2, j) = softmax over j", "Step 5 · head 2 · w(2, j) = softmax over j"
    assert text.count(first) == text.count(second) == 1
    sheet = parse(text.replace(first, second), path)
    assert f'the title "{second}" appears 2 times; the first table under it is read, the others are not' in sheet.notes


def test_a_name_after_a_full_width_colon_and_a_chinese_full_stop_for_a_decimal_point_are_read(attntrace, tmp_path):
    path = problem_path(tmp_path, "xihuan")
    text = printed(attntrace, path, "markdown").replace("· ANSWER KEY\n", "\nName：李明\n", 1)
    sheet = parse(text.replace("| -0.07 |", "| -0。07 |", 1), path)
    assert sheet.student == "李明" and sheet.notes == ()
    assert_carried(sheet, carried(path, 2))
