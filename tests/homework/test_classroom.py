"""A class folder as assign writes it and check walks it: keys kept apart, links that loop, names a spreadsheet would run."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from pathlib import Path

import pytest

from attntrace.homework.assign import Design, assign
from attntrace.homework.classroom import beside, expand

FORMULA = ("=", "+", "-", "@", "\t", "\r")


@pytest.fixture
def class_dir(tmp_path: Path) -> Path:
    """a class of two, as assign writes it"""
    out = tmp_path / "class"
    assign(["ann", "bo"], out, Design(), seed=3)
    return out


def loop_at(path: Path) -> Path:
    """a symbolic link that leads back to itself"""
    os.symlink(path.name, path)
    return path


def one_line(r, code: int, *words: str) -> None:
    assert r.code == code and r.err.count("\n") == 1 and "Traceback" not in r.err, r.err
    assert all(w in r.err for w in words), r.err


# --- the keys folder ----------------------------------------------------------------------------------------------


def test_check_on_a_class_folder_marks_each_student_and_not_the_keys(attntrace, class_dir):
    for student in ("ann", "bo"):
        shutil.copy(class_dir / "keys" / student / "key.json", class_dir / student / "answers.json")
    r = attntrace("check", class_dir, "--format", "json")
    assert r.code == 0, r.err
    sheets = json.loads(r.out)["sheets"]
    assert [Path(s["sheet"]).relative_to(class_dir).as_posix() for s in sheets] == ["ann/answers.json", "bo/answers.json"]
    assert all(s["passed"] for s in sheets)  # each against the problem.json in their own folder


def test_the_keys_folder_is_never_walked_as_a_student(class_dir):
    (class_dir / "keys" / "answers.json").write_text("{}\n", encoding="utf-8")  # whatever it holds
    found = expand(str(class_dir))
    assert found == [str(class_dir / "ann" / "worksheet.md"), str(class_dir / "bo" / "worksheet.md")]


@pytest.mark.parametrize("name", ["key.json", "key.md"])
def test_a_key_in_the_keys_folder_is_marked_against_its_students_problem(attntrace, class_dir, name):
    assert beside(str(class_dir / "keys" / "bo" / name)) == str(class_dir / "bo" / "problem.json")
    r = attntrace("check", class_dir / "keys" / "bo" / name, "--format", "json")
    assert r.code == 0 and json.loads(r.out)["passed"] is True, r.out + r.err


# --- links that loop, and links to nothing -------------------------------------------------------------------------


def test_a_loop_given_as_assigns_folder_is_one_line_naming_it(attntrace, tmp_path):
    (tmp_path / "roster.txt").write_text("ann\n", encoding="utf-8")
    loop = loop_at(tmp_path / "class")
    for out in (loop, loop / "week 1"):
        one_line(attntrace("assign", tmp_path / "roster.txt", "--seed", "1", "-o", out), 1, f"{out}: a symbolic link loop")


def test_a_loop_as_the_class_folder_or_the_gradebooks_folder_is_one_line(attntrace, class_dir, tmp_path):
    loop = loop_at(tmp_path / "loop")
    one_line(attntrace("check", loop, "--gradebook", tmp_path / "grades.csv"), 2, str(loop), "symbolic link loop")
    one_line(attntrace("check", class_dir, "--gradebook", loop / "grades.csv"), 2, str(loop), "symbolic link loop")
    assert not (tmp_path / "grades.csv").exists()


@pytest.mark.parametrize("where", ["zed", "notes.json", "ann/answers.json", "ann/q.csv", "bo/problem.json"])
def test_a_loop_inside_a_class_folder_is_one_line_naming_it(attntrace, class_dir, where):
    if (class_dir / where).exists():
        (class_dir / where).unlink()
    loop = loop_at(class_dir / where)
    one_line(attntrace("check", class_dir), 2, f"{loop}: a symbolic link loop")


def test_a_sheet_that_is_a_link_to_nothing_is_listed_as_unreadable(attntrace, class_dir):
    os.symlink("gone.json", class_dir / "bo" / "answers.json")
    r = attntrace("check", class_dir, "--format", "json")
    assert r.code == 2 and [u["sheet"] for u in json.loads(r.out)["unreadable"]] == [str(class_dir / "bo" / "answers.json")]


def test_a_link_to_nothing_as_assigns_folder_is_one_line(tmp_path):
    from attntrace.errors import AttntraceError

    os.symlink("gone", tmp_path / "class")
    with pytest.raises(AttntraceError, match="symbolic link to nothing"):
        assign(["ann"], tmp_path / "class", Design(), seed=1)
    assert os.listdir(tmp_path) == ["class"]


# --- the gradebook ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [" =HYPERLINK(0).json", "\u3000@SUM(A1).json", "=1+1.json", " -2+3.json", "+x.json"])
def test_no_gradebook_cell_is_a_formula_even_once_trimmed(attntrace, class_dir, tmp_path, monkeypatch, name):
    folder = class_dir / "ann"
    shutil.copy(class_dir / "keys" / "ann" / "key.json", folder / name)
    blank = (folder / "worksheet.md").read_text(encoding="utf-8")
    (folder / "filled.md").write_text(blank.replace("Name: ann", "Name:  =1+2"), encoding="utf-8")
    monkeypatch.chdir(folder)  # the sheets named as a teacher types them, so a cell starts with the file's name
    r = attntrace("check", name, "filled.md", "--gradebook", tmp_path / "grades.csv")
    assert r.code == 1, r.err  # the blank worksheet does not pass
    rows = list(csv.reader(io.StringIO((tmp_path / "grades.csv").read_text(encoding="utf-8-sig"))))
    assert [row[:2] for row in rows[1:]] == [["'" + name, ""], ["filled.md", "'=1+2"]]
    for row in rows:
        for cell in row:
            assert not cell.lstrip().startswith(FORMULA), cell
