"""One way to look at a path before using it: a symbolic link loop, a NUL, a folder that cannot be read, a device
where a file belongs or a file over the size cap is one line naming the path, never a traceback."""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING

from attntrace.errors import AttntraceError
from attntrace.files.cap import max_bytes, too_big
from attntrace.language import N_, _

if TYPE_CHECKING:
    from pathlib import Path


def _loop(path: str | Path) -> AttntraceError:
    return AttntraceError(_("{path}: a symbolic link loop (a link that leads back to itself); fix or remove the "
                            "link").format(path=path))


def _nul(path: str | Path) -> AttntraceError:
    return AttntraceError(_("{path}: a path cannot hold a NUL character").format(path=ascii(str(path))))


def resolved(path: str | Path) -> Path:
    """the absolute path with every symbolic link followed; a loop is one clear error"""
    from pathlib import Path  # pathlib costs more than 2% of start-up: only where a path is resolved

    try:
        return Path(path).resolve()
    except RuntimeError:  # Python before 3.13 says "Symlink loop from ..."
        raise _loop(path) from None
    except ValueError:
        raise _nul(path) from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _loop(path) from None
        raise AttntraceError(_("{path}: cannot be looked at ({why})").format(path=path, why=e.strerror or e)) from None


def kind(path: str | Path) -> str:
    """"file", "directory", "missing" or "other" (a device, a FIFO, a socket); one clear error when the path cannot
    even be looked at (a loop, a NUL, a folder without permission)"""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except ValueError:  # a NUL in the path
        raise _nul(path) from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _loop(path) from None
        if e.errno == errno.ENAMETOOLONG:
            raise AttntraceError(_("{path}: the name is too long for this file system; give a shorter one").format(
                path=path)) from None
        raise AttntraceError(_("{path}: cannot be read ({why}); check its permissions and its folder's").format(
            path=path, why=e.strerror or e)) from None
    if stat.S_ISDIR(mode):
        return "directory"
    return "file" if stat.S_ISREG(mode) else "other"


def is_file(path: str | Path) -> bool:
    """whether path is a regular file (through links); a loop or an unreadable folder is one clear error"""
    return kind(path) == "file"


def is_dir(path: str | Path) -> bool:
    """whether path is a folder (through links); a loop or an unreadable folder is one clear error"""
    return kind(path) == "directory"


def regular_file(path: str | Path, what: str = N_("a file")) -> int:
    """the size of a regular file that is no bigger than the size cap, before it is handed to a library that would
    read it whole (or block on a FIFO, or read a device forever); anything else is one clear error (what: N_-marked,
    said with _())"""
    found = kind(path)
    if found == "missing":
        raise AttntraceError(_("{path}: no such file").format(path=path))
    if found != "file":
        is_a = _("{path}: is a folder, expected {what}") if found == "directory" else _(
            "{path}: is a device or pipe, expected {what}")
        raise AttntraceError(is_a.format(path=path, what=_(what)))
    size = os.stat(path).st_size
    if size > max_bytes():
        raise too_big(str(path), _(what), size)
    return size
