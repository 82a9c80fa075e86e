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
    "check_class": ["check", SAMPLES / "homework"],
}
EXIT = {"check_ben": 1, "check_class": 1}  # a sheet with a mistake


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
    assert baseline.startswith(b"Step 1") and b"\x1b" not in baseline and "…".encode() not in baseline
    for extra in ENVIRONMENTS:
        assert _run(extra) == baseline, extra
