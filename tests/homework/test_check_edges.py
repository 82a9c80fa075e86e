"""Marking at its edges: tables with nothing to write, sheets of another problem, huge sheets, quoting what was written."""

import json

import pytest

from tests.conftest import SAMPLES

SCALED = SAMPLES / "scaled.json"
ALL_PADDED = ("--mask", "padding", "--padding", "1,2,3")


@pytest.mark.parametrize("fmt", ["json", "markdown", "plain"])
@pytest.mark.parametrize("settings", [ALL_PADDED, ("--mask", "causal,padding", "--padding", "1")])
def test_the_key_of_a_problem_with_a_wholly_masked_table_passes_and_that_table_is_not_asked(attntrace, tmp_path, fmt,
                                                                                             settings):
    key = attntrace("worksheet", SCALED, "--key", "--format", fmt, *settings, *(() if settings == ALL_PADDED else
                                                                                    ("--input", "1")))
    sheet = tmp_path / f"key.{ {'json': 'json', 'markdown': 'md', 'plain': 'txt'}[fmt] }"
    sheet.write_text(key.out, encoding="utf-8")
    r = attntrace("check", sheet, SCALED, "--format", "json", *settings)
    report = json.loads(r.out)
    assert r.code == 0 and report["passed"], r.out
    assert {i["key"] for i in report["items"]} == {"q", "k", "v", "scores", "output"}
    assert report["max_score"] == 5 and report["notes"] == []


def test_a_blank_sheet_of_a_wholly_padded_problem_is_asked_only_what_has_cells(attntrace, tmp_path):
    blank = tmp_path / "blank.json"
    blank.write_text(attntrace("worksheet", SCALED, "--format", "json", *ALL_PADDED).out, encoding="utf-8")
    r = attntrace("check", blank, SCALED, "--format", "json", *ALL_PADDED)
    report = json.loads(r.out)
    assert r.code == 1 and report["max_score"] == 5 and report["score"] == 0
    assert all(i["verdict"] == "not answered" and i["cells_asked"] > 0 for i in report["items"])


def test_numbers_written_in_a_wholly_masked_table_are_noted_not_marked(attntrace, tmp_path):
    key = json.loads(attntrace("worksheet", SCALED, "--key", "--format", "json", *ALL_PADDED).out)
    key["heads"][0]["scaled"] = [[1.0, 2.0, 3.0]] * 3
    sheet = tmp_path / "sheet.json"
    sheet.write_text(json.dumps(key), encoding="utf-8")
    report = json.loads(attntrace("check", sheet, SCALED, "--format", "json", *ALL_PADDED).out)
    assert report["notes"] == ["every cell of the scaled scores is masked, so it asks for nothing; the numbers written "
                               "there are not marked"]
    assert "scaled" not in {i["key"] for i in report["items"]}


def _sheet(tmp_path, doc, name="sheet.json"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", ["plain", "json"])
def test_a_sheet_of_another_problem_says_so_with_its_shape_and_the_problems_file(attntrace, tmp_path, fmt):
    sheet = _sheet(tmp_path, {"heads": [{"head": 1, "q": [[0.5] * 5] * 6, "k": [[0.5] * 5] * 6, "v": [[1.0] * 2] * 6,
                                          "scores": [[1.0] * 6] * 6}]})
    r = attntrace("check", sheet, SCALED, "--format", fmt)
    assert r.code == 2 and r.out == "" and r.err.count("\n") == 1, r.err
    assert "this sheet answers another problem (6 inputs, 6 keys, d_k = 5, d_v = 2): its q is 6 x 5, where " in r.err
    assert f"{SCALED} asks for 3 x 3" in r.err and "6 rows, expected 3" not in r.err


def test_a_lone_table_of_another_problem_says_so_too(attntrace, tmp_path):
    r = attntrace("check", _sheet(tmp_path, {"q": [[0.5] * 5] * 6}), SCALED)
    assert r.code == 2 and "answers another problem (6 inputs, d_k = 5): its q is 6 x 5" in r.err, r.err


@pytest.mark.parametrize(("change", "words"), [
    (lambda h: h.update(v=[list(row) for row in zip(*h["v"])][:2]), "v has 2 rows, expected 3: one per key"),
    (lambda h: h.update(weights=h["weights"] + [h["weights"][0]]), "weights has 4 rows, expected 3: one per input"),
    (lambda h: h.update(q=[row[:2] for row in h["q"]]), "q has 2 columns, expected 3: d_k"),
])
def test_one_table_of_the_wrong_shape_among_right_ones_is_named_as_a_slip(attntrace, tmp_path, change, words):
    key = json.loads(attntrace("worksheet", SCALED, "--key", "--format", "json").out)
    change(key["heads"][0])
    r = attntrace("check", _sheet(tmp_path, key), SCALED)
    assert r.code == 2 and words in r.err and "another problem" not in r.err, r.err


HUGE = 2 << 20  # characters past the first rows: more than a sheet is looked over row by row from


@pytest.mark.parametrize(("text", "words"), [
    ('{"heads": [{"head": 1, "q": [[1, 2, 3], [1, 2, 3], [1, 2, 3], [1, 2, 3], ' + "@" * HUGE,
     ": q has more than 3 rows, expected 3: one per input; this sheet answers another problem"),
    ('{"q": [[1, 2, 3, 4, 5], ' + "[1, 2, 3, 4, 5], " * (HUGE // 16) + "[1]]}", "q row 1 has 5 values, expected 3: d_k"),
    ('{"student": "li", "output": [1.5, 2, 3, 4] ' + "@" * HUGE, "output row 1 has 4 values, expected 3: d_out"),
])
def test_a_huge_sheet_is_refused_at_its_first_row_that_cannot_fit(attntrace, tmp_path, monkeypatch, text, words):
    """the rest of the sheet is never read: invalid there, or huge, it is not what the one line speaks of"""
    from attntrace.files import jsonfile
    from attntrace.homework import sheet as sheets

    reads = []

    class Counted:
        def __getattr__(self, name):
            return getattr(jsonfile, name)

        def parse(self, *args, **kwargs):
            reads.append(args[1])
            return jsonfile.parse(*args, **kwargs)

    monkeypatch.setattr(sheets, "jsonfile", Counted())  # the sheet's own reading, not the look at whether it is a problem
    r = attntrace("check", _sheet(tmp_path, text), "--problem", SCALED)
    assert r.code == 2 and words in r.err and "invalid JSON" not in r.err and r.err.count("\n") == 1, r.err
    assert reads == []


@pytest.mark.parametrize("pad", [{"tokens": ["x1"] * (HUGE // 5)}, {"warnings": ["@" * HUGE]}])
def test_a_huge_sheet_that_fits_is_marked_as_ever(attntrace, tmp_path, pad):
    key = json.loads(attntrace("worksheet", SCALED, "--key", "--format", "json").out)
    head = key["heads"][0]
    head["q"] = head["q"][0]  # a flat list is one row: q of --input 1
    r = attntrace("check", _sheet(tmp_path, {**pad, "query": 1, "heads": [{"head": 1, "q": head["q"]}]}), SCALED,
                  "--format", "json")
    assert r.code == 1 and json.loads(r.out)["items"][0]["verdict"] == "right", r.err


def test_a_huge_sheet_laid_out_otherwise_is_read_whole_and_its_trouble_named(attntrace, tmp_path):
    text = '{"warnings": ["' + "@" * HUGE + '"], "q": [["0.1", 0.2, 0.3]]}'
    r = attntrace("check", _sheet(tmp_path, text), SCALED)
    assert r.code == 2 and "q row 1, column 1: expected a number or null" in r.err, r.err


def test_a_huge_csv_table_is_refused_at_its_first_row_past_the_problems(attntrace, tmp_path):
    sheet = tmp_path / "answers"
    sheet.mkdir()
    (sheet / "k.csv").write_text("x1,x2,x3\n" + "1,2,3\n" * 3 + "@,@\n" * (HUGE // 4), encoding="utf-8")
    r = attntrace("check", sheet, SCALED)
    assert r.code == 2 and "k.csv has more than 3 rows, expected 3: one per key" in r.err, r.err


def test_a_json_sheet_saved_as_text_is_read_as_json(attntrace, tmp_path):
    sheet = _sheet(tmp_path, attntrace("worksheet", SCALED, "--key", "--format", "json").out, "answers.txt")
    assert attntrace("check", sheet, SCALED).code == 0


def test_an_empty_row_is_refused_as_such(attntrace, tmp_path):
    r = attntrace("check", _sheet(tmp_path, {"q": [[]]}), SCALED)
    assert r.code == 2 and "q row 1 is empty" in r.err and "another problem" not in r.err, r.err


def test_a_sheet_of_every_input_given_a_query_is_told_so(attntrace, tmp_path):
    key = json.loads(attntrace("worksheet", SCALED, "--key", "--format", "json").out)
    r = attntrace("check", _sheet(tmp_path, {**key, "query": 2}), SCALED)
    assert r.code == 2 and "q has 3 rows, expected 1: the input answered (query 2)" in r.err, r.err
