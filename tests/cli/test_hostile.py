"""What a hurried or unlucky user types gets one line in plain words: no parser's or library's own phrasing, no
"please report" for a bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attntrace.core.variants import Rope, angles
from attntrace.errors import AttntraceError


def _problem(tmp_path, data, name="p.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_rope_angles_past_float64_name_the_keys_not_a_bug(attntrace, tmp_path):
    path = _problem(tmp_path, {"x": [[1, 0, 1, 0], [0, 1, 0, 1]],
                               "rope": {"frequencies": [1e308, 1e308], "positions": [0, 1e10]}})
    for command in ("run", "validate"):
        r = attntrace(command, path)
        assert r.code == 1 and r.out == "" and r.err.count("\n") == 1 and "please report" not in r.err
        assert "rope frequencies value 1 (1e+308) × rope positions value 2 (1e+10)" in r.err
        assert "past the largest float64" in r.err and "give smaller rope frequencies or positions" in r.err


def test_rope_angles_past_float64_at_the_default_positions_name_the_frequency(attntrace, tmp_path):
    path = _problem(tmp_path, {"x": [[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 1, 1]], "rope": {"frequencies": [1e308, 1]}})
    r = attntrace("run", path)
    assert r.code == 1 and "please report" not in r.err and r.err.count("\n") == 1
    assert "rope frequencies value 1 (1e+308) × input 3's position (2) is an angle of about 2.0e308" in r.err


def test_rope_source_positions_past_float64_are_named():
    with pytest.raises(AttntraceError, match="rope source_positions value 1"):
        Rope(frequencies=(1e300,), positions=(0.0,), source_positions=(-1e10,))
    assert angles(np.array([0.0, 1e300]), np.array([1.0])).shape == (2, 1)


def test_rope_pairs_given_as_a_number_is_shown_as_a_number(attntrace, tmp_path):
    r = attntrace("run", _problem(tmp_path, {"x": [[1, 0, 1, 0]], "rope": {"pairs": 5}}))
    assert r.code == 1 and "rope pairs = 5 must be" in r.err


@pytest.mark.parametrize("argv, plain", [
    (["run", "-p", "abc"], "'abc' is not a whole number."), (["step", "-i", "1.5"], "'1.5' is not a whole number."),
    (["check", "a.json", "--tolerance", "abc"], "'abc' is not a number."), (["new", "--seed", "x"], "not a whole number"),
])
def test_clicks_type_names_become_plain_words(attntrace, argv, plain):
    r = attntrace(*argv)
    assert r.code == 2 and plain in r.err and "valid integer" not in r.err and "valid float" not in r.err


@pytest.mark.parametrize("value", ["inf", "1e999", "nan", "0", "-1"])
def test_scale_by_that_is_not_a_positive_finite_number_is_the_options_fault(attntrace, value):
    r = attntrace("run", "--scale-by", value)
    assert r.code == 2 and "Invalid value for '--scale-by'" in r.err and "must be a positive, finite number" in r.err
    assert "built-in example" not in r.err


def test_labels_count_is_said_in_good_grammar(attntrace):
    r = attntrace("new", "--tokens", "2", "--labels", "a")
    assert r.code == 2 and "--labels gives 1 label but --tokens is 2" in r.err


def test_a_problem_file_given_as_a_matrix_says_to_give_it_as_file(attntrace, tmp_path):
    problem = _problem(tmp_path, {"x": [[1, 2]]})
    (tmp_path / "x.csv").write_text("1,2\n")
    r = attntrace("run", "--x", tmp_path / "x.csv", "--w-q", problem)
    assert r.code == 1 and r.err.count("\n") == 1
    assert "holds an object (a problem?), not one matrix for w_q" in r.err and f"attntrace run {problem}" in r.err


@pytest.mark.parametrize("text, said", [
    ('{"x": [[1,\u200b2]]}', "U+200B (zero width space)"), ('{"x": [[1, 2]]\u00a0}', "U+00A0 (no-break space)"),
    ('{"x": [[\uff11, 2]]}', "U+FF11 (fullwidth digit one)"), ('{\u201cx\u201d: [[1]]}', "“ is a curly quote"),
    ('{"x": [[1, 2]]}\x00', "a NUL byte after the JSON"),
])
def test_characters_one_cannot_see_or_tell_apart_in_json_are_named(attntrace, tmp_path, text, said):
    path = tmp_path / "p.json"
    path.write_text(text, encoding="utf-8")
    r = attntrace("run", path)
    assert r.code == 1 and said in r.err and "Expecting" not in r.err and "Extra data" not in r.err
    assert r.err.count("\n") == 1 and "\x00" not in r.err and "\u200b" not in r.err
