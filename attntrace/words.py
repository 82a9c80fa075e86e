"""Counts in words: "1 row", "2 rows"; in Chinese "1 行", "2 行" (no plural).

counted() says a count in the chosen language, for a person; plural() always in English, for what a machine reads
(a gradebook's cells) and for text not yet in the catalogue.
"""

from __future__ import annotations

from attntrace.language import ngettext


def plural(count: int, noun: str) -> str:
    """a count and its noun in English: 1 row, 2 rows"""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def counted(count: int, noun: str) -> str:
    """a count and its noun in the chosen language, "2 rows" or "2 行"; a noun _forms does not know stays English"""
    forms = _forms(noun, count)
    return plural(count, noun) if forms is None else forms.format(n=f"{count:,}")


def _forms(noun: str, count: int) -> str | None:
    """the catalogue's "{n} noun" for count: each noun a message counts, written out so that the catalogue has it"""
    match noun:
        case "row":
            return ngettext("{n} row", "{n} rows", count)
        case "column":
            return ngettext("{n} column", "{n} columns", count)
        case "value":
            return ngettext("{n} value", "{n} values", count)
        case "key":
            return ngettext("{n} key", "{n} keys", count)
        case "label":
            return ngettext("{n} label", "{n} labels", count)
        case "input":
            return ngettext("{n} input", "{n} inputs", count)
        case "pair":
            return ngettext("{n} pair", "{n} pairs", count)
        case "key/value block":
            return ngettext("{n} key/value block", "{n} key/value blocks", count)
        case "head":
            return ngettext("{n} head", "{n} heads", count)
        case "cell":
            return ngettext("{n} cell", "{n} cells", count)
        case "written cell":
            return ngettext("{n} written cell", "{n} written cells", count)
        case "masked cell":
            return ngettext("{n} masked cell", "{n} masked cells", count)
        case "more cell":
            return ngettext("{n} more cell", "{n} more cells", count)
        case "sheet":
            return ngettext("{n} sheet", "{n} sheets", count)
        case "time":
            return ngettext("{n} time", "{n} times", count)
        case "student":
            return ngettext("{n} student", "{n} students", count)
        case "student folder":
            return ngettext("{n} student folder", "{n} student folders", count)
        case "missing file":
            return ngettext("{n} missing file", "{n} missing files", count)
    return None
