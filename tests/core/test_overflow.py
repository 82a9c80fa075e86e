"""Numbers that overflow a float64: one line naming the step, the cell and the cause, exit 1, nothing on stdout; never a
NaN, an inf or a null for a number, and never a numpy warning."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from attntrace.core import experiments
from attntrace.core.arithmetic import round_half_up
from attntrace.core.attention import softmax
from attntrace.core.engine import trace
from attntrace.core.problem import Problem
from attntrace.errors import AttntraceError

PROBLEMS = {
    "e308": {"x": [[1e308, 1e308], [1, 2]]},  # x itself is finite; every score with x1 overflows
    "e200": {"x": [[1e200, 1e200], [1, 2]]},  # q and k are fine, q1 · k1 ≈ 2e400 is not
    "e300": {"x": [[1e300, 1], [1, 2]]},  # with --carry-rounding --precision 17, 1e300 · 10^17 must not overflow
    "small": {"x": [[1, 2], [3, 1]]},  # fine, until divided by 1e-320
    "wq": {"x": [[1, 0], [0, 1]], "w_q": [[1e300, 0], [0, 1]], "w_k": [[0, 1], [1e10, 0]]},  # q1 · k2 alone
    "projection": {"x": [[1e300, 1e300], [1, 2]], "w_v": [[1e10, 0], [0, 1]]},
    "w_o": {"x": [[4, 0], [0, 4]], "w_o": [[1e308, 0], [1e308, 1]]},
}
CASES = [  # (problem, extra options, what the one line says)
    ("e308", [], "step 4: scores[x1 → x1] overflows a float64 (|q1| · |k1| ≈ 2e616)"),
    ("e200", [], "step 4: scores[x1 → x1] overflows a float64 (|q1| · |k1| ≈ 2e400)"),
    ("e200", ["--carry-rounding", "--precision", "17"], "step 4: scores[x1 → x1] overflows a float64"),
    ("e300", ["--carry-rounding", "--precision", "17"], "step 4: scores[x1 → x1] overflows a float64 (|q1| · |k1| ≈ 1e600)"),
    ("small", ["--scale-by", "1e-320"], "step 4: scaled[x1 → x1] overflows a float64 (5 / 1e-320 ≈ 5e320)"),
    ("small", ["--scale-by", "1e-320", "--carry-rounding", "--precision", "17"], "step 4: scaled[x1 → x1] overflows"),
    ("wq", [], "step 4: scores[x1 → x2] overflows a float64 (|q1| · |k2| ≈ 1e310)"),
    ("projection", [], "step 3: v[x1, 1] = x1 · W_V[:, 1] overflows a float64 (≈ 1e310)"),
    ("w_o", [], "step 7: output[x1, 1] = concat1 · W_O[:, 1] overflows a float64"),
]
FORMATS = [[], ["--format", "json"], ["--format", "csv"], ["--format", "plain"]]


@pytest.fixture
def problem_file(tmp_path):
    def write(name: str) -> str:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(PROBLEMS[name]))
        return str(path)

    return write


def _one_line_error(r, says: str) -> None:
    assert r.code == 1, r.err
    assert r.out == ""
    assert r.err.count("\n") == 1 and says in r.err, r.err
    for bad in ("RuntimeWarning", "Traceback", "nan", "null"):
        assert bad not in r.err


@pytest.mark.parametrize("name, options, says", CASES)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("command", [["run"], ["step", "--input", "1"], ["explain", "--input", "1"]])
def test_an_overflow_is_one_line_naming_the_step_cell_and_cause(attntrace, problem_file, name, options, says, fmt, command):
    if command[0] == "explain" and fmt[1:] in (["json"], ["csv"]):
        fmt = ["--format", "markdown"]  # explain's arithmetic is words: it has no JSON or CSV form
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = attntrace(*command, problem_file(name), *options, *fmt)
    _one_line_error(r, says)
    assert "scale" in r.err  # and what to do about it
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("name", ["e308", "e200", "wq", "projection", "w_o"])
@pytest.mark.parametrize("experiment", experiments.NAMES)
def test_an_experiment_that_overflows_is_one_line(attntrace, problem_file, name, experiment):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = attntrace("experiment", experiment, problem_file(name))
    _one_line_error(r, "overflows a float64")
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("experiment", experiments.NAMES)
@pytest.mark.parametrize("size", [1e-200, 1e160])
def test_experiments_on_very_large_or_small_values_show_finite_numbers(attntrace, tmp_path, experiment, size):
    # V = X holds values whose squares overflow (or underflow); Q and K are brought back to ordinary sizes
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"x": [[size, size], [size, -2 * size]], "w_q": [[1 / size, 0], [0, 1 / size]],
                                "w_k": [[1 / size, 0], [0, 1 / size]]}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = attntrace("experiment", experiment, str(path), "--format", "plain")
    assert r.code == 0, r.err
    assert "nan" not in r.out and "inf" not in r.out and "RuntimeWarning" not in r.err and "Traceback" not in r.err
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("size", [1e-200, 1e-300, 1e160, 1e300])
def test_a_vector_is_similar_to_itself_whatever_its_size(size):
    a = np.array([[size, size], [size, -2 * size], [0.0, 0.0]])
    cos = experiments.cosine(a)
    assert cos[0, 0] == 1.0 and cos[1, 1] == 1.0 and cos[2, 2] == 0.0
    assert cos[0, 1] == pytest.approx(-1 / np.sqrt(10)) and np.isfinite(cos).all()
    assert np.abs(cos).max() <= 1.0


def test_the_asymmetry_of_huge_scores_is_finite():
    s = np.array([[1e300, 1e300], [-1e300, 1e300]])
    assert experiments.asymmetry(s) == pytest.approx(np.sqrt(2))
    assert experiments.asymmetry(np.zeros((2, 2))) == 0.0


def test_the_library_raises_an_attntrace_error_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttntraceError, match=r"^step 4: scores\[a → a\] overflows a float64 \(\|q1\| · \|k1\| ≈ 2e616\)"):
            trace(Problem(x=[[1e308, 1e308], [1, 2]], tokens=["a", "b"]))
        head_2 = r"^step 4: head 2 · scores\[x2 → x2\] overflows a float64 \(\|q2\| · \|k2\| ≈ 2e400\)"
        with pytest.raises(AttntraceError, match=head_2):
            trace(Problem(x=[[1, 1, 1, 1], [1, 1, 1e200, 1e200]], heads=2))
        with pytest.raises(AttntraceError, match=r"^step 3: q\[x1, 2\] = x1 · W_Q\[:, 2\] \+ b_q\[2\] overflows"):
            trace(Problem(x=[[1e300, 1e300]], w_q=[[1, 1e10], [1, 0]], b_q=[0, 1]))
        with pytest.raises(AttntraceError, match=r"^step 3: k\[s2, 1\] = s2 · W_K"):
            trace(Problem(x=[[1, 1]], source=[[1, 1], [1e300, 0]], w_k=[[1e10, 0], [0, 1]]))
        for decimals in (None, 2, 17):
            with pytest.raises(AttntraceError, match=r"^step 4: scaled\[x1 → x1\] overflows a float64 \(5 / 1e-320 ≈ 5e320\)"):
                trace(Problem(x=[[1, 2], [3, 1]], scale=1e-320), carry_rounding=decimals, query=1)


def test_a_masked_cell_is_minus_infinity_and_not_an_error():
    t = trace(Problem(x=[[1, 2], [3, 1]], mask="causal", scale=1e-300))
    assert np.isneginf(t.heads[0].scaled[0, 1]) and np.isfinite(t.output).all()


def test_a_masked_cell_that_would_overflow_when_scaled_is_not_an_error():
    t = trace(Problem(x=[[1e-300, 0], [1, 1]], mask="causal", scale=1e-300))
    assert np.isneginf(t.heads[0].scaled[0, 1]) and np.isfinite(t.heads[0].scaled[1]).all()


@pytest.mark.parametrize("z", [[1e308, -1e308, 0.0], [-1e308, -1e308, -1e308], [1.7e308, 1.7e308, -5e-324], [0.0, 0.0, 0.0]])
def test_a_stable_softmax_of_finite_scores_is_never_nan(z):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for allowed in (None, np.array([[True, True, False]]), np.array([[False, False, False]])):
            w = softmax(np.array([z]), allowed)
            assert np.isfinite(w).all()
            assert w.sum() == pytest.approx(0.0 if allowed is not None and not allowed.any() else 1.0)


def test_rounding_huge_values_at_many_decimals_neither_overflows_nor_warns():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = np.array([1e300, -1.7976931348623157e308, 5e-324, 0.0, -0.0, 123.456])
        assert round_half_up(a, 17).tolist() == [1e300, -1.7976931348623157e308, 0.0, 0.0, 0.0, 123.456]
        assert round_half_up(np.array([np.inf, -np.inf]), 2).tolist() == [np.inf, -np.inf]
        t = trace(Problem(x=[[1e300, 1], [1, 2]], w_q=[[1e-300, 0], [0, 1]], w_k=[[1e-300, 0], [0, 1]]), carry_rounding=17)
        assert t.heads[0].v[0, 0] == 1e300 and np.isfinite(t.output).all()


@pytest.mark.parametrize("fmt", ["json", "csv", "plain"])
def test_large_but_finite_numbers_are_shown_and_the_json_holds_no_null(attntrace, tmp_path, fmt):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"x": [[1e150, 1e150], [1, 2]]}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = attntrace("run", str(path), "--format", fmt)
    assert r.code == 0 and r.err == "", r.err
    assert "nan" not in r.out and "inf" not in r.out.replace("input", "")
    if fmt == "json":
        assert "null" not in json.dumps(json.loads(r.out)["heads"]) and json.loads(r.out)["check"]["ok"]
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


# decoding computes the same numbers one token at a time: what overflows there is refused in the same line as run's
DECODED = ["e308", "e200", "e300", "projection", "w_o"]
PROBLEMS["diagonal"] = {"x": [[1e308, 1], [1, 1e308]]}  # the file: each token's own score overflows
PROBLEMS["e154"] = {"x": [[1e154, 1e154], [1, 2]]}  # x squared is finite, the score (2e308) is not
PROBLEMS["late"] = {"x": [[1, 1], [1, 1], [1e200, 1e200]]}  # only the third token's own score


@pytest.mark.parametrize("name", [*DECODED, "small", "diagonal", "e154", "late"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_decode_refuses_an_overflow_in_the_line_run_says(attntrace, problem_file, name, fmt):
    path = problem_file(name)
    if name == "small":
        data = json.loads(open(path).read())
        open(path, "w").write(json.dumps({**data, "scale": 1e-320}))
    said = attntrace("run", path).err
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = attntrace("decode", path, *fmt)
    _one_line_error(r, said.strip())
    assert said.startswith("attntrace: ") and path in said and "overflows a float64" in said
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("options, says", [
    (["--window", "1"], "step 4: scores[x1 → x1] overflows"),
    (["--input", "2"], "step 4: scores[x2 → x1] overflows"),  # q2 against the cache's k1 (3e308)
    (["--window", "1", "--input", "2"], "step 4: scores[x2 → x2] overflows"),  # k1 has left the cache
])
def test_decode_names_the_cell_of_the_step_that_overflows(attntrace, tmp_path, options, says):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"x": [[1e308, 1e308], [1, 1e308]]}))
    _one_line_error(attntrace("decode", path, *options, "--format", "json"), says)


def test_decode_names_a_key_by_its_position_in_a_rolling_cache(tmp_path):
    """with a window of 2, token 3 takes slot 1: its score against k2 (slot 2) is named x3 → x2, |k2|"""
    from attntrace.core.decode import decode

    problem = Problem(x=[[1, 0], [1e200, 0], [0, 1]], w_q=[[0, 0], [1e200, 0]], scale=False)  # q3 · k2 alone
    with pytest.raises(AttntraceError, match=r"^step 4: scores\[x3 → x2\] overflows a float64 \(\|q3\| · \|k2\| ≈ 1e400\)"):
        decode(problem, window=2, position=3)


def test_a_score_decoding_never_computes_is_not_refused(attntrace, problem_file):
    """q1 · k2 overflows, but token 1 never sees token 2: decoding is finite and equals causal attention"""
    r = attntrace("decode", problem_file("wq"), "--format", "json")
    assert r.code == 0, r.err
    data = json.loads(r.out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    steps = data["heads"][0]["steps"]
    assert data["max_diff"] == 0.0 and "null" not in json.dumps([data["output"], [s["weights"] for s in steps]])


def test_the_library_decode_raises_an_attntrace_error_without_a_warning():
    import attntrace

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x in ([[1e308, 1], [1, 1e308]], [[1e154, 1e154], [1, 2]]):
            with pytest.raises(attntrace.AttntraceError, match=r"^step 4: scores\[x1 → x1\] overflows a float64"):
                attntrace.decode(x=x)
