"""Keep the translations in step with the code: extract every message attntrace, click and typer can show a person
(Babel), merge them into attntrace/locale/zh_CN/LC_MESSAGES/attntrace.po keeping what is translated, and compile the
.mo that ships in the wheel (click and typer read it through gettext) and the same catalogue as a Python module,
attntrace/locale/zh_CN/messages.py, which attntrace's own messages read: its bytecode loads in a tenth of the time
gettext takes to parse the .mo, at every start of a Chinese run.

    python scripts/catalogue.py           # extract, merge, compile
    python scripts/catalogue.py --check   # exit 1 when a message is missing, untranslated or fuzzy, or the .mo is stale
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import click
import typer
from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "attntrace" / "locale"
PO = LOCALE / "zh_CN" / "LC_MESSAGES" / "attntrace.po"
MO = PO.with_suffix(".mo")
MODULE = LOCALE / "zh_CN" / "messages.py"
SOURCES = {"attntrace": ROOT / "attntrace", "click": Path(click.__file__).parent, "typer": Path(typer.__file__).parent}
SKIPPED = ("_termui_impl.py", "_winconsole.py", "shell_completion.py", "testing.py")  # nothing a user of attntrace sees


def extracted() -> Catalog:
    """every message of the sources, with where it is written"""
    catalog = Catalog(project="attntrace", domain="attntrace")
    for name, folder in SOURCES.items():
        for filename, lineno, message, comments, context in extract_from_dir(
                folder, method_map=[("**.py", "python")], keywords=DEFAULT_KEYWORDS, comment_tags=("TRANSLATORS:",)):
            if Path(filename).name in SKIPPED or not message or message == ("", ""):
                continue
            catalog.add(message, locations=[(f"{name}/{filename}", lineno)], auto_comments=comments, context=context,
                        flags=("python-format",) if "{" in str(message) or "%" in str(message) else ())
    return catalog


def merged(template: Catalog) -> Catalog:
    """the Chinese catalogue brought up to the template: new messages added, gone ones dropped, translations kept"""
    with open(PO, "rb") as f:
        catalog = read_po(f, locale="zh_CN", domain="attntrace")
    catalog.update(template, no_fuzzy_matching=True)
    catalog.obsolete.clear()
    return catalog


def compiled(catalog: Catalog) -> bytes:
    out = io.BytesIO()
    write_mo(out, catalog)
    return out.getvalue()


def as_python(catalog: Catalog) -> str:
    """the translated messages of the catalogue as a Python module: MESSAGES, PLURALS and the plural rule"""
    singles, plurals = {}, {}
    for message in catalog:
        if not message.id or message.fuzzy:
            continue
        if isinstance(message.id, tuple):
            if all(message.string):
                plurals[message.id] = tuple(message.string)
        elif message.string:
            singles[message.id] = message.string
    lines = ['"""attntrace.po as Python, written by scripts/catalogue.py (Babel): never edit it."""', "",
             f"NPLURALS = {catalog.num_plurals}", "", "", "def plural(n: int) -> int:",
             f"    return int({catalog.plural_expr})", "", "", "MESSAGES = {"]
    lines += [f"    {key!r}: {value!r}," for key, value in singles.items()]
    lines += ["}", "", "PLURALS = {"]
    lines += [f"    {key!r}: {value!r}," for key, value in plurals.items()]
    lines += ["}", ""]
    return "\n".join(lines)


def problems(catalog: Catalog) -> list[str]:
    """each message that is missing a translation, fuzzy, or whose placeholders differ from the English"""
    import re

    found = []
    for message in catalog:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if message.fuzzy:
            found.append(f"fuzzy: {ids[0]!r}")
        elif not all(strings):
            found.append(f"untranslated: {ids[0]!r}")
        else:
            fields = set(re.findall(r"\{[^{}]*\}", ids[-1]))
            if any(set(re.findall(r"\{[^{}]*\}", s)) != fields for s in strings):
                found.append(f"placeholders differ: {ids[0]!r}")
    return found


def main(check: bool) -> int:
    catalog = merged(extracted())
    if check:
        with open(PO, "rb") as f:
            committed = read_po(f, locale="zh_CN", domain="attntrace")
        missing = [m.id for m in catalog if m.id and m.id not in committed]
        gone = [m.id for m in committed if m.id and m.id not in catalog]
        found = [f"not in the catalogue: {m!r}" for m in missing] + [f"no longer in the code: {m!r}" for m in gone]
        found += problems(committed)
        if MO.read_bytes() != compiled(committed):
            found.append(f"{MO.relative_to(ROOT)} is not compiled from {PO.relative_to(ROOT)}")
        if MODULE.read_text(encoding="utf-8") != as_python(committed):
            found.append(f"{MODULE.relative_to(ROOT)} is not written from {PO.relative_to(ROOT)}")
        for line in found:
            print(line)
        return 1 if found else 0
    out = io.BytesIO()
    write_po(out, catalog, width=120, omit_header=False, sort_output=False, include_previous=False)
    PO.write_bytes(out.getvalue())
    MO.write_bytes(compiled(catalog))
    MODULE.write_text(as_python(catalog), encoding="utf-8")
    left = problems(catalog)
    print(f"{PO.relative_to(ROOT)}: {len(catalog)} messages, {len(left)} to translate")
    return 0


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv[1:]))
