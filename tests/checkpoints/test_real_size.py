"""A checkpoint of real widths cut down, made by scripts/make_checkpoint.py (numpy only), traced against transformers'
float64 run of it (tests/fixtures/checkpoint_reference.npz, written once by make_checkpoint_reference.py): in float64,
and with the layers before the traced one in float32 as a large model runs them; and its memory, measured in a child
process, the same whatever the layer."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import attntrace
from attntrace.checkpoints import session
from attntrace.checkpoints.families import load
from attntrace.checkpoints.tokenize import encode
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import make_checkpoint  # noqa: E402

REFERENCE = np.load(ROOT / "tests" / "fixtures" / "checkpoint_reference.npz")
LAYERS, HEAD = [int(k) for k in REFERENCE["layers"]], int(REFERENCE["head"])
SENTENCE = make_checkpoint.SENTENCE
FLOAT32 = dict(weights=2e-6, output=1e-5)  # how far float32 earlier layers may move the traced head (6e-7 and 2e-6 seen)


@pytest.fixture
def small(small_checkpoint):
    return small_checkpoint


def test_the_script_writes_the_same_checkpoint_on_every_machine(small):
    digest = hashlib.sha256((small / "model.safetensors").read_bytes()).hexdigest()
    assert digest == str(REFERENCE["sha256"])
    config = json.loads((small / "config.json").read_text())
    assert (config["num_hidden_layers"], config["hidden_size"], config["num_key_value_heads"]) == (6, 1024, 4)


def test_the_sentence_is_the_one_transformers_was_given(small):
    model = load(small, "small")
    assert encode(small, SENTENCE, model.positions, "small").ids == tuple(REFERENCE["ids"].tolist())


@pytest.mark.parametrize("k", range(len(LAYERS)), ids=[f"layer {layer}" for layer in LAYERS])
def test_float64_throughout_agrees_with_transformers(small, k):
    head = attntrace.model_head(small, SENTENCE, layer=LAYERS[k], head=HEAD, float64=True).trace.heads[0]
    np.testing.assert_allclose(head.weights, REFERENCE["weights"][k], rtol=0, atol=1e-12)
    np.testing.assert_allclose(head.output, REFERENCE["outputs"][k], rtol=0, atol=1e-12)


def test_a_small_model_runs_its_earlier_layers_in_float64(small):
    assert load(small, "small").tensors.count < session.LARGE
    by_default = attntrace.model_head(small, SENTENCE, layer=6, head=HEAD).trace.heads[0]
    np.testing.assert_allclose(by_default.weights, REFERENCE["weights"][-1], rtol=0, atol=1e-12)


@pytest.mark.parametrize("k", range(len(LAYERS)), ids=[f"layer {layer}" for layer in LAYERS])
def test_a_large_model_runs_its_earlier_layers_in_float32_close_to_float64(small, k, monkeypatch):
    monkeypatch.setattr(session, "LARGE", 0)  # this one taken for a large model
    head = attntrace.model_head(small, SENTENCE, layer=LAYERS[k], head=HEAD).trace.heads[0]
    weights, output = np.abs(head.weights - REFERENCE["weights"][k]).max(), np.abs(head.output - REFERENCE["outputs"][k]).max()
    assert weights < FLOAT32["weights"] and output < FLOAT32["output"]
    if LAYERS[k] > 1:
        assert weights > 1e-12  # it is float32 indeed: layer 1 has no layer before it
    exact = attntrace.model_head(small, SENTENCE, layer=LAYERS[k], head=HEAD, float64=True).trace.heads[0]
    np.testing.assert_allclose(exact.weights, REFERENCE["weights"][k], rtol=0, atol=1e-12)


def test_the_command_line_asks_for_float64(small, attntrace, monkeypatch):
    monkeypatch.setattr(session, "LARGE", 0)
    runs = {flag: json.loads(attntrace("model", small, SENTENCE, "--layer", "3", "--head", str(HEAD), *flag, "-f",
                                       "json").out)["heads"][0]["weights"] for flag in ((), ("--float64",))}
    assert np.abs(np.array(runs[("--float64",)]) - REFERENCE["weights"][1]).max() < 1e-12
    assert 1e-12 < np.abs(np.array(runs[()]) - REFERENCE["weights"][1]).max() < FLOAT32["weights"]


def test_a_float32_layer_that_overflows_is_run_again_in_float64(small, monkeypatch):
    model = load(small, "small")
    e = encode(small, SENTENCE, model.positions, "small")
    block, dtypes = type(model).block, []

    def overflowing(self, h, layer, e, dtype=np.float64):
        dtypes.append(dtype)
        return np.full_like(h, np.inf) if dtype is np.float32 and layer == 2 else block(self, h, layer, e, dtype)

    monkeypatch.setattr(session, "LARGE", 0)
    monkeypatch.setattr(type(model), "block", overflowing)
    h = session.hidden_entering(model, e, 4)
    assert dtypes == [np.float32, np.float32, np.float64, np.float32] and np.isfinite(h).all()


PEAK = """
import atexit, sys
from attntrace.cli import main
def said():  # the high-water mark of this process's own memory: not the forked test process's, as ru_maxrss is
    with open("/proc/self/status") as f:
        sys.__stderr__.write(next(line for line in f if line.startswith("VmHWM:")))
atexit.register(said)
sys.argv = ["attntrace", *sys.argv[1:]]
main()
"""


def peak(folder, layer):
    """the largest resident memory, in kB, of `attntrace model` tracing head 5 of layer in a child process"""
    done = subprocess.run([sys.executable, "-c", PEAK, "model", str(folder), SENTENCE, "--layer", str(layer), "--head",
                           str(HEAD), "--format", "json", "-o", os.devnull], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return int(done.stderr.split("VmHWM:")[1].split()[0])


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads Linux's /proc")
def test_memory_does_not_grow_with_the_layer(small):
    """each layer's pages of the weights are given back once it has run: kept, they would add 22 MB a layer here"""
    second, last = peak(small, 2), peak(small, 6)
    assert last - second < 30 * 1024, (second, last)


def test_progress_is_told_each_layer_on_the_way(small):
    told = []
    attntrace_head = session.entering(small, "small", SENTENCE, 4, progress=lambda k, n: told.append((k, n)))
    assert attntrace_head.layer == 4 and told == [(1, 4), (2, 4), (3, 4)]
