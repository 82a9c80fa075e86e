"""A filled-in worksheet read back: its tables are found by regenerating the worksheet's own layout from the problem.

The worksheet (markdown or plain text, as `attntrace worksheet` printed it) is never guessed at from its formulas:
the titles, row labels and columns come from `worksheet_steps`, and each asked-for table is looked up by its title.
"""

from __future__ import annotations

import difflib
import math
import re
import string
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import cache

import numpy as np

from attntrace import language
from attntrace.core import intermediates
from attntrace.core.arithmetic import round_half_up
from attntrace.core.engine import trace
from attntrace.core.problem import Problem
from attntrace.core.trace import Trace
from attntrace.errors import AttntraceError, OutOfRange
from attntrace.escape import visible
from attntrace.files.csvfile import SEPARATORS, WIDE
from attntrace.homework.report import number as number_text
from attntrace.homework.said import Said, in_every_language, joined, ngettext, said
from attntrace.homework.sheet import MAX_PRECISION, Key, Sheet, SheetError
from attntrace.homework.worksheet import instructions, printed
from attntrace.language import N_, _, speaking
from attntrace.render.layout import FEWEST_HIDDEN, MAX_SHOWN, shown
from attntrace.views.page import Block
from attntrace.views.text import width as text_width
from attntrace.views.walkthrough import worksheet_steps

SHAPE = re.compile(r"\s*\[\s*\d+\s*[x×]\s*\d+\s*\]$")  # the "[3 x 3]" after a title
COLUMNS = re.compile(r"(?:\(columns |（列 )(.+) (?:to|到) (.+)(?:\)|）)")  # a plain table split into runs of columns
# (in English or Chinese)
RULE = re.compile(r"\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?")  # markdown's |---|---:| line
NUMBER = re.compile(r"[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?")
SIGN_APART = re.compile(r"^([+-])\s+(?=[\d.,])")  # "- 0.76", typed with a space after the sign
TYPED = {**dict.fromkeys(map(ord, "\u2212\u2012\u2013\ufe63\uff0d"), "-"),  # minus signs a word processor types
         ord("\u3002"): "."}  # and the full stop a Chinese input method types for a decimal point: -0。07
MASKED = ("-inf", "-∞", "masked", "x", "—")
BLANK = ("", "?", "-", "n/a", "na")  # after TYPED, so an en dash is a blank too
CHECKED = {"weighted": "w(i, j) · v_j", "concat": N_("the heads' outputs side by side")}  # read and checked, never marked
CLOSE = 0.8  # how alike an edited heading and a worksheet title must be to be read as it
COMMAS = N_("decimal commas read as decimal points")
PERCENTS = N_("percentages read as fractions (31% as 0.31)")
UNREAD_SHOWN = 5  # cells that are not numbers named one by one; past that, a count
FIX_COUNT = N_("leave a blank cell as ____ and keep one cell per column")


@dataclass
class _Answers:
    """the matrices being filled, their true values, which table wrote each cell first and how, and what is worth a note"""

    origin: str
    cells: dict[Key, np.ndarray]
    truth: dict[Key, np.ndarray]
    precision: int
    first: dict[tuple[Key, int, int], tuple[str, str]] = field(default_factory=dict)
    notes: list[Said] = field(default_factory=list)
    commas: bool = False
    percents: bool = False
    unread: list[Said] = field(default_factory=list)  # cells that are not numbers, said where and what


@dataclass(frozen=True)
class _Table:
    """one asked-for block of the layout, with the name it goes by in messages"""

    block: Block
    title: str  # "Step 3 · Q = X · W_Q", as printed without its shape

    def at(self, origin: str, row: str | None = None, col: str | None = None) -> str:
        """where in the sheet, for an error: the file, the table, and its row or cell"""
        return f"{origin}: {said(self.place(row, col))}"

    def place(self, row: str | None = None, col: str | None = None) -> Said:
        """the table, or one of its rows or cells, for a note"""
        if row is None:
            return Said('"{title}"', title=self.title)
        if col is None:
            return Said(N_('"{title}", row {row}'), title=self.title, row=row)
        return Said(N_('"{title}", row {row}, column {column}'), title=self.title, row=row, column=col)


def parse(text: str, origin: str, problem: Problem | None) -> Sheet:
    """the answers in a worksheet; blank cells are NaN, cells written as masked -inf"""
    if problem is None:
        raise SheetError(_("{sheet}: a worksheet is read against its problem; give the problem file too: attntrace check "
                           "{sheet} PROBLEM.json").format(sheet=origin))
    lines = text.lstrip("\ufeff").splitlines()
    flat, starts = _flattened(lines)
    told = _instructions(flat)
    query, precision = _settings(told, origin)
    try:
        t = trace(problem, query=query, carry_rounding=precision)
    except AttntraceError as e:
        reason = e.as_option("--input") if isinstance(e, OutOfRange) else str(e)
        raise SheetError(_("{sheet}: this worksheet does not fit the problem: {reason}").format(sheet=origin,
                                                                                               reason=reason)) from None
    _same_instructions(t, precision, told[0], origin)
    blocks = [_Table(_printed(item), _norm(step.prefix + item.title)) for step in worksheet_steps(t) for item in step.items
              if isinstance(item, Block)]
    numbered = [step.number for step in worksheet_steps(t) for item in step.items if isinstance(item, Block)]
    tables = [table for table in blocks if table.block.answer is not None
              and (table.block.answer[1] in intermediates.KEYS or table.block.answer[1] in CHECKED)]
    marked = [table for table in tables if _marked(table)]
    truth = {key: _values(t, key) for key in _keys(marked)}
    answers = _Answers(origin, {key: np.full(values.shape, np.nan) for key, values in truth.items()}, truth, precision)
    aliases = _aliases(t, [table.title for table in blocks])
    found = _titles(lines, aliases)
    markdown = any(line.lstrip().startswith("#") and heading(line) for line in lines)
    answers.notes.extend(_retitle(lines, found, [table.title for table in blocks], {table.title for table in tables},
                                  markdown, aliases))
    read = 0
    checked = []
    wide: set[str] = set()
    for table in tables:
        places = found.get(table.title)
        if not places:
            continue  # a table left out is not answered
        read += 1
        _fits(table, origin)
        rows = _rows(lines, places.pop(0), markdown, table, origin)
        wide.update(ch for row in rows for cell in row for ch in cell if ch in TYPED_WIDE)
        if _marked(table):
            _keep(answers, table, rows)
        else:
            checked.append((table, rows))
    for table, rows in checked:  # once every marked table is read: checked against the student's own numbers too
        _check(answers, table, rows)
    for title in dict.fromkeys(table.title for table in tables):  # a title left over: a table retitled as another
        if found.get(title):
            answers.notes.append(Said(N_('the title "{title}" appears {times}; the first table under it is read, the '
                                         "others are not"), title=title,
                                      times=ngettext("{n} time", "{n} times", len(found[title]) + 1)))
    given = [table for table, number in zip(blocks, numbered) if table.block.answer is None and number in (1, 2)]
    answers.notes.extend(_same_problem(given, lines, found, markdown, precision, origin))
    if not read:
        raise SheetError(_('{sheet}: none of the worksheet\'s tables was found (such as "{title}"); is this the '
                           "worksheet of this problem, printed with the same --heads, --scale and --mask options?").format(
            sheet=origin, title=tables[0].title))
    notes = ([Said(COMMAS)] if answers.commas else []) + ([Said(PERCENTS)] if answers.percents else [])
    notes = _wide_note(wide) + notes + _unread_notes(answers)
    notes += answers.notes
    named = lines[:bisect_right(starts, min(said.start for said in told)) - 1]  # the lines before the instructions
    return Sheet(origin, answers.cells, query=query, precision=precision, student=_student(named), notes=tuple(notes))


TYPED_WIDE = {**{c: WIDE[c][1] for c in WIDE if c not in "−－。"}, "、": SEPARATORS["、"], "，": SEPARATORS["，"]}
SEPARATED = re.compile(r"(?<=[、，])")  # numbers typed one after another with a Chinese comma between them


def _wide_note(seen: set[str]) -> list[Said]:
    """one note naming the full-width forms a Chinese input method typed in the cells, read as their ASCII ones
    (a minus sign and 。 for a decimal point are read without a note, as any minus sign is)"""
    forms = list(dict.fromkeys(Said(TYPED_WIDE[c]) for c in TYPED_WIDE if c in seen))
    if not forms:
        return []
    return [Said(N_("read as typed by a Chinese input method: {forms}"), forms=joined(forms, N_("{first}, {second}")))]


def _aliases(t: Trace, titles: list[str]) -> dict[str, str]:
    """each table's title as a worksheet printed in another language prints it, to the title in this one: a
    worksheet is read whatever the language it was printed in"""
    out = {}
    for _language, aliases in in_every_language(lambda: [_norm(step.prefix + item.title) for step in worksheet_steps(t)
                                                          for item in step.items if isinstance(item, Block)])[1:]:
        out.update({alias: title for alias, title in zip(aliases, titles) if alias != title})
    return out


def _student(lines: list[str]) -> str | None:
    """the name written on the worksheet's name line ("Name:", "姓名：" in any language), given the lines before its
    instructions; None when left blank"""
    name = _reading(language.current())[2]
    for line in lines:
        found = name.fullmatch(unicodedata.normalize("NFKC", line))  # "Name：李明" with a full-width colon too
        if found:
            text = " ".join(found[1].replace("\\", "").strip("_* \t").split())
            return text or None
    return None


def _same_problem(given: list[_Table], lines: list[str], found: dict[str, list[int]], markdown: bool, precision: int,
                  origin: str) -> list[Said]:
    """the problem's own tables (X and the weights, steps 1 and 2) as the worksheet prints them, against the problem:
    a worksheet of another problem (over half the cells of one of these tables differ) is refused, a number or two
    copied wrong is noted"""
    differ: list[tuple[str, str, str, str, float]] = []
    other = False
    for table in given:
        places = found.get(table.title)
        if not places or _shown_cut(table):
            continue
        try:
            rows = _rows(lines, places[0], markdown, table, origin)
        except SheetError:  # a problem table mangled or cut out: it says nothing either way
            continue
        b, cells, before = table.block, 0, len(differ)
        for k, texts in enumerate(rows):
            for c, text in enumerate(texts):
                written = _number(text)
                if written is None:
                    continue
                cells += 1
                if abs(written - b.values[k, c]) > 0.5 * 10.0**-precision + 1e-9 * (1 + abs(b.values[k, c])):
                    differ.append((table.title, b.rows[k], b.cols[c], _norm(text), b.values[k, c]))
        other = other or 2 * (len(differ) - before) > cells
    if not differ:
        return []
    title, row, col, text, value = differ[0]
    where = Said(N_('"{title}", row {row}, column {column} reads {written} where the problem has {value}'), title=title,
                 row=row, column=col, written=text, value=number_text(value, precision))
    if other:
        raise SheetError(_("{sheet}: this worksheet is not of this problem: {where} (and {more}); check it against the "
                           "problem it was printed from").format(
            sheet=origin, where=said(where), more=said(ngettext("{n} more cell", "{n} more cells", len(differ) - 1))))
    if len(differ) > 1:
        where = Said(N_("{where} (and {n} more)"), where=where, n=len(differ) - 1)
    return [Said(N_("{where}; it is marked against the problem"), where=where)]


def _shown_cut(table: _Table) -> bool:
    """a table too big to print whole"""
    return bool(shown(len(table.block.rows))[1] or shown(len(table.block.cols))[1])


def cell_value(text: str) -> float | None:
    """a cell of a filled table read as the eight steps read one: NaN when blank, -inf when masked, else the number
    (full-width digits and points, any minus sign, a decimal comma); None when it is no number"""
    cell = _cell(text)
    if cell.strip("_").lower() in BLANK:
        return float("nan")
    if cell.lower() in MASKED:
        return float("-inf")
    if not NUMBER.fullmatch(cell):
        return None
    value = float(cell.replace(",", "."))
    return value if math.isfinite(value) else None


def written_decimals(text: str) -> int:
    """the decimals a cell was written with, trailing zeros counted"""
    return _written_precision(text)


def flattened(lines: list[str]) -> str:
    """a worksheet's lines as one line, spaces collapsed: what its instructions are found in"""
    return _flattened(lines)[0]


def told_precision(lines: list[str]) -> int | None:
    """the decimals a worksheet's instructions ask for, in any language it is printed in; None without them"""
    told = _instructions(flattened(lines))
    return told[0].precision if told else None


def spaceless(text: str) -> str:
    return _spaceless(text)


def student(lines: list[str]) -> str | None:
    """the name written on a worksheet's name line"""
    return _student(lines)


def _number(text: str) -> float | None:
    """a printed number read back, or None when the cell holds none"""
    cell = _cell(text)
    return float(cell.replace(",", ".")) if NUMBER.fullmatch(cell) else None


def _unread_notes(answers: _Answers) -> list[Said]:
    """a note for each cell that is not a number (the first few, then how many more): each is marked as not answered"""
    shown = [Said(N_("{what}; it is marked as not answered"), what=what) for what in answers.unread[:UNREAD_SHOWN]]
    more = len(answers.unread) - UNREAD_SHOWN
    return shown + ([ngettext("{n} more cell that is not a number, marked as not answered",
                              "{n} more cells that are not a number, marked as not answered", more)] if more > 0 else [])


def _printed(b: Block) -> Block:
    """a block with its labels as a worksheet prints them: control and bidi characters written as escapes"""
    return replace(b, rows=tuple(map(visible, b.rows)), cols=tuple(map(visible, b.cols)))


@dataclass(frozen=True)
class _Sentences:
    """a worksheet's instruction sentences in one language, as patterns"""

    language: str
    asks: tuple[re.Pattern[str], ...]
    mask: re.Pattern[str]
    heads: tuple[re.Pattern[str], ...]


@dataclass(frozen=True)
class _Told:
    """what a worksheet's instructions say, read in the language of the words that matched"""

    language: str
    start: int  # where the paragraph starts in the flat text
    query: int | None
    precision: int
    scale: str  # as written
    settings: tuple[str | None, str | None]  # the mask's and the heads' sentences, as written; None when not said


NUMBERED = ("precision", "input", "heads", "d_k", "d_v")  # the fields of the instructions that are numbers


@cache
def _reading(chosen: str) -> tuple[list[_Sentences], tuple[str, ...], re.Pattern[str]]:
    """a worksheet's words in every language, the chosen one first, from the catalogue it is printed by: its
    instruction sentences, what its heading starts with ("Worksheet:", "练习单:", NFKC and without spaces), and its
    name line ("**Name:** Li Wei", "姓名：李明")"""
    sentences, headings, names = [], [], []
    for code, words in in_every_language(printed):
        sentences.append(_Sentences(code, tuple(re.compile(_pattern(form)) for form in words.asks),
                                    re.compile(r"\s*" + _pattern(words.mask)),
                                    tuple(re.compile(r"\s*" + _pattern(form)) for form in words.heads)))
        headings += [_spaceless(form.split("{", 1)[0]) for form in words.headings]
        names.append(re.escape(_spaceless(words.name.split("{", 1)[0]).rstrip(":")))
    name = re.compile(r"\s*\**\s*(?:" + "|".join(dict.fromkeys(names)) + r")\s*:\s*\**\s*(.*?)\s*", re.IGNORECASE)
    return sentences, tuple(dict.fromkeys(headings)), name


def _spaceless(text: str) -> str:
    """text as a heading's or name line's words are compared: NFKC (a full-width colon is a colon), no spaces"""
    return "".join(unicodedata.normalize("NFKC", text).split())


def heading(line: str) -> bool:
    """whether a line is a worksheet's heading ("# Worksheet: ...", "练习单：...") in any language"""
    words = _spaceless(line.lstrip().lstrip("#"))
    return words.startswith(_reading(language.current())[1])


def _pattern(form: str) -> str:
    """a sentence to fill in as a regular expression: its words with any whitespace between any two characters (plain
    text wraps a long line, even inside Chinese), each number field a group of digits, each other field the shortest
    text up to the words after it (an ASCII full stop only where a space or the end follows, as in "by 2.5.")"""
    out, loose = [], False
    for literal, name, _spec, _conversion in string.Formatter().parse(form):
        for ch in literal:
            if not ch.isspace():
                out.append(r"\.(?=\s|$)" if ch == "." and loose else re.escape(ch))
                loose = False
        if name is not None:
            out.append(rf"(?P<{name}>\d+)" if name in NUMBERED else rf"(?P<{name}>.+?)")
            loose = name not in NUMBERED
    return r"\s*".join(out)


def _flattened(lines: list[str]) -> tuple[str, list[int]]:
    """the text with every run of whitespace one space, as its sentences are searched, and where each line starts in it"""
    words, starts, at = [], [], 0
    for line in lines:
        starts.append(at)
        flat = " ".join(line.split())
        if flat:
            words.append(flat)
            at += len(flat) + 1
    return " ".join(words), starts


def _instructions(flat: str) -> list[_Told]:
    """the instructions in each language they are written in, the chosen one first: a worksheet printed in any
    language, or in Chinese with the English sentence after it (as worksheets once were), is read the same"""
    out: list[_Told] = []
    for sentences in _reading(language.current())[0]:
        found = next((m for m in (pattern.search(flat) for pattern in sentences.asks) if m is not None), None)
        if found is None or any(told.start == found.start() for told in out):  # one paragraph read in two languages
            continue
        mask = sentences.mask.match(flat, found.end())
        at = mask.end() if mask else found.end()
        heads = next((m for m in (pattern.match(flat, at) for pattern in sentences.heads) if m is not None), None)
        fields = found.groupdict()
        out.append(_Told(sentences.language, found.start(), int(fields["input"]) if fields.get("input") else None,
                         int(fields["precision"]), fields["scale"],
                         (mask[0].strip() if mask else None, heads[0].strip() if heads else None)))
    return out


def _settings(told: list[_Told], origin: str) -> tuple[int | None, int]:
    """the input asked for and the rounding, from the worksheet's instructions"""
    if not told:
        raise SheetError(_('{sheet}: this does not look like an attntrace worksheet (no "Compute self-attention for ... '
                           'Round every intermediate to N decimals" paragraph); fill in what attntrace worksheet '
                           "printed").format(sheet=origin))
    precision = told[0].precision
    if precision > MAX_PRECISION:
        raise SheetError(_("{sheet}: the worksheet rounds to {precision} decimals; at most {most} can be checked").format(
            sheet=origin, precision=precision, most=MAX_PRECISION))
    return told[0].query, precision


def _same_instructions(t: Trace, precision: int, theirs: _Told, origin: str) -> None:
    """a worksheet printed with another --scale, --mask or --heads than the problem's would be marked against other
    numbers; compared in the language the worksheet is written in"""
    with speaking(theirs.language):
        ours = next(told for told in _instructions(" ".join(instructions(t, precision).split()))
                    if told.language == theirs.language)
    if _spaceless(theirs.scale) != _spaceless(ours.scale):
        raise SheetError(_('{sheet}: the worksheet says "{theirs}" but the problem it is checked against says "{ours}"; '
                           "give the worksheet's problem file, with the --scale or --scale-by it was printed with").format(
            sheet=origin, theirs=theirs.scale, ours=ours.scale))
    for found, meant, none in zip(theirs.settings, ours.settings, (N_("names no mask"), N_("names no heads"))):
        if _spaceless(found or "") != _spaceless(meant or ""):
            what = _('says "{sentence}"').format(sentence=found) if found else _(none)
            wanted = _('"{sentence}"').format(sentence=meant) if meant else _("none")
            raise SheetError(_("{sheet}: the worksheet {what} but the problem it is checked against has {wanted}; give "
                               "the worksheet's problem file, with the --mask or --heads it was printed with").format(
                sheet=origin, what=what, wanted=wanted))


def _keys(tables: list[_Table]) -> list[Key]:
    """the intermediates the tables ask for, in order"""
    keys: list[Key] = []
    for table in tables:
        assert table.block.answer is not None
        head, key, _ = table.block.answer
        if (head, key) not in keys:
            keys.append((head, key))
    return keys


def _marked(table: _Table) -> bool:
    """the report's items are fixed: step 6 and a concatenation before W_O are checked, not marked"""
    assert table.block.answer is not None
    return table.block.answer[1] not in CHECKED


def _values(t: Trace, key: Key) -> np.ndarray:
    """an intermediate's carried values: a sheet holds it at full size, and a cell written twice is judged by it"""
    head, step = key
    return t.output if head is None else getattr(t.heads[head - 1], step)


def _norm(text: str) -> str:
    """text compared as a reader sees it: NFC, runs of spaces collapsed"""
    return " ".join(unicodedata.normalize("NFC", text).split())


def _title(line: str) -> str:
    """a line as a table title: markdown's ** and escapes and the [r x c] shape taken off"""
    text = line.strip()
    if text.startswith("**"):
        text = _entities(text.replace("**", "").replace("\\|", "|").replace("\\\\", "\\"))
    return _norm(SHAPE.sub("", _norm(text)))


def _titles(lines: list[str], aliases: dict[str, str]) -> dict[str, list[int]]:
    """each line's index under its title form (in this language, when printed in another), in order: a title printed
    twice is read in order"""
    out: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        if line.strip():
            title = _title(line)
            out.setdefault(aliases.get(title, title), []).append(i)
    return out


def _heading(line: str, markdown: bool) -> bool:
    """a line that looks like a table's title: bold in markdown, ending in its [r x c] shape in plain text"""
    text = _norm(line)
    return SHAPE.search(text) is not None or (markdown and text.startswith("**"))  # a plain row may be labelled **


def _retitle(lines: list[str], found: dict[str, list[int]], titles: list[str], read: set[str], markdown: bool,
             aliases: dict[str, str]) -> list[Said]:
    """a heading edited by hand is read as the closest title not found as printed (in any language), so its table is
    not lost silently"""
    missing = [title for title in dict.fromkeys(titles) if title not in found]
    notes: list[Said] = []
    for i, line in enumerate(lines):
        heading = _title(line)
        if not _heading(line, markdown) or aliases.get(heading, heading) in titles:
            continue
        forms = {**{alias: title for alias, title in aliases.items() if title in missing}, **dict(zip(missing, missing))}
        close = _closest(heading, list(forms))
        if close is not None:
            match = forms[close]
            missing.remove(match)
            found[match] = [i]
            notes.extend([Said(N_('read the table titled "{heading}" as "{title}"'), heading=heading, title=close)]
                         if match in read else [])
        elif _has_numbers(lines, i):
            notes.append(Said(N_('the table titled "{heading}" is none of the worksheet\'s tables; its numbers were not '
                                 "read"), heading=heading))
    return notes


def _closest(heading: str, titles: list[str]) -> str | None:
    """the one title most like the heading; None when none is close, or two are equally close (never a guess)"""
    close = difflib.get_close_matches(heading, titles, n=2, cutoff=CLOSE)
    if len(close) == 2 and _likeness(close[0], heading) == _likeness(close[1], heading):
        return None
    return close[0] if close else None


def _likeness(title: str, heading: str) -> float:
    """the score get_close_matches ranks by"""
    return difflib.SequenceMatcher(None, title, heading).ratio()


def _has_numbers(lines: list[str], at: int) -> bool:
    """whether the rows under a heading have a number written in a cell, as opposed to a blank table"""
    i, body = _skip_blank(lines, at + 1), []
    while i < len(lines) and lines[i].strip():
        body.append(lines[i].strip())
        i += 1
    rows = [line for line in body if not RULE.fullmatch(line) and not COLUMNS.fullmatch(_norm(line))][1:]  # not the header
    cells = [cell for row in rows for cell in (_pipe_cells(row) if "|" in row else row.split())[1:]]
    return any(NUMBER.fullmatch(unicodedata.normalize("NFKC", cell).translate(TYPED)) for cell in cells)


def _fits(table: _Table, origin: str) -> None:
    """the renderers hide the middle of a big matrix, and a hidden cell cannot be filled in"""
    b = table.block
    if _shown_cut(table):
        raise SheetError(_("{table} has {rows} x {columns} cells, more than a worksheet shows ({most} a side); answer "
                           "such a problem with a JSON sheet (worksheet --format json)").format(
            table=table.at(origin), rows=len(b.rows), columns=len(b.cols), most=MAX_SHOWN + FEWEST_HIDDEN - 1))


def _rows(lines: list[str], at: int, markdown: bool, table: _Table, origin: str) -> list[list[str]]:
    """the cell texts under the title on line at, row by row across every column"""
    i = _skip_blank(lines, at + 1)
    if markdown or lines[at].lstrip().startswith("**"):
        return _markdown_rows(lines, i, table, origin)
    return _plain_rows(lines, i, table, origin)


def _skip_blank(lines: list[str], i: int) -> int:
    """blank lines between a title and its table may be added or dropped"""
    while i < len(lines) and not lines[i].strip():
        i += 1
    return i


def _markdown_rows(lines: list[str], i: int, table: _Table, origin: str) -> list[list[str]]:
    """a pipe table: the header, the |---| rule, then one line per row, up to a blank line"""
    found = []
    while i < len(lines) and "|" in lines[i]:
        found.append(lines[i])
        i += 1
    labels = table.block.rows
    if not found:
        raise SheetError(_("{table}: no table under the title; keep the pipe table attntrace printed").format(
            table=table.at(origin)))
    if len(found) > 1 and RULE.fullmatch(found[1].strip()):
        body = found[2:]
    else:  # no rule: the header too may be gone
        body = found if _norm(_pipe_cells(found[0])[0]) == _norm(labels[0]) else found[1:]
    out = []
    for k, label in enumerate(labels):
        if k >= len(body):
            raise SheetError(_("{row} is missing; the table has {found} of its {rows} rows").format(
                row=table.at(origin, label), found=len(body), rows=len(labels)))
        cells = _pipe_cells(body[k])
        _label(cells[0], label, table, origin)
        out.append(_counted(cells[1:], len(table.block.cols), table, label, origin))
    if len(body) > len(labels):
        raise SheetError(_("{table}: a row too many ({row}); the table has {rows} rows: {labels}").format(
            table=table.at(origin), row=_norm(body[len(labels)])[:40], rows=len(labels), labels=", ".join(labels)))
    return out


def _pipe_cells(line: str) -> list[str]:
    """a markdown row split at its unescaped pipes, \\| and \\\\ read back as | and \\"""
    text = line.strip()
    cells, cell, escaped = [], "", False
    for ch in text:
        if escaped:
            cell, escaped = cell + ch, False
        elif ch == "\\":
            escaped = True
        elif ch == "|":
            cells.append(cell)
            cell = ""
        else:
            cell += ch
    cells.append(cell)
    if text.startswith("|"):
        cells.pop(0)
    if len(cells) > 1 and cells[-1] == "" and text.endswith("|"):
        cells.pop()
    return [_entities(c.strip()) for c in cells]


def _entities(text: str) -> str:
    """markdown's &lt;, &gt; and &amp; read back as <, > and &"""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _plain_rows(lines: list[str], i: int, table: _Table, origin: str) -> list[list[str]]:
    """plain text: runs of columns, each an optional "(columns a to b)" line, the column labels, one line per row"""
    b = table.block
    out: list[list[str]] = [[] for _ in b.rows]
    start = 0
    while start < len(b.cols):
        i = _skip_blank(lines, i)
        run = COLUMNS.fullmatch(_norm(lines[i])) if i < len(lines) else None
        if run is None and start:
            raise SheetError(_('{table}: expected "(columns {column} to ...)" before the rest of its columns; keep the '
                               "lines attntrace printed").format(table=table.at(origin), column=b.cols[start]))
        if run is not None:
            i = _skip_blank(lines, i + 1)
        if i + 1 >= len(lines):
            raise SheetError(_("{table}: the table ends after its title; keep the column labels and the rows").format(
                table=table.at(origin)))
        stop = len(b.cols) if run is None else _run_stop(b, start, run, _cells_after(lines[i + 1], b.rows[0]), table, origin)
        header = lines[i]
        i += 1  # the column labels
        for k, label in enumerate(b.rows):
            if i >= len(lines) or _cells_after(lines[i], label) is None:
                got = _norm(lines[i])[:40] if i < len(lines) else _("the end of the file")
                raise SheetError(_('{row} is missing (found "{found}"); keep the line of column labels and every row, '
                                   "in order, with its label").format(row=table.at(origin, label), found=got))
            cells = _apart(_cells_after(lines[i], label) or [], stop - start)
            if len(cells) < stop - start:  # a blank erased: each number is in the column whose label it ends under
                cells = _aligned(header, lines[i], label, b.cols[start:stop]) or cells
            out[k].extend(_counted(cells, stop - start, table, label, origin))
            i += 1
        start = stop
    return out


def _aligned(header: str, line: str, label: str, cols: tuple[str, ...]) -> list[str] | None:
    """a plain row's cells by where they stand: each number in the column whose label (right-aligned above it, as the
    worksheet prints it) ends nearest to where the number ends, a column with none blank; None when that is unclear"""
    ends, at = [], 0
    for col in cols:
        found = header.find(col, at)
        if found < 0:
            return None
        at = found + len(col)
        ends.append(text_width(header[:at]))
    tokens = [(m[0], text_width(line[:m.end()])) for m in re.finditer(r"\S+", line)][len(label.split()):]
    cells = [""] * len(cols)
    for text, end in tokens:
        nearest = min(range(len(ends)), key=lambda c: abs(ends[c] - end))
        if cells[nearest]:
            return None
        cells[nearest] = text
    return cells


def _cells_after(line: str, label: str) -> list[str] | None:
    """the whitespace-separated cells of a plain row, or None when the line is not that row"""
    text, name = _norm(line), _norm(label)
    if not name:
        return text.split()
    if text != name and not text.startswith(name + " "):
        return None
    return text[len(name):].split()


def _run_stop(b: Block, start: int, run: re.Match[str], first: list[str] | None, table: _Table, origin: str) -> int:
    """where a run of columns ends: at its last label, or, when labels repeat, where the first row's cells end"""
    if _norm(run[1]) != _norm(b.cols[start]):
        raise SheetError(_('{table}: "(columns {first} to {last})" should start at column {column}; keep the column '
                           "runs in the order attntrace printed them").format(table=table.at(origin), first=run[1],
                                                                                last=run[2], column=b.cols[start]))
    stops = [stop for stop in range(start + 1, len(b.cols) + 1) if _norm(b.cols[stop - 1]) == _norm(run[2])]
    if not stops:
        raise SheetError(_('{table}: "(columns {first} to {last})" names no column of this table').format(
            table=table.at(origin), first=run[1], last=run[2]))
    counted = start + len(first) if first is not None else None
    return counted if counted in stops else stops[0]


def _label(found: str, label: str, table: _Table, origin: str) -> None:
    """rows are matched in order, so a label may repeat; one that differs means a row was moved or lost"""
    if _norm(found) != _norm(label):
        raise SheetError(_('{row}: found a row labelled "{found}"; keep every row, in order, with its label').format(
            row=table.at(origin, label), found=found[:30]))


def _counted(cells: list[str], width: int, table: _Table, label: str, origin: str) -> list[str]:
    """a cell deleted or split in two would shift every later cell into the wrong column; a sign typed apart from its
    number ("- 0.76" in a plain table) is one cell when that makes the count right"""
    cells = _apart(cells, width)
    if len(cells) > width:
        signed = _signs_joined(cells)
        cells = signed if len(signed) == width else cells
    if len(cells) != width:
        raise SheetError(_("{row} has {cells}, the table has {columns}; {fix}").format(
            row=table.at(origin, label), cells=said(ngettext("{n} cell", "{n} cells", len(cells))),
            columns=said(ngettext("{n} column", "{n} columns", width)), fix=_(FIX_COUNT)))
    return cells


def _apart(cells: list[str], width: int) -> list[str]:
    """cells typed with a Chinese comma (、 or ，) between them and no space, split there when that makes the count
    right; each keeps its comma, which _cell reads past and the note names"""
    if len(cells) >= width:
        return cells
    apart = [piece for cell in cells for piece in SEPARATED.split(cell) if piece.strip()]
    return apart if len(apart) == width else cells


def _signs_joined(cells: list[str]) -> list[str]:
    """a lone + or - (any minus sign) and the number after it as one cell"""
    out: list[str] = []
    for cell in cells:
        if out and _cell(out[-1]) in ("+", "-") and NUMBER.fullmatch(_cell(cell).rstrip("%")):
            out[-1] = f"{out[-1]} {cell}"
        else:
            out.append(cell)
    return out


def _keep(answers: _Answers, table: _Table, rows: list[list[str]]) -> None:
    """the cells of one table into the sheet; a cell written twice goes to _twice"""
    assert table.block.answer is not None
    head, step, row = table.block.answer
    matrix = answers.cells[(head, step)]
    for k, texts in enumerate(rows):
        r = k if row is None else row
        for c, text in enumerate(texts):
            label, col = table.block.rows[k], table.block.cols[c]
            value = _value(text, answers, table, label, col)
            where = ((head, step), r, c)
            if np.isnan(value):
                continue
            if step == "weights" and value == -np.inf and answers.truth[(head, step)][r, c] == 0:
                value = 0.0  # "masked" written for the weight of a masked key: its weight, 0
            if where not in answers.first:
                answers.first[where] = (table.title, _norm(text))
                matrix[r, c] = value
            elif matrix[r, c] != value:
                _twice(answers, where, value, _norm(text), table.place(label, col))


def _twice(answers: _Answers, where: tuple[Key, int, int], value: float, text: str, place: Said) -> None:
    """a cell written twice, differently: the one farther from the true value is kept, so a contradiction is never rewarded"""
    key, r, c = where
    truth, matrix = answers.truth[key][r, c], answers.cells[key]
    if _off(value, truth) > _off(matrix[r, c], truth):
        matrix[r, c] = value
    title, before = answers.first[where]
    answers.notes.append(Said(N_('"{title}" and {place}: written twice, differently: {before} and {after}; the one off is '
                                 "marked"), title=title, place=place, before=before, after=text))


def _off(value: float, truth: float) -> float:
    """how far a written value is from the true one; a masked cell's truth is -inf, so any number is infinitely off"""
    return 0.0 if value == truth else abs(value - truth)


def _check(answers: _Answers, table: _Table, rows: list[list[str]]) -> None:
    """a table that is not marked is still compared, and one note says when it is off: a cell is fine when it is the
    carried value at the worksheet's precision, or what the student's own numbers give (their weights times their V,
    their heads' outputs side by side) rounded to the decimals the cell was written with"""
    b = table.block
    assert b.answer is not None
    written = np.array([[_value(text, answers, table, b.rows[k], b.cols[c]) for c, text in enumerate(texts)]
                        for k, texts in enumerate(rows)], dtype=float)
    precision = np.array([[_written_precision(text) for text in texts] for texts in rows], dtype=float).reshape(written.shape)
    given = ~np.isnan(written)  # b.values: the carried trace's, t.weighted(head - 1, row) or t.concat
    same = np.isclose(round_half_up(written, answers.precision), round_half_up(b.values, answers.precision),
                      rtol=0, atol=1e-9)
    own = _own(answers, b)
    if own is not None:
        with np.errstate(invalid="ignore"):
            same |= np.abs(written - own) <= 0.5 * 10.0 ** -precision + 1e-9 * (1.0 + np.abs(np.nan_to_num(own)))
    wrong = int((given & ~same).sum())
    if wrong:
        answers.notes.append(ngettext('the table "{title}" has {n} cell that differs from {what}; it is not marked, '
                                      "but check it",
                                      'the table "{title}" has {n} cells that differ from {what}; it is not marked, '
                                      "but check it", wrong, n=wrong, title=table.title,
                                      what=Said(CHECKED[b.answer[1]])))


def _own(answers: _Answers, b: Block) -> np.ndarray | None:
    """what the student's own numbers give for a checked table: their w(i, j) times their v_j (step 6), or their heads'
    outputs side by side (the concatenation); NaN where they left a cell it needs blank; None when the sheet has none"""
    assert b.answer is not None
    head, key, row = b.answer
    if key == "weighted":
        w, v = answers.cells.get((head, "weights")), answers.cells.get((head, "v"))
        if w is None or v is None or row is None:
            return None
        with np.errstate(invalid="ignore"):
            return np.where(w[row][:, None] == 0, 0.0, w[row][:, None] * v)  # a zero weight (masked) gives 0
    heads = sorted(h for h, k in answers.cells if k == "output" and h is not None)
    outputs = [answers.cells[(h, "output")] for h in heads]
    if not outputs or row is None or sum(o.shape[1] for o in outputs) != b.values.shape[1]:
        return None
    return np.concatenate([o[row:row + 1] for o in outputs], axis=1)


def _written_precision(text: str) -> int:
    """the decimals a cell was written with, trailing zeros counted ("0.10": 2; "1.5e-3": 4)"""
    cell = _cell(text).replace(",", ".").lower()
    percent = 2 if cell.endswith("%") else 0  # "31%" is 0.31: two decimals more than written
    mantissa, _, exponent = cell.rstrip("%").rstrip().partition("e")
    shown = len(mantissa.partition(".")[2]) + percent
    return max(0, shown - int(exponent)) if exponent.lstrip("+-").isdigit() else shown


def _value(text: str, answers: _Answers, table: _Table, label: str, col: str) -> float:
    """a cell: a number, blank (NaN) or masked (-inf); NFKC reads full-width digits as typed by a CJK input method.
    "- 0.76" is -0.76 and "31%" is 0.31 (with a note); a cell that is no number at all is not answered, with a note"""
    cell = _cell(text)
    if cell.strip("_").lower() in BLANK:
        return float("nan")
    if cell.lower() in MASKED:
        return float("-inf")
    percent = cell.endswith("%")
    number = cell[:-1].rstrip() if percent else cell
    where = table.place(label, col)
    if not NUMBER.fullmatch(number):
        return _unread(answers, Said(N_('{where}: "{text}" is not a number'), where=where, text=text[:30]))
    value = _percent(number.replace(",", ".")) if percent else float(number.replace(",", "."))
    if not math.isfinite(value):
        return _unread(answers, Said(N_('{where}: "{text}" is too large for a number'), where=where, text=text[:30]))
    answers.commas = answers.commas or "," in number
    answers.percents = answers.percents or percent
    return value


def _percent(number: str) -> float:
    """a percentage as the fraction's float ("33.33" gives exactly float("0.3333")); inf when past a float64"""
    try:
        return float(Decimal(number).scaleb(-2))
    except ArithmeticError:  # an exponent past what decimal reckons with
        return math.inf


def _cell(text: str) -> str:
    """a cell as read: NFKC, any minus sign as "-", and no space between a sign and its number"""
    cell = _norm(unicodedata.normalize("NFKC", text.rstrip("、，"))).translate(TYPED)
    return SIGN_APART.sub(r"\1", cell)


def _unread(answers: _Answers, what: Said) -> float:
    """a cell that cannot be read: not answered (NaN), and said in a note, so the rest of the sheet is still marked"""
    answers.unread.append(what)
    return float("nan")
