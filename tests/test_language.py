"""The language: chosen by --lang, ATTNTRACE_LANG or the locale; the catalogue complete and compiled."""

import subprocess
import sys

import pytest

from attntrace import choosing, language
from attntrace.errors import AttntraceError
from tests.conftest import ROOT


@pytest.mark.parametrize("environ, expected", [
    ({}, "en"), ({"LANG": "zh_CN.UTF-8"}, "zh"), ({"LANG": "zh_TW.UTF-8"}, "zh-TW"), ({"LANG": "zh_HK"}, "zh-TW"),
    ({"LANG": "en_US.UTF-8"}, "en"), ({"LANG": "C.UTF-8"}, "en"), ({"LANG": "de_DE.UTF-8"}, "en"),
    ({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"), ({"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US"}, "zh"),
    ({"LC_ALL": "zh_CN.UTF-8", "LC_MESSAGES": "en_US"}, "zh"), ({"ATTNTRACE_LANG": "en", "LC_ALL": "zh_CN.UTF-8"}, "en"),
    ({"ATTNTRACE_LANG": "zh", "LANG": "en_US.UTF-8"}, "zh"), ({"ATTNTRACE_LANG": " ", "LANG": "zh_CN"}, "zh"),
])
def test_the_environment_chooses_the_language(environ, expected):
    assert choosing.from_locale(environ) == expected


@pytest.mark.parametrize("argv, expected", [
    (["run", "--lang", "zh"], "zh"), (["--lang=en", "run"], "en"), (["run", "--lang", "zh-CN"], "zh"),
    (["run", "--", "--lang", "zh"], "en"), (["run"], "en"),
])
def test_lang_comes_before_the_environment(argv, expected):
    assert choosing.from_arguments(argv, {"LANG": "en_US.UTF-8"}) == expected


@pytest.mark.parametrize("value", ["fr", "z", "english", "zhx"])
def test_an_unknown_language_is_a_usage_error(value):
    with pytest.raises(AttntraceError) as e:
        choosing.from_locale({"ATTNTRACE_LANG": value})
    assert e.value.exit_code == 2 and "en, zh and zh-TW" in str(e.value)
    assert choosing.from_arguments(["run", "--lang", value], {"LANG": "zh_CN"}) == "zh"  # the command line refuses it


@pytest.mark.parametrize("argv, rest", [(["run", "--lang", "zh", "-p", "2"], ["run", "-p", "2"]),
                                        (["--lang=en", "run"], ["run"]), (["run", "--lang", "fr"], ["run", "--lang", "fr"]),
                                        (["run", "--", "--lang", "zh"], ["run", "--", "--lang", "zh"])])
def test_the_command_reads_what_lang_leaves(argv, rest):
    assert choosing.without_option(argv) == rest


def test_english_reads_no_catalogue():
    code = "import sys, attntrace.language as l; print(l._('x'), any(m.startswith('attntrace.locale') for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "x False"


def test_chinese_reaches_click_too():
    code = ("import attntrace.language as l, click; l.use('zh'); "
            "print(l._('Usage:')); print(click.exceptions.UsageError('x').format_message() and l.current())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.splitlines() == ["用法：", "zh"], out.stderr


def test_the_catalogue_is_complete_translated_and_compiled():
    pytest.importorskip("babel")
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "catalogue.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_lang_is_an_option_of_every_command(attntrace):
    from attntrace.cli.commands import COMMANDS

    for name in COMMANDS:
        r = attntrace(name, "--help")
        assert "--lang [en|zh|zh-TW]" in r.out, name


@pytest.mark.parametrize("args", [["run", "--lang", "fr"], ["run", "--lang"], ["--lang=de", "run"]])
def test_a_bad_lang_is_a_usage_error(attntrace, args):
    r = attntrace(*args)
    assert r.code == 2 and r.out == "" and r.err.count("\n") == 1 and "--lang" in r.err


def test_a_bad_attntrace_lang_is_a_usage_error(attntrace):
    r = attntrace("run", env={"ATTNTRACE_LANG": "xx"})
    assert r.code == 2 and r.err == "attntrace: ATTNTRACE_LANG xx: the languages are en, zh and zh-TW\n"


def test_click_speaks_chinese(attntrace):
    r = attntrace("run", "--lang", "zh", "-h")
    assert r.out.startswith("用法：attntrace run")
    assert attntrace("run", "-h", env={"ATTNTRACE_LANG": "", "LANG": "zh_CN.UTF-8"}).out.startswith("用法：")


@pytest.mark.parametrize("args", [["run"], ["run", "--format", "json"], ["step", "--input", "2", "--format", "json"],
                                  ["run", "--format", "csv"], ["worksheet", "--format", "json", "--key"]])
def test_english_under_a_chinese_locale_and_data_in_any_language_are_the_same_bytes(attntrace, args):
    english = attntrace(*args).out
    assert attntrace(*args, "--lang", "en", env={"LANG": "zh_CN.UTF-8", "ATTNTRACE_LANG": ""}).out == english
    if "json" in args:
        assert attntrace(*args, "--lang", "zh").out == english
    if "csv" in args:  # its # lines are titles for a person; every cell is data
        def data(text):
            return [line for line in text.splitlines() if not line.startswith(("#", '"#'))]

        assert data(attntrace(*args, "--lang", "zh").out) == data(english)


def test_help_is_translated_when_the_line_is_read_whatever_the_language_at_import(attntrace):
    attntrace("run", "-h")  # the commands imported in English
    r = attntrace("run", "--lang", "zh", "-h")
    assert "写给人看的文字所用的语言" in r.out and "Language of what is written" not in r.out
    assert "Language of what is written" in attntrace("run", "-h").out


def test_the_built_in_example_is_titled_in_the_chosen_language_and_named_in_english_as_data(attntrace):
    assert attntrace("run", "--lang", "zh").out.startswith("教程示例\n########\n")
    assert attntrace("run").out.startswith("worked example\n")
    assert '"name": "worked example"' in attntrace("run", "--lang", "zh", "--format", "json").out


def test_the_catalogue_module_says_what_the_mo_says():
    import gettext

    from attntrace.locale.zh_CN import messages

    mo = gettext.GNUTranslations(open(language.FOLDER + "/zh_CN/LC_MESSAGES/attntrace.mo", "rb"))
    for message, translated in messages.MESSAGES.items():
        assert mo.gettext(message) == translated
    for (singular, plural), forms in messages.PLURALS.items():
        assert mo.ngettext(singular, plural, 2) == forms[messages.plural(2)]
