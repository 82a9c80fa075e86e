"""Cell-by-cell arithmetic, exported pictures, and the seed articles' experiments."""

import math
import re

import numpy as np
import pytest

from attntrace.core.engine import trace
from attntrace.core.experiments import asymmetry, cosine, entropy
from attntrace.files.problemfile import load
from tests.conftest import SAMPLES

ARITHMETIC = re.compile(r"^(?:head \d+ · )?(?P<cell>\S+(?: · \S+)?) = (?:(?P<named>[^=]*?) = )?(?P<expr>[^=]+) = (?P<result>\S+)$")


def _evaluate(expr: str) -> float:
    expr = expr.replace("×", "*").replace("sqrt", "math.sqrt")
    expr = re.sub(r"e\^(\(?-?[\d.]+\)?)", r"math.exp(\1)", expr)
    assert "…" not in expr
    return eval(expr, {"math": math})  # noqa: S307 - our own generated arithmetic


@pytest.mark.parametrize("sample, query", [(None, 1), (None, 3), ("scaled.json", 2), ("two_heads.json", 4),
                                           ("causal.json", 2), ("cross.json", 1)])
def test_explain_arithmetic_reproduces_the_engines_numbers(attntrace, sample, query):
    args = ["explain", "--input", str(query), "--precision", "10", "--format", "plain"]
    if sample:
        args.insert(1, str(SAMPLES / sample))
    r = attntrace(*args)
    assert r.code == 0, r.err
    checked = 0
    for line in r.out.splitlines():
        m = ARITHMETIC.match(line)
        if not m or "masked" in line:
            continue
        expr = m.group("expr")
        if re.search(r"[a-z]\d", expr.replace("e^", "")):  # a named reference, e.g. "x2[3]" with no projection
            continue
        assert _evaluate(expr) == pytest.approx(float(m.group("result")), rel=1e-7, abs=1e-7), line
        checked += 1
    assert checked > 20


def test_explain_writes_the_worked_example_as_a_student_would(attntrace):
    out = attntrace("explain", "--input", "1").out
    assert "k1[3] = x1 · W_K[:,3] = 1×1 + 0×0 + 1×0 + 0×0 = 1" in out
    assert "score(1,2) = q1 · k2 = 1×4 + 0×4 + 2×0 = 4" in out
    assert "w(1,1) = e^2 / (e^2 + e^4 + e^4) = 0.0634" in out
    assert "output1[1] = " in out and out == attntrace("step", "--input", "1", "--explain").out


def test_explain_shows_the_scaling_division(attntrace):
    assert "score(1,2) / sqrt(3) = 4 / sqrt(3) = 2.3094" in attntrace("explain", "--input", "1", "--scale").out


def test_long_dot_products_are_shortened(attntrace, tmp_path):
    path = tmp_path / "long.json"
    path.write_text('{"x": [' + ",".join(["[" + ",".join(["1"] * 12) + "]"] * 2) + "]}")
    out = attntrace("explain", path, "--input", "1").out
    assert "(8 more terms)" in out and "1×1 + 1×1 + 1×1 + … (8 more terms) + 1×1 = 12" in out


def test_explain_with_no_scale_and_masks(attntrace):
    out = attntrace("explain", "--input", "1", "--mask", "causal").out
    assert "score(1,2) is masked" in out and "w(1,2) = 0 (masked)" in out


@pytest.mark.parametrize("command", [["run"], ["step", "--input", "2"], ["explain", "--input", "2"]])
def test_export_svg_and_html_hold_the_same_content_as_the_terminal(attntrace, tmp_path, command):
    svg, html = tmp_path / "trace.svg", tmp_path / "trace.html"
    r = attntrace(*command, "--export-svg", svg, "--export-html", html)
    assert r.code == 0 and r.out  # stdout is still written
    picture, page = svg.read_text(), html.read_text()
    assert picture.startswith("<svg") and "<html" in page.lower()
    for needle in ("Step 4", "x2"):
        assert needle in page and needle.replace(" ", "&#160;") in picture
    assert "…" not in page


def test_export_keeps_wide_tables_whole(attntrace, tmp_path):
    path = tmp_path / "wide.json"
    path.write_text('{"x": [' + ",".join(["[" + ",".join([str(v) for v in range(40)]) + "]"] * 2) + "]}")
    html = tmp_path / "wide.html"
    assert attntrace("run", path, "--export-html", html).code == 0
    page = html.read_text()
    assert "…" not in page and "39.0000" in page and "(columns 1 to" in page


def test_symmetric_experiment(attntrace):
    out = attntrace("experiment", "symmetric", SAMPLES / "two_heads.json").out
    p = load(str(SAMPLES / "two_heads.json"))
    own = trace(p).heads[0].scores
    assert (f"head 1 · asymmetry ||S - S^T|| / ||S||: with W_Q {asymmetry(own):.4f}, with W_K for both 0.0000"
            in " ".join(out.split()))  # the line broken to fit 80 columns
    assert asymmetry(own) > 0.1


def test_asymmetry_is_zero_only_for_symmetric_matrices():
    assert asymmetry(np.array([[1.0, 2.0], [2.0, 3.0]])) == 0.0
    assert asymmetry(np.array([[0.0, 1.0], [0.0, 0.0]])) > 0


def test_permute_experiment_shows_equivariance(attntrace):
    out = attntrace("experiment", "permute", SAMPLES / "scaled.json").out
    assert "equal within 1e-9" in out and "permutation-equivariant" in out
    masked = attntrace("experiment", "permute", SAMPLES / "causal.json").out
    assert "depend on position" in masked


def test_similarity_experiment(attntrace):
    out = attntrace("experiment", "similarity").out
    for name in ("Q", "K", "V", "output"):
        assert f"cos(row i, row j) of {name}" in out
    q = trace(load(None)).heads[0].q
    assert f"{cosine(q)[0, 1]:.4f}" in out
    np.testing.assert_allclose(np.diag(cosine(q)), 1.0)


def test_temperature_experiment_shows_scaling_flattens(attntrace):
    out = attntrace("experiment", "temperature").out
    p = load(None)
    from dataclasses import replace

    flat, sharp = trace(replace(p, scale=True)).heads[0].weights, trace(replace(p, scale=False)).heads[0].weights
    assert entropy(flat).mean() > entropy(sharp).mean()
    assert f"mean entropy {entropy(sharp).mean():.4f} without scaling, {entropy(flat).mean():.4f} with" in out


def test_unknown_experiment_is_a_usage_error(attntrace):
    r = attntrace("experiment", "nope")
    assert r.code == 2 and "symmetric" in r.err
