"""Worksheets of the online softmax and of decoding: blank tables and keys, marked by check with its diagnoses."""

from __future__ import annotations

import json
import math

import numpy as np

from tests.conftest import SAMPLES


def _half_up(x: float, places: int) -> float:
    """rounding as by hand, halves away from zero (written independently of attntrace)"""
    scale = 10 ** places
    return math.copysign(math.floor(abs(x) * scale + 0.5 + 1e-9) / scale, x)


def recurrence(s: list[float], v: list[list[float]], block: int, places: int, rescale: bool = True,
               carry_max: bool = True, normalise_each: bool = False) -> tuple[list[float], list[float], list[list[float]],
                                                                         list[float]]:
    """the online softmax worked by hand in a plain loop, optionally with a classic mistake: m, ℓ, O per block and O/ℓ"""
    m, ell, o = -math.inf, 0.0, [0.0] * len(v[0])
    ms, ls, os_ = [], [], []
    for start in range(0, len(s), block):
        kept = [(x, v[j]) for j, x in enumerate(s[start:start + block], start) if x != -math.inf]
        if kept:
            top = max(x for x, _v in kept)
            m_new = max(m, top) if carry_max else top
            factor = math.exp(m - m_new) if (rescale and m != -math.inf) else (1.0 if m != -math.inf else 0.0)
            p = [math.exp(x - m_new) for x, _v in kept]
            total = sum(p)
            add = [sum(pi * vv[c] for pi, (_x, vv) in zip(p, kept)) for c in range(len(o))]
            if normalise_each:
                add = [a / total for a in add]
            ell = _half_up(ell * factor + total, places)
            o = [_half_up(oc * factor + a, places) for oc, a in zip(o, add)]
            m = m_new
        ms.append(m)
        ls.append(ell)
        os_.append(list(o))
    out = [_half_up(oc / ell, places) if ell else 0.0 for oc in o]
    return ms, ls, os_, out


def _problem(name: str) -> dict:
    return json.loads((SAMPLES / name).read_text(encoding="utf-8"))


def test_flash_key_is_the_recurrence_worked_by_hand_and_the_blank_has_its_shape(attntrace):
    key = attntrace("worksheet", SAMPLES / "two_heads.json", "--flash", "3", "--key", "-f", "json")
    blank = attntrace("worksheet", SAMPLES / "two_heads.json", "--flash", "3", "-f", "json")
    assert key.code == 0 and blank.code == 0, key.err + blank.err
    k, b = json.loads(key.out), json.loads(blank.out)
    assert k["block"] == 3 and b["student"] is None
    trace = json.loads(attntrace("run", SAMPLES / "two_heads.json", "-f", "json", "-p", "2").out)
    for head, blank_head, traced in zip(k["heads"], b["heads"], trace["heads"]):
        for r, scores in enumerate(traced["scaled"]):
            s = [_half_up(x, 2) if x is not None else -math.inf for x in scores]
            v = [[_half_up(x, 2) for x in row] for row in traced["v"]]
            ms, ls, os_, out = recurrence(s, v, 3, 2)
            assert head["flash_m"][r] == ms and head["flash_l"][r] == ls
            assert np.allclose(head["flash_o"][r], os_) and head["flash_output"][r] == out
        for name in ("flash_m", "flash_l", "flash_o", "flash_output"):
            assert np.shape(blank_head[name]) == np.shape(head[name])
            assert all(x is None for x in np.ravel(np.array(blank_head[name], dtype=object)))


def test_flash_worksheet_prints_blank_tables_and_the_key_fills_them(attntrace):
    blank = attntrace("worksheet", SAMPLES / "causal.json", "--flash", "2", "-i", "2", "-f", "plain")
    key = attntrace("worksheet", SAMPLES / "causal.json", "--flash", "2", "-i", "2", "-f", "markdown", "--key")
    assert blank.code == 0 and key.code == 0
    assert "block 1 (keys 1–2)  ________" in blank.out and "O / ℓ  ________" in blank.out
    assert "| block 2 (keys 3–4) |" in key.out and "________" not in key.out


def test_flash_worksheet_in_chinese(attntrace):
    r = attntrace("worksheet", SAMPLES / "causal.json", "--flash", "2", "-i", "2", "-f", "markdown", "--lang", "zh")
    assert r.code == 0, r.err
    assert "第 1 块（键 1–2）" in r.out and "查询 2：每块之后的 m、ℓ 和 O" in r.out


def _sheet(attntrace, tmp_path, name: str, block: int, **mistake: bool):
    """a JSON answer sheet worked by the plain loop, with a classic mistake made throughout"""
    trace = json.loads(attntrace("run", SAMPLES / name, "-f", "json", "-p", "2").out)
    heads = []
    for a, traced in enumerate(trace["heads"], start=1):
        v = [[_half_up(x, 2) for x in row] for row in traced["v"]]
        worked = [recurrence([_half_up(x, 2) if x is not None else -math.inf for x in scores], v, block, 2, **mistake)
                  for scores in traced["scaled"]]
        heads.append({"head": a, "flash_m": [w[0] for w in worked], "flash_l": [w[1] for w in worked],
                      "flash_o": [w[2] for w in worked], "flash_output": [w[3] for w in worked]})
    path = tmp_path / "sheet.json"
    path.write_text(json.dumps({"precision": 2, "block": block, "heads": heads}), encoding="utf-8")
    return attntrace("check", path, SAMPLES / name, "-f", "json")


def test_a_sheet_worked_right_by_hand_passes(attntrace, tmp_path):
    report = json.loads(_sheet(attntrace, tmp_path, "two_heads.json", 1).out)
    assert report["passed"] if "passed" in report else report["sheets"][0]["passed"]


def _diagnosis(r) -> str:
    report = json.loads(r.out)
    one = report["sheets"][0] if "sheets" in report else report
    return one["diagnosis"]


def test_the_rescale_factor_forgotten_is_named(attntrace, tmp_path):
    r = _sheet(attntrace, tmp_path, "two_heads.json", 1, rescale=False)
    assert r.code == 1 and "rescale factor was forgotten" in _diagnosis(r)


def test_the_maximum_not_carried_is_named(attntrace, tmp_path):
    r = _sheet(attntrace, tmp_path, "two_heads.json", 1, carry_max=False)
    assert r.code == 1 and "maximum was not carried" in _diagnosis(r)


def test_the_sum_normalised_per_block_is_named(attntrace, tmp_path):
    r = _sheet(attntrace, tmp_path, "two_heads.json", 2, normalise_each=True)
    assert r.code == 1 and "normalised per block" in _diagnosis(r)


def _softmax_rounded(logits: list[float], places: int) -> list[float]:
    top = max(logits)
    e = [math.exp(x - top) for x in logits]
    return [_half_up(x / sum(e), places) for x in e]


def _decode_sheet(attntrace, tmp_path, window: int | None, cached) -> tuple:
    """a decoding answer sheet worked by a plain loop over the positions cached(t) at each step t"""
    key = json.loads(attntrace("worksheet", SAMPLES / "causal.json", "--decode", "--key", "-f", "json",
                               *(["--window", str(window)] if window else [])).out)
    trace = json.loads(attntrace("run", SAMPLES / "causal.json", "-f", "json", "-p", "2").out)["heads"][0]
    v = [[_half_up(x, 2) for x in row] for row in trace["v"]]
    cache, weights, outputs = [], [], []
    for t in range(1, len(v) + 1):
        held = cached(t)
        w = _softmax_rounded([_half_up(trace["scaled"][t - 1][j - 1], 2) for j in held], 2)
        cache.append(held)
        weights.append(w)
        outputs.append([_half_up(sum(wi * v[j - 1][c] for wi, j in zip(w, held)), 2) for c in range(len(v[0]))])
    sheet = {"precision": 2, "window": window, "heads": [{"head": 1, "decode_cache": cache, "decode_weights": weights,
                                                           "decode_output": outputs}]}
    path = tmp_path / "decode.json"
    path.write_text(json.dumps(sheet), encoding="utf-8")
    return key, attntrace("check", path, SAMPLES / "causal.json", "-f", "json")


def test_decode_key_is_worked_by_hand_and_checks_all_right(attntrace, tmp_path):
    key, r = _decode_sheet(attntrace, tmp_path, 2, lambda t: list(range(max(1, t - 1), t + 1)))
    head = key["heads"][0]
    assert head["decode_cache"] == [[1], [1, 2], [3, 2], [3, 4]]  # slot order: t takes slot (t - 1) mod 2
    path = tmp_path / "key.json"
    path.write_text(json.dumps(key), encoding="utf-8")
    assert attntrace("check", path, SAMPLES / "causal.json").code == 0
    blank = json.loads(attntrace("worksheet", SAMPLES / "causal.json", "--decode", "-f", "json").out)
    assert [len(row) for row in blank["heads"][0]["decode_weights"]] == [1, 2, 3, 4]


def test_the_new_token_left_out_of_its_own_cache_is_named(attntrace, tmp_path):
    _key, r = _decode_sheet(attntrace, tmp_path, None, lambda t: list(range(1, max(t, 2))))
    assert r.code == 1 and "left out of its own cache" in _diagnosis(r)


def test_a_window_off_by_one_is_named(attntrace, tmp_path):
    _key, r = _decode_sheet(attntrace, tmp_path, 2, lambda t: list(range(max(1, t - 2), t + 1)))
    assert r.code == 1 and "off by one" in _diagnosis(r)


def test_decode_worksheet_in_chinese(attntrace):
    r = attntrace("worksheet", SAMPLES / "causal.json", "--decode", "--window", "2", "-f", "plain", "--lang", "zh")
    assert r.code == 0, r.err
    assert "第 2 步：缓存中的位置" in r.out


def test_a_chinese_flash_worksheet_is_read_back(attntrace, tmp_path):
    key = attntrace("worksheet", SAMPLES / "two_heads.json", "--flash", "3", "--key", "-f", "markdown", "--lang", "zh")
    (tmp_path / "key.md").write_text(key.out, encoding="utf-8")
    r = attntrace("check", tmp_path / "key.md", SAMPLES / "two_heads.json", "-f", "json")
    assert r.code == 0, r.out + r.err
    blank = attntrace("worksheet", SAMPLES / "causal.json", "--flash", "2", "-i", "3", "-f", "plain", "--lang", "zh")
    (tmp_path / "blank.txt").write_text(blank.out.replace("________________", "李明", 1), encoding="utf-8")
    r = attntrace("check", tmp_path / "blank.txt", SAMPLES / "causal.json", "-f", "json", "--lang", "zh")
    report = json.loads(r.out)
    one = report["sheets"][0] if "sheets" in report else report
    assert r.code == 1 and one["student"] == "李明" and one["query"] == 3
    assert {item["verdict"] for item in one["items"]} == {"not answered"}


def test_decode_worksheet_refuses_what_does_not_fit_in_one_line(attntrace):
    r = attntrace("worksheet", SAMPLES / "cross.json", "--decode")
    assert r.code == 1 and r.err.count("\n") == 1 and "cross.json" in r.err and "Traceback" not in r.err
    r = attntrace("worksheet", SAMPLES / "causal.json", "--decode", "--sinks", "1")
    assert r.code == 2 and "--window" in r.err
    r = attntrace("worksheet", SAMPLES / "causal.json", "--decode", "--flash", "2")
    assert r.code == 2 and "--flash" in r.err


def test_a_flash_sheet_with_a_bad_block_is_refused(attntrace, tmp_path):
    path = tmp_path / "sheet.json"
    path.write_text(json.dumps({"block": 0, "heads": [{"head": 1, "flash_m": [[1.0]]}]}), encoding="utf-8")
    r = attntrace("check", path, SAMPLES / "causal.json")
    assert r.code == 2 and "block" in r.err and r.err.count("\n") == 1


def test_a_chinese_decode_worksheet_is_read_back(attntrace, tmp_path):
    key = attntrace("worksheet", SAMPLES / "causal.json", "--decode", "--window", "2", "--key", "-f", "markdown",
                    "--lang", "zh")
    (tmp_path / "key.md").write_text(key.out, encoding="utf-8")
    assert attntrace("check", tmp_path / "key.md", SAMPLES / "causal.json").code == 0
    blank = attntrace("worksheet", SAMPLES / "causal.json", "--decode", "--window", "2", "-f", "plain", "--lang", "zh")
    (tmp_path / "blank.txt").write_text(blank.out, encoding="utf-8")
    r = attntrace("check", tmp_path / "blank.txt", SAMPLES / "causal.json", "-f", "json")
    report = json.loads(r.out)
    one = report["sheets"][0] if "sheets" in report else report
    assert r.code == 1 and {item["verdict"] for item in one["items"]} == {"not answered"}


def test_a_sink_given_a_value_is_named(attntrace, tmp_path):
    problem = json.loads((SAMPLES / "causal.json").read_text(encoding="utf-8")) | {"sink": 0.5}
    path = tmp_path / "sunk.json"
    path.write_text(json.dumps(problem), encoding="utf-8")
    key = json.loads(attntrace("worksheet", path, "--decode", "--key", "-f", "json").out)
    right = tmp_path / "right.json"
    right.write_text(json.dumps(key), encoding="utf-8")
    assert attntrace("check", right, path).code == 0
    v1 = [_half_up(x, 2) for x in json.loads(attntrace("run", path, "-f", "json", "-p", "2").out)["heads"][0]["v"][0]]
    head = key["heads"][0]
    head["decode_output"] = [[_half_up(o + (1 - sum(w)) * v1[c], 2) for c, o in enumerate(out)]  # the sink as token 1
                             for w, out in zip(head["decode_weights"], head["decode_output"])]
    wrong = tmp_path / "valued.json"
    wrong.write_text(json.dumps(key), encoding="utf-8")
    r = attntrace("check", wrong, path, "-f", "json")
    assert r.code == 1 and "the sink was given a value" in _diagnosis(r)
