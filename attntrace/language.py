"""The language attntrace writes to a person in: English, or Simplified (zh) or Traditional (zh-TW) Chinese from the
gettext catalogues in attntrace/locale (attntrace's own messages read each as the Python module scripts/catalogue.py
writes beside the .mo, click's and typer's through gettext); which one a command line asks for is choosing.py's.

Only text for a person goes through here: JSON, CSV, Gradescope and problem files are the same in every language.
"""

from __future__ import annotations

import gettext
import os
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module
from types import ModuleType

DOMAIN = "attntrace"
LANGUAGES = ("en", "zh", "zh-TW")
LOCALES = {"zh": "zh_CN", "zh-TW": "zh_TW"}  # the catalogue each language reads
# the words of sheets printed before the Simplified catalogue was reworded: never chosen, only read back by check
EARLIER = "zh-earlier"
PRINTED = (*LANGUAGES, EARLIER)  # every language a printed worksheet may be in
FOLDER = os.path.join(os.path.dirname(__file__), "locale")

_translation: _Catalogue | None = None  # None: English, as written
_current = "en"
_LANGUAGE = os.environ.get("LANGUAGE")  # the user's own, given back when English is chosen again


def use(language: str) -> None:
    """write in language from now on; click's and typer's own messages too (they ask gettext's global domain)"""
    global _translation, _current
    if language == _current:
        return
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
