"""attntrace.decode: the library's decoding, as the command line's JSON and pages."""

import json

import numpy as np
import pytest

import attntrace
from attntrace import api, pages
from tests.conftest import SAMPLES


def test_decode_returns_the_data_and_the_command_lines_json():
    d = attntrace.decode(attntrace.load(SAMPLES / "causal.json"), window=2, sinks=1)
    assert [s.cache for s in d.heads[0].steps] == [(1,), (1, 2), (1, 2, 3), (1, 4, 3)]
    form = d.to_dict()
    assert form["heads"][0]["steps"][3]["cache"] == [1, 4, 3] and form["max_diff"] <= 1e-12
    json.dumps(form, allow_nan=False)
    assert "Decode step 4 of 4" in d.render() and "| I |" in d.render("markdown")


def test_decode_builds_a_problem_from_keys_and_takes_a_sink_logit():
    d = attntrace.decode(x=[[1, 0], [0, 1], [1, 1]], scale=False, sink=[0.5], query=3)
    step = d.heads[0].steps[0]
    assert step.t == 3 and d.to_dict()["heads"][0]["sink"] == 0.5
    assert step.weights.sum() + step.sink_weight == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(d.output, d.reference, rtol=0, atol=1e-12)


def test_decode_refuses_an_unknown_format_and_a_bad_window():
    d = attntrace.decode()
    with pytest.raises(attntrace.AttntraceError, match="unknown format"):
        d.render("svg")
    with pytest.raises(attntrace.AttntraceError, match="^window=0 must be a whole number of at least 1$"):
        attntrace.decode(window=0)


@pytest.mark.parametrize("fmt", ["plain", "markdown", "csv", "json"])
def test_decode_renders_what_the_command_line_prints(attntrace, fmt):
    d = api.decode(api.load(SAMPLES / "causal.json"), window=2, sinks=1)
    printed = attntrace("decode", SAMPLES / "causal.json", "--window", "2", "--sinks", "1", "--format", fmt).out
    assert d.render(fmt) == printed


def test_a_page_says_a_traces_warnings_and_shows_the_steps_of_each_kind_of_work():
    t = pages.traced(api.load(SAMPLES / "causal.json"), query=3)
    flash = api.flash(api.load(SAMPLES / "causal.json"), block=2)
    decoded = api.decode(api.load(SAMPLES / "causal.json"), window=2)
    assert pages.Page(decoded, pages.DECODING, "plain").warnings == ()
    assert pages.Page(flash, pages.FLASH, "plain").warnings == pages.Page(flash.trace, pages.TRACE, "plain").warnings
    assert not pages.Page(t, pages.TRACE, "json").document.steps  # the JSON form alone
    assert pages.Page(t, pages.TRACE, "json", exported=True).document.steps  # an export draws the steps beside it
    assert pages.Page(t, pages.TRACE, "json", head=3).document.data["heads"][0]["head"] == 3
    for work, kind in ((t, pages.TRACE), (flash, pages.FLASH), (decoded, pages.DECODING)):
        page = pages.Page(work, kind, "plain", explain=True)
        assert page.document.steps and page.document.title == pages.Page(work, kind, "plain").title
