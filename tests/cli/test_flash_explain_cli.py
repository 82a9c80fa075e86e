"""`attntrace flash --explain`: its golden page, and its refusals of a missing --input and of a format of numbers."""


import pytest

from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"


def test_explain_needs_an_input(attntrace):
    r = attntrace("flash", "--explain")
    assert r.code == 2 and r.out == ""
    assert "--input" in r.err and "Traceback" not in r.err


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_explain_refuses_a_format_of_numbers(attntrace, fmt):
    r = attntrace("flash", "--input", "1", "--explain", "--format", fmt)
    assert r.code == 2 and r.out == ""
    assert fmt in r.err and "Traceback" not in r.err


def test_explain_in_chinese(attntrace):
    r = attntrace("flash", "--input", "2", "--explain", "--lang", "zh")
    assert r.code == 0 and r.err == "", r.err
    assert "输入 2" in r.out


def test_decode_explain_writes_the_step(attntrace, monkeypatch):
    monkeypatch.chdir(ROOT)
    r = attntrace("decode", "samples/worked_example.json", "--input", "3", "--explain", "--format", "markdown")
    assert r.code == 0 and r.err == "", r.err
    assert "w(3,2) = e^12 / (e^4 + e^12 + e^10) = 0.8805" in r.out


def test_decode_explain_needs_an_input(attntrace):
    r = attntrace("decode", "--explain")
    assert r.code == 2 and "--input" in r.err and "Traceback" not in r.err
