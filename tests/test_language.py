"""The language: chosen by --lang, ATTNTRACE_LANG or the locale; the catalogue complete and compiled."""

import subprocess
import sys

import pytest

from attntrace import language
from attntrace.errors import AttntraceError
from tests.conftest import ROOT


@pytest.mark.parametrize("environ, expected", [
    ({}, "en"), ({"LANG": "zh_CN.UTF-8"}, "zh"), ({"LANG": "zh_TW.UTF-8"}, "zh"), ({"LANG": "zh_HK"}, "zh"),
    ({"LANG": "en_US.UTF-8"}, "en"), ({"LANG": "C.UTF-8"}, "en"), ({"LANG": "de_DE.UTF-8"}, "en"),
    ({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"), ({"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US"}, "zh"),
    ({"LC_ALL": "zh_CN.UTF-8", "LC_MESSAGES": "en_US"}, "zh"), ({"ATTNTRACE_LANG": "en", "LC_ALL": "zh_CN.UTF-8"}, "en"),
    ({"ATTNTRACE_LANG": "zh", "LANG": "en_US.UTF-8"}, "zh"), ({"ATTNTRACE_LANG": " ", "LANG": "zh_CN"}, "zh"),
])
def test_the_environment_chooses_the_language(environ, expected):
    assert language.from_locale(environ) == expected


@pytest.mark.parametrize("argv, expected", [
    (["run", "--lang", "zh"], "zh"), (["--lang=en", "run"], "en"), (["run", "--lang", "zh-CN"], "zh"),
    (["run", "--", "--lang", "zh"], "en"), (["run"], "en"),
])
def test_lang_comes_before_the_environment(argv, expected):
    assert language.from_arguments(argv, {"LANG": "en_US.UTF-8"}) == expected


@pytest.mark.parametrize("value", ["fr", "", "z", "english"])
def test_an_unknown_language_is_a_usage_error(value):
    with pytest.raises(AttntraceError) as e:
        language.from_arguments(["run", "--lang", value], {})
    assert e.value.exit_code == 2 and "en and zh" in str(e.value)


def test_english_needs_no_gettext():
    code = "import sys, attntrace.language as l; l._('x'); print('gettext' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_chinese_reaches_click_too():
    code = ("import attntrace.language as l, click; l.use('zh'); "
            "print(l._('Usage:')); print(click.exceptions.UsageError('x').format_message() and l.current())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.splitlines() == ["用法：", "zh"], out.stderr


def test_the_catalogue_is_complete_translated_and_compiled():
    pytest.importorskip("babel")
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "catalogue.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
