"""assign: a different problem for every student, the same again for the same roster and seed."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attntrace.core.engine import trace
from attntrace.core.problem import divisor
from attntrace.errors import AttntraceError
from attntrace.files.problemfile import load
from attntrace.homework import assign as assign_module
from attntrace.homework.assign import Design, assign, files_for, problem_for, read_roster, student_seed
from attntrace.render.jsonform import floats
from tests.reference import loops

HANDED = {"problem.json", "worksheet.md"}  # in each student's folder
KEY_FILES = {"key.json", "key.md"}  # apart, in keys/<id>/
ROSTER = ["ann", "bo", "chen-li"]
IDS = st.text(min_size=1, max_size=20).filter(lambda s: not assign_module.id_problem(s))  # any id that can be a folder


def roster(tmp_path: Path, text: str | bytes, name: str = "roster.txt") -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return str(path)


def key_of(folder: Path, name: str = "key.json") -> Path:
    """a student's key: apart from their folder, in the class folder's keys/<id>/"""
    return folder.parent / "keys" / folder.name / name


def tree(folder: Path) -> dict[str, bytes]:
    """every file under folder, by its path relative to folder"""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --- determinism --------------------------------------------------------------------------------------------------


def test_same_roster_and_seed_give_byte_identical_files(tmp_path):
    first = assign(ROSTER, tmp_path / "a", Design(), seed=7)
    second = assign(ROSTER, tmp_path / "b", Design(), seed=7)
    assert first.folders == [tmp_path / "a" / s for s in ROSTER]
    assert second.folders == [tmp_path / "b" / s for s in ROSTER]
    a, b = tree(tmp_path / "a"), tree(tmp_path / "b")
    assert set(a) == {f"{s}/{f}" for s in ROSTER for f in HANDED} | {f"keys/{s}/{f}" for s in ROSTER for f in KEY_FILES}
    assert a == b


def test_every_student_gets_a_different_problem(tmp_path):
    assign(ROSTER, tmp_path, Design(), seed=7)
    problems = {(tmp_path / s / "problem.json").read_text(encoding="utf-8") for s in ROSTER}
    assert len(problems) == len(ROSTER)


def test_a_different_seed_gives_a_different_problem():
    a, b = problem_for(Design(), 1, "ann"), problem_for(Design(), 2, "ann")
    assert any(not np.array_equal(getattr(a, m), getattr(b, m)) for m in ("x", "w_q", "w_k", "w_v"))


def test_a_different_id_gives_a_different_problem():
    a, b = problem_for(Design(), 1, "ann"), problem_for(Design(), 1, "Ann")
    assert any(not np.array_equal(getattr(a, m), getattr(b, m)) for m in ("x", "w_q", "w_k", "w_v"))


def test_the_problem_depends_on_seed_and_id_only_not_the_roster(tmp_path):
    assign(["ann", "bo", "chen-li"], tmp_path / "one", Design(), seed=3)
    assign(["zed", "chen-li", "ann"], tmp_path / "two", Design(), seed=3)
    for student in ("ann", "chen-li"):
        assert tree(tmp_path / "one" / student) == tree(tmp_path / "two" / student)
        assert (tmp_path / "one" / student / "problem.json").read_text(encoding="utf-8") == \
            files_for(Design(), 3, student)["problem.json"]


def test_student_seed_is_fixed_across_runs_and_machines():
    # pinned: a change here changes every class's problems
    assert student_seed(7, "ann") == 0x9FB0016AA8E1EB8D  # printf '7\0ann' | sha256sum: the first 8 bytes
    assert student_seed(7, "ann") != student_seed(7, "ann ")
    assert student_seed(1, "23") != student_seed(12, "3")  # the separator keeps seed and id apart
    assert 0 <= student_seed(-5, "é") < 2**64


def test_a_student_problem_is_pinned():
    # numpy's generator and random_problem, fixed: the same roster and seed give the same problems next term
    p = problem_for(Design(), 7, "ann")
    assert p.name == "ann: 3 inputs, d_model = 4, d_k = 3, d_v = 3, 1 head (integers)"
    assert floats(p.x) == [[0, 0, 0, 0], [1, 1, 1, 1], [2, 0, 0, 2]]
    assert floats(p.w_q) == [[2, 1, 1], [2, 2, 1], [0, -1, -1], [0, 0, 2]]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(-(2**63), 2**63), student=IDS)
def test_problem_for_is_a_function_of_seed_and_id(seed, student):
    assert files_for(Design(), seed, student) == files_for(Design(), seed, student)
    assert problem_for(Design(), seed, student).name.startswith(f"{student}: ")


# --- the roster ---------------------------------------------------------------------------------------------------


def test_plain_roster_skips_blank_lines_and_comments(tmp_path):
    path = roster(tmp_path, "# class of 2025\n\n  ann  \nbo\r\n\t\n# dropped: dee\nchen li\n")
    assert read_roster(path) == ["ann", "bo", "chen li"]


def test_plain_roster_with_a_bom(tmp_path):
    path = roster(tmp_path, "\ufeffann\nbo\n".encode())
    assert read_roster(path) == ["ann", "bo"]


def test_csv_roster_finds_the_id_column_among_others(tmp_path):
    path = roster(tmp_path, 'name,ID,email\n"Lee, Ann", a17 ,ann@x.edu\n\n"Bo ""B"" Smith","b 2",bo@x.edu\n', "class.csv")
    assert read_roster(path) == ["a17", "b 2"]


def test_csv_roster_with_a_bom_and_crlf(tmp_path):
    path = roster(tmp_path, "\ufeffid,name\r\nx1,Ann\r\nx2,Bo\r\n".encode(), "class.csv")
    assert read_roster(path) == ["x1", "x2"]


def test_a_first_line_with_commas_is_csv_whatever_the_name(tmp_path):
    path = roster(tmp_path, "# exported\nemail,id\nann@x.edu,ann\n", "roster.txt")
    assert read_roster(path) == ["ann"]


def test_comment_lines_above_a_csv_header_are_skipped_but_a_column_named_hash_is_a_header(tmp_path):
    assert read_roster(roster(tmp_path, "# week 3\n#,id\n1,ann\n2,bo\n", "class.csv")) == ["ann", "bo"]


def test_csv_rows_with_no_cell_filled_are_skipped(tmp_path):
    path = roster(tmp_path, "id,name\nann,Ann\n,\n,,\nbo,Bo\n", "class.csv")
    assert read_roster(path) == ["ann", "bo"]


def error(path: str) -> str:
    with pytest.raises(AttntraceError) as e:
        read_roster(path)
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith(path)
    return message


@pytest.mark.parametrize("text", ["# nobody yet\n\n   \n", "# a\n# b\n"])
def test_an_empty_roster_is_an_error(tmp_path, text):
    message = error(roster(tmp_path, text))
    assert "no student ids" in message


def test_a_blank_file_is_an_error(tmp_path):
    assert "empty" in error(roster(tmp_path, "\n \n"))


def test_a_csv_with_no_id_column_lists_the_columns(tmp_path):
    message = error(roster(tmp_path, "name,email\nAnn,ann@x.edu\n", "class.csv"))
    assert "line 1" in message and "no id column" in message
    assert '"name"' in message and '"email"' in message


def test_a_csv_with_only_a_header_is_empty(tmp_path):
    assert "no student ids" in error(roster(tmp_path, "id,name\n", "class.csv"))


def test_a_csv_with_two_id_columns_is_an_error(tmp_path):
    assert "2 id columns" in error(roster(tmp_path, "id,Id\na,b\n", "class.csv"))


def test_a_duplicate_id_names_both_lines(tmp_path):
    message = error(roster(tmp_path, "ann\nbo\n\nann\n"))
    assert "line 4" in message and "line 2" not in message and "also on line 1" in message


def test_a_duplicate_csv_id_names_both_lines(tmp_path):
    message = error(roster(tmp_path, 'name,id\nAnn,a1\n"Bo\nSmith",a2\nAnn again, a1 \n', "class.csv"))
    assert "line 5" in message and "also on line 2" in message


def test_ids_that_differ_only_in_case_would_share_a_folder(tmp_path):
    message = error(roster(tmp_path, "Ann\nbo\nann\n"))
    assert "line 3" in message and "also on line 1" in message and "case" in message


@pytest.mark.parametrize("bad, why", [
    (".", "folder name"), ("..", "folder name"), ("a/b", "/"), ("a\\b", "\\"), ("../../etc", "/"),
    ("x" * 101, "101 characters"),
])
def test_an_id_that_cannot_be_a_folder_name(tmp_path, bad, why):
    message = error(roster(tmp_path, f"ann\n{bad}\n"))
    assert "line 2" in message and why in message


@pytest.mark.parametrize("bad, why", [
    (".hidden", "starts with a dot"), (".ssh", "starts with a dot"), ("\u202eevil", "U+202E"), ("a\u200bb", "U+200B"),
    ("\u200b", "U+200B"), ("\u2066x\u2069", "U+2066"), ("ann\ufeff", "U+FEFF"), ("x\u00ady", "U+00AD"), ("\ue000", "U+E000"),
    ("x\u00a0y", "U+00A0"), ("x\u3000y", "U+3000"), ("e\u0301", "decomposed"), ("a  b", '"a b"'), ("_li_", '"li"'),
    ("\u2170", '"i"'), ("\uff21", '"A"'), ("猫" * 90, "270 bytes"),
])
def test_an_id_that_would_hide_or_come_back_changed_is_refused_naming_its_line(tmp_path, bad, why):
    path = roster(tmp_path, f"ann\n{bad}\nbo\n")
    message = error(path)
    assert message.startswith(f"{path} line 2: student id ") and why in message and "\n" not in message
    assert message.isprintable()  # the id is shown with its hidden characters escaped


@pytest.mark.parametrize("bad", [".hidden", "\u202eevil", "a\u200bb"])
def test_a_csv_id_that_would_hide_is_refused_naming_its_line(tmp_path, bad):
    assert "line 3" in error(roster(tmp_path, f"name,id\nAnn,a1\nBo,{bad}\n", "class.csv"))


@settings(max_examples=25, deadline=None)
@given(student=IDS)
def test_every_id_allowed_comes_back_exact_from_its_worksheet(student):
    from attntrace.homework import filled

    text = files_for(Design(), 1, student)["worksheet.md"]
    assert filled.parse(text, "worksheet.md", problem_for(Design(), 1, student)).student == student


def test_an_id_of_100_characters_is_fine(tmp_path):
    assert read_roster(roster(tmp_path, "x" * 100 + "\n")) == ["x" * 100]


@pytest.mark.parametrize("cell", ['""', '"  "', '"a\tb"', '"a\nb"', '"a\x7fb"', "..", '"x/y"'])
def test_a_bad_csv_id_cell(tmp_path, cell):
    message = error(roster(tmp_path, f"name,id\nAnn,ok\nBo,{cell}\n", "class.csv"))
    assert "line 3" in message


def test_an_empty_csv_id_cell_says_empty(tmp_path):
    assert "is empty" in error(roster(tmp_path, "name,id\nAnn,\n", "class.csv"))


def test_a_control_character_in_a_plain_line(tmp_path):
    message = error(roster(tmp_path, "ann\nb\x00o\n"))
    assert "line 2" in message and "control character" in message and "\\u0000" in message


def test_a_short_csv_row_has_no_id(tmp_path):
    message = error(roster(tmp_path, "name,email,id\nAnn,ann@x.edu,a1\nBo\n", "class.csv"))
    assert "line 3" in message and "no id" in message


def test_an_over_long_csv_cell_is_not_csv(tmp_path):
    big = "x" * 200_000
    message = error(roster(tmp_path, f"id\na\n{big}\n", "class.csv"))
    assert "line 3" in message and "not CSV" in message


def test_a_utf16_roster_is_refused(tmp_path):
    assert "UTF-16" in error(roster(tmp_path, "ann\nbo\n".encode("utf-16")))


def test_a_missing_roster(tmp_path):
    assert "no such file" in error(str(tmp_path / "nope.txt"))


# --- the design reaches every problem ------------------------------------------------------------------------------


def test_sizes_heads_and_init_reach_the_problem():
    design = Design(tokens=5, d_model=3, d_k=4, d_v=6, heads=2, init="xavier")
    p = problem_for(design, 1, "ann")
    assert p.x.shape == (5, 3) and p.w_q.shape == (3, 4) and p.w_k.shape == (3, 4) and p.w_v.shape == (3, 6)
    assert p.heads == 2
    assert p.scale is True  # new's default for a non-integer init
    assert not np.all(p.w_q == np.round(p.w_q))  # xavier, not integers
    t = trace(p, carry_rounding=design.precision)
    assert len(t.heads) == 2
    data = json.loads(files_for(design, 1, "ann")["problem.json"])
    assert data["heads"] == 2 and len(data["x"]) == 5 and len(data["w_v"][0]) == 6


def test_integers_are_not_scaled_by_default_and_scale_true_overrides():
    assert problem_for(Design(), 1, "ann").scale is False
    assert problem_for(Design(scale=True), 1, "ann").scale is True
    assert problem_for(Design(init="normal", scale=False), 1, "ann").scale is False
    assert json.loads(files_for(Design(init="normal", scale=False), 1, "ann")["problem.json"])["scale"] is False


def test_the_options_do_not_change_the_numbers_drawn():
    plain, masked = problem_for(Design(), 4, "ann"), problem_for(Design(mask=("causal",), scale=True), 4, "ann")
    for m in ("x", "w_q", "w_k", "w_v"):
        assert np.array_equal(getattr(plain, m), getattr(masked, m))


def test_a_causal_mask_reaches_the_problem_and_the_key():
    design = Design(mask=("causal",))
    p = problem_for(design, 2, "ann")
    assert p.masks == ("causal",)
    files = files_for(design, 2, "ann")
    assert json.loads(files["problem.json"])["mask"] == ["causal"]
    key = json.loads(files["key.json"])
    weights = key["heads"][0]["weights"]
    assert all(weights[i][j] == 0 for i in range(3) for j in range(i + 1, 3))
    assert "scaled" in key["heads"][0]  # a masked problem asks for the masked scores


def test_a_window_mask_reaches_the_problem():
    p = problem_for(Design(tokens=4, mask=("window",), window=1), 2, "ann")
    assert p.masks == ("window",) and p.window == 1
    assert json.loads(files_for(Design(tokens=4, mask=("window",), window=1), 2, "ann")["problem.json"])["window"] == 1


def test_mask_none_is_no_mask():
    assert problem_for(Design(mask=("none",)), 1, "ann").mask == ()


def test_the_name_carries_the_student():
    assert problem_for(Design(), 1, "chen li").name.startswith("chen li: ")
    assert json.loads(files_for(Design(), 1, "chen li")["problem.json"])["name"].startswith("chen li: ")
    assert files_for(Design(), 1, "chen li")["worksheet.md"].startswith("# Worksheet: chen li: ")


@pytest.mark.parametrize("design, words", [
    (Design(d_k=3, heads=2), "heads = 2 does not divide d_k = 3"),
    (Design(d_k=4, d_v=3, heads=2), "does not divide d_v = 3"),
    (Design(mask=("window",)), "needs window"),
    (Design(mask=("padding",)), "needs padding"),
    (Design(mask=("casual",)), 'did you mean "causal"'),
    (Design(init="uniform"), 'unknown init "uniform"'),
    (Design(tokens=0), "tokens = 0"),
    (Design(precision=-1), "precision = -1"),
    (Design(precision=13), "precision = 13"),
])
def test_a_bad_design_is_one_clear_error(design, words):
    with pytest.raises(AttntraceError) as e:
        problem_for(design, 1, "ann")
    assert words in str(e.value) and "\n" not in str(e.value)


def test_a_bad_design_writes_nothing(tmp_path):
    with pytest.raises(AttntraceError):
        assign(ROSTER, tmp_path / "out", Design(d_k=3, heads=2), seed=1)
    assert not (tmp_path / "out").exists()


# --- the key and the worksheet ------------------------------------------------------------------------------------

DESIGNS = [
    Design(),
    Design(precision=3, scale=True),
    Design(tokens=4, d_model=3, d_k=4, d_v=2, heads=2, mask=("causal",)),
    Design(init="normal", precision=4),
    Design(init="kaiming", tokens=2, d_k=2, d_v=2, heads=2, mask=("window",), window=0, precision=1),
]


@pytest.mark.parametrize("design", DESIGNS)
def test_key_json_holds_the_trace_of_problem_json_rounded(tmp_path, design):
    folder = assign(["ann"], tmp_path, design, seed=11).folders[0]
    problem = load(str(folder / "problem.json"))  # the file the student gets, read back as check will
    t = trace(problem, carry_rounding=design.precision)
    key = json.loads(key_of(folder, "key.json").read_text(encoding="utf-8"))
    assert key["precision"] == design.precision
    assert len(key["heads"]) == design.heads
    for h, head in zip(t.heads, key["heads"]):
        for step in ("q", "k", "v", "scores", "weights", "output"):
            assert head[step] == floats(np.round(getattr(h, step), design.precision)), step
            assert all(v is None or v == round(v, design.precision) for row in head[step] for v in row)
    assert key["output"] == floats(t.output)


@pytest.mark.parametrize("design", DESIGNS)
def test_the_key_is_close_to_exact_attention(tmp_path, design):
    """the rounded key, against an attention that shares no code with the engine"""
    folder = assign(["bo"], tmp_path, design, seed=5).folders[0]
    p = load(str(folder / "problem.json"))
    t = trace(p)
    exact = loops(p.x, p.w_q, p.w_k, p.w_v, heads=p.heads, divisor=divisor(p, t.dims.d_k), allowed=t.allowed)
    key = json.loads(key_of(folder, "key.json").read_text(encoding="utf-8"))
    values = np.array(key["output"], dtype=np.float64)
    rounding = 10.0 ** -design.precision
    assert np.allclose(values, exact, atol=40 * rounding * max(1.0, float(np.max(np.abs(exact)))))


def tables_from_step(text: str, step: int) -> list[list[str]]:
    """the data cells (not the header, not the row label) of every table from ## Step <step> on"""
    cells = []
    in_step = False
    for line in text.splitlines():
        found = re.match(r"## Step (\d+)", line)
        if found:
            in_step = int(found.group(1)) >= step
        if in_step and line.startswith("| ") and not line.startswith("| |") and not line.startswith("|---"):
            cells.append([c.strip() for c in line.strip("|").split("|")][1:])
    return cells


def test_the_worksheet_is_blank_from_step_3_and_the_key_is_filled(tmp_path):
    design = Design(heads=1, precision=2)
    folder = assign(["ann"], tmp_path, design, seed=9).folders[0]
    sheet = (folder / "worksheet.md").read_text(encoding="utf-8")
    key_md = key_of(folder, "key.md").read_text(encoding="utf-8")
    blank = tables_from_step(sheet, 3)
    filled = tables_from_step(key_md, 3)
    assert blank and len(blank) == len(filled)
    assert all(not re.search(r"\d", cell) for row in blank for cell in row)
    assert all(re.fullmatch(r"-?\d+\.\d\d|masked|-inf|—|", cell) for row in filled for cell in row)
    assert sum(bool(cell) for row in filled for cell in row) > 20
    # the problem itself (steps 1 and 2) is given on both
    assert tables_from_step(sheet, 1)[:4] == tables_from_step(key_md, 1)[:4]
    assert re.search(r"\d", "".join(tables_from_step(sheet, 1)[0]))
    assert "ANSWER KEY" in key_md and "ANSWER KEY" not in sheet


def test_the_key_md_numbers_are_the_key_json_numbers(tmp_path):
    folder = assign(["ann"], tmp_path, Design(), seed=9).folders[0]
    key = json.loads(key_of(folder, "key.json").read_text(encoding="utf-8"))
    key_md = key_of(folder, "key.md").read_text(encoding="utf-8")
    q = key["heads"][0]["q"]
    q_rows = tables_from_step(key_md, 3)[:len(q)]
    assert [[float(c) for c in row] for row in q_rows] == q


def test_files_are_utf8_with_unix_newlines(tmp_path):
    folder = assign(["zoë"], tmp_path, Design(), seed=1).folders[0]
    for path in [*(folder / name for name in HANDED), *(key_of(folder, name) for name in KEY_FILES)]:
        data = path.read_bytes()
        assert b"\r\n" not in data
        assert data.decode("utf-8").endswith("\n")
    assert "zoë" in (folder / "problem.json").read_bytes().decode("utf-8")


def keys_pass_check(attntrace, tmp_path: Path, name: str) -> None:
    """every student's key, for every design, passes check against the student's own problem.json"""
    for n, design in enumerate(DESIGNS):
        for folder in assign(ROSTER, tmp_path / str(n), design, seed=21).folders:
            result = attntrace("check", key_of(folder, name), folder / "problem.json", "--format", "json")
            assert result.code == 0, f"{design} {folder.name} {name}: {result.out}{result.err}"
            assert json.loads(result.out)["passed"] is True


def test_each_key_passes_check(tmp_path, attntrace):
    keys_pass_check(attntrace, tmp_path, "key.json")


def test_each_key_md_passes_check(tmp_path, attntrace):
    """key.md read back as a filled-in worksheet"""
    keys_pass_check(attntrace, tmp_path, "key.md")


def test_check_marks_each_sheet_against_its_own_problem(tmp_path, attntrace):
    folders = assign(ROSTER, tmp_path, Design(), seed=21).folders
    for folder in folders:  # each student hands in their own key as answers.json
        (folder / "answers.json").write_bytes(key_of(folder, "key.json").read_bytes())
    result = attntrace("check", *(f / "answers.json" for f in folders), "--format", "json")
    assert result.code == 0, result.out + result.err
    assert [sheet["passed"] for sheet in json.loads(result.out)["sheets"]] == [True] * len(ROSTER)
    # a key marked against another student's problem does not pass: the problems really differ
    swapped = attntrace("check", key_of(folders[0]), folders[1] / "problem.json", "--format", "json")
    assert swapped.code == 1 and json.loads(swapped.out)["passed"] is False
    # nor does the blank worksheet, which carries the student's id on its name line
    blank = attntrace("check", folders[0] / "worksheet.md", folders[0] / "problem.json", "--format", "json")
    assert blank.code != 0 and json.loads(blank.out)["student"] == ROSTER[0]
    assert f"\nName: {ROSTER[0]}\n" in (folders[0] / "worksheet.md").read_text(encoding="utf-8")


# --- writing: re-runs and failures ---------------------------------------------------------------------------------


def test_a_rerun_keeps_answers_and_other_files(tmp_path):
    folder = assign(["ann"], tmp_path, Design(), seed=1).folders[0]
    (folder / "answers.json").write_text('{"q": [[1, 2, 3]]}\n', encoding="utf-8")
    (tmp_path / "notes.txt").write_text("keep me\n", encoding="utf-8")
    assign(["ann", "bo"], tmp_path, Design(), seed=1)
    assert (folder / "answers.json").read_text(encoding="utf-8") == '{"q": [[1, 2, 3]]}\n'
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "keep me\n"
    assert {p.name for p in folder.iterdir()} == HANDED | {"answers.json"}


FILLED = "# Worksheet\n\nName: ann\n\n| q | 1 | 2 | 3 |\n"  # a student's work in the worksheet they were handed


def test_a_rerun_never_replaces_a_filled_in_worksheet_and_writes_only_what_is_missing(tmp_path):
    folder = assign(["ann", "bo"], tmp_path, Design(), seed=1).folders[0]
    (folder / "worksheet.md").write_text(FILLED, encoding="utf-8")
    key_of(folder, "key.md").unlink()
    before = tree(tmp_path)
    done = assign(["ann", "bo", "cy"], tmp_path, Design(), seed=1)
    after = tree(tmp_path)
    assert (folder / "worksheet.md").read_text(encoding="utf-8") == FILLED
    assert {k: v for k, v in after.items() if k in before} == before  # nothing already there changed
    assert set(after) - set(before) == {"keys/ann/key.md", "cy/problem.json", "cy/worksheet.md", "keys/cy/key.json",
                                        "keys/cy/key.md"}
    assert sorted(done.kept) == ["ann", "bo"] and len(done.written) == 5
    summary = done.summary()
    assert "wrote 1 student folder" in summary and '2 students ("ann", "bo")' in summary
    assert "only the 1 missing file" in summary


def test_a_rerun_onto_the_same_files_writes_nothing(tmp_path):
    assign(ROSTER, tmp_path, Design(), seed=1)
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    done = assign(ROSTER, tmp_path, Design(), seed=1)
    assert done.written == [] and list(done.kept) == ROSTER and "none was missing" in done.summary()
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")} == before


@pytest.mark.parametrize("changed", [{"seed": 2}, {"design": Design(precision=3)}, {"design": Design(tokens=4)}])
def test_a_rerun_with_another_seed_or_options_is_refused_and_writes_nothing(tmp_path, changed):
    folder = assign(["ann"], tmp_path, Design(), seed=1).folders[0]
    (folder / "worksheet.md").write_text(FILLED, encoding="utf-8")
    before = tree(tmp_path)
    with pytest.raises(AttntraceError) as e:
        assign(["ann", "bo"], tmp_path, changed.get("design", Design()), seed=changed.get("seed", 1))
    assert "another seed or other options" in str(e.value) and "\n" not in str(e.value)
    assert tree(tmp_path) == before and not (tmp_path / "bo").exists()


def test_a_filled_in_worksheet_without_its_problem_and_keys_is_kept_and_refused(tmp_path):
    (tmp_path / "ann").mkdir()
    (tmp_path / "ann" / "worksheet.md").write_text(FILLED, encoding="utf-8")
    with pytest.raises(AttntraceError) as e:
        assign(["ann"], tmp_path, Design(), seed=1)
    assert "worksheet.md" in str(e.value) and "cannot tell" in str(e.value)
    assert tree(tmp_path) == {"ann/worksheet.md": FILLED.encode()}


def test_the_keys_are_apart_from_what_is_handed_out(tmp_path):
    folders = assign(ROSTER, tmp_path, Design(), seed=1).folders
    assert all({p.name for p in folder.iterdir()} == HANDED for folder in folders)
    assert sorted(p.name for p in (tmp_path / "keys").iterdir()) == sorted(ROSTER)
    assert all({p.name for p in (tmp_path / "keys" / s).iterdir()} == KEY_FILES for s in ROSTER)


@pytest.mark.parametrize("student", ["keys", "Keys", "KEYS"])
def test_an_id_that_is_the_keys_folder_is_refused(tmp_path, student):
    with pytest.raises(AttntraceError) as e:
        assign(["ann", student], tmp_path, Design(), seed=1)
    assert "keys" in str(e.value) and not any(tmp_path.iterdir())


def test_out_is_a_file(tmp_path):
    out = tmp_path / "out"
    out.write_text("not a folder\n", encoding="utf-8")
    with pytest.raises(AttntraceError) as e:
        assign(ROSTER, out, Design(), seed=1)
    assert str(out) in str(e.value) and "is a file" in str(e.value)
    assert out.read_text(encoding="utf-8") == "not a folder\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_file_where_a_student_folder_goes_writes_nothing(tmp_path):
    (tmp_path / "bo").write_text("in the way\n", encoding="utf-8")
    with pytest.raises(AttntraceError) as e:
        assign(ROSTER, tmp_path, Design(), seed=1)
    assert "bo" in str(e.value)
    assert [p.name for p in tmp_path.iterdir()] == ["bo"]


@pytest.mark.parametrize("where", ["keys/bo/key.md", "bo/worksheet.md"])
def test_a_folder_where_a_file_goes_writes_nothing(tmp_path, where):
    (tmp_path / where).mkdir(parents=True)
    with pytest.raises(AttntraceError) as e:
        assign(ROSTER, tmp_path, Design(), seed=1)
    assert where.split("/")[-1] in str(e.value) and "is a folder" in str(e.value)
    assert tree(tmp_path) == {}
    assert not (tmp_path / "ann").exists()


@pytest.mark.parametrize("where", ["keys", "keys/bo"])
def test_a_file_where_the_keys_folder_goes_writes_nothing(tmp_path, where):
    (tmp_path / where).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / where).write_text("in the way\n", encoding="utf-8")
    with pytest.raises(AttntraceError) as e:
        assign(ROSTER, tmp_path, Design(), seed=1)
    assert f"{tmp_path / where}: is a file" in str(e.value)
    assert tree(tmp_path) == {where: b"in the way\n"}


def test_a_failure_while_writing_removes_what_it_wrote(tmp_path, monkeypatch):
    done = []
    real = os.replace

    def fail_third(src, dst):
        if len(done) == 2:
            raise OSError(28, "No space left on device", str(dst))
        done.append(dst)
        real(src, dst)

    monkeypatch.setattr(assign_module.os, "replace", fail_third)
    with pytest.raises(AttntraceError) as e:
        assign(ROSTER, tmp_path / "out", Design(), seed=1)
    assert "No space left on device" in str(e.value) and "\n" not in str(e.value)
    assert not (tmp_path / "out").exists()  # every file it made was new, so all are gone again, and their folders


def test_a_failure_before_any_file_is_moved_writes_nothing(tmp_path, monkeypatch):
    calls = []
    real = assign_module._write_temp

    def fail_fifth(target, text):
        if len(calls) == 4:
            raise OSError(13, "Permission denied", str(target))
        calls.append(target)
        return real(target, text)

    monkeypatch.setattr(assign_module, "_write_temp", fail_fifth)
    (tmp_path / "ann").mkdir()
    (tmp_path / "ann" / "answers.json").write_text("{}\n", encoding="utf-8")
    with pytest.raises(AttntraceError) as e:
        assign(ROSTER, tmp_path, Design(), seed=1)
    assert "Permission denied" in str(e.value)
    assert tree(tmp_path) == {"ann/answers.json": b"{}\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ann"]  # the folders it made are gone again


def test_written_files_are_not_private(tmp_path):
    folder = assign(["ann"], tmp_path, Design(), seed=1).folders[0]
    if os.name == "posix":
        umask = os.umask(0o022)
        os.umask(umask)
        assert key_of(folder, "key.md").stat().st_mode & 0o777 == 0o666 & ~umask


@pytest.mark.parametrize("students, words", [
    (["ann", "../x"], "/"), (["ann", ""], "is empty"), (["ann", " ann"], "space"), (["ann", "bo", "ann"], "twice"),
    (["Ann", "ann"], "case"), ([".."], "folder name"),
])
def test_assign_checks_ids_itself(tmp_path, students, words):
    with pytest.raises(AttntraceError) as e:
        assign(students, tmp_path / "out", Design(), seed=1)
    assert words in str(e.value)
    assert not (tmp_path / "out").exists()


def test_a_nested_out_folder_is_made(tmp_path):
    folders = assign(["ann"], tmp_path / "term" / "week 3", Design(), seed=1).folders
    assert folders == [tmp_path / "term" / "week 3" / "ann"]
    assert {p.name for p in folders[0].iterdir()} == HANDED


def test_no_student_writes_nothing(tmp_path):
    assert assign([], tmp_path / "out", Design(), seed=1).folders == []
    assert not (tmp_path / "out").exists()


def test_precision_reaches_the_worksheet_and_key(tmp_path):
    folder = assign(["ann"], tmp_path, Design(precision=3), seed=1).folders[0]
    assert "Round every intermediate to 3 decimals" in (folder / "worksheet.md").read_text(encoding="utf-8")
    assert json.loads(key_of(folder, "key.json").read_text(encoding="utf-8"))["precision"] == 3


def test_the_assign_command_then_check_marks_each_folder(attntrace, tmp_path):
    roster = tmp_path / "roster.txt"
    roster.write_text("ana\nben\n")
    out = tmp_path / "class"
    r = attntrace("assign", roster, "--seed", "3", "--heads", "2", "--d-k", "4", "--d-v", "2", "--mask", "causal",
                  "--scale", "--precision", "3", "-o", out)
    assert r.code == 0 and r.out == "" and "wrote 2 student folders" in r.err and str(out / "keys") in r.err
    for student in ("ana", "ben"):
        problem = json.loads((out / student / "problem.json").read_text())
        assert problem["heads"] == 2 and problem["mask"] == ["causal"] and problem["scale"] is True
        (out / student / "answers.json").write_text((out / "keys" / student / "key.json").read_text())
    r = attntrace("check", out / "ana" / "answers.json", out / "ben" / "answers.json", "--format", "json")
    assert r.code == 0 and all(s["passed"] and s["precision"] == 3 for s in json.loads(r.out)["sheets"])
    again = tmp_path / "again"
    attntrace("assign", roster, "--seed", "3", "--heads", "2", "--d-k", "4", "--d-v", "2", "--mask", "causal",
              "--scale", "--precision", "3", "-o", again)
    assert (again / "keys" / "ben" / "key.md").read_text() == (out / "keys" / "ben" / "key.md").read_text()


def test_the_assign_command_reports_a_bad_roster_in_one_line(attntrace, tmp_path):
    roster = tmp_path / "roster.txt"
    roster.write_text("ana\nana\n")
    r = attntrace("assign", roster, "--seed", "1", "-o", tmp_path / "c")
    assert r.code == 1 and "line 2" in r.err and r.err.count("\n") == 1 and not (tmp_path / "c").exists()


@pytest.mark.parametrize("student", ["con", "NUL.txt", "com1", "a:b", "why?", "dot."])
def test_an_id_windows_cannot_make_a_folder_of_is_refused(student):
    assert assign_module.id_problem(student) is not None
    assert assign_module.id_problem("x" + student.replace(":", "_").replace("?", "").rstrip(".")) is None


# --- a hostile roster, class folder or file system ------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(line=st.text(max_size=12))
def test_any_roster_line_is_an_id_or_one_printable_line_naming_it(tmp_path_factory, line):
    path = roster(tmp_path_factory.mktemp("r"), f"ann\n{line}\n".encode("utf-8", "surrogatepass"))
    try:
        students = read_roster(path)
    except AttntraceError as e:
        assert "\n" not in str(e) and str(e).isprintable() and str(e).startswith(path)
    else:
        assert all(assign_module.id_problem(s) is None for s in students)


def test_a_roster_over_the_class_size_is_refused_before_anything_is_drawn(tmp_path, monkeypatch):
    monkeypatch.setattr(assign_module, "MAX_STUDENTS", 3)
    assert read_roster(roster(tmp_path, "a\nb\nc\n")) == ["a", "b", "c"]
    assert "4 student ids, over the 3" in error(roster(tmp_path, "a\nb\nc\nd\n"))


@pytest.mark.parametrize("kind", ["file", "device"])
def test_a_class_folder_inside_a_file_names_the_file(tmp_path, kind):
    above = tmp_path / "roster.txt" if kind == "file" else Path(os.devnull)
    if kind == "file":
        above.write_text("ann\n", encoding="utf-8")
    with pytest.raises(AttntraceError) as e:
        assign(["ann"], above / "class", Design(), seed=1)
    assert str(e.value).startswith(f"{above}: is a ") and "cannot be made" in str(e.value)


def test_a_folder_there_already_for_the_same_id_in_another_case_is_refused(tmp_path):
    assign(["ann"], tmp_path, Design(), seed=1)
    with pytest.raises(AttntraceError) as e:
        assign(["Ann"], tmp_path, Design(), seed=1)
    assert str(e.value).startswith(f"{tmp_path / 'ann'}: is there already") and 'write the id as "ann"' in str(e.value)
    assert not (tmp_path / "Ann").exists()


def test_ctrl_c_while_writing_leaves_nothing_behind(tmp_path, monkeypatch):
    real, done = os.replace, []

    def interrupt_fourth(src, dst):
        if len(done) == 3:
            raise KeyboardInterrupt
        done.append(dst)
        real(src, dst)

    monkeypatch.setattr(assign_module.os, "replace", interrupt_fourth)
    with pytest.raises(KeyboardInterrupt):
        assign(ROSTER, tmp_path / "out", Design(), seed=1)
    assert not (tmp_path / "out").exists()


def test_a_folder_that_cannot_be_made_is_one_line_and_nothing_is_written(tmp_path, monkeypatch):
    real = Path.mkdir

    def read_only(self, *args, **kwargs):
        if self.name == "bo":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", read_only)
    with pytest.raises(AttntraceError) as e:
        assign(ROSTER, tmp_path / "out", Design(), seed=1)
    assert str(e.value) == f"{tmp_path / 'out' / 'bo'}: cannot write (Permission denied); nothing was written"
    assert not (tmp_path / "out").exists()


def test_a_huge_file_where_a_problem_goes_is_refused_unread(tmp_path, monkeypatch):
    (tmp_path / "ann").mkdir()
    with open(tmp_path / "ann" / "problem.json", "wb") as f:
        f.truncate(3_000_000)
    monkeypatch.setenv("ATTNTRACE_MAX_MB", "1")
    with pytest.raises(AttntraceError, match="over the 1 MB cap"):
        assign(["ann"], tmp_path, Design(), seed=1)
    assert {p.name for p in tmp_path.rglob("*")} == {"ann", "problem.json"}


def test_ids_named_as_csv_files_are_students_not_a_problem_or_a_sheet(tmp_path, attntrace):
    assign(["x.csv", "q.csv", "ann"], tmp_path, Design(), seed=1)
    r = attntrace("check", tmp_path, "--format", "json")
    sheets = [Path(s["sheet"]).parent.name for s in json.loads(r.out)["sheets"]]
    assert r.code == 1 and sheets == ["ann", "q.csv", "x.csv"], r.err


def test_keys_left_in_a_students_folder_by_an_earlier_layout_are_pointed_out(tmp_path):
    folder = assign(["ann", "bo"], tmp_path, Design(), seed=1).folders[0]
    key_of(folder).rename(folder / "key.json")  # where keys used to go
    done = assign(["ann", "bo"], tmp_path, Design(), seed=1)
    assert done.exposed == [folder / "key.json"] and key_of(folder).exists()
    assert f"1 key in students' own folders ({folder / 'key.json'} ...)" in done.summary()
    assert "note" not in assign(["ann", "bo"], tmp_path / "fresh", Design(), seed=1).summary()
