"""CSV as people make it: pasted from a spreadsheet (tabs), saved by a European one (semicolons), typed with spaces,
or written with Chinese and Japanese input methods (，、full-width digits, 。as a decimal point): each read, said once."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attntrace.files import csvfile

SEPARATORS = ["\t", ";", " ", "  ", "\u3000", "，", "、", ",", ", "]
WIDE = str.maketrans("0123456789.-+e", "０１２３４５６７８９．－＋ｅ")
cells = st.floats(allow_nan=False, allow_infinity=False, width=64)


def _written(matrix: np.ndarray, separator: str, wide: bool, ideographic_point: bool) -> str:
    lines = [separator.join(repr(float(v)) for v in row) for row in matrix]
    text = "\n".join(lines) + "\n"
    if wide:
        text = text.translate(WIDE)
    return text.replace(".", "。").replace("．", "。") if ideographic_point else text


@settings(max_examples=150, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 4)), elements=cells),
       st.sampled_from(SEPARATORS), st.booleans(), st.booleans())
def test_a_matrix_written_with_any_separator_or_full_width_form_reads_back_the_same(matrix, separator, wide, point):
    read, notes = csvfile.parse(_written(matrix, separator, wide, point), "m.csv", "x")
    assert read.dtype == np.float64 and read.shape == matrix.shape
    assert read.tobytes() == matrix.tobytes()  # bit for bit, -0.0 included
    assert not any("header" in note for note in notes)


@pytest.mark.parametrize("text, said", [
    ("1\t0\t1\t0\n0\t2\t0\t2\n", "tabs"), ("1;0;1;0\n0;2;0;2\n", "semicolons (;)"),
    ("1 0 1 0\n0  2 0 2\n", "spaces"), ("1，0，1，0\n0，2，0，2\n", "full-width commas (，)"),
    ("1、0、1、0\n0、2、0、2\n", "ideographic commas (、)"), ("1\u30000\u30001\u30000\n0\u30002\u30000\u30002\n", "spaces"),
])
def test_each_separator_is_read_and_said_in_one_note(attntrace, tmp_path, text, said):
    (tmp_path / "x.csv").write_text(text, encoding="utf-8")
    r = attntrace("run", "--x", tmp_path / "x.csv", "-f", "json")
    assert r.code == 0, r.err
    notes = [line for line in r.err.splitlines() if "separated by" in line]
    assert notes == [f"note: {tmp_path / 'x.csv'}: values read as separated by {said}"]
    assert "header" not in r.err


def test_commas_are_said_nothing_and_tabs_beside_commas_are_padding(attntrace, tmp_path):
    (tmp_path / "x.csv").write_text("1,\t0, 1\n0,\t2, 0\n")
    r = attntrace("run", "--x", tmp_path / "x.csv", "-f", "json")
    assert r.code == 0 and r.err == ""


def test_a_header_over_spaced_values_is_said(attntrace, tmp_path):
    (tmp_path / "x.csv").write_text("d1 d2 d3\n1 0 1\n0 2 0\n")
    r = attntrace("run", "--x", tmp_path / "x.csv", "-f", "json")
    assert r.code == 0 and f"note: {tmp_path / 'x.csv'}: row 1 (d1, d2, d3) read as a header" in r.err
    assert r.err.count("\n") == 2


def test_full_width_forms_are_read_and_said_in_one_note(attntrace, tmp_path):
    (tmp_path / "x.csv").write_text("１，－２．５\n０。５，\u3000３\n", encoding="utf-8")
    r = attntrace("run", "--x", tmp_path / "x.csv", "-f", "json")
    assert r.code == 0, r.err
    wide = [line for line in r.err.splitlines() if ": read " in line]
    assert wide == [f"note: {tmp_path / 'x.csv'}: read full-width digits, － as a minus sign, ． as a decimal point, "
                    "。 as a decimal point and ideographic spaces"]
    read, _ = csvfile.parse("１，－２．５\n０。５，\u3000３\n", "x.csv", "x")
    assert read.tolist() == [[1.0, -2.5], [0.5, 3.0]]


@pytest.mark.parametrize("text", ["1,5;2,0\n", "1,5\t2,0\n", '"1,5","2,0"\n', "1 2\n1,5 2,0\n", "a\tb\n1,5\t2\n"])
def test_decimal_commas_are_still_refused_with_the_fix(tmp_path, text):
    with pytest.raises(Exception, match="decimal commas"):
        csvfile.parse(text, "x.csv", "x")


@pytest.mark.parametrize("text, expected", [("1,5\n2,5\n", [[1, 5], [2, 5]]), ("a b,c\n1,2\n", [[1, 2]]),
                                            ("1, 2,5\n", [[1, 2, 5]]), ("7\n8\n", [[7], [8]])])
def test_commas_between_values_are_never_taken_for_decimal_commas(text, expected):
    assert csvfile.parse(text, "x.csv", "x")[0].tolist() == expected


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0１9９.．。,，、;\t -－+＋eｅ\u3000#\n\"a", max_size=60))
def test_any_mix_of_forms_loads_or_is_one_error_of_ours(text):
    from attntrace.errors import AttntraceError

    try:
        csvfile.parse(text, "fuzz.csv", "x")
    except AttntraceError as e:
        assert "\n" not in str(e)


@pytest.mark.parametrize("text, column, cell", [("1,a\n2,0\n", 2, '"a"'), ("1,2,x3\n4,5,6\n", 3, '"x3"'),
                                                 ("O,1\n2,0\n", 1, '"O"'), ("# weights\n1;b\n2;0\n", 2, '"b"')])
def test_a_first_row_with_a_number_and_a_typo_is_an_error_not_a_header(attntrace, tmp_path, text, column, cell):
    (tmp_path / "x.csv").write_text(text, encoding="utf-8")
    line = 2 if text.startswith("#") else 1
    r = attntrace("run", "--x", tmp_path / "x.csv", "-f", "json")
    assert r.code == 1 and r.out == "" and r.err == (
        f"attntrace: {tmp_path / 'x.csv'} line {line}, column {column}: expected a number, got {cell}; write a number "
        "there (a first row holding a number is values, not column names)\n")
    zh = attntrace("run", "--x", tmp_path / "x.csv", "-f", "json", "--lang", "zh")
    assert zh.code == 1 and zh.err.count("\n") == 1
    assert f"第 {line} 行第 {column} 列：应为数字，实为 {cell}；请在这里写一个数字" in zh.err


@pytest.mark.parametrize("text", ["d1,d2\n1,2\n", "a,nan\n1,2\n", "query key\n1 2\n", "x，y\n1，2\n"])
def test_a_first_row_with_no_number_is_still_a_header(text):
    read, notes = csvfile.parse(text, "x.csv", "x")
    assert read.tolist() == [[1.0, 2.0]] and any("read as a header" in note for note in notes)


def test_a_typo_below_the_first_row_says_the_fix_without_speaking_of_headers(tmp_path):
    from attntrace.errors import AttntraceError

    with pytest.raises(AttntraceError) as e:
        csvfile.parse("d1,d2\n1,2\n3,a\n", "x.csv", "x")
    assert str(e.value) == 'x.csv line 3, column 2: expected a number, got "a"; write a number there'


@pytest.mark.parametrize("text, expected", [("1，2\n2,0\n", [[1, 2], [2, 0]]), ("1, 2\n3，4\n5，6\n", [[1, 2], [3, 4], [5, 6]]),
                                            ("1，2，3\n4,5,6\n", [[1, 2, 3], [4, 5, 6]]), ("1,2\n3, 4，\n", None)])
def test_full_width_and_ascii_commas_mixed_are_read_with_a_note_naming_them(attntrace, tmp_path, text, expected):
    (tmp_path / "x.csv").write_text(text, encoding="utf-8")
    r = attntrace("run", "--x", tmp_path / "x.csv", "-f", "json")
    if expected is None:  # a trailing separator: an empty cell, named as one
        assert r.code == 1 and "decimal commas" not in r.err
        return
    assert r.code == 0 and json.loads(r.out)["config"]["n"] == len(expected), r.err
    assert csvfile.parse(text, "x.csv", "x")[0].tolist() == expected
    assert r.err == f"note: {tmp_path / 'x.csv'}: read full-width commas (，) as commas\n"
    zh = attntrace("run", "--x", tmp_path / "x.csv", "-f", "json", "--lang", "zh")
    assert zh.code == 0 and "把全角逗号（，）当作逗号" in zh.err and "小数逗号" not in zh.err


def test_decimal_commas_between_full_width_commas_are_still_refused():
    with pytest.raises(Exception, match="decimal commas"):
        csvfile.parse("1,5，2,0\n3,1，4,0\n", "x.csv", "x")
