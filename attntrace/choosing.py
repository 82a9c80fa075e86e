"""Which language a command line asks for: its --lang, then ATTNTRACE_LANG, then the locale (LC_ALL, LC_MESSAGES,
LANG). zh_TW, zh_HK, zh_MO and zh_Hant* are Traditional, any other zh* Simplified."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from attntrace.errors import AttntraceError, ExitStatus
from attntrace.language import LANGUAGES

TRADITIONAL = {"hant", "tw", "hk", "mo"}  # the script or regions of a zh locale that read Traditional characters


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
                             exit_code=ExitStatus.USAGE)
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
