"""A different problem for every student: numbers drawn from the class seed and the student's id, written one folder each."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attntrace.core import masks
from attntrace.core.engine import trace
from attntrace.core.generate import random_problem
from attntrace.core.problem import Problem, problem_error
from attntrace.errors import AttntraceError
from attntrace.files import paths
from attntrace.files.text import read_text
from attntrace.homework.instructions import student as read_name
from attntrace.homework.sheet import MAX_PRECISION
from attntrace.homework.worksheet import name_line, render
from attntrace.language import N_, _, ngettext
from attntrace.memory import fits_new
from attntrace.render.jsonform import dumps, problem_to_dict

if TYPE_CHECKING:
    from _csv import Reader

MAX_ID = 100
MAX_STUDENTS = 10_000  # a class folder's worth; a bigger roster is split, one folder for each part
MAX_ID_BYTES = 255  # the longest folder name most file systems allow, in UTF-8 bytes
HANDOUTS = ("problem.json", "worksheet.md")  # what each student's folder gets, to be handed out
KEYS = "keys"  # the class folder's folder of keys, one folder per student, kept back when the others are handed out
KEY_FILES = ("key.json", "key.md")
FILES = (*HANDOUTS, *KEY_FILES)


# --- the roster ---------------------------------------------------------------------------------------------------


def read_roster(path: str) -> list[str]:
    """the student ids in path, in order: one a line, or a CSV with an `id` column; every error names the file and line"""
    text = read_text(path)
    rows = _csv_rows(text, path) if _is_csv(path, text) else _plain_rows(text)
    if len(rows) > MAX_STUDENTS:
        raise AttntraceError(_("{path}: {count} student ids, over the {most} a class folder takes; split the roster, "
                               "and give each part a folder of its own").format(path=path, count=f"{len(rows):,}",
                                                                                most=f"{MAX_STUDENTS:,}"))
    seen: dict[str, tuple[int, str]] = {}
    for line, student in rows:
        problem = id_problem(student)
        if problem:
            raise AttntraceError(_("{path} line {line}: student id {id} {problem}").format(
                path=path, line=line, id=_show(student), problem=problem))
        same = seen.setdefault(_folded(student), (line, student))
        if same[0] != line:
            also = (_("{path} line {line}: student id {id} is also on line {first}") if same[1] == student else
                    _("{path} line {line}: student id {id} is also on line {first} as {other} (one folder on Windows "
                      "and macOS, which ignore case)"))
            raise AttntraceError(also.format(path=path, line=line, id=_show(student), first=same[0],
                                             other=_show(same[1])))
    if not rows:
        raise AttntraceError(_("{path}: no student ids (every line is blank or a # comment)").format(path=path))
    return [student for _, student in rows]


def _lines(text: str) -> list[str]:
    """the lines as an editor numbers them: split at \\n, \\r\\n or \\r only, line ends kept for the csv module"""
    return io.StringIO(text, newline="").readlines()


def _is_csv(path: str, text: str) -> bool:
    """a .csv file, or a first line with commas (a spreadsheet saved under another name)"""
    if Path(path).suffix.lower() == ".csv":
        return True
    first = next((s for s in (raw.strip() for raw in _lines(text)) if s and not s.startswith("#")), "")
    return "," in first


def _plain_rows(text: str) -> list[tuple[int, str]]:
    """(line number, id) for each line that is neither blank nor a # comment"""
    stripped = ((number, raw.strip()) for number, raw in enumerate(_lines(text), start=1))
    return [(number, s) for number, s in stripped if s and not s.startswith("#")]


def _csv_rows(text: str, path: str) -> list[tuple[int, str]]:
    """(line number, id) for each row of a CSV whose header names an id column; rows with no cell filled are skipped"""
    reader = csv.reader(_lines(text))
    try:
        header, line = _header(reader, path)
        column = _id_column(header, path, line)
        rows = []
        for row in reader:
            start, line = line + 1, reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if column >= len(row):
                raise AttntraceError(_("{path} line {line}: no id: the row has {cells} cells, the id is cell {cell}")
                                     .format(path=path, line=start, cells=len(row), cell=column + 1))
            rows.append((start, row[column].strip()))
    except csv.Error as e:
        raise AttntraceError(_("{path} line {line}: not CSV ({reason})").format(path=path, line=reader.line_num,
                                                                                 reason=e)) from None
    return rows


def _header(reader: Reader, path: str) -> tuple[list[str], int]:
    """the first row with a cell filled that is not a # comment, and the line it ends on"""
    for row in reader:
        if any(cell.strip() for cell in row) and not _comment(row):
            return row, reader.line_num
    raise AttntraceError(_("{path}: no student ids (the CSV has no header row)").format(path=path))


def _comment(row: list[str]) -> bool:
    """a # line above the header, as in a plain roster; a header whose first column is named # still counts"""
    return row[0].lstrip().startswith("#") and not any(cell.strip().lower() == "id" for cell in row)


def _id_column(header: list[str], path: str, line: int) -> int:
    """where the id column is; the header must name exactly one"""
    names = [cell.strip().lower() for cell in header]
    found = [i for i, name in enumerate(names) if name == "id"]
    if not found:
        columns = ", ".join(_show(cell.strip()) for cell in header)
        raise AttntraceError(_("{path} line {line}: no id column in the header; the columns are {columns}").format(
            path=path, line=line, columns=columns))
    if len(found) > 1:
        raise AttntraceError(_("{path} line {line}: the header has {count} id columns (cells {cells}); keep one").format(
            path=path, line=line, count=len(found), cells=", ".join(str(i + 1) for i in found)))
    return found[0]


WINDOWS_DEVICES = {"CON", "PRN", "AUX", "NUL", *(f"{d}{n}" for d in ("COM", "LPT") for n in range(1, 10))}


def id_problem(student: str) -> str | None:
    """why this id cannot be a folder name, or would not read back the same from its worksheet; None when it can"""
    if not student:
        return _("is empty")
    if student in (".", ".."):
        return _("cannot be a folder name (. and .. are taken)")
    if "/" in student or "\\" in student:
        return _("contains / or \\, which would make it a path, not a folder name")
    if any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in student):
        return _("contains a control character or line break")
    hidden = next((c for c in student if unicodedata.category(c) in ("Cf", "Co", "Cn", "Cs")), None)
    if hidden is not None:
        return _("contains the invisible character {code} (a direction mark, zero-width or unassigned character), "
                 "which would look like another id; take it out").format(code=f"U+{ord(hidden):04X}")
    odd = next((c for c in student if unicodedata.category(c) == "Zs" and c != " "), None)
    if odd is not None:
        return _("contains {code}, a space that is not a plain one; type a plain space").format(code=f"U+{ord(odd):04X}")
    if student != student.strip():
        return _("starts or ends with a space")
    if student.startswith("."):
        return _("starts with a dot, which hides its folder (check skips hidden folders); take the dot off")
    if any(c in student for c in ':*?"<>|'):
        return _('contains one of : * ? " < > |, which Windows does not allow in a folder name')
    if student.split(".")[0].upper() in WINDOWS_DEVICES or student.endswith("."):
        return _("is a name Windows keeps for itself (CON, NUL, COM1 ..., or a name ending in a dot)")
    if len(student) > MAX_ID:
        return _("is {length} characters long, over {most}").format(length=len(student), most=MAX_ID)
    if len(student.encode("utf-8")) > MAX_ID_BYTES:
        return _("is {length} bytes long in UTF-8, over the {most} a folder name may have").format(
            length=len(student.encode("utf-8")), most=MAX_ID_BYTES)
    if _folded(student) == KEYS:
        return _("is the name of the folder the answer keys go in ({keys}/); write it another way, such as {other}")\
            .format(keys=KEYS, other=f"{KEYS}-1")
    return _read_back(student)


def _read_back(student: str) -> str | None:
    """why the id would come back changed from its worksheet's Name line (and so the gradebook), or None"""
    back = read_name([name_line(student, markdown=True)])  # as check reads the name line
    if back == student:
        return None
    if back == unicodedata.normalize("NFC", student):
        return _("is in decomposed Unicode (an accent typed as a character of its own); save the roster composed (NFC)")
    return _("would read back from its worksheet's Name line as {id}; write it that way").format(id=_show(back or ""))


def _folded(student: str) -> str:
    """the id as a case-insensitive file system sees it, so two ids never share a folder"""
    return unicodedata.normalize("NFC", student).casefold()


def _show(student: str) -> str:
    """an id quoted on one line, every character that does not show itself (a control, a direction mark, a zero-width
    or an unusual space) escaped"""
    return "".join(c if c == " " or (c.isprintable() and not c.isspace()) else
                   f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}"
                   for c in json.dumps(student, ensure_ascii=False))


# --- each student's problem ---------------------------------------------------------------------------------------


def student_seed(seed: int, student: str) -> int:
    """the student's own seed: the same on every run, machine and Python (hash() is salted per process)"""
    return int.from_bytes(hashlib.sha256(f"{seed}\0{student}".encode()).digest()[:8], "big")


@dataclass(frozen=True)
class Design:
    """what every student's problem looks like: `new`'s options, and the rounding the worksheet asks for"""

    tokens: int = 3
    d_model: int = 4
    d_k: int | None = None  # None: 3 per head, as new
    d_v: int | None = None
    heads: int = 1
    init: str = "integers"
    mask: tuple[str, ...] = ()
    window: int | None = None
    scale: bool | None = None  # None: new's default for the init (no scaling for integers)
    precision: int = 2  # the rounding the worksheet asks students to carry


def _check_design(design: Design) -> None:
    """sizes and precision that random_problem and the worksheet would otherwise take without a word"""
    for name in ("tokens", "d_model", "d_k", "d_v", "heads"):
        value = getattr(design, name)
        if value is None and name in ("d_k", "d_v"):
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise AttntraceError(_("assign: {name} = {value} must be a whole number of at least 1").format(
                name=name, value=repr(value)))
    p = design.precision
    if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p <= MAX_PRECISION:
        raise AttntraceError(_("assign: precision = {value} must be a whole number from 0 to {most}").format(
            value=repr(p), most=MAX_PRECISION))


def problem_for(design: Design, seed: int, student: str) -> Problem:
    """the student's problem: it depends on the class seed and this id only, never on the rest of the roster"""
    _check_design(design)
    problem = random_problem(n=design.tokens, d_model=design.d_model, d_k=design.d_k, d_v=design.d_v,
                             heads=design.heads, init=design.init, seed=student_seed(seed, student), fits=fits_new,
                             student=student)
    changes: dict[str, Any] = {}
    if design.scale is not None:
        changes["scale"] = design.scale
    try:
        return replace(problem, mask=masks.from_names(design.mask, window=design.window), **changes)
    except AttntraceError as e:
        raise problem_error("assign", e) from None


def files_for(design: Design, seed: int, student: str) -> dict[str, str]:
    """the text of the student's problem.json, worksheet.md, key.json and key.md"""
    problem = problem_for(design, seed, student)
    t = trace(problem, carry_rounding=design.precision)
    return {
        "problem.json": dumps(problem_to_dict(problem)),
        "worksheet.md": render(t, design.precision, False, "markdown", student),
        "key.json": render(t, design.precision, True, "json"),
        "key.md": render(t, design.precision, True, "markdown"),
    }


# --- writing the folders ------------------------------------------------------------------------------------------


def places(out: Path, student: str) -> dict[str, Path]:
    """where each of the student's files goes: the handouts in out/<id>/, the keys apart in out/keys/<id>/"""
    return {name: out / (KEYS if name in KEY_FILES else "") / student / name for name in FILES}


@dataclass
class Assigned:
    """what a run wrote: every student's folder, and the files already there, which are never replaced"""

    out: Path
    folders: list[Path]
    written: list[Path]
    kept: dict[str, list[Path]]  # by student: their files that were there before, left as they were
    exposed: list[Path]  # keys in a student's own folder, from a run that wrote them there: to move before handing out

    def summary(self) -> str:
        """what was written where, what was kept, and how to mark it: a teacher's next steps"""
        new = len(self.folders) - len(self.kept)
        lines = [ngettext("wrote {count} student folder in {out} (problem.json and worksheet.md each, to hand out) and "
                          "their keys apart in {keys} (key.json and key.md each: keep that folder back)",
                          "wrote {count} student folders in {out} (problem.json and worksheet.md each, to hand out) and "
                          "their keys apart in {keys} (key.json and key.md each: keep that folder back)", new)
                 .format(count=f"{new:,}", out=self.out, keys=self.out / KEYS)]
        if self.kept:
            names = [_show(student) for student in self.kept]
            more = len(names) - 10
            shown = ", ".join(names[:10]) if more <= 0 else _("{names} and {more} more").format(
                names=", ".join(names[:10]), more=more)
            added = sum(path.parent.name in self.kept for path in self.written)
            wrote = (ngettext("wrote only the {added} missing file", "wrote only the {added} missing files", added)
                     if added else _("none was missing")).format(added=f"{added:,}")
            lines.append(ngettext("kept every file already there as it was, for {count} student ({students}); {wrote}",
                                  "kept every file already there as it was, for {count} students ({students}); {wrote}",
                                  len(names)).format(count=f"{len(names):,}", students=shown, wrote=wrote))
        if self.exposed:
            lines.append(ngettext("note: {count} key in students' own folders ({first} ...), where the students would "
                                  "see them; move them into {keys} before handing out",
                                  "note: {count} keys in students' own folders ({first} ...), where the students would "
                                  "see them; move them into {keys} before handing out", len(self.exposed))
                         .format(count=f"{len(self.exposed):,}", first=self.exposed[0], keys=self.out / KEYS))
        lines.append(_("mark them with attntrace check {out}").format(out=self.out))
        return "\n".join(lines)


def assign(students: list[str], out: Path, design: Design, seed: int) -> Assigned:
    """write out/<id>/ and out/keys/<id>/ for every student: only the files missing, never one already there (a
    filled-in worksheet is the student's work); all or nothing"""
    out = Path(out)
    _check_out(out)
    _check_ids(students)
    _check_case(out, students)
    kept: dict[str, list[Path]] = {}

    def missing() -> Iterator[tuple[Path, str]]:
        """each student's files not there yet, one student at a time, so that a big class is never all in memory"""
        for student in students:
            where = places(out, student)
            files = {where[name]: text for name, text in files_for(design, seed, student).items()}
            there = _already_there(out, student, files)
            if there:
                kept[student] = there
            yield from ((target, text) for target, text in files.items() if target not in there)

    written = _write(out, missing())
    exposed = [out / student / name for student in students for name in KEY_FILES if paths.is_file(out / student / name)]
    return Assigned(out, [out / student for student in students], written, kept, exposed)


def _check_out(out: Path) -> None:
    """the class folder, or else the nearest folder above it that is there, must be a folder"""
    for p in (out, *out.parents):
        found = _kind(p)
        if found == "directory":
            return
        if found != "missing":
            if p == out:
                message = (_("{out}: is a file; give a folder (new or existing) for the students' folders") if
                           found == "file" else
                           _("{out}: is a device or pipe; give a folder (new or existing) for the students' folders"))
            else:
                message = (_("{path}: is a file, so the folder {out} cannot be made in it; give another folder") if
                           found == "file" else
                           _("{path}: is a device or pipe, so the folder {out} cannot be made in it; give another folder"))
            raise AttntraceError(message.format(out=out, path=p))


def _check_case(out: Path, students: list[str]) -> None:
    """a folder already there that is a student's but for case: one folder on Windows and macOS, two elsewhere"""
    if paths.kind(out) != "directory":
        return
    try:
        there = {_folded(p.name): p.name for p in out.iterdir()}
    except OSError as e:
        raise AttntraceError(_("{path}: cannot be read ({reason}); check its permissions").format(
            path=out, reason=e.strerror or e)) from None
    for student in students:
        other = there.get(_folded(student), student)
        if unicodedata.normalize("NFC", other) != student:  # macOS may list a name decomposed: the same folder
            raise AttntraceError(_("{path}: is there already, and student id {id} differs from it only in case (one "
                                   "folder on Windows and macOS); write the id as {other}").format(
                path=out / other, id=_show(student), other=_show(other)))


def _check_ids(students: list[str]) -> None:
    """ids from anywhere, not only read_roster, must each be a folder name of their own"""
    seen: dict[str, tuple[int, str]] = {}
    for i, student in enumerate(students):
        problem = id_problem(student)
        if problem:
            raise AttntraceError(_("assign: student id {id} {problem}").format(id=_show(student), problem=problem))
        at, first = seen.setdefault(_folded(student), (i, student))
        if at != i:
            twice = (_("assign: student id {id} is given twice") if first == student else
                     _("assign: student id {id} is given twice as {other} (one folder on Windows and macOS, which "
                       "ignore case)"))
            raise AttntraceError(twice.format(id=_show(student), other=_show(first)))


def _already_there(out: Path, student: str, files: dict[Path, str]) -> list[Path]:
    """the student's files already written, which are kept as they are; refused when they come from another run
    (another seed or options), so that a class never mixes two, and when anything is in the way"""
    for folder in (out / student, out / KEYS, out / KEYS / student):
        if _kind(folder) not in ("directory", "missing"):
            raise AttntraceError(_("{path}: is a file, but assign writes a folder of that name; move it away").format(
                path=folder))
    there: list[Path] = []
    for target, text in files.items():
        found = _kind(target)
        if found == "missing":
            continue
        if found != "file":
            raise AttntraceError((_("{path}: is a folder, but assign writes a file of that name; move it away") if
                                  found == "directory" else
                                  _("{path}: is a device or pipe, but assign writes a file of that name; move it away"))
                                 .format(path=target))
        in_words = target.name == "key.md" and any(t.name == "key.json" for t in there)  # maybe in another language
        there.append(target)
        if target.name != "worksheet.md" and not in_words and not _same(_text(target), text):
            raise AttntraceError(_("{path}: made with another seed or other options than this run's (nothing was "
                                   "written); give the first run's --seed and options, or another -o folder").format(
                path=target))
    if there and all(t.name == "worksheet.md" for t in there) and _text(there[0]) != files[there[0]]:
        raise AttntraceError(_("{path}: filled in, but its problem.json and keys are gone, so assign cannot tell which "
                               "problem it answers (nothing was written); put them back, or move the folder away")
                             .format(path=there[0]))
    return there


def _kind(path: Path) -> str:
    """paths.kind, with a symbolic link to nothing (where mkdir and the writes would fail) one clear error"""
    found = paths.kind(path)
    if found == "missing" and os.path.lexists(path):
        raise AttntraceError(_("{path}: a symbolic link to nothing; remove it, or make what it leads to").format(
            path=path))
    return found


def _same(there: str | None, text: str) -> bool:
    """whether a file already there is the one this run writes: a JSON file's title ("name", written in the language
    of the run that made it) aside"""
    if there == text or there is None or not text.startswith("{"):
        return there == text
    try:
        ours, theirs = json.loads(text), json.loads(there)
    except ValueError:
        return False
    return isinstance(theirs, dict) and {**theirs, "name": None} == {**ours, "name": None}


def _text(path: Path) -> str | None:
    """a file assign wrote, as it reads now; None when it is not text assign writes (not UTF-8)"""
    paths.regular_file(path, N_("a file assign writes"))  # a huge file or a device is one clear error, never read
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return None
    except OSError as e:
        raise AttntraceError(_("{path}: cannot be read ({reason}); nothing was written").format(
            path=path, reason=e.strerror or e)) from None


def _write(out: Path, texts: Iterable[tuple[Path, str]]) -> list[Path]:
    """each text in its file, none of which is there yet, and the files written; on any failure (or a refusal while
    the texts are drawn) every file and folder made is removed again"""
    created: list[Path] = []
    made: set[Path] = set()
    temps: dict[Path, Path] = {}
    moved: list[Path] = []
    try:
        for target, text in texts:
            if target.parent not in made:
                created.extend(_make_folder(target.parent))
                made.add(target.parent)
            temps[target] = _write_temp(target, text)
        for target, temp in temps.items():
            os.replace(temp, target)
            moved.append(target)
    except BaseException as e:
        _clean_up([*temps.values(), *moved], created)
        if isinstance(e, OSError):
            raise AttntraceError(_("{path}: cannot write ({reason}); nothing was written").format(
                path=e.filename or out, reason=e.strerror or e)) from None
        raise
    return list(temps)


def _make_folder(folder: Path) -> list[Path]:
    """create the folder and any parents; return those created, outermost first, to remove again on failure"""
    missing = [p for p in (folder, *folder.parents) if _kind(p) == "missing"]
    folder.mkdir(parents=True, exist_ok=True)
    return list(reversed(missing))


def _write_temp(target: Path, text: str) -> Path:
    """the text in a temporary file beside target, readable as a newly made file would be, ready to move over it"""
    f = tempfile.NamedTemporaryFile("w", encoding="utf-8", newline="\n", dir=target.parent, prefix=f".{target.name}.",
                                    suffix=".tmp", delete=False)
    temp = Path(f.name)
    try:
        with f:
            f.write(text)
        os.chmod(temp, 0o666 & ~_umask())  # NamedTemporaryFile makes it private (0600); a handout is not
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


def _umask() -> int:
    """the process's umask, which can only be read by setting it"""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _clean_up(files: list[Path], created: list[Path]) -> None:
    """remove the files this run made, then the folders it made if they are empty again"""
    for file in files:
        try:
            file.unlink(missing_ok=True)
        except OSError:
            pass
    for folder in reversed(created):
        try:
            folder.rmdir()
        except OSError:
            pass
