"""Online-softmax and decoding sheets through check: every key the worksheets print passes, in every format and at
every precision, on every kind of problem; sheets that cannot be what they say are refused in one line; the report of
each classic mistake reads as golden files say, in English and Chinese."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLES
from tests.homework import online_hand as hand

GOLDEN = ROOT / "tests" / "golden" / "online"
CAUSAL = json.loads((SAMPLES / "causal.json").read_text(encoding="utf-8"))
SUFFIX = {"json": "json", "markdown": "md", "plain": "txt"}


def _problems(folder: Path) -> dict[str, Path]:
    """problems of every kind the worksheets take: rotary, ALiBi with two heads, a sink, cross-attention, a window
    mask, every key padding"""
    made = {
        "rope": CAUSAL | {"name": "rope", "rope": True, "w_q": [[1, 0, 1, 0], [1, 0, 0, 1], [0, 0, 1, 1], [0, 1, 1, 0]],
                          "w_k": [[0, 0, 1, 1], [1, 1, 0, 0], [0, 1, 0, 1], [1, 1, 0, 0]]},
        "alibi": json.loads((SAMPLES / "two_heads.json").read_text(encoding="utf-8")) | {"name": "alibi", "alibi": True},
        "sink": CAUSAL | {"name": "sink", "sink": [0.5]},
        "window": {k: v for k, v in CAUSAL.items() if k != "mask"} | {"name": "window", "window": 1},
        "padding": {k: v for k, v in CAUSAL.items() if k != "mask"} | {"name": "padding", "padding": [True] * 4},
    }
    out = {"cross": SAMPLES / "cross.json", "two_heads": SAMPLES / "two_heads.json"}
    for name, problem in made.items():
        out[name] = folder / f"{name}.json"
        out[name].write_text(json.dumps(problem), encoding="utf-8")
    return out


KINDS = {"flash 1": ["--flash", "1"], "flash 3": ["--flash", "3"], "decode": ["--decode"],
         "decode window": ["--decode", "--window", "2", "--sinks", "1"]}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["rope", "alibi", "sink", "cross", "two_heads", "window", "padding"])
def test_every_key_passes_check_in_every_format(attntrace, tmp_path, name, kind):
    problem = _problems(tmp_path)[name]
    tried = 0
    for fmt, precisions in (("json", (0, 2, 4, 6)), ("markdown", (2,)), ("plain", (1,))):
        for precision in precisions:
            key = attntrace("worksheet", problem, *KINDS[kind], "--key", "-p", str(precision), "-f", fmt)
            if key.code != 0:  # decoding takes a causal self-attention problem only: refused in one line
                assert kind.startswith("decode") and key.err.count("\n") == 1 and "Traceback" not in key.err
                continue
            sheet = tmp_path / f"key.{SUFFIX[fmt]}"
            sheet.write_text(key.out, encoding="utf-8")
            r = attntrace("check", sheet, problem)
            assert r.code == 0, (fmt, precision, r.out + r.err)
            tried += 1
    assert tried or kind.startswith("decode")


def _sheet(tmp_path: Path, data: dict | str, suffix: str = "json") -> Path:
    path = tmp_path / f"sheet.{suffix}"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def _refused(r, *words: str) -> None:
    assert r.code == 2 and r.err.count("\n") == 1 and "Traceback" not in r.err, r.err
    for word in words:
        assert word in r.err, r.err


def test_a_text_sheet_that_takes_the_keys_zero_at_a_time_is_refused(attntrace, tmp_path):
    for lang, words in (("en", "Take the keys 2 at a time"), ("zh", None)):
        blank = attntrace("worksheet", SAMPLES / "causal.json", "--flash", "2", "-f", "plain", "--lang", lang).out
        text = blank.replace("2 at a time", "0 at a time") if words else blank.replace("每次取 2 个键", "每次取 0 个键")
        assert text != blank
        _refused(attntrace("check", _sheet(tmp_path, text, "txt"), SAMPLES / "causal.json"), "block")


def test_a_row_too_many_is_refused(attntrace, tmp_path):
    key = attntrace("worksheet", SAMPLES / "causal.json", "--flash", "2", "-f", "markdown", "--key").out
    lines = key.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("| block 2 (keys 3–4)"))
    text = "\n".join([*lines[:at + 1], lines[at].replace("block 2", "block 3"), *lines[at + 1:]]) + "\n"
    _refused(attntrace("check", _sheet(tmp_path, text, "md"), SAMPLES / "causal.json"), "a row too many")
    heads = json.loads(attntrace("worksheet", SAMPLES / "causal.json", "--flash", "2", "-f", "json", "--key").out)
    heads["heads"][0]["flash_m"].append([1.0, 1.0])
    _refused(attntrace("check", _sheet(tmp_path, heads), SAMPLES / "causal.json"), "flash_m", "5 x 2")


def test_a_sheet_of_another_problem_is_refused(attntrace, tmp_path):
    three = CAUSAL | {"x": CAUSAL["x"][:3], "tokens": CAUSAL["tokens"][:3]}
    path = tmp_path / "three.json"
    path.write_text(json.dumps(three), encoding="utf-8")
    for kind in (["--flash", "2"], ["--decode"]):
        key = attntrace("worksheet", SAMPLES / "causal.json", *kind, "--key", "-f", "plain").out
        _refused(attntrace("check", _sheet(tmp_path, key, "txt"), path), "another problem")
        key = attntrace("worksheet", SAMPLES / "causal.json", *kind, "--key", "-f", "json").out
        _refused(attntrace("check", _sheet(tmp_path, key), path), "sheet.json")


def test_a_json_sheet_says_what_kind_it_is(attntrace, tmp_path):
    flash = json.loads(attntrace("worksheet", SAMPLES / "causal.json", "--flash", "2", "-f", "json", "--key").out)
    decode = json.loads(attntrace("worksheet", SAMPLES / "causal.json", "--decode", "-f", "json", "--key").out)
    _refused(attntrace("check", _sheet(tmp_path, flash | {"block": None}), SAMPLES / "causal.json"), "block")
    _refused(attntrace("check", _sheet(tmp_path, decode | {"block": 2}), SAMPLES / "causal.json"), "block")
    both = flash | {"heads": [flash["heads"][0] | decode["heads"][0]]}
    _refused(attntrace("check", _sheet(tmp_path, both), SAMPLES / "causal.json"), "flash_*", "decode_*")


def test_a_decoding_sheet_whose_settings_do_not_fit_is_refused_naming_it(attntrace, tmp_path):
    decode = json.loads(attntrace("worksheet", SAMPLES / "causal.json", "--decode", "--window", "2", "-f", "json",
                                  "--key").out)
    r = attntrace("check", _sheet(tmp_path, decode | {"sinks": 4}), SAMPLES / "causal.json")
    _refused(r, "sheet.json", "sinks 4")
    assert "--sinks" not in r.err
    r = attntrace("check", _sheet(tmp_path, decode | {"window": 0}), SAMPLES / "causal.json")
    _refused(r, "sheet.json", "window")
    assert "--window" not in r.err


def test_cells_that_are_no_number_are_noted_and_full_width_digits_read(attntrace, tmp_path):
    key = attntrace("worksheet", SAMPLES / "causal.json", "--flash", "2", "-i", "2", "-f", "plain", "--key",
                    "--lang", "zh").out
    lines = key.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("O / ℓ"))
    cells = lines[at].split()
    wide = cells[-1].translate(str.maketrans("0123456789.-", "０１２３４５６７８９．－"))
    lines[at] = lines[at].replace(cells[-1], wide)
    right = "\n".join(lines) + "\n"
    assert attntrace("check", _sheet(tmp_path, right, "txt"), SAMPLES / "causal.json").code == 0
    lines[at] = lines[at].replace(wide, "abc")
    r = attntrace("check", _sheet(tmp_path, "\n".join(lines) + "\n", "txt"), SAMPLES / "causal.json", "-f", "json")
    report = json.loads(r.out)
    assert r.code == 1 and any('"abc" is not a number' in note for note in report["notes"])
    assert {item["verdict"] for item in report["items"]} == {"right"}
    assert any("1 of 3 cells not written" in item["note"] for item in report["items"])


def test_the_decoding_handout_says_its_rounding_and_check_reads_it(attntrace, tmp_path):
    for lang in ("en", "zh"):
        key = attntrace("worksheet", SAMPLES / "causal.json", "--decode", "-p", "3", "-f", "markdown", "--key",
                        "--lang", lang).out
        assert "3" in key and ("Round every number you write to 3 decimals" in key or "3 位小数" in key)
        r = attntrace("check", _sheet(tmp_path, key.replace("0.500", "0.5"), "md"), SAMPLES / "causal.json",
                      "-f", "json")
        assert json.loads(r.out)["precision"] == 3 and json.loads(r.out)["precision_from"] == "sheet"


def test_flash_and_decode_handouts_print_the_same_scores(attntrace):
    flash = json.loads(attntrace("worksheet", SAMPLES / "two_heads.json", "--flash", "2", "-f", "json", "--key",
                                 "-p", "2").out)
    decode = attntrace("worksheet", SAMPLES / "causal.json", "--decode", "-f", "plain", "-p", "2").out
    flashed = attntrace("worksheet", SAMPLES / "causal.json", "--flash", "4", "-f", "plain", "-p", "2", "-i", "4").out
    row = next(line for line in flashed.splitlines() if line.startswith("s  "))
    logits = [line for line in decode.splitlines() if line.startswith("s  ")][-1]
    assert row.split() == logits.split()
    assert flash["block"] == 2


def test_a_sink_handout_says_where_the_sink_enters(attntrace, tmp_path):
    path = _problems(tmp_path)["sink"]
    for kind, words in ((["--flash", "2"], "O / (ℓ + e^(0.5 − m))"), (["--decode"], "e^(0.5 − m)")):
        for lang in ("en", "zh"):
            assert words in " ".join(attntrace("worksheet", path, *kind, "-f", "plain", "--lang", lang).out.split())


# --- each cause's report, in both languages ---

def _flash(problem: dict, block: int, places: int, mistake: str | None = None, how: dict | None = None) -> dict:
    heads = []
    for a in range(problem.get("heads", 1)):
        sink = problem["sink"][a] if "sink" in problem else None
        divide = 1.0 if mistake == "unscaled" else 3 ** 0.5 if mistake == "scaled_when_none" else None
        s, v = hand.head_scores(problem, a, places, divide)
        rows = [hand.flash_row(row, v, block, places, sink, how, None if divide else mistake) for row in s]
        heads.append({"head": a + 1, "flash_m": [r[0] for r in rows], "flash_l": [r[1] for r in rows],
                      "flash_o": [r[2] for r in rows], "flash_output": [r[3] for r in rows]})
    return {"precision": places, "block": block, "heads": heads}


def _decode(problem: dict, places: int, window: int | None, sinks: int, mistake: str | None = None) -> dict:
    heads = []
    for a in range(problem.get("heads", 1)):
        sink = problem["sink"][a] if "sink" in problem else None
        s, v = hand.head_scores(problem, a, places, 1.0 if mistake == "unscaled" else None)
        caches, weights, outputs = [], [], []
        for t in range(1, len(problem["x"]) + 1):
            cache = hand.kept(t, window, 0 if mistake == "sinks_dropped" else sinks)
            w, o = hand.decode_step(s[t - 1], v, cache, places, sink, None, mistake)
            caches.append(cache)
            weights.append(w)
            outputs.append(o)
        if mistake == "blank_slot":
            caches[2][2] = None
        heads.append({"head": a + 1, "decode_cache": caches, "decode_weights": weights, "decode_output": outputs})
    return {"precision": places, "window": window, "sinks": sinks, "heads": heads}


SUNK = CAUSAL | {"name": "sink", "sink": [0.5]}
UNSCALED = CAUSAL | {"name": "no scaling", "scale": False}
CAUSES = {
    "flash_sink_left_out": (SUNK, lambda p: _flash(p, 2, 2, "no_sink")),
    "flash_division_forgotten": (SUNK, lambda p: _flash(p, 2, 2, "no_division")),
    "flash_rescale_forgotten_in_l": (CAUSAL, lambda p: _flash(p, 1, 2, "no_rescale_l")),
    "flash_scaled_when_none": (UNSCALED, lambda p: _flash(p, 2, 2, "scaled_when_none")),
    "flash_products_rounded": (SUNK, lambda p: _flash(p, 1, 2, None, {"round_products": True, "round_factor": True})),
    "decode_sink_left_out": (SUNK, lambda p: _decode(p, 2, None, 0, "no_sink")),
    "decode_sinks_dropped": (SUNK, lambda p: _decode(p, 2, 1, 1, "sinks_dropped")),
    "decode_scaling_forgotten": (CAUSAL, lambda p: _decode(p, 2, None, 0, "unscaled")),
    "decode_blank_slot": (CAUSAL, lambda p: _decode(p, 2, None, 0, "blank_slot")),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("cause", CAUSES)
def test_each_cause_reads_as_its_golden_report(attntrace, tmp_path, monkeypatch, cause, lang):
    problem, make = CAUSES[cause]
    monkeypatch.chdir(tmp_path)
    Path("problem.json").write_text(json.dumps(problem), encoding="utf-8")
    Path("sheet.json").write_text(json.dumps(make(problem)), encoding="utf-8")
    r = attntrace("check", "sheet.json", "problem.json", "--lang", lang)
    assert r.code == (0 if cause == "flash_products_rounded" else 1), r.out + r.err
    path = GOLDEN / f"{cause}.{lang}.txt"
    if os.environ.get("ATTNTRACE_REGEN_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(r.out, encoding="utf-8")
    assert r.out == path.read_text(encoding="utf-8")


def test_a_huge_sheet_is_refused_at_its_first_row_too_many(attntrace, tmp_path):
    """read row by row, not whole: the refusal names the row count the problem has, as an eight-step sheet's does"""
    flash = json.loads(attntrace("worksheet", SAMPLES / "causal.json", "--flash", "2", "-f", "json", "--key").out)
    flash["heads"][0]["flash_m"] = flash["heads"][0]["flash_m"] * 50_000
    decode = json.loads(attntrace("worksheet", SAMPLES / "causal.json", "--decode", "-f", "json", "--key").out)
    decode["heads"][0]["decode_weights"] = decode["heads"][0]["decode_weights"] * 50_000
    for sheet in (flash, decode):
        path = _sheet(tmp_path, sheet)
        assert path.stat().st_size > 1 << 20
        _refused(attntrace("check", path, SAMPLES / "causal.json"), "has more than 4 rows")


def test_a_text_sheet_that_lost_a_row_or_gained_a_cell_is_refused(attntrace, tmp_path):
    key = attntrace("worksheet", SAMPLES / "causal.json", "--flash", "2", "-f", "markdown", "--key").out
    lines = key.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("| block 2 (keys 3–4)"))
    lost = "\n".join([*lines[:at], *lines[at + 1:]]) + "\n"
    _refused(attntrace("check", _sheet(tmp_path, lost, "md"), SAMPLES / "causal.json"), "row 2 is missing")
    gained = "\n".join([*lines[:at], lines[at] + " 9.99 |", *lines[at + 1:]]) + "\n"
    _refused(attntrace("check", _sheet(tmp_path, gained, "md"), SAMPLES / "causal.json"), "a cell too many", "9.99")


def test_a_text_sheet_whose_given_numbers_are_another_problems_is_refused(attntrace, tmp_path):
    other = CAUSAL | {"x": [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1], [2, 0, 0, 2]]}  # one number of x changed
    path = tmp_path / "other.json"
    path.write_text(json.dumps(other), encoding="utf-8")
    for kind in (["--flash", "2"], ["--decode"]):
        for lang in ("en", "zh"):
            key = attntrace("worksheet", SAMPLES / "causal.json", *kind, "--key", "-f", "markdown", "--lang", lang).out
            _refused(attntrace("check", _sheet(tmp_path, key, "md"), path), "another problem")
    two = attntrace("worksheet", SAMPLES / "two_heads.json", "--flash", "2", "--key", "-f", "plain").out
    _refused(attntrace("check", _sheet(tmp_path, two, "txt"), SAMPLES / "causal.json"), "none of the tables")


def test_a_flash_sheet_with_a_window_and_a_sheet_with_too_many_heads_are_refused(attntrace, tmp_path):
    flash = json.loads(attntrace("worksheet", SAMPLES / "causal.json", "--flash", "2", "-f", "json", "--key").out)
    _refused(attntrace("check", _sheet(tmp_path, flash | {"window": 2}), SAMPLES / "causal.json"), "window")
    many = flash | {"heads": [dict(flash["heads"][0], head=a) for a in range(1, 30_000)]}
    path = _sheet(tmp_path, many)
    assert path.stat().st_size > 1 << 20
    _refused(attntrace("check", path, SAMPLES / "causal.json"), "head 2 is out of range")


def test_a_running_maximum_written_as_minus_infinity_where_a_key_was_seen_is_wrong(attntrace, tmp_path):
    key = attntrace("worksheet", SAMPLES / "causal.json", "--flash", "2", "-i", "2", "-f", "markdown", "--key").out
    lines = key.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("| block 1 (keys 1–2)"))
    cells = lines[at].split("|")
    cells[2] = " -inf "
    lines[at] = "|".join(cells)
    r = attntrace("check", _sheet(tmp_path, "\n".join(lines) + "\n", "md"), SAMPLES / "causal.json")
    assert r.code == 1 and "[query 2, block 1]: masked written" in r.out, r.out


def test_a_sheet_rounded_to_fewer_decimals_than_asked_is_told_so(attntrace, tmp_path):
    for kind in (["--flash", "2"], ["--decode"]):
        key = json.loads(attntrace("worksheet", SAMPLES / "causal.json", *kind, "--key", "-f", "json", "-p", "1").out)
        r = attntrace("check", _sheet(tmp_path, key | {"precision": 3}), SAMPLES / "causal.json", "-f", "json")
        report = json.loads(r.out)
        assert r.code == 1 and report["mistakes"] == ["rounded to fewer decimals"], report["diagnosis"]
        r = attntrace("check", _sheet(tmp_path, key), SAMPLES / "causal.json", "--precision", "3")
        assert r.code == 1 and "rounded to 1 decimal, not the 3 --precision asks for" in r.out, r.out
