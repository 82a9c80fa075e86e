"""The explorer's online softmax: f opens it beside the steps, b and B go through its blocks to O / ℓ, each page the
lines `attntrace flash --explain` writes for the input and head followed."""

from __future__ import annotations

import pytest

from attntrace.core.problem import example
from attntrace.errors import AttntraceError
from attntrace.explore.state import Session
from tests.conftest import SAMPLES
from tests.explore.test_explore import drive, press, side_text


def test_the_session_steps_through_the_blocks_to_the_output():
    s = Session(example(), row=1)
    assert s.next_block(1) == "block 2 (keys 3) for input 2" and s.flashing
    heading, lines = s.flash_page()
    assert "ℓ = ℓ_old · rescale + Σ e^(s - m) = 1.0000 · 1 + (e^(12 - 16)) = 1.0183" in lines
    assert s.next_block(1) == "output 2 = O / ℓ"
    with pytest.raises(AttntraceError):
        s.next_block(1)
    s.next_block(-1)
    s.next_block(-1)
    with pytest.raises(AttntraceError):
        s.next_block(-1)
    assert s.flash_page()[0] == "block 1 (keys 1-2) for input 2"


def test_a_head_shows_only_its_own_lines():
    from attntrace.files.problemfile import read

    s = Session(read(SAMPLES / "two_heads.json")[0])
    s.next_head(1)
    _heading, lines = s.flash_page()
    assert lines and not any(line.startswith("head") for line in lines)


def test_f_and_b_show_the_online_softmax_beside_the_steps():
    async def script(pilot, app):
        await press(pilot, "down", "f")
        assert app.session.flashing and "block 1 (keys 1-2) for input 2" in side_text(app)
        assert "max(-inf, 16) = 16" in side_text(app)
        await press(pilot, "b")
        assert "block 2 (keys 3) for input 2" in side_text(app)
        await press(pilot, "b")
        assert "O[2] / ℓ = 8.1099 / 1.0183 = 7.9640" in side_text(app)
        await press(pilot, "escape")
        assert not app.session.flashing

    drive(script)


def test_the_session_shows_the_decode_step_of_the_input_followed():
    from attntrace.files.problemfile import read

    s = Session(example(), row=2)
    s.toggle_decoding()
    lines = s.decode_lines()
    assert "w(3,2) = e^12 / (e^4 + e^12 + e^10) = 0.8805" in lines
    s = Session(read(SAMPLES / "two_heads.json")[0], row=2)
    s.next_head(1)
    lines = s.decode_lines()
    assert any(line.startswith("w(3,") for line in lines) and not any(line.startswith("head") for line in lines)


def test_a_problem_decode_refuses_keeps_the_panel_shut():
    from dataclasses import replace

    s = Session(example())
    s.problem = replace(example(), source=example().x)
    with pytest.raises(AttntraceError):
        s.toggle_decoding()
    assert not s.decoding


def test_d_shows_the_decode_step_beside_the_steps():
    async def script(pilot, app):
        await press(pilot, "down", "down", "d")
        assert app.session.decoding and "decode step 3, against the KV cache" in side_text(app)
        assert "e^12 / (e^4 + e^12 + e^10) = 0.8805" in side_text(app)
        await press(pilot, "d")
        assert not app.session.decoding

    drive(script)
