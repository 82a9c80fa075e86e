"""The JSON form of a trace: the documented keys, plain numbers, null for masked cells, never NaN."""

import json
from dataclasses import replace

import numpy as np

from attntrace.core.engine import trace
from attntrace.core.masks import Padding
from attntrace.core.problem import example
from attntrace.files.problemfile import from_dict
from attntrace.render.jsonform import dumps, trace_to_dict

HEAD_KEYS = {"head", "q", "k", "v", "scores", "scaled", "weights", "weighted", "output"}
TOP_KEYS = {"format", "name", "tokens", "source_tokens", "query", "inputs", "config", "problem", "heads", "concat",
            "output", "check", "warnings"}


def _doc(t):
    return json.loads(dumps(trace_to_dict(t)))


def test_documented_keys():
    doc = _doc(trace(example()))
    assert set(doc) == TOP_KEYS
    assert all(set(h) == HEAD_KEYS for h in doc["heads"])
    assert doc["tokens"] == ["x1", "x2", "x3"] and doc["config"]["scale"] is False


def test_values_are_the_engine_values_as_shortest_float_reprs():
    t = trace(example())
    text = dumps(trace_to_dict(t))
    doc = json.loads(text)
    assert doc["output"] == t.output.tolist()
    assert repr(float(t.heads[0].weights[0, 0])) in text


def test_masked_cells_are_null_in_scaled_and_zero_in_weights():
    doc = _doc(trace(replace(example(), mask=("causal",))))
    head = doc["heads"][0]
    assert head["scaled"][0] == [2.0, None, None]
    assert head["weights"][0] == [1.0, 0.0, 0.0]


def test_never_nan_even_when_every_key_is_masked():
    text = dumps(trace_to_dict(trace(replace(example(), mask=(Padding((True, True, True)),)))))
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text)["warnings"]


def test_negative_zero_is_written_as_zero():
    p = replace(example(), x=-example().x * 0.0)
    assert "-0.0" not in dumps(trace_to_dict(trace(p)))


def test_single_query_holds_that_querys_rows():
    doc = _doc(trace(example(), query=2))
    assert doc["query"] == 2 and doc["inputs"] == [2]
    assert doc["heads"][0]["scores"] == [[4.0, 16.0, 12.0]] and len(doc["output"]) == 1


def test_the_problem_key_is_a_problem_file_that_reproduces_the_trace():
    t = trace(example())
    again = trace(from_dict(_doc(t)["problem"], "round trip"))
    np.testing.assert_array_equal(again.output, t.output)


def test_multi_head_has_one_object_per_head_and_a_final_output_after_w_o():
    p = replace(example(), w_q=np.ones((4, 4)), w_k=np.ones((4, 4)), w_v=np.ones((4, 4)), heads=2, w_o=np.ones((4, 2)))
    doc = _doc(trace(p))
    assert [h["head"] for h in doc["heads"]] == [1, 2]
    assert np.array(doc["output"]).shape == (3, 2) and np.array(doc["concat"]).shape == (3, 4)
