"""Every command and option, run in-process as a pipe or a simulated terminal would."""

import json
import subprocess
import sys

import numpy as np
import pytest

from attntrace import __version__
from attntrace.render import table
from tests.conftest import ROOT, SAMPLES


def _json(r):
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_run_defaults_to_the_worked_example_in_plain_text_when_piped(attntrace):
    r = attntrace("run")
    assert r.code == 0 and r.out.startswith("worked example\n##############\n\nStep 1 · prepare inputs")
    assert "\x1b" not in r.out
    assert "1.9366  6.6831  1.5951" in r.out
    assert "check: softmax(Q K^T) V equals the row-by-row outputs" in r.out


def test_run_shows_all_eight_steps_for_every_input(attntrace):
    out = attntrace("run").out
    for step in range(1, 9):
        assert f"Step {step} ·" in out
    for i in (1, 2, 3):
        assert f"Step 4 · attention scores for input {i}" in out and f"output {i} = Σ_j" in out


def test_step_shows_a_reminder_then_steps_4_to_7_only(attntrace):
    out = attntrace("step", "--input", "2").out
    assert out.split("\n\n", 1)[1].startswith("Step 3 · reminder: q2, K and V")
    assert "Step 4 · attention scores for input 2" in out and "Step 7" in out
    assert "Step 8" not in out and "input 1 (" not in out and "Step 1" not in out


@pytest.mark.parametrize("n", ["0", "4", "-1"])
def test_step_input_out_of_range_is_a_clear_error(attntrace, n):
    r = attntrace("step", "--input", n)
    # an option out of range is a usage error, as --layer and --head are
    assert r.code == 2 and "inputs 1 to 3" in r.err and r.out == ""


def test_step_needs_input(attntrace):
    r = attntrace("step")
    assert r.code == 2 and "--input" in r.err


@pytest.mark.parametrize("fmt", ["table", "plain", "json", "csv", "markdown"])
def test_every_format(attntrace, fmt):
    r = attntrace("run", "--format", fmt)
    assert r.code == 0 and r.out
    if fmt == "json":
        assert json.loads(r.out)["config"]["n"] == 3
    if fmt == "csv":
        assert "# Step 3 · Q = X · W_Q\n,1,2,3\nx1,1.0000,0.0000,2.0000\n" in r.out
    if fmt == "markdown":
        assert "| x1 | 1.0000 | 0.0000 | 2.0000 |" in r.out
    if fmt == "table":
        assert "Step 3 · Q = X · W_Q" in r.out and "\x1b" not in r.out


def test_table_is_the_default_in_a_terminal_with_colour(attntrace, terminal):
    terminal(width=100)
    r = attntrace("run")
    assert r.code == 0 and "\x1b[" in r.out and "━" in r.out


def test_no_color_turns_colour_off_in_a_terminal(attntrace, environment):
    from attntrace.cli.terminal import Environment

    environment["make"] = lambda: Environment(stdout_isatty=True, stdin_isatty=True, no_color=True, width=100)
    r = attntrace("run")
    assert r.code == 0 and "\x1b[" not in r.out and "━" in r.out


@pytest.mark.parametrize("choice, colour", [("always", True), ("never", False), ("auto", False)])
def test_color_option_when_piped(attntrace, choice, colour):
    r = attntrace("run", "--format", "table", "--color", choice)
    assert ("\x1b[" in r.out) is colour


@pytest.mark.parametrize("command", [["run"], ["step", "-i", "2"], ["explain", "-i", "1"], ["experiment", "permute"],
                                     ["flash", "samples/causal.json"], ["decode", "samples/causal.json"]], ids=" ".join)
def test_color_always_colours_the_tables_through_a_pipe_with_no_format_given(attntrace, command):
    r = attntrace(*command, "--color", "always")
    assert r.code == 0 and "\x1b[" in r.out


def test_color_always_colours_a_file_and_outranks_no_color(attntrace, tmp_path):
    r = attntrace("run", "--color", "always", "-o", tmp_path / "out.txt", env={"NO_COLOR": "1"})
    assert r.code == 0 and "\x1b[" in (tmp_path / "out.txt").read_text(encoding="utf-8")
    assert "\x1b[" in attntrace("run", "--color", "always", env={"NO_COLOR": "1"}).out


@pytest.mark.parametrize("fmt", ["plain", "markdown", "csv", "json"])
def test_the_text_formats_never_have_colour_as_the_help_says(attntrace, fmt):
    r = attntrace("run", "--format", fmt, "--color", "always")
    assert r.code == 0 and "\x1b" not in r.out
    said = " ".join(attntrace("run", "--help").out.split())
    assert "The other formats (plain, markdown, csv, json) never have colour." in said


def test_auto_colour_stays_off_through_a_pipe(attntrace):
    r = attntrace("run")
    assert r.code == 0 and "\x1b" not in r.out and "━" not in r.out  # plain text, as before


@pytest.mark.parametrize("env, options, prompt", [
    ({}, [], "── Enter: next step · q: quit ──"),
    ({"ATTNTRACE_ASCII": "1"}, [], "-- Enter: next step | q: quit --"),
    ({}, ["--ascii"], "-- Enter: next step | q: quit --"),
    ({}, ["--lang", "zh"], "-- Enter：下一步 | q：退出 --"),
    ({"ATTNTRACE_ASCII": "0"}, ["--lang", "zh"], "── Enter：下一步 · q：退出 ──"),
], ids=["box", "ascii-variable", "ascii-option", "chinese", "chinese-box"])
def test_the_pause_prompt_is_drawn_as_the_tables_are(attntrace, terminal, env, options, prompt):
    terminal(keys="q")
    r = attntrace("run", "--pause", "--color", "never", *options, env=env)
    assert r.code == 0 and r.err.startswith(prompt)


def test_never_colour_in_a_terminal(attntrace, terminal):
    terminal()
    assert "\x1b[" not in attntrace("run", "--color", "never").out


def test_table_escapes_token_labels(attntrace, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"x": [[1, 0], [0, 1]], "tokens": ["[red]", "[/]"]}))
    r = attntrace("run", path, "--format", "table", "--color", "always")
    assert r.code == 0 and "[red]" in r.out and "[/]" in r.out


def test_wide_tables_are_split_into_column_blocks_never_cut(attntrace, terminal, tmp_path):
    path = tmp_path / "wide.json"
    x = np.arange(2 * 30, dtype=float).reshape(2, 30) * 1000.123
    path.write_text(json.dumps({"x": x.tolist()}))
    terminal(width=60)
    r = attntrace("run", path, "--color", "never")
    assert r.code == 0 and "…" not in r.out and "(columns 1 to" in r.out
    last = f"{x[1, 29]:.4f}"
    assert last in r.out
    plain = attntrace("run", path, "--format", "plain").out
    assert "…" not in plain and "(columns 1 to" in plain and last in plain


def test_huge_matrices_are_elided_in_the_middle(attntrace, tmp_path):
    path = tmp_path / "tall.json"
    path.write_text(json.dumps({"x": np.ones((100, 2)).tolist()}))
    r = attntrace("run", path)
    assert "… 36 rows hidden; --format json shows all" in r.out
    assert "steps 4-7 for inputs 4 to 99 (96 inputs) are not shown" in r.out
    table = attntrace("run", path, "--format", "table").out
    assert "36 rows hidden" in table


def test_precision(attntrace):
    assert "1.94  6.68  1.60" in attntrace("run", "--precision", "2").out
    from attntrace.core.engine import trace
    from attntrace.core.problem import example

    assert f"{trace(example()).output[0, 0]:.10f}" in attntrace("run", "-p", "10").out


def test_carry_rounding_rounds_and_carries_at_the_precision(attntrace):
    doc = _json(attntrace("run", "--carry-rounding", "--precision", "1", "--format", "json"))
    assert doc["heads"][0]["weights"][0] == [0.1, 0.5, 0.5] and doc["output"][0] == [2.1, 7.2, 1.8]
    assert doc["config"]["carry_rounding"] == 1


def test_scale_options_override_the_file(attntrace):
    assert _json(attntrace("run", "--scale", "-f", "json"))["config"]["divisor"] == pytest.approx(3**0.5)
    assert _json(attntrace("run", SAMPLES / "scaled.json", "--no-scale", "-f", "json"))["config"]["divisor"] == 1.0
    assert _json(attntrace("run", "--scale-by", "8", "-f", "json"))["config"]["divisor"] == 8.0
    assert attntrace("run", "--scale-by", "-1").code == 2


def test_mask_window_and_heads_override_the_file(attntrace):
    doc = _json(attntrace("run", "--mask", "causal", "-f", "json"))
    assert doc["heads"][0]["weights"][0] == [1.0, 0.0, 0.0]
    doc = _json(attntrace("run", "--window", "0", "-f", "json"))
    assert doc["heads"][0]["weights"][1] == [0.0, 1.0, 0.0]
    doc = _json(attntrace("run", SAMPLES / "causal.json", "--mask", "none", "-f", "json"))
    assert doc["config"]["mask"] == []
    doc = _json(attntrace("run", SAMPLES / "worked_example_csv", "--heads", "3", "-f", "json"))
    assert len(doc["heads"]) == 3
    r = attntrace("run", "--heads", "2")
    assert r.code == 2 and "heads = 2 does not divide d_k = 3" in r.err  # an option that does not fit: usage


def test_mask_accepts_commas_and_repeats(attntrace):
    a = _json(attntrace("run", "--mask", "causal,window", "--window", "1", "-f", "json"))
    b = _json(attntrace("run", "--mask", "causal", "--mask", "window", "--window", "1", "-f", "json"))
    assert a["config"]["mask"] == b["config"]["mask"] == ["causal", "window"]


@pytest.mark.parametrize(("args", "said"), [
    (("--mask", "causal,none"), 'mask "none" cannot go with "causal"; give one or the other'),
    (("--mask", "causal", "--mask", "none"), 'mask "none" cannot go with "causal"'),
    (("--heads", "2"), "heads = 2 does not divide d_k = 3"),
    (("--scale-by", "inf"), "'--scale-by': inf must be a positive, finite number"),
])
def test_an_option_that_does_not_fit_the_problem_is_a_usage_error(attntrace, args, said):
    r = attntrace("run", *args)
    assert r.code == 2 and r.out == "" and said in r.err and r.err.count("\n") == 1, r.err


def test_the_same_setting_in_a_problem_file_is_bad_content(attntrace, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"x": [[1.0, 2.0, 3.0]], "heads": 2}), encoding="utf-8")
    r = attntrace("run", path)
    assert r.code == 1 and "heads = 2 does not divide" in r.err
    path.write_text(json.dumps({"x": [[1.0, 2.0]], "mask": ["causal", "none"]}), encoding="utf-8")
    assert attntrace("run", path).code == 1


def test_unknown_mask_option(attntrace):
    r = attntrace("run", "--mask", "casual")
    assert r.code == 2 and 'did you mean "causal"' in r.err  # an option's value: a usage error


def test_output_file_is_utf8_with_lf(attntrace, tmp_path):
    out = tmp_path / "answers.txt"
    r = attntrace("run", "-o", out)
    assert r.code == 0 and r.out == ""
    data = out.read_bytes()
    assert b"\r\n" not in data and "Σ_j".encode() in data and data.decode("utf-8") == attntrace("run").out


def test_warnings_go_to_stderr_and_data_to_stdout(attntrace, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"x": [[1.0], [2.0]], "padding": [True, True]}))
    r = attntrace("run", path)
    assert r.code == 0 and "warning: input 1 (x1): every key is masked" in r.err
    assert "warning:" not in r.out


def test_version_and_help_with_examples(attntrace):
    assert attntrace("--version").out.strip() == f"attntrace {__version__}"
    for command in ("run", "step", "validate", "new", "schema"):
        r = attntrace(command, "--help")
        assert r.code == 0 and f"attntrace {command}" in r.out and "Example:" in r.out


def test_python_dash_m_behaves_the_same(attntrace):
    out = subprocess.run([sys.executable, "-m", "attntrace", "run"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout == attntrace("run").out


def test_validate_prints_shapes_without_computing(attntrace):
    r = attntrace("validate", SAMPLES / "two_heads.json")
    assert r.code == 0
    for line in ("n        4", "d_k      2 per head", "heads    2", "d_out    4"):
        assert line in r.out
    assert "m        4 source rows" not in r.out and "cross-attention" in attntrace("validate", SAMPLES / "cross.json").out


def test_validate_reports_errors(attntrace, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"x": [[1, 2]], "heads": 0}')
    r = attntrace("validate", path)
    assert r.code == 1 and "heads = 0" in r.err and r.out == ""


def test_schema_is_json_schema_naming_every_key(attntrace):
    from attntrace.files.problemfile import KEYS

    doc = _json(attntrace("schema"))
    assert doc["$schema"].startswith("https://json-schema.org") and set(KEYS) <= set(doc["properties"])


@pytest.mark.parametrize("init", ["integers", "normal", "xavier", "kaiming"])
def test_new_then_validate_then_run(attntrace, tmp_path, init):
    path = tmp_path / "new.json"
    r = attntrace("new", "--tokens", "4", "--d-model", "6", "--d-k", "4", "--d-v", "2", "--heads", "2", "--init",
                  init, "--seed", "3", "--labels", "a,b,c,d", "-o", path)
    assert r.code == 0 and r.out == ""
    assert "heads    2" in attntrace("validate", path).out
    doc = _json(attntrace("run", path, "-f", "json"))
    assert doc["tokens"] == ["a", "b", "c", "d"] and len(doc["heads"]) == 2
    if init == "integers":
        problem = json.loads(path.read_text())
        assert all(isinstance(v, int) for row in problem["w_q"] for v in row) and problem["scale"] is False


def test_new_is_reproducible_with_a_seed_and_checks_sizes(attntrace):
    assert attntrace("new", "--seed", "5").out == attntrace("new", "--seed", "5").out
    r = attntrace("new", "--heads", "2", "--d-k", "3")  # options that do not fit together: a usage error
    assert r.code == 2 and "does not divide d_k = 3" in r.err
    r = attntrace("new", "--tokens", "2", "--labels", "a,b,c")
    assert r.code == 2 and "3 labels" in r.err


def test_csv_and_json_samples_trace_identically(attntrace):
    a = _json(attntrace("run", SAMPLES / "worked_example_csv", "-f", "json"))
    b = _json(attntrace("run", SAMPLES / "worked_example.json", "-f", "json"))
    assert a["heads"] == b["heads"] and a["output"] == b["output"]


def test_negative_zero_prints_as_zero_in_every_text_format(attntrace, tmp_path):
    path = tmp_path / "negzero.json"
    path.write_text(json.dumps({"x": [[-0.0, -1e-9], [1.0, 2.0]]}))
    for fmt in ("plain", "csv", "markdown", "table"):
        out = attntrace("run", path, "--format", fmt).out
        assert "-0.0000" not in out and "0.0000" in out, fmt


def test_table_colours_carry_meaning_and_the_heatmap_has_a_glyph_cue(attntrace):
    out = attntrace("run", "--format", "table", "--color", "always").out
    q_title = next(line for line in out.splitlines() if "Step 3 · Q = X · W_Q" in line)
    assert "\x1b[1;31m" in q_title  # Q is red
    x_title = next(line for line in out.splitlines() if "Step 1 · X" in line)
    assert "\x1b[1;32m" in x_title  # inputs are green
    weights = out[out.index("Step 5 · w(1, j)"):out.index("Step 6")]
    assert "48;2;" in weights  # a background shade per cell
    plain_table = attntrace("run", "--format", "table", "--color", "never").out
    assert "\x1b" not in plain_table
    row = json.loads(attntrace("run", "--format", "json").out)["heads"][0]["weights"][0]
    for w in row:  # the same cue without colour: a bar for the weight against the largest in its row
        assert f"{w:.4f} {table.BARS[round(w / max(row) * (len(table.BARS) - 1))]}" in plain_table
    assert "from the least to the largest: ▁▂▃▄▅▆▇█" in " ".join(plain_table.split())


def test_heatmap_shades_grow_from_grey_to_blue_whatever_the_background():
    """the shade is a like lightness from grey to blue, so dark and light screens read it the same way"""
    from rich.color import ColorTriplet

    shades = [table._heat(share / 10).bgcolor for share in range(11)]
    triplets: list[ColorTriplet] = [s.get_truecolor() for s in shades if s is not None]
    blues = [t.blue - (t.red + t.green) / 2 for t in triplets]
    assert blues == sorted(blues) and blues[0] == 0 and blues[-1] > 100  # bluer as the weight grows
    lightness = [0.2126 * t.red + 0.7152 * t.green + 0.0722 * t.blue for t in triplets]
    assert max(lightness) - min(lightness) < 40  # never near white, never near black
    assert all(table._heat(s / 10).color is not None for s in range(11))


def test_each_commands_format_choices_are_formats_the_output_seam_has():
    from attntrace.cli.output import ACCEPTED
    from attntrace.render.document import FORMATS

    for choices in ACCEPTED.values():
        assert set(choices) <= set(FORMATS)
    assert "json" not in ACCEPTED["experiment"] and "json" not in ACCEPTED["explain"]


def test_a_format_a_command_does_not_have_is_a_usage_error(attntrace):
    r = attntrace("experiment", "symmetric", "--format", "json")
    assert r.code == 2 and "'json' is not one of" in r.err and r.err.count("\n") == 1
