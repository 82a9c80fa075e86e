"""Where a problem can come from besides a problem file: matrices given one file each, and a trace's JSON."""

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attntrace.core.engine import trace
from attntrace.core.problem import example
from attntrace.files.problemfile import from_dict, load, origin
from attntrace.render.jsonform import dumps, problem_to_dict, trace_to_dict
from tests.conftest import SAMPLES

MATRICES = ("x", "w_q", "w_k", "w_v")


def _json(r):
    assert r.code == 0, r.err
    return json.loads(r.out)


def _save(folder, arrays):
    """each matrix as its own .npy, and all of them as one .npz; the options that give the .npy files"""
    folder.mkdir(exist_ok=True)
    options = []
    for key, a in arrays.items():
        np.save(folder / f"{key}.npy", a)
        options += [f"--{key.replace('_', '-')}", folder / f"{key}.npy"]
    np.savez(folder / "p.npz", **arrays)
    return options


def _same_numbers(a, b):
    """two trace documents that differ at most in the problem's name"""
    for doc in (a, b):
        doc.pop("name")
        doc["problem"].pop("name", None)
    assert a == b


# --- matrices without a problem file ---------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_matrices_alone_trace_as_the_same_npz(attntrace, tmp_path, data):
    n, d_model, d_k, d_v = (data.draw(st.integers(1, 5)) for _ in range(4))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    arrays = {"x": rng.normal(size=(n, d_model))}
    for key, width in (("w_q", d_k), ("w_k", d_k), ("w_v", d_v)):
        if data.draw(st.booleans()):
            arrays[key] = rng.normal(size=(d_model, width))
    if ("w_q" in arrays) != ("w_k" in arrays):  # q · k needs one d_k: give both or neither
        arrays.pop("w_q", None)
        arrays.pop("w_k", None)
    options = _save(tmp_path / f"m{data.draw(st.integers(0, 10**9))}", arrays)
    npz = options[1].parent / "p.npz"
    _same_numbers(_json(attntrace("run", *options, "-f", "json")), _json(attntrace("run", npz, "-f", "json")))


def test_matrices_alone_use_the_documented_defaults_not_the_examples(attntrace, tmp_path):
    ex = example()
    options = _save(tmp_path, {"x": ex.x, "w_q": ex.w_q, "w_k": ex.w_k, "w_v": ex.w_v})
    doc = _json(attntrace("run", *options, "-f", "json"))
    assert doc["config"]["scale"] is True and doc["config"]["divisor"] == pytest.approx(np.sqrt(3))
    assert doc["name"] == "x from x.npy, w_q from w_q.npy, w_k from w_k.npy, w_v from w_v.npy"
    assert doc["output"] != _json(attntrace("run", "-f", "json"))["output"]  # the example divides by nothing
    assert doc["output"] == _json(attntrace("run", "--scale", "-f", "json"))["output"]


def test_x_alone_is_basic_self_attention(attntrace, tmp_path):
    x = np.arange(6.0).reshape(3, 2)
    options = _save(tmp_path, {"x": x})
    doc = _json(attntrace("run", *options, "-f", "json"))
    head = doc["heads"][0]
    assert head["q"] == head["k"] == head["v"] == x.tolist()  # no weights: each one is the identity
    assert doc["config"]["scale"] is True and doc["config"]["d_k"] == 2 and doc["name"] == "x from x.npy"
    r = attntrace("validate", *options)
    assert r.code == 0 and r.err == ""
    assert r.out.startswith(f"--x {options[1]}: a valid problem") and "d_k      2 per head" in r.out
    assert "scale    true" in r.out


def test_weights_alone_replace_the_examples_and_say_so(attntrace, tmp_path):
    ex = example()
    w_q = ex.w_q[:, ::-1].copy()
    options = _save(tmp_path, {"w_q": w_q})
    r = attntrace("run", *options, "-f", "json")
    doc = _json(r)
    assert doc["heads"][0]["q"] == (ex.x @ w_q).tolist()
    assert doc["heads"][0]["k"] == (ex.x @ ex.w_k).tolist() and doc["config"]["scale"] is False
    assert doc["name"] == f"{ex.name}, w_q from w_q.npy"
    note = [line for line in r.err.splitlines() if line.startswith("note: ")]
    assert len(note) == 1 and "x, w_k, w_v and the settings (scale false) are the built-in example's" in note[0]
    r = attntrace("validate", *options)
    assert r.code == 0 and r.out.startswith(f"the built-in example with --w-q {options[1]}: a valid problem")


def test_matrices_alone_errors_name_the_options(attntrace, tmp_path):
    options = _save(tmp_path, {"x": np.ones((2, 3)), "w_q": np.ones((4, 2))})
    for command in ("run", "validate"):
        r = attntrace(command, *options)
        assert r.code == 1 and r.out == "" and r.err.count("\n") == 1
        assert r.err == f"attntrace: --x {options[1]} --w-q {options[3]}: w_q has 4 rows but x has 3 columns " \
                        "(Q = X · W_Q needs them equal)\n"


def test_validate_needs_a_file_or_matrices(attntrace):
    r = attntrace("validate")
    assert r.code == 2 and r.out == "" and r.err.count("\n") == 1 and "--x" in r.err


def test_a_file_keeps_its_own_settings_and_name_with_matrices_given(attntrace, tmp_path):
    options = _save(tmp_path, {"w_q": example().w_q})
    doc = _json(attntrace("run", SAMPLES / "causal.json", *options, "-f", "json"))
    own = _json(attntrace("run", SAMPLES / "causal.json", "-f", "json"))
    assert doc["name"] == own["name"] and doc["config"]["mask"] == own["config"]["mask"] == ["causal"]


def test_origin_names_what_the_problem_came_from():
    assert origin(None) == "the built-in example"
    assert origin("-") == "stdin" and origin("p.json", {"x": "x.csv"}) == "p.json"
    assert origin(None, {"x": "a.csv", "w_q": None, "w_k": "b.npy"}) == "--x a.csv --w-k b.npy"
    assert origin(None, {"w_v": "v.csv"}) == "the built-in example with --w-v v.csv"


def test_a_file_name_that_is_not_utf8_still_makes_a_name(tmp_path):
    path = tmp_path / "x\udcff.npy"  # the byte 0xff, as Python reads it from a command line
    np.save(path, np.eye(2))
    problem = load(None, {"x": str(path)})
    assert problem.name == "x from x\ufffd.npy"
    problem.name.encode("utf-8")


# --- a trace is a problem -------------------------------------------------------------------------------------------

LABELS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=6)
NUMBERS = st.floats(-100, 100, allow_nan=False, allow_infinity=False)


@st.composite
def problems(draw):
    """a problem file of any kind the engine traces: heads, cross-attention, biases, w_o, masks, scale, labels"""
    n, heads = draw(st.integers(1, 5)), draw(st.integers(1, 3))
    d_model, d_k, d_v = draw(st.integers(1, 4)), heads * draw(st.integers(1, 2)), heads * draw(st.integers(1, 2))

    def matrix(rows, cols):
        return draw(st.lists(st.lists(NUMBERS, min_size=cols, max_size=cols), min_size=rows, max_size=rows))

    data = {"x": matrix(n, d_model), "heads": heads}
    m, d_src = n, d_model
    if draw(st.booleans()):
        m, d_src = draw(st.integers(1, 5)), draw(st.integers(1, 4))
        data["source"] = matrix(m, d_src)
        if draw(st.booleans()):
            data["source_tokens"] = draw(st.lists(LABELS, min_size=m, max_size=m))
    data.update(w_q=matrix(d_model, d_k), w_k=matrix(d_src, d_k), w_v=matrix(d_src, d_v))
    for key, size in (("b_q", d_k), ("b_k", d_k), ("b_v", d_v)):
        if draw(st.booleans()):
            data[key] = draw(st.lists(NUMBERS, min_size=size, max_size=size))
    if draw(st.booleans()):
        d_out = draw(st.integers(1, 3))
        data["w_o"] = matrix(d_v, d_out)
        if draw(st.booleans()):
            data["b_o"] = draw(st.lists(NUMBERS, min_size=d_out, max_size=d_out))
    data["scale"] = draw(st.one_of(st.booleans(), st.floats(0.25, 8)))
    kinds = draw(st.lists(st.sampled_from(["window", "padding"] + ["causal"] * ("source" not in data)), unique=True))
    if kinds:
        data["mask"] = kinds
        if "window" in kinds:
            data["window"] = draw(st.integers(0, 4))
        if "padding" in kinds:
            data["padding"] = draw(st.lists(st.booleans(), min_size=m, max_size=m))
    if draw(st.booleans()):
        data["tokens"] = draw(st.lists(LABELS, min_size=n, max_size=n))
    if draw(st.booleans()):
        data["name"] = draw(LABELS)
    return data


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=problems(), which=st.data())
def test_a_traces_json_read_back_gives_the_same_trace(tmp_path, data, which):
    problem = from_dict(data, "drawn")
    query = which.draw(st.one_of(st.none(), st.integers(1, len(problem.x))))
    decimals = which.draw(st.one_of(st.none(), st.integers(0, 4)))
    first = trace(problem, query=query, carry_rounding=decimals)
    path = tmp_path / "trace.json"
    path.write_text(dumps(trace_to_dict(first)), encoding="utf-8")
    again = load(str(path))
    assert problem_to_dict(again) == problem_to_dict(problem)
    assert trace_to_dict(trace(again, query=query, carry_rounding=decimals)) == trace_to_dict(first)


@pytest.mark.parametrize("sample", ["worked_example.json", "scaled.json", "causal.json", "cross.json",
                                    "two_heads.json", "labels.json", "worked_example_csv", None])
def test_run_reads_its_own_json_from_a_pipe(attntrace, sample):
    given = [] if sample is None else [SAMPLES / sample]
    first = attntrace("run", *given, "-f", "json")
    assert first.code == 0
    again = attntrace("run", "-", "-f", "json", input=first.out)
    assert again.code == 0 and again.err == "" and again.out == first.out
    plain = attntrace("run", "-", input=first.out)
    assert plain.code == 0 and plain.out == attntrace("run", *given).out


def test_every_command_that_reads_a_problem_reads_a_trace(attntrace, tmp_path):
    path = tmp_path / "trace.json"
    path.write_text(_json_text(attntrace("run", SAMPLES / "two_heads.json", "-f", "json")), encoding="utf-8")
    problem = SAMPLES / "two_heads.json"
    for args in (["step", "FILE", "--input", "2"], ["explain", "FILE", "--input", "3"], ["worksheet", "FILE", "--key"],
                 ["worksheet", "FILE", "-f", "json"], ["experiment", "permute", "FILE"],
                 ["run", "FILE", "--carry-rounding", "-p", "2"]):
        expected = attntrace(*(problem if a == "FILE" else a for a in args))
        assert expected.code == 0, expected.err
        for source, stdin in ((path, None), ("-", path.read_text(encoding="utf-8"))):
            got = attntrace(*(source if a == "FILE" else a for a in args), input=stdin)
            assert (got.code, got.out) == (0, expected.out), (args, source, got.err)
    r = attntrace("validate", path)
    assert r.code == 0 and r.out.replace(str(path), "P") == attntrace("validate", problem).out.replace(str(problem), "P")


def test_a_single_input_trace_holds_the_whole_problem(attntrace):
    first = attntrace("step", SAMPLES / "scaled.json", "--input", "2", "-f", "json")
    again = attntrace("step", "-", "--input", "2", "-f", "json", input=first.out)
    assert again.out == first.out
    everything = attntrace("run", "-", "-f", "json", input=first.out)
    assert everything.out == attntrace("run", SAMPLES / "scaled.json", "-f", "json").out


def _json_text(r):
    assert r.code == 0, r.err
    return r.out


@pytest.mark.parametrize("document, words", [
    ({"format": 2, "problem": {"x": [[1]]}}, "format = 2 is not a trace format this attntrace reads (1)"),
    ({"format": True, "problem": {"x": [[1]]}}, "format = true is not a trace format"),
    ({"format": 1, "heads": []}, 'a trace (it has "format") holds its problem under "problem"; this one has none'),
    ({"format": 1, "problem": [[1]]}, 'holds its problem under "problem"; this one has a list'),
    ({"format": 1, "problem": {"x": [[1, "a"]]}}, 'stdin: "problem": x'),
    ({"format": 1, "problem": {"x": [[1]], "heads": 0}}, 'stdin: "problem": heads = 0'),
    ({"format": 1, "x": [[1]]}, 'unknown key "format"'),  # a problem file with a stray key stays a problem file
])
def test_a_damaged_trace_is_one_line(attntrace, document, words):
    for command in ("run", "validate"):
        r = attntrace(command, "-", input=json.dumps(document))
        assert r.code == 1 and r.out == "" and r.err.count("\n") == 1 and words in r.err, r.err
