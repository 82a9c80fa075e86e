"""The commonest command lines are read without typer (cli/quick.py): each such line gives the same bytes, status and
messages as typer's reading of it, and anything else goes to typer."""

from __future__ import annotations

import json
import subprocess
import sys
from unittest import mock

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attntrace import cli
from attntrace.cli.quick import recognise
from attntrace.cli.terminal import Environment
from tests.conftest import SAMPLES

SCALED = str(SAMPLES / "scaled.json")
TWO_HEADS = str(SAMPLES / "two_heads.json")
STDIN = (SAMPLES / "causal.json").read_text(encoding="utf-8")


def both(argv: list[str], stdin: str = STDIN, terminal: bool = False) -> tuple[tuple[int, str, str], ...]:
    """(status, stdout, stderr) of the line read by cli.main (quick when it can) and by typer alone"""
    results = []
    for quick in (True, False):
        with CliRunner().isolation(input=stdin) as (out, err, _), mock.patch(
                "attntrace.cli.quick.recognise", recognise if quick else lambda argv: None):
            env = Environment(stdout_isatty=terminal, stdin_isatty=False, no_color=False, width=100)
            code = cli.main(argv, env=env)
            sys.stdout.flush()
            sys.stderr.flush()
            results.append((code, out.getvalue().decode("utf-8"), err.getvalue().decode("utf-8")))
    return tuple(results)


SHAPES = [
    ["run"], ["run", SCALED], ["run", "-"], ["run", SCALED, "--format", "json"], ["run", "-f", "csv", TWO_HEADS],
    ["run", "--precision", "2", SCALED], ["run", "-p", "0", "--format", "markdown"], ["run", "--format", "table"],
    ["step", "--input", "2"], ["step", SCALED, "-i", "3"], ["step", "-i", "1", "--format", "json", TWO_HEADS],
    ["step", "--precision", "6", "--input", "2", "-f", "plain", "-"], ["step", "-i", "2", "-p", "17", "-f", "csv"],
]


@pytest.mark.parametrize("argv", SHAPES, ids=" ".join)
def test_each_common_line_is_read_without_typer_and_gives_typers_bytes(argv):
    assert recognise(argv) is not None
    quick, typer_read = both(argv)
    assert quick[0] == 0 and quick[1], quick[2]
    assert quick == typer_read


@pytest.mark.parametrize("argv", [["run"], ["step", SCALED, "-i", "2"]], ids=" ".join)
def test_a_terminal_gets_the_same_coloured_tables_either_way(argv):
    quick, typer_read = both(argv, terminal=True)
    assert "\x1b[" in quick[1]
    assert quick == typer_read


@pytest.mark.parametrize("argv, status", [
    (["run", "missing.json"], 1), (["step", "--input", "9"], 2), (["step", "--input", "0", SCALED], 2), (["run", "-"], 1),
], ids=lambda value: " ".join(value) if isinstance(value, list) else str(value))
def test_failures_on_the_quick_path_are_typers_one_line_and_status(argv, status):
    assert recognise(argv) is not None
    quick, typer_read = both(argv, stdin="{not json")
    assert quick[0] == status and quick[1] == "" and quick[2].count("\n") == 1 and quick[2].startswith("attntrace: ")
    assert quick == typer_read


@pytest.mark.parametrize("argv", [
    [], ["run", "--help"], ["run", "-h"], ["step", SCALED], ["run", "--input", "2"], ["run", SCALED, SCALED],
    ["run", "--format", "xml"], ["run", "--format"], ["run", "-p", "18"], ["run", "-p", "-1"], ["run", "-p", "²"],
    ["step", "-i", "-1"], ["step", "-i", "+2"], ["step", "-i", "2", "-i", "3"], ["run", "--format=json"],
    ["run", "-fjson"], ["run", "--", SCALED], ["run", "--pause"], ["run", "--color", "never"], ["explain", "-i", "2"],
    ["step", "-i", "2", "--explain"], ["runs"], ["--version"],
], ids=lambda argv: " ".join(argv) or "(nothing)")
def test_every_other_line_is_left_to_typer(argv):
    assert recognise(argv) is None


TOKENS = ["run", "step", "--input", "-i", "2", "4", "0", "--format", "-f", "json", "plain", "csv", "xml", "-p",
          "--precision", "3", "18", SCALED, "missing.json", "-", "--pause", "--", "--input=2", "-h"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["run", "step"]), st.lists(st.sampled_from(TOKENS), max_size=5))
def test_any_line_gives_the_same_result_whichever_way_it_is_read(command, words):
    quick, typer_read = both([command, *words])
    assert quick == typer_read


def test_a_quick_line_imports_neither_typer_nor_click():
    code = ("import json, sys; from attntrace.cli import main; status = main(sys.argv[1:]); "
            "print(json.dumps([status, sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click'))]))")
    for argv in (["run", "--format", "plain"], ["step", SCALED, "--input", "2", "-f", "json"]):
        out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True).stdout
        assert json.loads(out.splitlines()[-1]) == [0, []]
    out = subprocess.run([sys.executable, "-c", code, "run", "--color", "never"], capture_output=True, text=True,
                         check=True).stdout
    assert "click" in json.loads(out.splitlines()[-1])[1]  # the same test sees typer's lines bring it in
