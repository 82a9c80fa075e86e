"""Worksheets printed in Chinese before the catalogue was reworded (tests/fixtures/earlier, printed by that revision)
are still read by check, in every language: their words are kept in attntrace/locale/zh_CN/earlier.py."""

import json
from pathlib import Path

import pytest

from tests.conftest import SAMPLES

EARLIER = Path(__file__).resolve().parent.parent / "fixtures" / "earlier"


@pytest.mark.parametrize("lang", ["en", "zh", "zh-TW"])
@pytest.mark.parametrize("sheet, problem, most", [("flash_key_zh.md", "causal.json", 4),
                                                  ("decode_key_zh.md", "causal.json", 3),
                                                  ("scaled_key_zh.md", "scaled.json", 7)])
def test_a_key_printed_before_the_rewording_is_read_and_right(attntrace, sheet, problem, most, lang):
    r = attntrace("check", EARLIER / sheet, "--problem", SAMPLES / problem, "--format", "json", "--lang", lang)
    assert r.code == 0, r.err
    marked = json.loads(r.out)
    assert marked["passed"] and marked["score"] == marked["max_score"] == most


def test_the_earlier_words_differ_from_todays_and_are_never_a_language_to_choose():
    from attntrace import language
    from attntrace.locale.zh_CN import earlier, messages

    assert earlier.MESSAGES and all(messages.MESSAGES[key] != value for key, value in earlier.MESSAGES.items())
    assert language.EARLIER not in language.LANGUAGES and language.EARLIER in language.PRINTED
