"""Words inside Chinese tables and titles: column and cell names, the samples' and generated problems' titles in the
reader's language; the data (CSV cells, JSON, problem files) the same in every language."""

from __future__ import annotations

import json

import pytest

from tests.conftest import SAMPLES


def squeezed(text: str) -> str:
    """text without its spaces and line breaks: a sentence however it was wrapped"""
    return "".join(text.split())


def test_the_temperature_experiments_columns_are_words_of_the_language_and_data_in_csv(attntrace):
    zh, en = (attntrace("experiment", "temperature", "--lang", lang).out for lang in ("zh", "en"))
    assert "\n    不缩放  缩放后\n" in zh and "no scaling" not in zh and "scaled" not in zh
    assert "\n    no scaling  scaled\n" in en
    csv = {lang: attntrace("experiment", "temperature", "--format", "csv", "--lang", lang).out for lang in ("zh", "en")}
    rows = {lang: [line for line in text.splitlines() if not line.startswith("#")] for lang, text in csv.items()}
    assert rows["zh"] == rows["en"] and ",no scaling,scaled" in rows["zh"]


def test_the_permute_and_similarity_experiments_name_the_output_in_chinese(attntrace):
    permute = attntrace("experiment", "permute", "--lang", "zh").out
    assert "\n输出(X)  [3 x 3]\n" in permute and "\n输出(置换后的 X)  [3 x 3]\n" in permute
    assert "output" not in permute and "|输出(置换后的 X) - 置换后的输出(X)| 的最大值：" in permute
    similarity = attntrace("experiment", "similarity", "--lang", "zh").out
    assert "\n输出：cos(第 i 行, 第 j 行)  [3 x 3]\n" in similarity and "output" not in similarity
    assert "\noutput(X)  [3 x 3]\n" in attntrace("experiment", "permute").out
    assert "\ncos(row i, row j) of output  [3 x 3]\n" in attntrace("experiment", "similarity").out


@pytest.mark.parametrize(("scale", "formula"), [(True, "q · k / sqrt(d_k)"), (False, "q · k"), (2, "q · k / 2")])
def test_decode_says_what_its_logit_row_is_in_both_languages(attntrace, tmp_path, scale, formula):
    problem = json.loads((SAMPLES / "causal.json").read_text(encoding="utf-8"))
    problem["sink"], problem["scale"] = 0.5, scale
    path = tmp_path / "sink.json"
    path.write_text(json.dumps(problem), encoding="utf-8")
    options = [path, "--window", "2", "--sinks", "1", "--format", "plain"]
    en, zh = (attntrace("decode", *options, "--lang", lang).out for lang in ("en", "zh"))
    assert squeezed("In each step's scores, the row q · k holds q_t's dot product with each cached key, and the row "
                    f"logit what the softmax takes: {formula}.") in squeezed(en)
    assert squeezed(f"q · k 一行是 q_t 与缓存中每个键的点积，“softmax 输入”一行是送入 softmax 的数：{formula}。") in squeezed(zh)
    assert "\nsoftmax 输入  " in zh and "\nlogit  " in en  # the rows the note names


def test_a_softcapped_decodes_logit_is_said_with_its_cap(attntrace, tmp_path):
    problem = json.loads((SAMPLES / "causal.json").read_text(encoding="utf-8"))
    problem["softcap"] = 30
    path = tmp_path / "capped.json"
    path.write_text(json.dumps(problem), encoding="utf-8")
    out = attntrace("decode", path, "--format", "plain")
    assert squeezed("what the softmax takes: 30 · tanh((q · k / sqrt(d_k)) / 30).") in squeezed(out.out), out.err


def test_new_writes_a_title_in_the_language_and_the_same_problem_in_both(attntrace):
    zh, en = (json.loads(attntrace("new", "--tokens", "3", "--seed", "1", "--lang", lang).out) for lang in ("zh", "en"))
    assert en["name"] == "3 inputs, d_model = 4, d_k = 3, d_v = 3, 1 head (integers)"
    assert zh["name"] == "3 个输入，d_model = 4，d_k = 3，d_v = 3，1 个头（整数）"
    assert {**zh, "name": None} == {**en, "name": None}
    more = json.loads(attntrace("new", "--tokens", "2", "--heads", "2", "--kv-heads", "1", "--rope", "--init", "normal",
                                "--seed", "1", "--lang", "zh").out)
    assert more["name"].endswith("2 个头（正态分布、1 个键/值块、rope）"), more["name"]


@pytest.mark.parametrize(("sample", "english", "chinese"), [
    ("causal.json", "decoder self-attention with a causal mask", "带因果掩码的解码器自注意力"),
    ("scaled.json", "worked example, scaled by sqrt(d_k)", "教程示例，除以 sqrt(d_k) 缩放"),
    ("two_heads.json", "two heads of d_k = 2, joined by W_O", "两个 d_k = 2 的头，由 W_O 合并"),
    ("cross.json", "encoder-decoder (cross) attention", "编码器-解码器（交叉）注意力"),
    ("homework/problem.json", "我喜欢猫: one head, d_k = d_v = 2, scaled", "我喜欢猫：一个头，d_k = d_v = 2，缩放"),
])
def test_the_samples_are_titled_in_the_language_and_named_the_same_in_data(attntrace, sample, english, chinese):
    assert attntrace("run", SAMPLES / sample, "--lang", "zh").out.startswith(f"{chinese}\n")
    assert attntrace("run", SAMPLES / sample).out.startswith(f"{english}\n")
    data = json.loads(attntrace("run", SAMPLES / sample, "--format", "json", "--lang", "zh").out)
    assert data["name"] == english
    assert attntrace("worksheet", SAMPLES / sample, "--lang", "zh").out.startswith(f"# 练习单：{chinese}\n")


def test_a_name_the_user_wrote_is_shown_as_written(attntrace, tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"name": "my own problem", "x": [[1, 0], [0, 1]]}), encoding="utf-8")
    assert attntrace("run", path, "--lang", "zh").out.startswith("my own problem\n")
