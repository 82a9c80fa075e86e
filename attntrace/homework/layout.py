"""A filled eight-step worksheet's tables found by their titles (in any language, or edited by hand) and read row by
row as the worksheet laid them out: a markdown pipe table, or plain text in runs of columns."""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass, replace

from attntrace.core.trace import Trace
from attntrace.escape import visible
from attntrace.homework.cells import NUMBER, SEPARATED, TYPED, cell_text, norm
from attntrace.homework.said import Said, in_every_language, ngettext, said
from attntrace.homework.sheet import SheetError
from attntrace.language import N_, _
from attntrace.render.layout import FEWEST_HIDDEN, MAX_SHOWN, shown
from attntrace.views.page import Block
from attntrace.views.text import width as text_width
from attntrace.views.walkthrough import worksheet_steps

SHAPE = re.compile(r"\s*\[\s*\d+\s*[x×]\s*\d+\s*\]$")  # the "[3 x 3]" after a title
COLUMNS = re.compile(r"(?:\(columns |（列 )(.+) (?:to|到) (.+)(?:\)|）)")  # a plain table split into runs of columns
# (in English or Chinese)
RULE = re.compile(r"\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?")  # markdown's |---|---:| line
CLOSE = 0.8  # how alike an edited heading and a worksheet title must be to be read as it
FIX_COUNT = N_("leave a blank cell as ____ and keep one cell per column")


@dataclass(frozen=True)
class Table:
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


def other_titles(t: Trace, titles: list[str]) -> dict[str, str]:
    """each table's title as a worksheet printed in another language prints it, to the title in this one: a
    worksheet is read whatever the language it was printed in"""
    out = {}
    for _language, aliases in in_every_language(lambda: [norm(step.prefix + item.title) for step in worksheet_steps(t)
                                                          for item in step.items if isinstance(item, Block)])[1:]:
        out.update({alias: title for alias, title in zip(aliases, titles) if alias != title})
    return out


def shown_cut(table: Table) -> bool:
    """a table too big to print whole"""
    return bool(shown(len(table.block.rows))[1] or shown(len(table.block.cols))[1])


def printed_block(b: Block) -> Block:
    """a block with its labels as a worksheet prints them: control and bidi characters written as escapes"""
    return replace(b, rows=tuple(map(visible, b.rows)), cols=tuple(map(visible, b.cols)))


def title_of(line: str) -> str:
    """a line as a table title: markdown's ** and escapes and the [r x c] shape taken off"""
    text = line.strip()
    if text.startswith("**"):
        text = _entities(text.replace("**", "").replace("\\|", "|").replace("\\\\", "\\"))
    return norm(SHAPE.sub("", norm(text)))


def title_lines(lines: list[str], aliases: dict[str, str]) -> dict[str, list[int]]:
    """each line's index under its title form (in this language, when printed in another), in order: a title printed
    twice is read in order"""
    out: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        if line.strip():
            title = title_of(line)
            out.setdefault(aliases.get(title, title), []).append(i)
    return out


def _heading(line: str, markdown: bool) -> bool:
    """a line that looks like a table's title: bold in markdown, ending in its [r x c] shape in plain text"""
    text = norm(line)
    return SHAPE.search(text) is not None or (markdown and text.startswith("**"))  # a plain row may be labelled **


def retitle(lines: list[str], found: dict[str, list[int]], titles: list[str], read: set[str], markdown: bool,
             aliases: dict[str, str]) -> list[Said]:
    """a heading edited by hand is read as the closest title not found as printed (in any language), so its table is
    not lost silently"""
    missing = [title for title in dict.fromkeys(titles) if title not in found]
    notes: list[Said] = []
    for i, line in enumerate(lines):
        heading = title_of(line)
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
    i, body = skip_blank(lines, at + 1), []
    while i < len(lines) and lines[i].strip():
        body.append(lines[i].strip())
        i += 1
    rows = [line for line in body if not RULE.fullmatch(line) and not COLUMNS.fullmatch(norm(line))][1:]  # not the header
    cells = [cell for row in rows for cell in (pipe_cells(row) if "|" in row else row.split())[1:]]
    return any(NUMBER.fullmatch(unicodedata.normalize("NFKC", cell).translate(TYPED)) for cell in cells)


def fits_shown(table: Table, origin: str) -> None:
    """the renderers hide the middle of a big matrix, and a hidden cell cannot be filled in"""
    b = table.block
    if shown_cut(table):
        raise SheetError(_("{table} has {rows} x {columns} cells, more than a worksheet shows ({most} a side); answer "
                           "such a problem with a JSON sheet (worksheet --format json)").format(
            table=table.at(origin), rows=len(b.rows), columns=len(b.cols), most=MAX_SHOWN + FEWEST_HIDDEN - 1))


def rows_under(lines: list[str], at: int, markdown: bool, table: Table, origin: str) -> list[list[str]]:
    """the cell texts under the title on line at, row by row across every column"""
    i = skip_blank(lines, at + 1)
    if markdown or lines[at].lstrip().startswith("**"):
        return _markdown_rows(lines, i, table, origin)
    return _plain_rows(lines, i, table, origin)


def skip_blank(lines: list[str], i: int) -> int:
    """blank lines between a title and its table may be added or dropped"""
    while i < len(lines) and not lines[i].strip():
        i += 1
    return i


def _markdown_rows(lines: list[str], i: int, table: Table, origin: str) -> list[list[str]]:
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
        body = found if norm(pipe_cells(found[0])[0]) == norm(labels[0]) else found[1:]
    out = []
    for k, label in enumerate(labels):
        if k >= len(body):
            raise SheetError(_("{row} is missing; the table has {found} of its {rows} rows").format(
                row=table.at(origin, label), found=len(body), rows=len(labels)))
        cells = pipe_cells(body[k])
        _label(cells[0], label, table, origin)
        out.append(_counted(cells[1:], len(table.block.cols), table, label, origin))
    if len(body) > len(labels):
        raise SheetError(_("{table}: a row too many ({row}); the table has {rows} rows: {labels}").format(
            table=table.at(origin), row=norm(body[len(labels)])[:40], rows=len(labels), labels=", ".join(labels)))
    return out


def pipe_cells(line: str) -> list[str]:
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


def _plain_rows(lines: list[str], i: int, table: Table, origin: str) -> list[list[str]]:
    """plain text: runs of columns, each an optional "(columns a to b)" line, the column labels, one line per row"""
    b = table.block
    out: list[list[str]] = [[] for _ in b.rows]
    start = 0
    while start < len(b.cols):
        i = skip_blank(lines, i)
        run = COLUMNS.fullmatch(norm(lines[i])) if i < len(lines) else None
        if run is None and start:
            raise SheetError(_('{table}: expected "(columns {column} to ...)" before the rest of its columns; keep the '
                               "lines attntrace printed").format(table=table.at(origin), column=b.cols[start]))
        if run is not None:
            i = skip_blank(lines, i + 1)
        if i + 1 >= len(lines):
            raise SheetError(_("{table}: the table ends after its title; keep the column labels and the rows").format(
                table=table.at(origin)))
        stop = len(b.cols) if run is None else _run_stop(b, start, run, _cells_after(lines[i + 1], b.rows[0]), table, origin)
        header = lines[i]
        i += 1  # the column labels
        for k, label in enumerate(b.rows):
            if i >= len(lines) or _cells_after(lines[i], label) is None:
                got = norm(lines[i])[:40] if i < len(lines) else _("the end of the file")
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
    text, name = norm(line), norm(label)
    if not name:
        return text.split()
    if text != name and not text.startswith(name + " "):
        return None
    return text[len(name):].split()


def _run_stop(b: Block, start: int, run: re.Match[str], first: list[str] | None, table: Table, origin: str) -> int:
    """where a run of columns ends: at its last label, or, when labels repeat, where the first row's cells end"""
    if norm(run[1]) != norm(b.cols[start]):
        raise SheetError(_('{table}: "(columns {first} to {last})" should start at column {column}; keep the column '
                           "runs in the order attntrace printed them").format(table=table.at(origin), first=run[1],
                                                                                last=run[2], column=b.cols[start]))
    stops = [stop for stop in range(start + 1, len(b.cols) + 1) if norm(b.cols[stop - 1]) == norm(run[2])]
    if not stops:
        raise SheetError(_('{table}: "(columns {first} to {last})" names no column of this table').format(
            table=table.at(origin), first=run[1], last=run[2]))
    counted = start + len(first) if first is not None else None
    return counted if counted in stops else stops[0]


def _label(found: str, label: str, table: Table, origin: str) -> None:
    """rows are matched in order, so a label may repeat; one that differs means a row was moved or lost"""
    if norm(found) != norm(label):
        raise SheetError(_('{row}: found a row labelled "{found}"; keep every row, in order, with its label').format(
            row=table.at(origin, label), found=found[:30]))


def _counted(cells: list[str], width: int, table: Table, label: str, origin: str) -> list[str]:
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
    right; each keeps its comma, which cell_text reads past and the note names"""
    if len(cells) >= width:
        return cells
    apart = [piece for cell in cells for piece in SEPARATED.split(cell) if piece.strip()]
    return apart if len(apart) == width else cells


def _signs_joined(cells: list[str]) -> list[str]:
    """a lone + or - (any minus sign) and the number after it as one cell"""
    out: list[str] = []
    for cell in cells:
        if out and cell_text(out[-1]) in ("+", "-") and NUMBER.fullmatch(cell_text(cell).rstrip("%")):
            out[-1] = f"{out[-1]} {cell}"
        else:
            out.append(cell)
    return out
