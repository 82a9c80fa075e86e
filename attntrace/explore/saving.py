"""Where the explorer's x and w write: a name not yet taken, the file a typed name means (asked about before it is
overwritten), and a path said short enough for the message line."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from rich.cells import cell_len

from attntrace.errors import AttntraceError
from attntrace.files.paths import kind
from attntrace.language import _

R = TypeVar("R")


def target(text: str, folder: Path, opened: Path | None) -> tuple[Path, str | None]:
    """the file w writes for the name typed (relative to folder), and, when it exists, the question to ask before it is
    overwritten (it may be the problem file opened); a name that cannot be written is one clear error"""
    name = text.strip()
    try:
        path = Path(name).expanduser()
    except RuntimeError:  # no home folder for ~ (HOME unset, and no such user)
        raise AttntraceError(_("{name} names no home folder here (is HOME set?); give the file's full path").format(
            name=name.split('/')[0])) from None
    target = path if path.is_absolute() else folder / path
    found = named(target, lambda: kind(target))
    if found == "directory":
        raise AttntraceError(_("{path}: is a folder; give a file name").format(path=short(target)))
    if found == "other":
        raise AttntraceError(_("{path}: is a device or a pipe, not a file; give a file name").format(path=short(target)))
    if found == "missing":
        if named(target.parent, lambda: kind(target.parent)) != "directory":
            raise AttntraceError(_("{path}: no such folder; create it, or give another folder").format(
                path=short(target.parent)))
        return target, None
    if not named(target, lambda: os.stat(target).st_mode) & 0o222:  # even for root, whom os.access lets write
        raise AttntraceError(_("{path}: is read-only; give another name").format(path=short(target)))
    if opened is not None and _same(target, opened):
        return target, _("{path} is the problem file this explorer opened. Overwrite it with the problem as edited? y "
                         "overwrites it; any other key keeps it.").format(path=target)
    return target, _("{path} exists. Overwrite it with the problem as edited? y overwrites it; any other key keeps "
                     "it.").format(path=target)


def named(path: Path, look: Callable[[], R]) -> R:
    """look at (or write) path; an error names it shortened, so that the reason fits on the message line"""
    try:
        return look()
    except AttntraceError as e:
        raise AttntraceError(str(e).replace(str(path), str(short(path))), e.exit_code) from None
    except (OSError, ValueError) as e:
        raise AttntraceError(_("{path}: cannot write it: {reason}").format(
            path=short(path), reason=getattr(e, 'strerror', None) or e)) from None


def short(path: Path, most: int = 60) -> str:
    """a long path shown by its start and its end, most columns wide at most (a Chinese character takes two)"""
    text = str(path)
    if cell_len(text) <= most:
        return text
    return f"{_within(text, most // 2 - 1)}…{_within(text[::-1], most // 2)[::-1]}"


def _within(text: str, columns: int) -> str:
    """the start of text that takes at most columns"""
    used = 0
    for at, character in enumerate(text):
        used += cell_len(character)
        if used > columns:
            return text[:at]
    return text


def _same(path: Path, other: Path) -> bool:
    """whether two paths are the same file (a link, a hard link or another spelling of it)"""
    try:
        return os.path.samefile(path, other)
    except (OSError, ValueError):
        return False


def free(folder: Path, stem: str, suffix: str) -> Path:
    """folder/stem.suffix, or with -2, -3, ... when that name is taken: by a file, a folder or a link, even a broken
    one or a loop (os.path.lexists looks at the name alone, and never fails)"""
    path, count = folder / f"{stem}{suffix}", 1
    while os.path.lexists(path):
        count += 1
        path = folder / f"{stem}-{count}{suffix}"
    return path
