"""views/text.width measures text as rich's tables do, whichever way it takes (ASCII, Latin letters and signs, or the
rest through rich itself)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from attntrace.views.text import width

LATIN = st.characters(min_codepoint=0x20, max_codepoint=0x2FF, blacklist_categories=("Cc",))  # what labels hold once
# made visible: no control characters
ANY = st.characters(blacklist_categories=("Cs", "Cc"))


@given(st.text(LATIN, max_size=20))
def test_latin_text_is_as_wide_as_the_tables_measure_it(text):
    assert width(text) == cell_len(text)


@given(st.text(ANY, max_size=12))
def test_any_text_is_as_wide_as_the_tables_measure_it(text):
    assert width(text) == cell_len(text)
