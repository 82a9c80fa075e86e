"""The fast JSON path gives exactly what the strict parser gives: the same values, of the same types, or its error."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attntrace.errors import AttntraceError
from attntrace.files import jsonfile
from attntrace.files.problemfile import from_dict


def _outcome(parse, text):
    """("value", the parsed value with every type spelt out) or ("error", the message)"""
    try:
        return "value", _typed(parse(text, "t.json", literals=True))
    except AttntraceError as e:
        return "error", str(e)


def _typed(value):
    if isinstance(value, dict):
        return ("dict", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    if isinstance(value, jsonfile.Literal):
        return ("literal", value.word)
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


def _agree(text):
    assert _outcome(jsonfile.parse, text) == _outcome(jsonfile.strict, text)


keys = st.sampled_from(["x", "w_q", "heads", "tokens", "a:b", "\\u003a", "é", "x"])
numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "-0", "1E5", "1e-400", "0.1000000000000000055511",
                     "1" * 30, "18446744073709551616", "-9223372036854775809", "2.5e-05", "1e-07"]),
)
strings = st.one_of(
    st.text(max_size=6).map(lambda s: json.dumps(s, ensure_ascii=False)),
    st.sampled_from(['"\\ud800"', '"a:b"', '"\\u003a"', '"\\u003A"', '"\\"x\\": 1"', '"\\n"', '"\u2028"', '"[a"',
                     '"\\u005b"', '"\\u005B"']),
)


def _objects(inner):
    pairs = st.lists(st.tuples(keys, inner), max_size=4)
    return pairs.map(lambda p: "{" + ", ".join(f'"{k}": {v}' for k, v in p) + "}")


texts = st.recursive(numbers | strings | st.sampled_from(["true", "false", "null"]),
                     lambda inner: st.lists(inner, max_size=4).map(lambda v: "[" + ",".join(v) + "]") | _objects(inner),
                     max_leaves=25)


@settings(max_examples=1500, deadline=None)
@given(texts, st.sampled_from(["", " ", "\n", "\t"]))
def test_any_text_of_values_parses_as_strict_parses_it(text, space):
    _agree(space + text + space)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet='[]{}",:0123456789.-eE xNaIfinty\\u\n', max_size=60))
def test_any_text_parses_or_fails_as_strict_does(text):
    _agree(text)


@pytest.mark.parametrize("text", [
    '{"x": [[1, 2]], "x": [[3, 4]]}',  # a duplicate key
    '{"x": [[1, 2]], "heads": 1, "heads": 2, "name": "a:b"}',
    '{"x": [[1, 2]], "name": "\\u003a", "tokens": ["a"], "tokens": ["b"]}',  # an escaped colon hides a duplicate
    '{"x": [[1, {"a": 1, "a": 2}]]}',  # a duplicate inside a row of numbers
    '{"x": [[1, NaN]]}', '{"x": [[1, 1e999]]}', '{"tokens": ["\\ud800"]}', '{"x": [[12345678901234567890123]]}',
    '{"tokens": [12345678901234567890123, -9223372036854775809]}', "[" * 995 + "]" * 995, "[1, " * 995 + "]" * 995,
    '{"x": [[1]]', "", "  ", '{"x": [[1]]} x',
    '{"x": [[1, ' + "[" * 1000 + "]" * 1000 + "]]}",  # deeper than strict reads, inside a row that starts with a number
    '{"x": [[1, ' + "[" * 1000 + "]" * 1000 + '], ["\\u005b"]]}',  # ... with an escaped bracket to even the count
    '{"x": [[1, ' + "[" * 1000 + "]" * 1000 + '], ["a["]]}',
])
def test_what_strict_refuses_or_keeps_exactly(text):
    _agree(text)


def test_a_big_valid_problem_takes_the_fast_path(monkeypatch):
    rng = np.random.default_rng(0)
    problem = {"name": "big: one", "tokens": [f"t:{i}" for i in range(300)], "x": rng.normal(size=(300, 40)).tolist(),
               **{w: rng.integers(-9, 9, size=(40, 8)).tolist() for w in ("w_q", "w_k", "w_v")}, "heads": 2,
               "scale": 1e-05}
    text = json.dumps(problem)
    monkeypatch.setattr(jsonfile, "strict", lambda *a, **k: pytest.fail("strict parse of a valid file"))
    assert jsonfile.parse(text, "big.json") == problem
    assert from_dict(jsonfile.parse(text, "big.json", literals=True), "big.json").x.shape == (300, 40)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=20),
       st.sampled_from(["repr", ".17g", ".25e", ".30f"]))
def test_numbers_read_as_the_same_float(values, form):
    texts = [repr(v) if form == "repr" else format(v, form) for v in values]
    parsed = jsonfile.parse("[" + ",".join(texts) + "]", "t.json")
    assert [math.copysign(1.0, p) * abs(p) for p in parsed] == [float(t) for t in texts]


def test_without_orjson_every_file_takes_the_strict_path(monkeypatch):
    monkeypatch.setattr(jsonfile, "_orjson_reads_exactly", lambda: False)
    text = '{"x": [[1, 2.5e-05]], "tokens": ["a"]}'
    assert jsonfile._fast(text) is jsonfile._UNSURE
    assert jsonfile.parse(text, "t.json") == {"x": [[1, 2.5e-05]], "tokens": ["a"]}
