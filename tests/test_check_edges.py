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
