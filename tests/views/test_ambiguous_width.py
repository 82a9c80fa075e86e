"""Chinese terminals may draw East Asian "ambiguous" characters (box lines, ·, ×, √, Σ, Greek, bar glyphs) two
columns wide: in Chinese, tables are drawn in ASCII by default, and every table stays aligned whether such a
character takes one column or two."""

import unicodedata

import pytest

from tests.conftest import SAMPLES

BOX = set("━─│┃┏┓┗┛╸╺▁▂▃▄▅▆▇█")


def width(text: str, ambiguous: int) -> int:
    """the columns a terminal gives text when an ambiguous character takes `ambiguous` columns"""
    total = 0
    for ch in text:
        if unicodedata.combining(ch) or ch in "\u200b\u200c\u200d\ufeff":
            continue
        kind = unicodedata.east_asian_width(ch)
        total += 2 if kind in "WF" else ambiguous if kind == "A" else 1
    return total


def aligned(text: str, ambiguous: int) -> list[str]:
    """the blocks of a rendered text whose rows differ in width: a block is the lines between blank lines, its rows
    every line after its title (a heading's underline is its one row, and must match the heading)"""
    wrong = []
    for block in text.split("\n\n"):
        lines = [line.rstrip() for line in block.strip("\n").splitlines()]
        if len(lines) == 2 and set(lines[1]) <= set("=-#"):  # a heading and its underline
            rows = lines
        elif any(line.startswith(("+", "|")) for line in lines):  # tables drawn with lines, each after its title
            rows = [line if line.startswith(("+", "|")) else "" for line in lines]
        else:  # plain tables, each part of a wide one after its "(columns A to B)"
            rows = ["" if line.startswith(("(", "（")) else line for line in lines[1:]]
        for part in "\n".join(rows).split("\n\n"):
            part_rows = [row for row in part.splitlines() if row]
            if len({width(row, ambiguous) for row in part_rows}) > 1 and not _wrapped(part_rows):
                wrong.append(part)
    return wrong


def _wrapped(rows: list[str]) -> bool:
    """prose broken at the terminal's width (continuation lines indented), not a table"""
    return not any("  " in row.strip() for row in rows) or any(row.startswith("  ") and not row.strip()[:1].isdigit()
                                                                 for row in rows[1:])


@pytest.mark.parametrize("sample", [None, "scaled.json", "causal.json", "labels.json", "homework/problem.json"])
@pytest.mark.parametrize("fmt", ["plain", "table"])
def test_chinese_output_is_aligned_when_ambiguous_characters_take_one_column_or_two(attntrace, terminal, sample, fmt):
    terminal(width=80)
    path = [] if sample is None else [SAMPLES / sample]
    r = attntrace("run", *path, "--lang", "zh", "--format", fmt, "--color", "never")
    assert r.code == 0, r.err
    assert not BOX & set(r.out)  # ASCII lines and bars
    for ambiguous in (1, 2):
        assert aligned(r.out, ambiguous) == [], ambiguous


def test_ascii_is_the_default_in_chinese_only_and_attntrace_ascii_decides(attntrace, terminal):
    terminal(width=80)
    english = attntrace("run", "--color", "never").out
    chinese = attntrace("run", "--lang", "zh", "--color", "never").out
    assert BOX & set(english) and not BOX & set(chinese)
    assert BOX & set(attntrace("run", "--lang", "zh", "--color", "never", env={"ATTNTRACE_ASCII": "0"}).out)
    assert not BOX & set(attntrace("run", "--color", "never", env={"ATTNTRACE_ASCII": "1"}).out)
    assert not BOX & set(attntrace("run", "--ascii", "--color", "never", env={"ATTNTRACE_ASCII": "0"}).out)


@pytest.mark.parametrize("yes", ["1", "true", "yes", "on", "TRUE", "Yes", " on "])
@pytest.mark.parametrize("no", ["0", "false", "no", "off", "False", "NO", "Off"])
def test_attntrace_ascii_takes_the_usual_spellings_of_yes_and_no(attntrace, terminal, yes, no):
    terminal(width=80)
    assert not BOX & set(attntrace("run", "--color", "never", env={"ATTNTRACE_ASCII": yes}).out)
    assert BOX & set(attntrace("run", "--lang", "zh", "--color", "never", env={"ATTNTRACE_ASCII": no}).out)


@pytest.mark.parametrize("value", ["maybe", "2", "y", "yess", "true1", "\x1b[31m", "ja"])
@pytest.mark.parametrize("command", [["run"], ["flash", "--format", "json"], ["decode"], ["explain", "--input", "1"]])
def test_any_other_attntrace_ascii_is_refused_in_one_line_naming_it(attntrace, value, command):
    r = attntrace(*command, env={"ATTNTRACE_ASCII": value})
    assert r.code == 2 and r.out == "" and r.err.count("\n") == 1, r.err
    assert r.err.startswith("attntrace: ATTNTRACE_ASCII = ") and "1, true, yes or on" in r.err and "\x1b" not in r.err
    zh = attntrace(*command, "--lang", "zh", env={"ATTNTRACE_ASCII": value})
    assert zh.code == 2 and "ATTNTRACE_ASCII" in zh.err and "或" in zh.err
