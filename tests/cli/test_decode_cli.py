"""attntrace decode: every format, the golden pages, and every bad option as one line."""

import csv
import io
import json
import os

import pytest

from tests.conftest import ROOT, SAMPLES

GOLDEN = ROOT / "tests" / "golden"
CAUSAL = str(SAMPLES / "causal.json")


def _golden(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("ATTNTRACE_REGEN_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name, args", [
    ("decode_causal", ["samples/causal.json"]),
    ("decode_causal_window_sinks", ["samples/causal.json", "--window", "2", "--sinks", "1"]),
    ("zh_decode_causal", ["samples/causal.json", "--window", "2", "--lang", "zh"]),
])
def test_the_plain_pages_match_the_golden_files(attntrace, name, args):
    os.chdir(ROOT)
    r = attntrace("decode", *args, "--format", "plain")
    assert r.code == 0 and r.err == "", r.err
    _golden(name, r.out)


def test_json_holds_the_contract(attntrace):
    r = attntrace("decode", CAUSAL, "--window", "2", "--sinks", "1", "-f", "json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert [s["cache"] for s in data["heads"][0]["steps"]] == [[1], [1, 2], [1, 2, 3], [1, 4, 3]]
    step = data["heads"][0]["steps"][3]
    assert {"t", "cache", "weights", "output"} <= set(step) and step["t"] == 4 and step["evicted"] == 2
    assert len(step["weights"]) == 3 and abs(sum(step["weights"]) - 1) < 1e-12
    assert data["window"] == 2 and data["sinks"] == 1 and data["max_diff"] <= 1e-12
    assert data["costs"][3] == {"t": 4, "cache_numbers": 18, "cache_bytes": {"float16": 36, "float32": 72},
                                "multiply_adds": {"with_cache": 54, "recomputed": 102}}
    assert "sink_weight" not in step


def test_json_never_holds_nan_or_infinity(attntrace, tmp_path):
    problem = tmp_path / "huge.json"
    problem.write_text(json.dumps({"x": [[1e200, 0], [0, 1e200]], "scale": False}))
    r = attntrace("decode", problem, "-f", "json")  # each token's own score overflows: refused, as run refuses it
    assert r.code == 1 and r.out == "" and r.err == attntrace("run", problem, "-f", "json").err
    assert "huge.json: step 4: scores[x1 → x1] overflows a float64" in r.err
    problem.write_text(json.dumps({"x": [[1e150, 0], [0, 1e150]], "scale": False}))  # big, but every number finite
    r = attntrace("decode", problem, "-f", "json")
    assert r.code == 0, r.err
    json.loads(r.out, parse_constant=lambda name: pytest.fail(f"{name} in the JSON"))


def test_one_step_with_input(attntrace):
    r = attntrace("decode", CAUSAL, "--input", "3", "-f", "json")
    assert [s["t"] for s in json.loads(r.out)["heads"][0]["steps"]] == [3]
    plain = attntrace("decode", CAUSAL, "-i", "3", "-f", "plain").out
    assert "Decode step 3 of 4 · cats" in plain and "Decode step 2 of 4" not in plain


@pytest.mark.parametrize("fmt", ["csv", "markdown", "table", "plain"])
def test_every_format(attntrace, fmt):
    r = attntrace("decode", str(SAMPLES / "two_heads.json"), "--window", "2", "-f", fmt, "--precision", "2")
    assert r.code == 0 and r.err == "", r.err
    assert "K cache" in r.out and "1e-12" in r.out
    if fmt == "csv":
        list(csv.reader(io.StringIO(r.out)))


def test_without_a_file_the_built_in_example_and_to_a_file(attntrace, tmp_path):
    out = tmp_path / "decode.txt"
    r = attntrace("decode", "-o", out, "--ascii", "--color", "never")
    assert r.code == 0 and r.out == "", r.err
    assert "worked example" in out.read_text(encoding="utf-8")


def test_a_long_sequence_shows_the_first_steps_and_the_last(attntrace, tmp_path):
    problem = tmp_path / "long.json"
    problem.write_text(json.dumps({"x": [[i % 3, i % 5] for i in range(20)], "tokens": [f"t{i}" for i in range(20)]}))
    r = attntrace("decode", problem, "-f", "plain", "--window", "4")
    assert r.code == 0, r.err
    assert "Decode step 3 of 20" in r.out and "Decode step 4 of 20" not in r.out and "Decode step 20 of 20" in r.out
    assert "decode steps 4 to 19 are not shown" in r.out


def test_labels_are_shown_never_obeyed(attntrace, tmp_path):
    problem = tmp_path / "labels.json"
    problem.write_text(json.dumps({"x": [[1, 0], [0, 1]], "tokens": ["a\x1b[31m", "b\u202e"]}))
    r = attntrace("decode", problem, "-f", "plain")
    assert r.code == 0, r.err
    assert "\x1b" not in r.out and "\u202e" not in r.out and "a\\x1b[31m" in r.out


@pytest.mark.parametrize("args, words", [
    (["--window", "0"], "--window 0 must be a whole number of at least 1"),
    (["--window", "-3"], "--window -3 must be a whole number of at least 1"),
    (["--sinks", "1"], "--sinks keeps the first tokens beside a window: add --window W"),
    (["--window", "2", "--sinks", "4"], "--sinks 4 would keep every one of the 4 tokens; give fewer than 4"),
    (["--window", "2", "--sinks", "-1"], "--sinks -1 must be a whole number of at least 0"),
    (["--input", "5"], "--input 5 is out of range; this problem has inputs 1 to 4"),
    (["--input", "0"], "--input 0 is out of range"),
    (["--window", "two"], "'two' is not a whole number"),
    (["--format", "svg"], "'svg' is not one of"),
])
def test_bad_options_are_one_line_and_exit_2(attntrace, args, words):
    r = attntrace("decode", CAUSAL, *args)
    assert r.code == 2 and r.out == ""
    assert r.err.count("\n") == 1 and words in r.err and "Traceback" not in r.err


@pytest.mark.parametrize("content, words", [
    ({"x": [[1, 0]], "source": [[1, 1]], "w_k": [[1], [1]], "w_q": [[1], [1]]}, "needs self-attention"),
    ({"x": [[1, 0], [0, 1]], "mask": ["window"], "window": 1}, 'remove mask "window"'),
    ({"x": [[1, 0], [0, 1]], "mask": ["padding"], "padding": [False, True]}, 'remove mask "padding"'),
])
def test_what_decoding_cannot_read_is_one_line_naming_the_file_and_exit_1(attntrace, tmp_path, content, words):
    problem = tmp_path / "p.json"
    problem.write_text(json.dumps(content))
    r = attntrace("decode", problem)
    assert r.code == 1 and r.out == ""
    assert r.err.count("\n") == 1 and words in r.err and "p.json" in r.err


def test_a_file_that_is_not_a_problem_is_exit_1(attntrace, tmp_path):
    problem = tmp_path / "bad.json"
    problem.write_text("{")
    r = attntrace("decode", problem)
    assert r.code == 1 and r.err.count("\n") == 1


def test_help_names_the_command(attntrace):
    r = attntrace("--help")
    assert "decode" in r.out
    r = attntrace("decode", "--help")
    assert r.code == 0 and "--sinks" in r.out and "--window" in r.out


@pytest.mark.parametrize("args, keys", [
    (["--window", "3", "--sinks", "1"], {"x": [[1, -2, 0.5, 0], [0, 1, -1, 2], [2, 0, 1, -1], [-1, 1, 0, 0.25],
                                               [0.5, 0.5, -0.5, 1]], "scale": True}),
    (["--input", "4"], {"x": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], "heads": 2, "rope": True}),
])
def test_json_is_the_bytes_of_the_lists_the_api_gives(attntrace, tmp_path, args, keys):
    """the arrays the command writes a block at a time read as the lists of decode().to_dict(), written the same way"""
    import attntrace as api
    from attntrace.render.jsonform import chunks

    path = tmp_path / "p.json"
    path.write_text(json.dumps(keys))
    r = attntrace("decode", str(path), *args, "-f", "json")
    assert r.code == 0, r.err
    window = int(args[1]) if args[0] == "--window" else None
    d = api.decode(api.load(path), window=window, sinks=1 if "--sinks" in args else 0,
                   query=int(args[1]) if args[0] == "--input" else None)
    assert r.out == "".join(chunks(d.to_dict()))


def test_the_csv_header_and_labels_are_the_same_bytes_in_every_language(attntrace, tmp_path):
    """the sink's rows (logit, weight) are data too"""
    path = tmp_path / "sink.json"
    path.write_text(json.dumps({"x": [[1, 0], [0, 1], [1, 1]], "sink": [0.5]}))
    english, chinese = (attntrace("decode", path, "--format", "csv", "--lang", lang).out for lang in ("en", "zh"))

    def data(text):
        return [line for line in text.splitlines() if not line.startswith(("#", '"#'))]

    assert data(chinese) == data(english) and "\nweight," in english and "\nlogit," in english
    assert "权重" in attntrace("decode", path, "--format", "plain", "--lang", "zh").out


@pytest.mark.parametrize("command", ["decode", "flash", "run"])
@pytest.mark.parametrize("name", ["", " "])
def test_an_empty_file_name_is_one_line_not_the_current_folder(attntrace, command, name):
    r = attntrace(command, name)
    assert r.code == 1 and r.out == "" and r.err.count("\n") == 1, r.err
    assert r.err == f'attntrace: the problem file\'s name is empty ("{name}"); give a file, or none for the built-in example\n'
