"""The language attntrace writes to a person in: English, or Simplified (zh) or Traditional (zh-TW) Chinese from the
gettext catalogues in attntrace/locale (attntrace's own messages read each as the Python module scripts/catalogue.py
writes beside the .mo, click's and typer's through gettext).

Chosen by --lang, then ATTNTRACE_LANG, then the locale (LC_ALL, LC_MESSAGES, LANG): zh_TW, zh_HK, zh_MO and zh_Hant*
are Traditional, any other zh* Simplified. Only text for a person goes through here: JSON, CSV, Gradescope and problem
files are the same in every language.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from attntrace.errors import AttntraceError

if TYPE_CHECKING:
    from types import ModuleType

DOMAIN = "attntrace"
LANGUAGES = ("en", "zh", "zh-TW")
LOCALES = {"zh": "zh_CN", "zh-TW": "zh_TW"}  # the catalogue each language reads
# the words of sheets printed before the Simplified catalogue was reworded: never chosen, only read back by check
EARLIER = "zh-earlier"
PRINTED = (*LANGUAGES, EARLIER)  # every language a printed worksheet may be in
TRADITIONAL = {"hant", "tw", "hk", "mo"}  # the script or regions of a zh locale that read Traditional characters
FOLDER = os.path.join(os.path.dirname(__file__), "locale")

_translation: _Catalogue | None = None  # None: English, as written, with gettext never imported
_current = "en"
_LANGUAGE = os.environ.get("LANGUAGE")  # the user's own, given back when English is chosen again


def from_locale(environ: Mapping[str, str]) -> str:
    """the language of the environment: ATTNTRACE_LANG, else the first of LC_ALL, LC_MESSAGES, LANG that is set"""
    wanted = environ.get("ATTNTRACE_LANG", "").strip()
    if wanted:
        return checked(wanted, "ATTNTRACE_LANG")
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name, "")
        if value:
            return known(value) or "en"
    return "en"


def known(value: str) -> str | None:
    """a language code or locale as given (en, en_US.UTF-8, zh, zh_CN, zh-Hans, zh-TW, zh_HK.Big5, zh_Hant_TW...) as
    one of LANGUAGES: Traditional for Taiwan, Hong Kong, Macao or the Hant script, unless Hans is named; None when it
    is none of them"""
    parts = value.strip().lower().replace("-", "_").split(".")[0].split("@")[0].split("_")
    if parts[0] == "en":
        return "en"
    if parts[0] != "zh":
        return None
    return "zh-TW" if "hans" not in parts and TRADITIONAL.intersection(parts) else "zh"


def checked(value: str, where: str) -> str:
    """a language code as given as one of LANGUAGES; anything else a usage error"""
    language = known(value)
    if language is None:
        raise AttntraceError(f"{where} {value}: the languages are {', '.join(LANGUAGES[:-1])} and {LANGUAGES[-1]}",
                             exit_code=2)
    return language


def from_arguments(argv: Sequence[str], environ: Mapping[str, str]) -> str:
    """the language a command line asks for: its --lang (before any --), else the environment's; a --lang that is
    none of the languages is left to the command line to refuse"""
    for i, word in enumerate(argv):
        if word == "--":
            break
        value = argv[i + 1] if word == "--lang" and i + 1 < len(argv) else word[7:] if word.startswith("--lang=") else None
        language = None if value is None else known(value)
        if language is not None:
            return language
    return from_locale(environ)


def without_option(argv: Sequence[str]) -> list[str]:
    """argv without its --lang option (before any --), when its value is a language: what is left for the command
    itself (a --lang of another value stays, for the command line to refuse)"""
    out: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "--":
            out.append(word)
            out.extend(words)
        elif word == "--lang":
            value = next(words, None)
            if value is None or known(value) is None:
                out.extend([word] if value is None else [word, value])
        elif not (word.startswith("--lang=") and known(word[7:])):
            out.append(word)
    return out


def use(language: str) -> None:
    """write in language from now on; click's and typer's own messages too (they ask gettext's global domain)"""
    global _translation, _current
    if language == _current:
        return
    import gettext
    from importlib import import_module

    _current = language
    if language == "en":
        _translation = None
        gettext.textdomain("messages")
        if _LANGUAGE is None:
            os.environ.pop("LANGUAGE", None)
        else:
            os.environ["LANGUAGE"] = _LANGUAGE
        return
    if language == EARLIER:
        _translation = _Catalogue(import_module("attntrace.locale.zh_CN.messages"))
        _translation.messages = {**_translation.messages, **import_module("attntrace.locale.zh_CN.earlier").MESSAGES}
        language = "zh"
    else:
        _translation = _Catalogue(import_module(f"attntrace.locale.{LOCALES[language]}.messages"))
    gettext.bindtextdomain(DOMAIN, FOLDER)
    gettext.textdomain(DOMAIN)
    os.environ["LANGUAGE"] = LOCALES[language]  # what gettext.gettext reads for the global domain


class _Catalogue:
    """one language's messages, read from the Python module scripts/catalogue.py writes from its .po: MESSAGES,
    PLURALS and plural(n)"""

    def __init__(self, module: ModuleType) -> None:
        self.messages, self.plurals, self.plural = module.MESSAGES, module.PLURALS, module.plural

    def gettext(self, message: str) -> str:
        return self.messages.get(message, message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        forms = self.plurals.get((singular, plural))
        return (singular if n == 1 else plural) if forms is None else forms[self.plural(n)]


def current() -> str:
    return _current


@contextmanager
def speaking(chosen: str) -> Iterator[None]:
    """the catalogue of one language for a while, whatever the chosen one: a text printed in it is read by its words"""
    before = _current
    use(chosen)
    try:
        yield
    finally:
        use(before)


def _(message: str) -> str:
    """message in the chosen language"""
    return message if _translation is None else _translation.gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """the singular or plural message for n, in the chosen language"""
    if _translation is None:
        return singular if n == 1 else plural
    return _translation.ngettext(singular, plural, n)


def N_(message: str) -> str:
    """marks a message for the catalogue where it is defined; it is translated with _() where it is shown"""
    return message
