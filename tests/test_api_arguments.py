"""The library's functions take what the command line takes (a file, numpy integers) and refuse anything else with
the library's own error, naming the argument as the caller wrote it (window=0, never --window 0)."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

import attntrace
from tests.conftest import SAMPLES

CAUSAL = SAMPLES / "causal.json"

REFUSED = [  # (call, what the one line starts with)
    (lambda: attntrace.flash(block=1.5), "block=1.5 must be a whole number of at least 1"),
    (lambda: attntrace.flash(block="2"), "block='2' must be a whole number of at least 1"),
    (lambda: attntrace.flash(block=math.nan), "block=nan must be a whole number of at least 1"),
    (lambda: attntrace.flash(block=True), "block=True must be a whole number"),
    (lambda: attntrace.flash(block=0), "block=0 must be a whole number of at least 1"),
    (lambda: attntrace.flash(query=1.0), "query=1.0 must be a whole number"),
    (lambda: attntrace.flash(query="1"), "query='1' must be a whole number"),
    (lambda: attntrace.trace(query=1.0), "query=1.0 must be a whole number"),
    (lambda: attntrace.trace(carry_rounding=-1), "carry_rounding=-1 must be a whole number of at least 0"),
    (lambda: attntrace.decode(query="1"), "query='1' must be a whole number"),
    (lambda: attntrace.decode(query=1.0), "query=1.0 must be a whole number"),
    (lambda: attntrace.decode(window=0), "window=0 must be a whole number of at least 1"),
    (lambda: attntrace.decode(window=2.0), "window=2.0 must be a whole number of at least 1"),
    (lambda: attntrace.decode(window=2, sinks="1"), "sinks='1' must be a whole number of at least 0"),
    (lambda: attntrace.decode(sinks=1), "sinks keeps the first tokens beside a window: add window=W"),
    (lambda: attntrace.decode(window=1, sinks=3), "sinks=3 would keep every one of the 3 tokens; give fewer than 3"),
    (lambda: attntrace.decode(sink="a"), "sink='a' must be a number, or a list of one number per head"),
    (lambda: attntrace.decode(sink="0.5"), "sink='0.5' must be a number, or a list of one number per head"),
    (lambda: attntrace.decode(sink=[[1]]), "sink=[[1]] must be a number, or a list of one number per head"),
    (lambda: attntrace.decode(sink=True), "sink=True must be a number"),
    (lambda: attntrace.decode(sink=math.nan), "sink=nan must be a finite number (or -inf for none)"),
    (lambda: attntrace.decode().render("plain", precision=-1), "precision=-1 must be a whole number from 0 to 17"),
    (lambda: attntrace.decode().render("plain", precision=2.5), "precision=2.5 must be a whole number from 0 to 17"),
    (lambda: attntrace.trace().render("plain", precision=18), "precision=18 must be a whole number from 0 to 17"),
    (lambda: attntrace.flash(3), "flash(): the problem is a Problem, a file's path or a dict of a problem file's keys"),
    (lambda: attntrace.decode([[1, 0]]), "decode(): the problem is a Problem, a file's path or a dict"),
    (lambda: attntrace.trace(SAMPLES / "missing.json"), f"{SAMPLES / 'missing.json'}: no such file or directory"),
    (lambda: attntrace.flash({"x": [[1, 0]], "heads": 0}), "flash(): heads = 0 must be a whole number of at least 1"),
]


@pytest.mark.parametrize("call, says", REFUSED, ids=[says for _call, says in REFUSED])
def test_a_bad_argument_is_the_librarys_own_error_in_the_callers_words(call, says):
    with pytest.raises(attntrace.AttntraceError) as e:
        call()
    assert str(e.value).startswith(says), str(e.value)
    assert "--" not in str(e.value) and "\n" not in str(e.value)


def test_numpy_integers_are_taken_wherever_a_whole_number_is():
    p = attntrace.load(CAUSAL)
    plain = attntrace.decode(p, window=2, sinks=1, query=3)
    numpy = attntrace.decode(p, window=np.int64(2), sinks=np.int32(1), query=np.uint8(3))
    assert numpy.window == 2 and type(numpy.window) is int and numpy.steps == (3,)
    np.testing.assert_array_equal(numpy.output, plain.output)
    assert attntrace.flash(p, block=np.int64(2), query=np.int64(1)).block == 2
    assert attntrace.trace(p, query=np.int16(2), carry_rounding=np.int64(2)).query == 2
    assert attntrace.decode(p).render("plain", precision=np.int64(2)) == attntrace.decode(p).render("plain", precision=2)
    assert attntrace.decode(p, sinks=None).sinks == 0


@pytest.mark.parametrize("given", [str(CAUSAL), CAUSAL, str(CAUSAL).encode()], ids=["str", "Path", "bytes"])
def test_a_file_is_taken_wherever_the_command_line_takes_one(given):
    p = attntrace.load(CAUSAL)
    assert attntrace.flash(given).max_diff == attntrace.flash(p).max_diff
    np.testing.assert_array_equal(attntrace.decode(given, window=2).output, attntrace.decode(p, window=2).output)
    np.testing.assert_array_equal(attntrace.trace(given).output, attntrace.trace(p).output)
    assert attntrace.trace(given, scale=False).divisor == 1.0  # keywords replace the file's own settings
    csv = attntrace.flash(SAMPLES / "worked_example_csv")
    assert csv.trace.problem.dims.n == 3


def test_a_dict_of_a_problem_files_keys_is_a_problem():
    data = json.loads(Path(CAUSAL).read_text())
    p = attntrace.load(CAUSAL)
    np.testing.assert_array_equal(attntrace.flash(data).output, attntrace.flash(p).output)
    np.testing.assert_array_equal(attntrace.decode(data).output, attntrace.decode(p).output)
    assert attntrace.trace(data, heads=1).problem.heads == 1 and attntrace.trace(data, name="mine").problem.name == "mine"


def test_a_sink_given_as_numbers_of_any_kind_is_taken():
    d = attntrace.decode(x=[[1, 0], [0, 1]], sink=np.float32(0.5))
    assert d.heads[0].sink == 0.5
    assert attntrace.decode(x=[[1, 0], [0, 1]], sink=np.array([0.5])).heads[0].sink == 0.5
    assert attntrace.decode(x=[[1, 0], [0, 1]], sink=(None,)).heads[0].sink is None
    assert attntrace.decode(x=[[1, 0], [0, 1]], sink=[-math.inf]).heads[0].sink is None


def test_numpy_numbers_and_arrays_of_text_are_taken_as_problem_keys():
    t = attntrace.trace(x=[[1, 0], [0, 1]], heads=np.int64(1), scale=np.float64(2.0), window=np.int64(1),
                        tokens=np.array(["a", "b"]))
    assert t.divisor == 2.0 and t.problem.labels == ("a", "b") and t.problem.heads == 1
    assert attntrace.flash(x=np.eye(2), sink=np.array([0.5])).heads[0].sink == 0.5
    assert attntrace.decode(x=[[1, 0], [0, 1]], sink=np.array(0.5)).heads[0].sink == 0.5  # a 0-d array: its number


@pytest.mark.parametrize("call", [lambda: attntrace.flash({}), lambda: attntrace.trace({}),
                                  lambda: attntrace.decode({})], ids=["flash", "trace", "decode"])
def test_an_empty_dict_is_a_problem_without_x_not_the_worked_example(call):
    with pytest.raises(attntrace.AttntraceError, match=r"^\w+\(\): x is missing"):
        call()


@pytest.mark.parametrize("name", ["", " ", b""])
def test_an_empty_file_name_is_refused_not_read_as_the_current_folder(name):
    with pytest.raises(attntrace.AttntraceError, match="the problem file's name is empty"):
        attntrace.flash(name)


def test_stdin_is_read_even_when_a_text_stream_stands_in_for_it(monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO('{"x": [[1, 0], [0, 1]], "name": "从 stdin"}'))
    assert attntrace.trace("-").problem.name == "从 stdin"
