"""`attntrace new` makes exercises worth doing: softmax rows that are not one-hot, heads that fit, settings said."""

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attntrace.core.engine import trace
from attntrace.core.generate import ONE_HOT, PER_HEAD, notes, one_hot, random_problem
from attntrace.core.problem import Problem
from attntrace.files.problemfile import from_dict

FLOAT_INITS = ("normal", "xavier", "kaiming")


def _new(attntrace, *args):
    r = attntrace("new", *args)
    assert r.code == 0, r.err
    return json.loads(r.out), r


def _scaled(problem):
    """every head's scaled scores, flattened: what the softmax is taken of"""
    return np.concatenate([h.scaled.ravel() for h in trace(problem).heads])


# --- scores of order 1 ---------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(init=st.sampled_from(FLOAT_INITS), d_model=st.integers(16, 512), d_k=st.integers(4, 64),
       seed=st.integers(0, 2**32 - 1))
def test_float_inits_give_scaled_scores_of_order_1(init, d_model, d_k, seed):
    problem = random_problem(n=32, d_model=d_model, d_k=d_k, d_v=2, init=init, seed=seed)
    assert problem.scale is True
    std = float(np.std(_scaled(problem)))
    assert 0.25 < std < 4, (init, d_model, d_k, std)


@pytest.mark.parametrize("d_model", [64, 256])
def test_new_normal_at_a_large_d_model_has_weights_that_spread(attntrace, d_model):
    spread = 0
    for seed in range(10):
        doc, _ = _new(attntrace, "--init", "normal", "--d-model", str(d_model), "--tokens", "6", "--seed", str(seed))
        weights = trace(from_dict(doc, "new")).heads[0].weights
        spread += int((weights.max(axis=-1) < ONE_HOT).sum())
    assert spread > 30  # of 60 rows: most give more than one key a share


def test_weights_keep_three_significant_digits_at_any_d_model():
    for d_model in (100, 10_000, 1_000_000):
        w = random_problem(n=1, d_model=d_model, d_k=2, d_v=1, init="normal", seed=1).w_q
        assert np.std(w) == pytest.approx(1 / np.sqrt(d_model), rel=0.1)
        assert 10.0 ** -_decimals_shown(w) <= np.std(w) / 100  # rounded in steps of a hundredth of their spread


def _decimals_shown(w):
    """the most decimals any weight is written with"""
    return max(len(repr(float(v)).partition(".")[2]) for v in w.ravel())


# --- heads ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("heads", [1, 2, 3, 5])
def test_heads_alone_fit_the_default_sizes(attntrace, heads):
    doc, _ = _new(attntrace, "--heads", str(heads), "--seed", "1")
    problem = from_dict(doc, "new")
    assert problem.dims.heads == heads and problem.dims.d_k == problem.dims.d_v == PER_HEAD
    assert doc["name"].endswith(f"d_k = {PER_HEAD * heads}, d_v = {PER_HEAD * heads}, {heads} head{'s' * (heads > 1)} "
                                "(integers)")


def test_defaults_for_one_head_are_the_worked_examples_sizes(attntrace):
    doc, _ = _new(attntrace, "--seed", "4")
    assert np.shape(doc["w_q"]) == np.shape(doc["w_k"]) == np.shape(doc["w_v"]) == (4, 3)


@pytest.mark.parametrize("args, fix", [
    (["--heads", "2", "--d-k", "3"], "give d_k = 2 or 4"),
    (["--heads", "4", "--d-v", "3"], "heads = 4 does not divide d_v = 3 (each head takes d_v / heads of the columns); "
                                     "give d_v = 4"),
    (["--heads", "3", "--d-k", "7", "--d-v", "6"], "give d_k = 6 or 9"),
])
def test_sizes_that_do_not_fit_the_heads_say_what_would(attntrace, args, fix):
    r = attntrace("new", *args)
    assert r.code == 2 and r.out == "" and r.err.count("\n") == 1 and r.err.startswith("attntrace: new: ")
    assert fix in r.err


def test_one_size_given_the_other_defaults_per_head(attntrace):
    doc, _ = _new(attntrace, "--heads", "2", "--d-k", "4")
    assert np.shape(doc["w_q"])[1] == 4 and np.shape(doc["w_v"])[1] == 2 * PER_HEAD


# --- notes ----------------------------------------------------------------------------------------------------------


def test_integers_say_that_they_are_not_scaled(attntrace):
    doc, r = _new(attntrace, "--seed", "2")
    assert doc["scale"] is False
    assert 'note: "scale" is false' in r.err and "sqrt(d_k)" in r.err


@pytest.mark.parametrize("init", FLOAT_INITS)
def test_float_inits_are_scaled_and_say_nothing_of_it(attntrace, init, tmp_path):
    path = tmp_path / "p.json"
    r = attntrace("new", "--init", init, "--seed", "2", "-o", path)
    assert r.code == 0 and r.out == "" and '"scale"' not in r.err
    assert json.loads(path.read_text())["scale"] is True


@pytest.mark.parametrize("init, flag, scaled", [("integers", "--scale", True), ("normal", "--no-scale", False),
                                               ("integers", "--no-scale", False), ("xavier", "--scale", True)])
def test_scale_and_no_scale_as_assign_has_them(attntrace, init, flag, scaled):
    doc, r = _new(attntrace, "--init", init, "--seed", "2", flag)
    assert doc["scale"] is scaled and ('"scale" is false' in r.err) is (init == "integers" and not scaled)
    again, _ = _new(attntrace, "--init", init, "--seed", "2")
    assert {k: v for k, v in doc.items() if k != "scale"} == {k: v for k, v in again.items() if k != "scale"}


@pytest.mark.parametrize("command", ["new", "assign"])
@pytest.mark.parametrize("args, named", [(["--tokens", "100000000000"], "--tokens 100000000000: "),
                                         (["-n", "100000", "--d-model", "100000"], "--tokens 100000 --d-model 100000: "),
                                         (["--heads", "2", "--d-k", "3"], "--d-k 3 --heads 2: ")])
def test_sizes_too_big_or_that_do_not_fit_name_their_options(attntrace, tmp_path, command, args, named):
    (tmp_path / "roster.txt").write_text("ann\n", encoding="utf-8")
    where = ["new"] if command == "new" else ["assign", tmp_path / "roster.txt", "--seed", "1", "-o", tmp_path / "c"]
    r = attntrace(*where, *args)
    assert r.code == 2 and r.out == "" and r.err.count("\n") == 1 and r.err.startswith(f"attntrace: {command}: {named}")
    assert not (tmp_path / "c").exists()


def test_the_one_hot_note_comes_exactly_when_every_row_is_one_hot(attntrace):
    said = 0
    for seed in range(12):
        doc, r = _new(attntrace, "--d-model", "12", "--seed", str(seed))
        rows = trace(from_dict(doc, "new")).heads[0].weights.max(axis=-1)
        assert ("one key" in r.err) == bool((rows > ONE_HOT).all())
        said += "one key" in r.err
    assert said > 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 80), d_model=st.integers(1, 12), per_head=st.integers(1, 3), heads=st.integers(1, 3),
       init=st.sampled_from(("integers",) + FLOAT_INITS), seed=st.integers(0, 2**32 - 1))
def test_one_hot_agrees_with_the_engine(n, d_model, per_head, heads, init, seed):
    problem = random_problem(n=n, d_model=d_model, d_k=per_head * heads, heads=heads, init=init, seed=seed)
    t = trace(problem)
    checked = min(n, 64)
    expected = n > 1 and all(bool((h.weights[:checked].max(axis=-1) > ONE_HOT).all()) for h in t.heads)
    assert one_hot(problem) == expected
    assert (any("one key" in note for note in notes(problem, init))) == expected


def test_one_hot_of_a_hand_made_problem():
    sharp = Problem(x=np.eye(3) * 10, scale=False)
    flat = Problem(x=np.eye(3) * 0.1)
    assert one_hot(sharp) and not one_hot(flat) and not one_hot(Problem(x=[[5.0, 5.0]]))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 12), d_model=st.integers(1, 8), init=st.sampled_from(("integers",) + FLOAT_INITS),
       cap=st.sampled_from([0.5, 2.0, 5.0, 50.0]), seed=st.integers(0, 2**32 - 1))
def test_the_softcap_note_comes_exactly_when_the_scores_pass_twice_the_cap(n, d_model, init, cap, seed):
    problem = random_problem(n=n, d_model=d_model, init=init, softcap=cap, seed=seed)
    t = trace(problem)
    top = max(float(np.abs(h.uncapped[np.isfinite(h.uncapped)]).max(initial=0.0)) for h in t.heads)
    said = [note for note in notes(problem, init) if "before the cap" in note]
    assert bool(said) == (top > 2 * cap)
    if said:
        assert f"reach {top:.3g} before the cap" in said[0] and f"softcap = {cap:g}" in said[0]


def test_new_with_a_cap_far_below_its_integer_scores_says_so(attntrace):
    _, r = _new(attntrace, "--softcap", "5", "--seed", "1")
    assert "before the cap, over twice softcap = 5" in r.err and "to within 4% of ±5" in r.err
    _, r = _new(attntrace, "--softcap", "50", "--init", "normal", "--seed", "1")
    assert "before the cap" not in r.err
