"""Every kind of worksheet in the registry: its key, printed in any format and read back by its own reader, is marked
all right."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attntrace.core.engine import trace
from attntrace.core.generate import random_problem
from attntrace.core.problem import Problem
from attntrace.homework import decodesheet, flashsheet, worksheet
from attntrace.homework.kinds import KINDS, Marker, kind_of, load
from attntrace.homework.results import Rule
from attntrace.render.document import Document, Style
from attntrace.render.document import render as render_document

KEYS: dict[str, Callable[[Problem, int], Document]] = {  # each kind's key sheet, as `worksheet --key` prints it
    "steps": lambda p, precision: worksheet.document(trace(p, carry_rounding=precision), precision, True),
    "flash": lambda p, precision: flashsheet.document(trace(p, carry_rounding=precision), None, precision, True),
    "decode": lambda p, precision: decodesheet.document(p, None, 0, precision, True),
}


def test_every_kind_has_a_key() -> None:
    assert {kind.name for kind in KINDS} == set(KEYS) and KINDS[-1].name == "steps"  # the eight steps read any other


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from([kind.name for kind in KINDS]), fmt=st.sampled_from(["markdown", "plain", "json"]),
       precision=st.integers(1, 3), seed=st.integers(0, 10_000), n=st.integers(2, 4), heads=st.integers(1, 2))
def test_a_key_read_back_by_its_own_reader_is_all_right(tmp_path: Path, kind: str, fmt: str, precision: int, seed: int,
                                                        n: int, heads: int) -> None:
    problem = random_problem(n=n, d_model=3, heads=heads, seed=seed)
    text = "".join(render_document(KEYS[kind](problem, precision), fmt, Style(precision, blank_from=None)))
    path = tmp_path / f"key-{kind}-{fmt}-{precision}-{seed}.{'json' if fmt == 'json' else 'md'}"
    path.write_text(text, encoding="utf-8")
    sheet = load(str(path), problem)
    assert kind_of(sheet).name == kind
    report = Marker(problem, "problem.json").mark(sheet, Rule())
    assert report.passed and report.diagnosis is None, [(item.name, item.verdict) for item in report.items]


def test_a_sheet_of_another_problem_names_the_built_in_example_in_the_reader_s_language(attntrace, tmp_path):
    sheet = tmp_path / "other.json"  # the key of another problem, marked against the built-in example
    key = attntrace("worksheet", str(Path(__file__).parents[2] / "samples" / "causal.json"), "--key", "--format", "json")
    sheet.write_text(key.out, encoding="utf-8")
    zh = attntrace("check", str(sheet), "--lang", "zh")
    assert zh.code == 2 and "内置示例" in zh.err and "built-in" not in zh.err, zh.err
    assert "the built-in example" in attntrace("check", str(sheet)).err
