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


def test_chinese_text_is_measured_as_rich_measures_it_without_importing_rich():
    from rich.cells import cell_len

    from attntrace.views.text import _chinese, width

    for code in range(0x20, 0x10000):
        ch = chr(code)
        if not 0xD800 <= code < 0xE000 and _chinese(ch) is not None:
            assert width(ch) == cell_len(ch), hex(code)
    assert width("步骤 4：计算输入 1 的注意力得分（x1）") == cell_len("步骤 4：计算输入 1 的注意力得分（x1）")


def test_a_chinese_run_does_not_import_rich():
    import subprocess
    import sys

    code = ("import sys, io, contextlib; from attntrace.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()): main(['run', '--lang', 'zh'])\n"
            "print('rich' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
