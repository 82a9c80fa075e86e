"""flash and decode in every format they write, against golden files: the JSON and CSV a machine reads, the markdown
and the coloured table a person does."""

import os
import re

import pytest

from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"
FORMATS = {"json": "json", "csv": "csv", "markdown": "md", "table": "table"}
COMMANDS = {
    "flash_causal": ["flash", "samples/causal.json", "--block", "2"],
    "decode_two_heads": ["decode", "samples/two_heads.json", "--window", "2", "--sinks", "1"],
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", COMMANDS)
def test_every_format_matches_its_golden_file(attntrace, name, fmt, monkeypatch):
    monkeypatch.chdir(ROOT)
    r = attntrace(*COMMANDS[name], "--format", fmt, "--color", "never")
    assert r.code == 0 and r.err == "", r.err
    path = GOLDEN / f"{name}.{FORMATS[fmt]}.txt"
    if os.environ.get("ATTNTRACE_REGEN_GOLDEN"):
        path.write_text(r.out, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    if fmt in ("json", "csv"):  # every digit of a float64: compared to 9 significant digits, so that another
        r_out, expected = _digits(r.out), _digits(expected)  # processor's exp or BLAS, last bits apart, agrees
    else:
        r_out = r.out
    assert r_out == expected


def _digits(text: str) -> str:
    """each float to 9 significant digits, and the rounding noise of a difference (below 1e-12) as 0"""
    def short(m: re.Match[str]) -> str:
        value = float(m.group())
        return "0" if abs(value) < 1e-12 else f"{value:.9g}"

    return re.sub(r"-?\d+(?:\.\d+)?e[-+]?\d+|-?\d+\.\d+", short, text)
