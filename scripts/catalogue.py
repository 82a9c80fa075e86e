"""Keep the translations in step with the code: extract every message attntrace, click and typer can show a person
(Babel), merge them into attntrace/locale/zh_CN/LC_MESSAGES/attntrace.po keeping what is translated, and compile the
.mo that ships in the wheel (click and typer read it through gettext) and the same catalogue as a Python module,
attntrace/locale/zh_CN/messages.py, which attntrace's own messages read: its bytecode loads in a tenth of the time
gettext takes to parse the .mo, at every start of a Chinese run.

The Traditional Chinese catalogue, attntrace/locale/zh_TW, is written from the Simplified one, never by hand: rows and
columns put in Taiwan's words (列 a row, 欄 a column), OpenCC's s2twp (Taiwan phrases), the terms of docs/glossary.md
where OpenCC's differ, and Taiwan's quotation marks 「」. OpenCC is needed here only, never by attntrace itself.

    python scripts/catalogue.py           # extract, merge, compile; write zh_TW from zh_CN
    python scripts/catalogue.py --check   # exit 1 when a message is missing, untranslated or fuzzy, or a file is stale
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable
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
TRADITIONAL = LOCALE / "zh_TW"
TRADITIONAL_PO = TRADITIONAL / "LC_MESSAGES" / "attntrace.po"
GLOSSARY = ROOT / "docs" / "glossary.md"
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


def glossary() -> list[dict[str, tuple[str, ...]]]:
    """the rows of docs/glossary.md's table: english (one), zh and zh-TW (the forms used, the n-th of one the n-th of the
    other), and "zh forbidden" and "zh-TW forbidden" (words never used)"""
    names = ("english", "zh", "zh-TW", "zh forbidden", "zh-TW forbidden")
    rows = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != len(names) or cells[0] == "English" or set(cells[0]) <= set("-"):
            continue
        rows.append({name: tuple(form.strip() for form in cell.split("、")) if cell != "—" else ()
                     for name, cell in zip(names, cells)})
    return rows


CONTEXTUAL = ("row (of a table or matrix)", "column (of a table or matrix)")  # converted by rows_and_columns()
LISTED = "出表举并序排系数队阵罗"  # 列 in 列出, 列表, 列举, 并列, 序列... is no column
NOT_A_ROW = "运执进另换银流同可自发实平空令"  # 行 in 运行, 执行, 进行, 另行, 换行, 空行, 命令行... is no row


def rows_and_columns(simplified: str, english: str) -> str:
    """a Simplified message with Taiwan's words for rows and columns: 列 (a column) as 栏 (欄 once in Traditional),
    then 行 (a row) as 列; a 行 stays a line of text where the English speaks of lines and not of rows, and in
    "第 {line} 行" (a file's line) wherever it is"""
    text = re.sub(r"(?<![并序排系数队阵罗])列(?![出表举])", "栏", simplified)
    rows, lines = re.search(r"\brows?\b|\brow-", english), re.search(r"\blines?\b", english)
    if lines and not rows:
        return text
    return re.sub(r"(?<![运执进另换银流同可自发实平空令])(?<!第 \{line\} )(?<!第 \{number\} )(?<!第 \{first\} )"
                  r"行(?![为动业李程])", "列", text)


QUOTES = str.maketrans("“”‘’", "「」『』")  # Taiwan's quotation marks


def corrections(*converts: Callable[[str], str]) -> list[tuple[str, str]]:
    """each Traditional form of a glossary term the converters give (OpenCC's phrase for it, and its characters one by
    one, as a phrase around it may leave them), where it is not the glossary's, with the glossary's: longest first"""
    found = {}
    for row in glossary():
        if row["english"][0] in CONTEXTUAL:
            continue
        for simplified, wanted in zip(row["zh"], row["zh-TW"] * len(row["zh"]) if len(row["zh-TW"]) == 1 else row["zh-TW"]):
            for convert in converts:
                if convert(simplified) != wanted:
                    found[convert(simplified)] = wanted
    return sorted(found.items(), key=lambda pair: -len(pair[0]))


def corrected(text: str, terms: list[tuple[str, str]]) -> str:
    """text with each wrong term its right one, leaving a right one that holds the wrong one (區塊 for 塊) as it is"""
    for wrong, right in terms:
        text = right.join(part.replace(wrong, right) for part in text.split(right)) if wrong in right else \
            text.replace(wrong, right)
    return text


def traditional(simplified: Catalog) -> Catalog:
    """the Simplified catalogue in Traditional characters, as Taiwan writes them"""
    import opencc

    convert = opencc.OpenCC("s2twp").convert
    terms = corrections(convert, opencc.OpenCC("s2t").convert)
    catalog = Catalog(locale="zh_TW", domain="attntrace", project="attntrace", creation_date=simplified.creation_date,
                      revision_date=simplified.revision_date, header_comment=(
                          "# Chinese (Traditional, Taiwan) translations of attntrace, written by scripts/catalogue.py from "
                          "zh_CN with OpenCC\n# and docs/glossary.md: never edit it."))
    catalog.fuzzy = False
    for message in simplified:
        if not message.id:
            continue
        english = " ".join(message.id) if isinstance(message.id, tuple) else message.id
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        written = tuple(corrected(convert(rows_and_columns(s, english)), terms).translate(QUOTES) if s else s
                        for s in strings)
        catalog.add(message.id, written if isinstance(message.string, tuple) else written[0],
                    locations=message.locations, flags=message.flags, auto_comments=message.auto_comments,
                    context=message.context)
    return catalog


def po(catalog: Catalog) -> bytes:
    out = io.BytesIO()
    write_po(out, catalog, width=120, omit_header=False, sort_output=False, include_previous=False)
    return out.getvalue()


def stale(catalog: Catalog, po_path: Path) -> list[str]:
    """the compiled forms of a catalogue's committed .po that are not written from it"""
    found = []
    if po_path.with_suffix(".mo").read_bytes() != compiled(catalog):
        found.append(f"{po_path.with_suffix('.mo').relative_to(ROOT)} is not compiled from {po_path.relative_to(ROOT)}")
    module = po_path.parent.parent / "messages.py"
    if module.read_text(encoding="utf-8") != as_python(catalog):
        found.append(f"{module.relative_to(ROOT)} is not written from {po_path.relative_to(ROOT)}")
    return found


def write(catalog: Catalog, po_path: Path) -> None:
    """a catalogue's .po, .mo and messages.py"""
    po_path.parent.mkdir(parents=True, exist_ok=True)
    po_path.write_bytes(po(catalog))
    po_path.with_suffix(".mo").write_bytes(compiled(catalog))
    (po_path.parent.parent / "messages.py").write_text(as_python(catalog), encoding="utf-8")
    init = po_path.parent.parent / "__init__.py"
    if not init.exists():
        init.write_text("")


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
        found += problems(committed) + stale(committed, PO)
        with open(TRADITIONAL_PO, "rb") as f:
            found += stale(read_po(f, locale="zh_TW", domain="attntrace"), TRADITIONAL_PO)
        try:
            if TRADITIONAL_PO.read_bytes() != po(traditional(committed)):
                found.append(f"{TRADITIONAL_PO.relative_to(ROOT)} is not written from {PO.relative_to(ROOT)}")
        except ImportError:
            print(f"{TRADITIONAL_PO.relative_to(ROOT)} not compared with {PO.relative_to(ROOT)}: no OpenCC "
                  "(pip install opencc)", file=sys.stderr)
        for line in found:
            print(line)
        return 1 if found else 0
    write(catalog, PO)
    write(traditional(catalog), TRADITIONAL_PO)
    left = problems(catalog)
    print(f"{PO.relative_to(ROOT)}: {len(catalog)} messages, {len(left)} to translate; {TRADITIONAL_PO.relative_to(ROOT)} "
          "written from it")
    return 0


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv[1:]))
