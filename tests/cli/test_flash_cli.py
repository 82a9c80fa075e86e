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


@pytest.fixture
def long_problem(tmp_path):
    """2,048 tokens of d_model 2: run traces it in a second"""
    rng = np.random.default_rng(0)
    path = tmp_path / "long.json"
    path.write_text(json.dumps({"x": rng.integers(-3, 4, size=(2048, 2)).tolist(), "scale": False}))
    return path


def test_a_json_of_too_many_block_states_is_refused_at_once_naming_what_helps(attntrace, long_problem, tmp_path):
    import time

    started = time.monotonic()
    r = attntrace("flash", long_problem, "--block", "1", "--format", "json", "-o", tmp_path / "out.json")
    assert time.monotonic() - started < 10
    assert r.code == 1 and r.out == "" and r.err.count("\n") == 1, r.err
    assert ("the JSON of this online softmax holds 4,194,304 block states (queries × blocks × heads = 2,048 × 2,048 × "
            "1), more than the 100,000 flash writes at once; show one query with --input N, or take more keys a block "
            "with --block 43 or more") in r.err
    assert not (tmp_path / "out.json").exists()
    one = attntrace("flash", long_problem, "--block", "1", "--input", "7", "--format", "json", "-o", tmp_path / "one.json")
    assert one.code == 0, one.err
    assert len(json.loads((tmp_path / "one.json").read_text())["heads"][0]["queries"][0]["blocks"]) == 2048
    page = attntrace("flash", long_problem, "--block", "1", "--format", "plain", "-o", tmp_path / "out.txt")
    assert page.code == 0, page.err  # a page shows four queries: nothing to bound


def test_the_block_size_suggested_is_the_smallest_that_fits(attntrace, tmp_path, monkeypatch):
    from attntrace import memory

    monkeypatch.setattr(memory, "JSON_BLOCKS", 50)
    path = tmp_path / "ten.json"
    path.write_text(json.dumps({"x": np.eye(10).tolist()}))
    r = attntrace("flash", path, "--block", "1", "--format", "json")
    assert r.code == 1 and "100 block states" in r.err and "with --block 2 or more" in r.err, r.err
    assert attntrace("flash", path, "--block", "2", "--format", "json").code == 0  # 10 × 5 = 50 states
    assert attntrace("flash", path, "--block", "2", "--format", "json", "--lang", "zh").code == 0
    zh = attntrace("flash", path, "--block", "1", "--format", "json", "--lang", "zh")
    assert zh.code == 1 and "--input N" in zh.err and "--block 2" in zh.err and "块" in zh.err


def test_an_online_softmax_that_would_not_fit_in_memory_is_refused_up_front(attntrace, long_problem, monkeypatch):
    import attntrace as library
    from attntrace import memory

    monkeypatch.setattr(memory, "available_memory", lambda: 200_000_000)
    r = attntrace("flash", long_problem, "--block", "1", "--format", "plain")
    assert r.code == 1 and r.err.count("\n") == 1 and "more than the 200.0 MB this machine has available" in r.err
    assert "show one query with --input N, or take more keys a block with --block 9 or more" in r.err
    assert attntrace("flash", long_problem, "--block", "9", "--format", "plain").code == 0
    with pytest.raises(library.AttntraceError, match="show one query with query=N, or take more keys a block with "
                                                      "block=9 or more$"):
        library.flash(long_problem, block=1)
    assert library.flash(long_problem, block=1, query=5).block == 1


def test_the_block_size_suggested_can_be_typed_as_it_is_written(attntrace, tmp_path, monkeypatch):
    """one query against 2,000 keys, at most one block state: --block 2000 is said without a comma"""
    from attntrace import memory

    monkeypatch.setattr(memory, "JSON_BLOCKS", 1)
    path = tmp_path / "cross.json"
    path.write_text(json.dumps({"x": [[1, 0]], "source": np.ones((2000, 2), dtype=int).tolist()}))
    r = attntrace("flash", path, "--format", "json")
    assert r.code == 1 and "(queries × blocks × heads = 1 × 2 × 1)" in r.err and "--input" not in r.err
    assert r.err.endswith("; take more keys a block with --block 2000 or more\n")
    assert attntrace("flash", path, "--format", "json", "--block", "2000", "-o", tmp_path / "out.json").code == 0
