"""The fast JSON path gives exactly what the strict parser gives: the same values, of the same types, or its error."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attntrace.errors import AttntraceError
from attntrace.files import jsonfile, values
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
    if isinstance(value, values.Literal):
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


# a big text is read a top-level list at a time: the same value, or the same error, as the whole text read at once
def _member_outcome(text, tiny=1):
    """_outcome with every top-level list read on its own (the sizes that decide it made tiny), and what member saw"""
    seen = []

    def member(key, value):
        seen.append((key, _typed(value)))
        return value

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonfile, "SPLIT_FROM", 0)
        patch.setattr(jsonfile, "MEMBER_FROM", tiny)
        outcome = _outcome(lambda t, name, literals: jsonfile.parse(t, name, literals, member=member), text)
    return outcome, seen


def _members_agree(text):
    outcome, seen = _member_outcome(text)
    assert outcome == _outcome(jsonfile.strict, text)
    if outcome[0] == "value" and seen:
        assert dict(outcome[1][1])  # a top-level object, and each list handed over is its value under its key
        assert all((key, value) in outcome[1][1] for key, value in seen)


lists = st.recursive(numbers, lambda inner: st.lists(inner, max_size=4).map(lambda v: "[" + ", ".join(v) + "]"),
                     max_leaves=12).filter(lambda t: t.startswith("["))


@settings(max_examples=800, deadline=None)
@given(st.lists(st.tuples(keys, lists | texts), max_size=5), st.sampled_from(["", " ", "\n  "]))
def test_an_object_read_a_list_at_a_time_is_what_strict_reads(pairs, space):
    _members_agree("{" + space + f",{space}".join(f'"{k}"{space}:{space}{v}' for k, v in pairs) + space + "}")


@settings(max_examples=500, deadline=None)
@given(texts)
def test_any_text_read_a_list_at_a_time_is_what_strict_reads(text):
    _members_agree(text)


@pytest.mark.parametrize("text", [
    '{"x": [[1, 2]], "x": [[3, 4]]}',  # a duplicate key, each holding a list read on its own
    '{"x": [[1, 2]], "y": {"x": [[3]]}}', '{"rope": {"x": [[1]]}, "y": [2]}',  # a list under a key of an inner object
    '{"x": [[1, NaN]], "w_q": [[2]]}', '{"w_q": [[2]], "x": [[1, 1e999]]}',  # what strict names by its cell
    '{"name": "a\\"b", "x": [[1]]}', '{"tokens": ["a", "b"], "x": [[1]]}', '{"x": [[1]], "tokens": ["a", "b"]}',
    '{"x": [[1]] , "y" : [2] }  ', '{"x": [[1]], }', '{"x": [[1]] "y": [2]}', '{"x": [[1]]], "y": [2]}',
    '{"x": [[1]], "y": [2]', '{"x": [[1]], "y": [2]}}', '{"x": [[1]]}, "y"', '{"x": [1, 2], "\\u0000": 0}',
    '{"x": [[12345678901234567890123]], "y": [1]}', '{"x": [[1, ' + "[" * 300 + "]" * 300 + "]]}",
])
def test_what_strict_refuses_or_keeps_read_a_list_at_a_time(text):
    _members_agree(text)


def test_a_big_problem_file_is_read_a_matrix_at_a_time(tmp_path, monkeypatch):
    from attntrace.files import problemfile

    rng = np.random.default_rng(3)
    problem = {"name": "big", "x": rng.normal(size=(400, 320)).tolist(),
               **{w: rng.normal(size=(320, 320)).tolist() for w in ("w_q", "w_k", "w_v")}, "heads": 4}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(problem), encoding="utf-8")
    assert path.stat().st_size > jsonfile.SPLIT_FROM
    handed = []
    real = problemfile._as_matrix
    monkeypatch.setattr(problemfile, "_as_matrix", lambda key, value: handed.append(key) or real(key, value))
    monkeypatch.setattr(jsonfile, "strict", lambda *a, **k: pytest.fail("strict parse of a valid file"))
    loaded = problemfile.load(str(path))
    assert handed == ["x", "w_q", "w_k", "w_v"]
    for key in ("x", "w_q", "w_k", "w_v"):
        assert np.array_equal(getattr(loaded, key), np.array(problem[key])), key
    assert loaded.heads == 4 and loaded.name == "big"


@pytest.mark.parametrize("bad, message", [('"abc"', 'w_k[2][5] (row 3, column 6): expected a number, got "abc"'),
                                          ("true", "w_k[2][5] (row 3, column 6): expected a number, got true")])
def test_a_bad_cell_in_a_big_file_is_named_as_in_a_small_one(tmp_path, bad, message):
    from attntrace.files import problemfile

    rng = np.random.default_rng(4)
    matrices = {"x": rng.normal(size=(300, 300)).round(9).tolist(),
                **{w: rng.normal(size=(300, 300)).round(9).tolist() for w in ("w_q", "w_k", "w_v")}}
    text = json.dumps(matrices).replace(json.dumps(matrices["w_k"][2][5]), bad, 1)
    assert len(text) > jsonfile.SPLIT_FROM and text.count(bad) == 1
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AttntraceError) as e:
        problemfile.load(str(path))
    assert str(e.value) == f"{path}: {message}"


def test_each_long_top_level_list_is_handed_over_under_its_key():
    outcome, seen = _member_outcome('{"name": "n", "x": [[1, 2]] , "tokens": ["a"], "y" : [3.5] }  ')
    assert outcome[0] == "value" and [key for key, _ in seen] == ["x", "y"]
    assert _member_outcome('{"x": [[1, 2]], "y": [3]}', tiny=7)[1] == [("x", _typed([[1, 2]]))]  # "[3]}" is short


def test_a_text_that_is_mostly_one_list_is_read_whole():
    text = '{"x": [[1, 2], [3, 4]], "w_q": [[1]], "name": "a name to make x less than half"}'
    assert _member_outcome(text)[1] == [("x", _typed([[1, 2], [3, 4]])), ("w_q", _typed([[1]]))]
    assert _member_outcome('{"x": [[1, 2], [3, 4], [5, 6], [7, 8]], "w_q": [[1]]}')[1] == []  # x: over half the text
