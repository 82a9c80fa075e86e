"""Labels and names are shown, never obeyed: no control or bidi character, markdown, HTML or formula gets through."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attntrace.escape import comment, spreadsheet, visible
from attntrace.render import csvfmt, markdown, plain, table
from attntrace.views.page import Block, Note, Step
from attntrace.views.text import width

# every character that must never reach the output raw: C0 and C1 controls and DEL, the bidi marks, embeddings,
# overrides and isolates, the line separators; the formats' own newlines are allowed where each test says so
HIDDEN = ({chr(c) for c in range(0x20)} | {chr(c) for c in range(0x7F, 0xA0)}
          | set("\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"))
SGR = re.compile(r"\x1b\[[0-9;]*m")  # rich's own colour codes, the only escape sequence a coloured table may hold
FORMULA = ("=", "+", "-", "@", "\t", "\r")

TOKENS = [
    "\x1b[31mred\x1b[0m", "bell\x07", "car\rret", "back\bspace", "b\u202eidi", "new\nline", "<script>alert(1)</script>",
    "pi|pe", "a&b", "=cmd|' /C calc'!A0", "\x1b]0;title\x07", "+1+2", "@SUM(A1)", "\ttab", "[bold]b[/bold]", "x > y",
]
NAME = "evil\x1b[2J\x07\r\b\u202e\n# Heading\n<script>alert(1)</script> | & =cmd|' /C calc'!A0"
# how plain text and the table show each token
SHOWN = [
    "\\x1b[31mred\\x1b[0m", "bell\\x07", "car\\x0dret", "back\\x08space", "b\\u202eidi", "new\\x0aline",
    "<script>alert(1)</script>", "pi|pe", "a&b", "=cmd|' /C calc'!A0", "\\x1b]0;title\\x07", "+1+2", "@SUM(A1)", "\\x09tab",
    "[bold]b[/bold]", "x > y",
]


@pytest.fixture
def evil(tmp_path):
    rng = np.random.default_rng(7)
    n = len(TOKENS)
    problem = {"name": NAME, "tokens": TOKENS, "x": rng.integers(-3, 4, size=(n, 2)).tolist(),
               **{w: rng.integers(-2, 3, size=(2, 2)).tolist() for w in ("w_q", "w_k", "w_v")}}
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(problem), encoding="utf-8")
    return path


def _no_hidden(text: str, allowed: str = "\n") -> None:
    raw = sorted({hex(ord(c)) for c in text if c in HIDDEN and c not in allowed})
    assert not raw, f"raw control or bidi characters in the output: {raw}"


def _pipes(line: str) -> int:
    """the unescaped pipes of a markdown table row"""
    return len(re.findall(r"(?<!\\)(?:\\\\)*\|", line))


COMMANDS = [("run",), ("step", "--input", "6")]


@pytest.mark.parametrize("command", COMMANDS)
def test_plain_shows_every_control_and_bidi_character_as_an_escape(attntrace, evil, command):
    r = attntrace(*command, evil, "--format", "plain")
    assert r.code == 0, r.err
    _no_hidden(r.out)
    for shown in SHOWN:
        assert shown in r.out
    assert "Step 4 · attention scores for input 6 (new\\x0aline)\n" + "=" * 51 + "\n" in r.out


@pytest.mark.parametrize("colour", ["never", "always"])
@pytest.mark.parametrize("command", COMMANDS)
def test_the_table_shows_labels_and_markup_as_text(attntrace, evil, command, colour):
    r = attntrace(*command, evil, "--format", "table", "--color", colour)
    assert r.code == 0, r.err
    if colour == "always":
        assert SGR.search(r.out)
    _no_hidden(SGR.sub("", r.out))
    for shown in SHOWN:
        assert shown in r.out or shown in SGR.sub("", r.out)


@pytest.mark.parametrize("command", COMMANDS)
def test_markdown_escapes_html_pipes_and_newlines(attntrace, evil, command):
    r = attntrace(*command, evil, "--format", "markdown")
    assert r.code == 0, r.err
    _no_hidden(r.out)
    assert "<" not in r.out and ">" not in r.out
    assert re.search(r"&(?!lt;|gt;|amp;)", r.out) is None
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in r.out and "pi\\|pe" in r.out and "a&amp;b" in r.out
    assert "\\\\x1b[31mred\\\\x1b[0m" in r.out and "new\\\\x0aline" in r.out and "b\\\\u202eidi" in r.out
    lines = r.out.split("\n")
    assert all(line.startswith("## Step ") for line in lines[1:] if line.startswith("#"))
    assert lines[0].startswith("# ") and "\\x0a" in lines[0]  # the problem's name, as a title on one line
    assert sum(line.startswith("|---|") for line in lines) > 5
    header = 0
    for k, line in enumerate(lines):  # every row of a table has as many cells as its header
        if line.startswith("|") and not lines[k - 1].startswith("|"):
            header = _pipes(line)
        if line.startswith("|"):
            assert _pipes(line) == header, line


def _rows(text: str) -> list[list[str]]:
    """the CSV's table rows, its "# ..." title and note lines left out"""
    return [row for row in csv.reader(io.StringIO(text)) if row and not row[0].startswith("#")]


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("command", COMMANDS)
def test_csv_neutralises_formulas_and_keeps_numbers(attntrace, evil, command):
    r = attntrace(*command, evil, "--format", "csv")
    assert r.code == 0, r.err
    _no_hidden(r.out)
    rows = _rows(r.out)
    cells = [cell for row in rows for cell in row]
    assert all(_number(cell) for cell in cells if cell.startswith(FORMULA))
    labels = {row[0] for row in rows}
    assert {"'=cmd|' /C calc'!A0", "'+1+2", "'@SUM(A1)", "'\\x09tab", "\\x1b[31mred\\x1b[0m", "new\\x0aline"} <= labels
    headers = {cell for row in rows if row[0] == "" for cell in row}
    assert "'=cmd|' /C calc'!A0" in headers and "'@SUM(A1)" in headers
    assert any(re.fullmatch(r"-\d+\.\d{4}", cell) for cell in cells), "negative numbers are written as they are"
    for line in r.out.split("\n"):
        assert line == "" or line.startswith(("# ", '"# ')) or next(csv.reader([line])) in rows


def test_json_keeps_the_labels_and_the_name_exactly(attntrace, evil):
    r = attntrace("run", evil, "--format", "json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["tokens"] == TOKENS and data["name"] == NAME
    assert data["problem"]["tokens"] == TOKENS and data["problem"]["name"] == NAME


def _text(svg: ET.Element) -> str:
    return "".join(svg.itertext()).replace("\xa0", " ")


@pytest.mark.parametrize("command", COMMANDS)
def test_the_svg_export_is_well_formed_and_shows_the_labels(attntrace, evil, tmp_path, command):
    svg = tmp_path / "t.svg"
    r = attntrace(*command, evil, "--format", "plain", "--export-svg", svg)
    assert r.code == 0, r.err
    text = svg.read_text(encoding="utf-8")
    _no_hidden(text, allowed="\n")
    shown = _text(ET.fromstring(text))  # raises on a document that is not well-formed XML
    for label in SHOWN:
        assert label in shown, label


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        self.tags.append(tag)

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        self.text.append(data)


@pytest.mark.parametrize("command", COMMANDS)
def test_the_html_export_holds_the_labels_as_text(attntrace, evil, tmp_path, command):
    page = tmp_path / "t.html"
    r = attntrace(*command, evil, "--format", "plain", "--export-html", page)
    assert r.code == 0, r.err
    text = page.read_text(encoding="utf-8")
    _no_hidden(text, allowed="\n")
    parser = _Page()
    parser.feed(text)
    parser.close()
    assert "script" not in parser.tags and "bold" not in parser.tags
    shown = "".join(parser.text)
    for label in SHOWN:
        assert label in shown, label


def test_a_worksheet_shows_the_labels_of_its_tables_safely(attntrace, evil):
    r = attntrace("worksheet", evil, "--format", "markdown", "--key")
    assert r.code == 0, r.err
    tables = r.out[r.out.index("\n## Step 1"):]  # after the instructions, which worksheet.py writes
    _no_hidden(tables)
    assert "<" not in tables and "&lt;script&gt;" in tables
    assert all(line.startswith("## Step ") for line in tables.split("\n") if line.startswith("#"))


@pytest.mark.parametrize("fmt", ["markdown", "plain"])
def test_a_worksheet_name_adds_no_heading_and_no_html(attntrace, evil, fmt):
    r = attntrace("worksheet", evil, "--format", fmt)
    assert r.code == 0, r.err
    _no_hidden(r.out)
    assert "<script>" not in r.out or fmt == "plain"
    assert [line for line in r.out.split("\n") if line.startswith("# ")] == (
        ["# Worksheet: evil\\\\x1b[2J\\\\x07\\\\x0d\\\\x08\\\\u202e\\\\x0a# Heading\\\\x0a"
         "&lt;script&gt;alert(1)&lt;/script&gt; \\| &amp; =cmd\\|' /C calc'!A0"] if fmt == "markdown" else [])
    if fmt == "plain":  # the title line, broken to fit 80 columns
        assert " ".join(line.strip() for line in r.out.split("\n\n")[0].split("\n")) == (
            "Worksheet: evil\\x1b[2J\\x07\\x0d\\x08\\u202e\\x0a# Heading\\x0a<script>alert(1)</script> | & =cmd|' /C calc'!A0")


@pytest.mark.parametrize("fmt, suffix", [("markdown", ".md"), ("plain", ".txt")])
def test_a_worksheet_with_such_labels_is_read_back_by_check(attntrace, tmp_path, fmt, suffix):
    problem = {"name": "n", "tokens": ["a&b", "<c>|\\", "d\x1be\u202e\n"], "x": [[1, 0], [0, 1], [1, 1]],
               "w_q": [[1, 0], [0, 1]], "w_k": [[1, 1], [0, 1]], "w_v": [[2, 0], [1, 1]]}
    path, sheet = tmp_path / "p.json", tmp_path / f"key{suffix}"
    path.write_text(json.dumps(problem), encoding="utf-8")
    sheet.write_text(attntrace("worksheet", path, "--key", "--format", fmt).out, encoding="utf-8")
    r = attntrace("check", sheet, path)
    assert r.code == 0 and "PASS" in r.out, r.out + r.err


# the escapes themselves


def test_visible_writes_controls_bidi_separators_and_non_characters_as_escapes():
    assert visible("a\x1b[1mb\x07\r\b\t\n\x7f\x85\u202e\u2066\u061c\u2028\ufffe\ud800") == (
        "a\\x1b[1mb\\x07\\x0d\\x08\\x09\\x0a\\x7f\\x85\\u202e\\u2066\\u061c\\u2028\\ufffe\\ud800")
    assert visible("猫 · x1 → é ∑") == "猫 · x1 → é ∑"


def test_every_character_visible_escapes_is_one_a_printable_text_cannot_hold():
    """visible passes a printable text as it is: that is right only if no escaped character is printable"""
    from attntrace.escape import _HIDDEN

    hidden = re.compile(_HIDDEN)
    escaped = [chr(c) for c in range(0x110000) if hidden.fullmatch(chr(c))]
    assert len(escaped) > 2000 and not any(c.isprintable() for c in escaped)
    assert all(visible(f"a{c}b") != f"a{c}b" for c in escaped)


@pytest.mark.parametrize("text, cell", [
    ("=1+1", "'=1+1"), ("+1+2", "'+1+2"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\\x09x"), ("\rx", "'\\x0dx"),
    ("-0.25", "-0.25"), ("+3", "+3"), ("-1e5", "-1e5"), ("-inf", "'-inf"), ("-", "'-"), ("a=b", "a=b"), ("", ""), ("1", "1"),
    (" =1+1", "' =1+1"), ("\u3000@x", "'\u3000@x"), (" -1", " -1"), ("-١", "'-١"), ("\t-1", "'\\x09-1"),
])
def test_a_csv_text_cell_that_a_spreadsheet_would_run_starts_with_a_quote(text, cell):
    assert spreadsheet(text) == cell


@pytest.mark.parametrize("text, line", [
    ("Step 4 · score(1, j) = q1 · k_j", "# Step 4 · score(1, j) = q1 · k_j"),
    ("score(1, j), masked", "# score(1, j), masked"),
    ("a, -0.25", "# a, -0.25"),
    ("input 1 (x,=cmd|' /C calc'!A0): masked", '"# input 1 (x,=cmd|\' /C calc\'!A0): masked"'),
    ('a, "=1+1"', '# a, "=1+1"'),  # a quote after a space is text, to a spreadsheet as to the csv module
    ('a,"=1+1"', '"# a,""=1+1"""'),
    ("a,@x", '"# a,@x"'),
])
def test_a_csv_title_line_hides_no_formula_after_a_comma(text, line):
    assert comment(text) == line
    assert not any(cell.lstrip().startswith(("=", "@")) for cell in next(csv.reader([line])))


# any label at all, through the renderers


labels = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


def _shown(text: str) -> str:
    """how a label should look in plain text, written out independently of the renderers"""
    hidden = HIDDEN | {"\ufffe", "\uffff"}
    return "".join((f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}") if c in hidden else c for c in text)


def _markdown(text: str) -> str:
    entities = {"\\": "\\\\", "|": "\\|", "<": "&lt;", ">": "&gt;", "&": "&amp;"}
    return "".join(entities.get(c, c) for c in _shown(text))


def _cell(text: str) -> str:
    """a CSV text cell: a quote before anything a spreadsheet would run, numbers as they are"""
    number = re.fullmatch(r" *[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)? *", text)
    runs = (text.startswith(FORMULA) or text.lstrip().startswith(FORMULA)) and not number
    return "'" * runs + _shown(text)


def _step(rows: list[str], cols: list[str], title: str, note: str) -> Step:
    values = np.arange(len(rows) * len(cols), dtype=float).reshape(len(rows), len(cols)) - 2.5
    values[0, 0] = -np.inf
    return Step(4, f"Step 4 · attention scores for input 1 ({rows[0]})",
                (Block(title, "weights", tuple(rows), tuple(cols), values), Note("note: " + note), Note("note: " + note)))


def _shown_step(step: Step) -> Step:
    """the same step with every text already made visible"""
    items = [Note(_shown(item.text)) if isinstance(item, Note) else
             Block(_shown(item.title), item.kind, tuple(map(_shown, item.rows)), tuple(map(_shown, item.cols)), item.values)
             for item in step.items]
    return Step(step.number, _shown(step.heading), tuple(items))


fuzzed = given(st.lists(labels, min_size=1, max_size=4), st.lists(labels, min_size=1, max_size=3), labels, labels)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@fuzzed
def test_any_label_in_plain_text_is_shown_visibly_on_its_line(rows, cols, title, note):
    step = _step(rows, cols, title, note)
    out = plain.render_step(step, 2)
    _no_hidden(out)
    assert out == plain.render_step(_shown_step(step), 2)
    lines = out.split("\n")
    assert lines[1] == "=" * width(lines[0]) and lines.count("note: " + _shown(note)) == 2
    assert lines[3] == f"Step 4 · {_shown(title)}  [{len(rows)} x {len(cols)}]"


@FUZZ
@fuzzed
def test_any_label_in_markdown_is_text(rows, cols, title, note):
    out = markdown.render_step(_step(rows, cols, title, note), 2)
    _no_hidden(out)
    assert "<" not in out and ">" not in out and re.search(r"&(?!lt;|gt;|amp;)", out) is None
    lines = out.split("\n")
    assert lines[0] == f"## Step 4 · attention scores for input 1 ({_markdown(rows[0])})"
    assert not any(line.startswith("#") for line in lines[1:])
    assert f"**Step 4 · {_markdown(title)}** [{len(rows)} x {len(cols)}]" in lines
    assert lines.count(f"- note: {_markdown(note)}") == 2
    body = [line for line in lines if line.startswith("| ")]
    assert body[0] == "| | " + " | ".join(map(_markdown, cols)) + " |"
    assert [line.split(" | ")[0] for line in body[1:]] == [f"| {_markdown(label)}" for label in rows]
    assert len(body) == 1 + len(rows) and {_pipes(line) for line in body} == {len(cols) + 2}


@FUZZ
@fuzzed
def test_any_label_in_csv_is_a_cell_no_spreadsheet_runs(rows, cols, title, note):
    out = csvfmt.render_step(_step(rows, cols, title, note), 2)
    _no_hidden(out)
    parsed = [row for row in csv.reader(io.StringIO(out)) if row]
    assert len(parsed) == 1 + 1 + len(rows) + 2
    table = parsed[1:-2]
    assert table[0] == ["", *map(_cell, cols)] and [row[0] for row in table[1:]] == list(map(_cell, rows))
    assert {len(row) for row in table} == {1 + len(cols)} and table[1][1] == "-inf"
    written = [line for line in out.split("\n") if line]
    lines = [written[0], *written[-2:]]
    expected = ["# Step 4 · " + _shown(title), "# note: " + _shown(note), "# note: " + _shown(note)]
    assert [line if line.startswith("#") else next(csv.reader([line]))[0] for line in lines] == expected
    for row in parsed:
        for cell in row:
            assert not cell.lstrip().startswith(FORMULA) or cell == "-inf" or re.fullmatch(r"\s*[+-][0-9.]+", cell), cell


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@fuzzed
def test_any_label_in_a_coloured_table_and_its_exports_is_text(rows, cols, title, note):
    console = table.console(io.StringIO(), True, 120, record=True)
    console.print(table.render_step(_step(rows, cols, title, note), 2, 120))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    _no_hidden(SGR.sub("", out))
    assert "".join(f"Step 4 · {_shown(title)}".split()) in "".join(SGR.sub("", out).split())  # rich may wrap the title
    ET.fromstring(console.export_svg(clear=False))
    page = _Page()
    page.feed(console.export_html(clear=False))
    page.close()
    assert set(page.tags) <= {"html", "head", "meta", "style", "body", "pre", "code", "span"}, page.tags


def test_json_keeps_labels_exactly_but_writes_bidi_and_separators_as_escapes(attntrace, tmp_path):
    import json

    path = tmp_path / "p.json"
    tokens = ["a\u202eb", "c\u2028d"]
    path.write_text(json.dumps({"x": [[1, 0], [0, 1]], "tokens": tokens}), encoding="utf-8")
    r = attntrace("run", path, "--format", "json")
    assert "\u202e" not in r.out and "\u2028" not in r.out and json.loads(r.out)["tokens"] == tokens


def test_an_error_quoting_a_files_text_is_shown_never_obeyed(attntrace, tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"x": [[1]], "\\u001b[31mred": 1}', encoding="utf-8")
    r = attntrace("run", path)
    assert r.code == 1 and "\x1b" not in r.err and r.err.count("\n") == 1


def test_a_note_with_a_quote_after_a_comma_stays_one_csv_line():
    out = csvfmt.render_step(_step([""], [""], "", ',"'), 2)
    parsed = [row for row in csv.reader(io.StringIO(out)) if row]
    assert parsed[-2:] == [['# note: ,"'], ['# note: ,"']]  # each note one cell on its own line, not run together
