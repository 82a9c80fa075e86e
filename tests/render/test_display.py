"""What the steps say and how they are drawn: step 8's formula as computed, heatmap bars, ASCII headers, label widths,
80-column plain text and paused screens."""

from __future__ import annotations

import io
import json
import os
import re
import sys
from dataclasses import replace

import numpy as np
import pexpect
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from attntrace import cli
from attntrace.cli.terminal import Environment
from attntrace.core.engine import trace
from attntrace.core.problem import Problem, example
from attntrace.escape import visible
from attntrace.render import plain, table
from attntrace.views.page import Block, Note, Step
from attntrace.views.text import width, wrapped
from attntrace.views.walkthrough import run_steps, who_steps
from tests.conftest import ROOT, SAMPLES


def _problem(scale: bool | float) -> Problem:
    x = np.array([[1.0, 0.0, 2.0, 1.0], [0.0, 1.0, 1.0, -1.0], [2.0, 1.0, 0.0, 0.0]])
    return Problem(x=x, w_q=np.eye(4), w_k=np.eye(4), w_v=np.eye(4), scale=scale)


@pytest.mark.parametrize(("scale", "formula"), [(False, "softmax(Q K^T) V"), (True, "softmax(Q K^T / √d_k) V"),
                                                (2.5, "softmax(Q K^T / 2.5) V")])
def test_step_8_names_the_scale_the_problem_uses(scale, formula):
    step = run_steps(trace(_problem(scale)))[-1]
    check = step.items[-1]
    assert step.heading == f"Step 8 · every input: {formula}"
    assert isinstance(check, Note) and check.text.startswith(f"check: {formula} equals")
    assert "/ s)" not in step.heading + check.text


def test_the_worked_example_is_unscaled_and_says_so():
    assert run_steps(trace(example()))[-1].heading.endswith("softmax(Q K^T) V")


def _drawn(block: Block, width: int = 80, look: table.Look = table.Look(), precision: int = 4) -> str:
    """the rich tables of a one-block step, without colour"""
    buffer = io.StringIO()
    table.console(buffer, False, width).print(table.render_step(Step(5, "Step 5 · s", (block,)), precision, width, look),
                                              crop=False)
    return buffer.getvalue()


@pytest.mark.parametrize("ascii_", [False, True])
def test_a_weight_shown_as_zero_draws_no_bar(ascii_):
    weights = np.array([[0.00004, 0.0001, 0.99986], [0.0, 0.5, 0.5]])
    look = table.Look(ascii=ascii_)
    out = _drawn(Block("w", "weights", ("a", "b"), ("1", "2", "3"), weights), look=look)
    lowest = look.bars[0]
    assert out.count("0.0000 " + lowest) == 0 and out.count("0.0000  ") == 2
    assert f"0.0001 {lowest}" in out  # shown above zero: the smallest bar
    whole = _drawn(Block("w", "weights", ("a",), ("1", "2"), np.array([[0.2, 0.8]])), look=look, precision=0)
    assert f"0 {lowest}" not in whole and f"1 {look.bars[-1]}" in whole


@pytest.mark.parametrize("columns", [30, 50, 80])
@pytest.mark.parametrize("kind", ["weights", "scores"])
def test_an_ascii_head_ends_where_its_column_s_digits_end(kind, columns):
    heads = ("a very long head name", "b", "我们的", "x\u0301yz", "😀 smile face")
    values = np.random.default_rng(0).dirichlet(np.ones(len(heads)), size=2)
    out = _drawn(Block("w", kind, ("a", "b"), heads, values), columns, table.Look(ascii=True))
    lines = out.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("|-"):  # the rule under a header: the header above, the rows below
            header = lines[k - 1].split("|")[2:-1]
            for row in lines[k + 1:]:
                if not row.startswith("|"):
                    break
                for head, cell in zip(header, row.split("|")[2:-1], strict=True):
                    number = re.search(r"-?[0-9]+\.[0-9]+", cell)
                    assert number is not None
                    assert width(head.rstrip()) == width(cell[:number.end()]), (head, cell)


ODD = ["a", "x1", "\u200b", "\u0301", "e\u0301", "我", "喜欢", "😀", "👍🏽", "👨\u200d👩\u200d👧", "❤\ufe0f", "\u200d", "\ufe0f",
       "\u2060", " "]
ODD_LABELS = st.lists(st.sampled_from(ODD), min_size=1, max_size=4).map("".join).filter(lambda s: not s[-1].isspace())


@settings(max_examples=300, deadline=None)
@given(st.lists(ODD_LABELS, min_size=1, max_size=4), st.lists(ODD_LABELS, min_size=1, max_size=4))
def test_every_line_of_a_block_is_as_wide_as_the_others_whatever_its_labels_hold(labels, heads):
    """zero-width, combining, joining, wide and emoji characters: every line of a table is one width, measured as
    the rich tables measure it; in plain text and in the tables' own lines"""
    values = np.full((len(labels), len(heads)), 0.25)
    for kind in ("x", "weights"):
        block = Block("X", kind, tuple(labels), tuple(heads), values)
        lines = plain.block(block, 4, "")[1:]
        assert len({cell_len(line) for line in lines}) == 1, lines
        drawn = [line for line in _drawn(block).splitlines()[3:] if line.startswith(" ")]
        assert len({cell_len(line) for line in drawn}) == 1, drawn


def test_a_joiner_that_joins_nothing_is_shown_as_an_escape_and_an_emoji_sequence_as_it_is():
    assert visible("x\u200d") == "x\\u200d" and visible("x\u200d y") == "x\\u200d y"
    assert visible("👨\u200d👩\u200d👧") == "👨\u200d👩\u200d👧" and visible("a\u200b\u0301") == "a\u200b\u0301"


def test_a_joiner_between_letters_is_shown_as_an_escape_as_terminals_draw_both_letters():
    assert visible("z\u200bw\u200dj") == "z\u200bw\\u200dj" and visible("a\u200d😀") == "a\\u200d😀"
    assert visible("🏳\ufe0f\u200d🌈") == "🏳\ufe0f\u200d🌈"


@pytest.mark.parametrize("fmt", ["plain", "table", "markdown"])
def test_a_label_with_zero_width_characters_keeps_the_columns_in_line(attntrace, tmp_path, fmt):
    path = tmp_path / "zw.json"
    path.write_text(json.dumps({"tokens": ["z\u200bw\u200dj", "ab", "c"], "x": [[1, 0], [0, 1], [1, 1]]}),
                    encoding="utf-8")
    out = attntrace("run", path, "--format", fmt, "--ascii").out
    rows = [line for line in out.splitlines() if re.match("^\\|? ?(z\u200bw|ab |c )", line)][:3]
    assert len(rows) == 3 and "\\u200d" in rows[0] and "\u200d" not in out, rows
    if fmt != "markdown":  # as a terminal draws them: a zero-width space takes no column, every other character one
        assert len({len(row.replace("\u200b", "")) for row in rows}) == 1, rows
        assert len({cell_len(row) for row in rows}) == 1, rows


def test_the_who_lines_pad_each_token_as_shown():
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    problem = Problem(x=x, w_q=np.eye(2), w_k=np.eye(2), w_v=np.eye(2), tokens=("x\u200d", "ab", "我"))
    notes = [item.text for item in who_steps(trace(problem), "who")[0].items if isinstance(item, Note)]
    lines = plain.render_step(Step(0, "who", tuple(Note(text) for text in notes)), 4).splitlines()[3:-1]
    assert len(lines) == 3 and len({cell_len(line.partition(" → ")[0]) for line in lines}) == 1, lines
    assert len({cell_len(line.split(" · ")[0]) for line in lines}) == 1, lines


PROBLEMS = [None, *sorted(str(p.relative_to(ROOT)) for p in SAMPLES.glob("*.json")), "samples/homework/problem.json",
            "samples/worked_example_csv"]
EXPERIMENTS = ["symmetric", "permute", "similarity", "temperature"]


@pytest.mark.parametrize("problem", PROBLEMS)
def test_every_plain_line_of_every_command_fits_in_80_columns(attntrace, problem):
    """piped (into head, say), every command writes plain text no wider than the 80 columns promised; a worksheet
    keeps its labels whole (check reads its rows back by them), so only one whose labels fit is measured"""
    os.chdir(ROOT)
    given = [problem] if problem else []
    commands = [["run", *given], ["step", *given, "--input", "1"], ["explain", *given, "--input", "1"],
                *(["experiment", name, *given] for name in EXPERIMENTS)]
    if problem != "samples/labels.json":
        commands += [["worksheet", *given, "--format", "plain"], ["worksheet", *given, "--key", "--format", "plain"]]
    for command in commands:
        r = attntrace(*command)
        assert r.code == 0 or (command[:2] == ["experiment", "symmetric"] and "cross" in str(problem)), r.err
        wide = [line for line in r.out.splitlines() if cell_len(line) > 80]
        assert not wide, (command, wide[:3])


def test_a_plain_worksheet_keeps_long_labels_whole_and_is_read_back(attntrace, tmp_path):
    problem = json.loads((SAMPLES / "labels.json").read_text(encoding="utf-8"))
    problem["tokens"] = ["alpha beta gamma delta epsilon zeta eta", "b", "another long label with forty chars okay", "d"]
    path, key = tmp_path / "p.json", tmp_path / "key.txt"
    path.write_text(json.dumps(problem), encoding="utf-8")
    assert attntrace("worksheet", path, "--key", "--format", "plain", "-o", key).code == 0
    text = key.read_text(encoding="utf-8")
    assert "\nalpha beta gamma delta epsilon zeta eta  " in text
    assert max(map(cell_len, text.split("\n\n")[1].splitlines())) <= 80  # the instructions, broken to fit
    r = attntrace("check", key, "--problem", path)
    assert r.code == 0 and "PASS" in r.out, r.err


def test_a_long_line_breaks_between_words_and_its_further_lines_are_indented():
    lines = wrapped("    a " + "word " * 30 + "end", 40, "      ")
    assert lines[0].startswith("    a word") and all(line.startswith("      word") for line in lines[1:-1])
    assert all(width(line) <= 40 and not line.endswith(" ") for line in lines)
    assert " ".join(line.strip() for line in lines) == "a " + "word " * 30 + "end"
    assert wrapped("我" * 50, 40, "  ") == ["我" * 20, "  " + "我" * 19, "  " + "我" * 11]  # no space to break at
    assert wrapped("short", 40) == ["short"]


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("fmt", ["plain", "table"])
def test_the_worked_examples_note_keeps_its_lists_of_numbers_on_one_line(attntrace, lang, fmt):
    out = attntrace("run", "--format", fmt, "--lang", lang, "--ascii").out
    for numbers in ("1.9366 6.6831 1.5951", "[2.0, 7.0, 1.5]", "[0.0, 0.5, 0.5]", "[0.1, 0.5, 0.5]", "2.1 7.2 1.8",
                    "--precision 1"):
        assert numbers in out, numbers
    if lang == "zh":
        assert "步骤 5 " in out and "1 位小数" in out


@pytest.mark.parametrize("columns", range(24, 81, 7))
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_formula_or_a_list_of_numbers_is_never_broken_when_it_fits_a_line(columns, lang):
    from attntrace import language
    from attntrace.core.decode import decode
    from attntrace.files.problemfile import load
    from attntrace.views.decode import decode_steps

    language.use(lang)
    try:
        notes = [item.text for step in decode_steps(decode(load(str(SAMPLES / "causal.json")), window=2, sinks=1))
                 for item in step.items if isinstance(item, Note)]
    finally:
        language.use("en")
    formulas = ("(t − 1) mod W + 1", "S + (t − S − 1) mod W + 1", "d_model · (heads · d_k + kv_heads · (d_k + d_v))",
                "c · kv_heads · (d_k + d_v)", "q · k / sqrt(d_k)")
    for note in notes:
        lines = wrapped(note, columns, "  ")
        assert all(width(line) <= columns for line in lines), lines
        assert "".join(line.strip() for line in lines).replace(" ", "") == note.replace(" ", "")
        joined = "\n".join(lines)
        for formula in formulas:
            if formula in note and width(formula) + 8 <= columns - 2:  # with the words it is written against
                assert formula in joined, (formula, lines)


@given(st.lists(st.sampled_from(["the", "weights", "我", "喜欢注意力", "步骤", "（", "）", "，", "x1"]), max_size=20),
       st.lists(st.sampled_from(["1.9366", "-0.25", "7", "1e-12"]), min_size=2, max_size=5),
       st.lists(st.sampled_from(["are", "得分", "softmax", "。"]), max_size=20), st.integers(20, 80))
def test_wrapping_never_splits_a_list_of_numbers_that_fits(before, numbers, after, columns):
    listed = " ".join(numbers)
    text = " ".join([*before, listed, *after]).strip()
    lines = wrapped(text, columns, "  ")
    assert all(width(line) <= columns for line in lines)
    assert "".join(line.strip() for line in lines).replace(" ", "") == text.replace(" ", "")
    if width(listed) <= columns - 2:
        assert any(listed in line for line in lines), lines


def test_a_plain_block_cuts_a_label_and_a_head_too_wide_for_80_columns_but_never_a_number():
    long = "a token label long enough to be cut in any terminal table: 72 characters"
    values = np.array([[-120.0, -26.0, 3.5, -56.0], [1.0, 2.0, 3.0, 4.0]])
    lines = plain.block(Block("score", "scores", (long, "b"), ("我", "喜欢", "x", long), values), 4, "Step 4 · ")
    assert max(map(width, lines)) <= 80 and len(lines) == 4  # one run of columns: the label and the head both cut
    assert "a token label...  -120.0000" in lines[2] and lines[1].endswith("a token l...")
    assert "-56.0000" in lines[2] and "4.0000" in lines[3]


def test_step_8_names_the_bias_and_the_cap_too():
    problem = replace(_problem(True), alibi=True, softcap=5.0)
    assert run_steps(trace(problem))[-1].heading.endswith("softmax(5 · tanh((Q K^T / √d_k + bias) / 5)) V")


def _rows(text: str, columns: int) -> int:
    """the rows text takes on a terminal columns wide"""
    return sum(max(1, -(-cell_len(re.sub(r"\x1b\[[0-9;]*m", "", line)) // columns)) for line in text.split("\n")[:-1])


def _paused(args: list[str], columns: int, rows: int) -> tuple[list[str], str, str]:
    """what each screen of a paused command shows in a terminal of rows and columns, what it shows unpaused, and
    its prompts"""
    out, err, marks = io.StringIO(), io.StringIO(), []

    def key() -> str:
        marks.append(len(out.getvalue()))
        return "\r"

    def terminal(**kw: object) -> Environment:
        return Environment(stdout_isatty=True, stdin_isatty=True, no_color=False, width=columns, height=rows,
                           stdout=out, stderr=err, **kw)  # type: ignore[arg-type]

    assert cli.main([*args, "--pause"], env=terminal(read_key=key)) == 0
    text, cuts = out.getvalue(), [0, *marks, len(out.getvalue())]
    out.seek(0)
    out.truncate()
    assert cli.main(args, env=terminal()) == 0
    return [text[a:b] for a, b in zip(cuts, cuts[1:])], out.getvalue(), err.getvalue()


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("args", [["run"], ["step", "--input", "2"], ["explain", "--input", "1"],
                                  ["run", "samples/labels.json"], ["explain", "samples/two_heads.json", "--input", "2"],
                                  ["run", "--format", "plain"]])
def test_each_paused_screen_fits_a_30_row_terminal_and_together_they_show_it_all(args, columns):
    os.chdir(ROOT)
    screens, whole, prompts = _paused(args, columns, 30)
    assert max(_rows(screen, columns) for screen in screens) <= 29  # and the prompt below them
    assert "".join(screens) == whole


def test_a_step_longer_than_the_screen_goes_on_after_a_prompt_that_says_so():
    os.chdir(ROOT)
    screens, _, prompts = _paused(["explain", "samples/two_heads.json", "--input", "2", "--color", "never"], 80, 30)
    said = re.findall(r"Enter: (more of this step|next step)", prompts)
    assert len(said) == len(screens) - 1 and "more of this step" in said and said.count("next step") == 4
    for screen, prompt in zip(screens[1:], said):  # a step starts a screen of its own, after the blank line before it
        assert screen.lstrip("\n").startswith("Step ") == (prompt == "next step"), screen[:40]


@pytest.mark.parametrize("args", [["run"], ["explain", "samples/two_heads.json", "--input", "2"]])
def test_in_a_real_30_row_terminal_each_paused_screen_fits_above_its_prompt(args):
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    child = pexpect.spawn(sys.executable, ["-m", "attntrace", *args, "--pause"], cwd=str(ROOT), encoding="utf-8",
                          env={**env, "TERM": "xterm"}, timeout=20, dimensions=(30, 80))
    screens = []
    while child.expect([r"── Enter: (?:next step|more of this step) · q: quit ──", pexpect.EOF]) == 0:
        screens.append(re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", child.before).lstrip("\r"))
        child.send("\r")
    child.close()
    assert child.exitstatus == 0 and len(screens) > 4
    assert max(screen.count("\n") for screen in screens) <= 29, max(screens, key=lambda s: s.count("\n"))
