"""`attntrace flash`: the online softmax in every format, its JSON contract, its golden pages and its refusals."""

import csv
import io
import json
import math
import os

import numpy as np
import pytest

from tests.conftest import ROOT, SAMPLES

GOLDEN = ROOT / "tests" / "golden"
GOLDENS = {
    "flash_worked_example": ["flash", "samples/worked_example.json"],
    "flash_worked_example_zh": ["flash", "samples/worked_example.json", "--lang", "zh"],
    "flash_explain_worked_example": ["flash", "samples/worked_example.json", "--input", "2", "--explain"],
}


@pytest.mark.parametrize("name", GOLDENS)
def test_the_plain_page_matches_the_golden_file(name, attntrace, monkeypatch):
    monkeypatch.chdir(ROOT)
    r = attntrace(*GOLDENS[name])
    assert r.code == 0 and r.err == "", r.err
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("ATTNTRACE_REGEN_GOLDEN"):
        path.write_text(r.out, encoding="utf-8")
    assert r.out == path.read_text(encoding="utf-8")


def _numbers_only(value, where=""):
    """every number in a JSON value is finite (JSON itself cannot hold NaN or inf: json.loads would have refused)"""
    if isinstance(value, dict):
        for k, v in value.items():
            _numbers_only(v, f"{where}.{k}")
    elif isinstance(value, list):
        for k, v in enumerate(value):
            _numbers_only(v, f"{where}[{k}]")
    elif isinstance(value, float):
        assert math.isfinite(value), where


def _strict(text):
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))


@pytest.mark.parametrize("block", [1, 2, 3, 4, 9])
def test_json_holds_the_contract_at_every_block_size(attntrace, block):
    r = attntrace("flash", SAMPLES / "two_heads.json", "--block", block, "--format", "json")
    assert r.code == 0, r.err
    data = _strict(r.out)
    assert data["block"] == block and data["ok"] is True and data["max_diff"] <= 1e-12
    assert [h["head"] for h in data["heads"]] == [1, 2]
    m = len(data["tokens"])
    for head in data["heads"]:
        assert [q["query"] for q in head["queries"]] == [1, 2, 3, 4]
        for q in head["queries"]:
            assert len(q["blocks"]) == math.ceil(m / block)
            assert [k for b in q["blocks"] for k in b["keys"]] == list(range(1, m + 1))
            for b in q["blocks"]:
                assert {"keys", "scores", "m", "rescale", "l", "o"} <= set(b)
                assert len(b["scores"]) == len(b["keys"]) and all(isinstance(s, float) for s in b["scores"])
                assert all(isinstance(b[k], float) for k in ("m", "rescale", "l"))  # nothing masked: never null
            assert q["blocks"][0]["rescale"] == 0.0  # e^(m_old - m_new) with m_old = -inf
            assert q["output"] == pytest.approx([o / q["blocks"][-1]["l"] for o in q["blocks"][-1]["o"]], rel=1e-12)
            assert q["output"] == pytest.approx(q["step7_output"], abs=1e-12)
    _numbers_only(data)


def test_a_wholly_masked_block_is_skipped_and_said_so(attntrace):
    r = attntrace("flash", SAMPLES / "causal.json", "--block", "2", "--input", "1", "--format", "json")
    q = _strict(r.out)["heads"][0]["queries"][0]
    first, second = q["blocks"]
    assert not first["skipped"] and second["skipped"]
    assert second["scores"] == [None, None] and second["max"] is None  # masked: null, as run's JSON has them
    assert (second["m"], second["l"], second["o"], second["rescale"]) == (first["m"], first["l"], first["o"], 1.0)
    shown = attntrace("flash", SAMPLES / "causal.json", "--block", "2", "--input", "1", "--format", "plain").out
    assert "block 2 (keys 3-4) is wholly masked for input 1: skipped, m, ℓ and O unchanged" in shown


def test_a_row_with_no_key_outputs_0_with_a_warning_and_no_nan(attntrace):
    r = attntrace("flash", "--padding", "1,2,3", "--format", "json")
    assert r.code == 0 and "every key is masked" in r.err
    data = _strict(r.out)
    for q in data["heads"][0]["queries"]:
        assert q["output"] == [0.0, 0.0, 0.0] and q["l"] == 0.0 and all(b["m"] is None for b in q["blocks"])
        assert all(isinstance(b["rescale"], float) and isinstance(b["l"], float) for b in q["blocks"])
    _numbers_only(data)


def test_input_traces_one_query(attntrace):
    data = _strict(attntrace("flash", "--input", "2", "--format", "json").out)
    assert data["query"] == 2 and [q["query"] for q in data["heads"][0]["queries"]] == [2]
    plain = attntrace("flash", "--input", "2", "--format", "plain").out
    assert "online softmax for input 2 (x2)" in plain and "input 1 " not in plain


def test_the_default_block_gives_two_blocks_and_a_large_one_is_one_block(attntrace):
    assert _strict(attntrace("flash", "--format", "json").out)["blocks"] == [[1, 2], [3]]
    r = attntrace("flash", "--block", "7", "--format", "plain")
    assert r.code == 0 and "one block holds them all" in r.out


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_a_bad_block_is_a_usage_error_in_one_line(attntrace, value):
    r = attntrace("flash", "--block", value)
    assert r.code == 2 and r.out == "" and r.err.count("\n") == 1 and "--block" in r.err


def test_an_input_out_of_range_and_a_missing_file_are_one_line(attntrace):
    r = attntrace("flash", "--input", "9")
    assert r.code == 2 and r.err.count("\n") == 1 and "--input 9" in r.err
    r = attntrace("flash", "missing.json")
    assert r.code == 1 and r.err.count("\n") == 1 and "missing.json" in r.err and "Traceback" not in r.err


@pytest.mark.parametrize("fmt", ["plain", "markdown", "table", "csv"])
def test_every_page_format_shows_the_recurrence_and_the_check(attntrace, fmt):
    r = attntrace("flash", SAMPLES / "two_heads.json", "--block", "3", "--format", fmt)
    assert r.code == 0 and r.err == "", r.err
    assert "ℓ" in r.out and "step 7" in r.out and "head 2" in r.out
    if fmt == "csv":
        assert list(csv.reader(io.StringIO(r.out)))
    else:
        assert "check: O / ℓ equals step 7's output" in r.out


def test_w_o_and_cross_attention_are_compared_with_the_trace(attntrace):
    for sample in ("two_heads.json", "cross.json"):
        data = _strict(attntrace("flash", SAMPLES / sample, "--block", "1", "--format", "json").out)
        assert np.allclose(data["output"], data["step7_output"], rtol=0, atol=1e-12) and data["ok"]
    assert "output = concat · W_O" in attntrace("flash", SAMPLES / "two_heads.json", "--format", "plain").out


def test_labels_are_shown_never_obeyed(attntrace, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"x": [[1, 0], [0, 1]], "tokens": ["a\x1b[31m", "b\u202e"]}))
    r = attntrace("flash", path, "--format", "plain")
    assert r.code == 0 and "\x1b" not in r.out and "\u202e" not in r.out


def test_precision_and_output_file(attntrace, tmp_path):
    out = tmp_path / "flash.txt"
    r = attntrace("flash", "-p", "2", "-o", out)
    assert r.code == 0 and r.out == ""
    assert "1.94  6.68  1.60" in out.read_text(encoding="utf-8")


def test_the_api_returns_the_data(tmp_path):
    import attntrace

    f = attntrace.flash(block=1, query=3)
    assert f.block == 1 and f.ok and f.rows == (2,) and f.heads[0].m.shape == (1, 3)
    g = attntrace.flash(attntrace.load(SAMPLES / "causal.json"), mask="none")
    assert g.trace.allowed is None and len(g.bounds) == 2
    assert attntrace.flash(x=[[1, 0], [0, 1]], scale=False).heads[0].output.shape == (2, 2)


@pytest.mark.parametrize("args", [["--block", "1"], ["--block", "2", "--input", "3"]])
def test_json_is_the_bytes_of_the_lists_of_the_json_form(attntrace, args):
    """the arrays the command writes a block at a time (masked scores null) read as flash_to_dict's lists"""
    import attntrace as api
    from attntrace.render.flashform import flash_to_dict
    from attntrace.render.jsonform import chunks

    r = attntrace("flash", str(SAMPLES / "causal.json"), *args, "-f", "json")
    assert r.code == 0, r.err
    f = api.flash(api.load(SAMPLES / "causal.json"), block=int(args[1]), query=int(args[3]) if len(args) > 2 else None)
    assert "null" in r.out and r.out == "".join(chunks(flash_to_dict(f)))


def _data(text: str) -> list[str]:
    """a CSV's header rows and cells (its # lines are titles and notes for a person)"""
    return [line for line in text.splitlines() if not line.startswith(("#", '"#'))]


@pytest.mark.parametrize("args", [[], ["samples/causal.json", "--block", "1"], ["samples/two_heads.json", "--input", "2"],
                                  ["{sink}", "--block", "2"], ["samples/cross.json"]])
def test_the_csv_header_and_labels_are_the_same_bytes_in_every_language(attntrace, monkeypatch, tmp_path, args):
    monkeypatch.chdir(ROOT)
    (tmp_path / "sink.json").write_text(json.dumps({"x": [[1, 0], [0, 1], [1, 1]], "sink": [0.5]}))
    line = ["flash", *(a.format(sink=tmp_path / "sink.json") for a in args), "--format", "csv"]
    english, chinese = attntrace(*line).out, attntrace(*line, "--lang", "zh").out
    assert _data(chinese) == _data(english) and len(_data(english)) > 5
    assert ",max,m,rescale,sum,ℓ,O1" in english and "\nkeys 1" in english and "\nstep 7," in english
    assert "sink" not in args[0:1] or "\nsink," in english
    assert "键" not in "\n".join(_data(chinese)) and "每块之后" in chinese  # the titles are for a person
    assert attntrace(*line[:-2], "--format", "plain", "--lang", "zh").out.count("键 1") >= 1  # the page is in Chinese
