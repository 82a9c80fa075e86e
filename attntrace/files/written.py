"""Writing files so that nothing is ever lost or half-written: each to a temporary file beside it, renamed when complete."""

from __future__ import annotations

import os
import signal
import stat
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from attntrace.errors import AttntraceError, ExitStatus
from attntrace.files import paths
from attntrace.language import _

if TYPE_CHECKING:
    from attntrace.files.forked import Segments

class Interrupted(Exception):
    """SIGTERM while files are being written: stop, and clean up"""


def write_files(texts: Mapping[Path, str | Iterable[str] | Segments]) -> None:
    """write every file completely, or none: all are written beside their targets, then renamed over them.

    A text may be given piece by piece (an iterable of strings), and is then written as it comes, never held whole.
    A symlink is followed: the file it points to is replaced, the link kept. A target that is not a regular file
    (/dev/null, a FIFO, /dev/stdout when stdout is a pipe) is written in place. UTF-8 with LF line endings.
    """
    encoded = {path: [_encoded(path, text)] if isinstance(text, str) else _pieces(path, text)
               if isinstance(text, Iterable) else text for path, text in texts.items()}
    for path in encoded:
        _writable(path)
    real = {path: _replaced(path) for path in encoded}  # None: written in place
    temps: dict[Path, Path] = {}
    path = next(iter(encoded), Path())
    with _terminated_as_exception():
        try:
            for path, data in encoded.items():
                target = real[path]
                if target is not None:
                    temps[target] = _temporary(target, data)
            for path, data in encoded.items():
                if real[path] is None:
                    _write(path, data)
            for target, temp in list(temps.items()):
                path = target
                os.replace(temp, target)
                del temps[target]
        except OSError as e:
            raise AttntraceError(_("{file}: cannot write it: {reason}").format(file=path, reason=e.strerror or e)) from None
        finally:
            for temp in temps.values():
                _remove(temp)


def _replaced(path: Path) -> Path | None:
    """the regular file to replace for path (through any symlink), or None to write path in place"""
    try:
        target = Path(os.path.realpath(path))
        info = os.stat(target)
    except OSError:
        return None if path.is_symlink() else path  # a dangling link, or a link to a pipe, is written through
    return target if stat.S_ISREG(info.st_mode) else None


def _pieces(path: Path, texts: Iterable[str]) -> Iterator[bytes]:
    for text in texts:
        yield _encoded(path, text)


def _encoded(path: Path, text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        bad = text[e.start:e.end].encode("unicode_escape").decode("ascii")
        raise AttntraceError(_("{file}: the text to write holds {text}, which is not a character UTF-8 can write (a "
                               "lone surrogate); fix the label it comes from").format(file=path, text=bad)) from None


def _writable(path: Path) -> None:
    """one line for what would fail when writing: an empty name, a missing folder, a directory in the way"""
    if str(path) in ("", "."):
        raise AttntraceError(_("an output file needs a name"), exit_code=ExitStatus.USAGE)
    if paths.is_dir(path):  # a loop or a folder without permission is one line here too
        raise AttntraceError(_("{file}: is a directory; give a file name").format(file=path), exit_code=ExitStatus.USAGE)
    folder = path.parent
    found = paths.kind(folder)
    if found == "missing":
        raise AttntraceError(_("{file}: cannot write it: the folder {folder} does not exist").format(
            file=path, folder=folder))
    if found != "directory":
        raise AttntraceError(_("{file}: cannot write it: {folder} is a file, not a folder").format(
            file=path, folder=folder))


def _temporary(path: Path, data: Iterable[bytes] | Segments) -> Path:
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as f:
            _put(f, data)
            os.fsync(f.fileno())
        os.chmod(temp, _mode(path))
    except BaseException:
        _remove(temp)
        raise
    return temp


def _write(path: Path, data: Iterable[bytes] | Segments) -> None:
    with open(path, "wb") as f:
        _put(f, data)


def _put(f: BinaryIO, data: Iterable[bytes] | Segments) -> None:
    """data written to the open file f: a text in segments on two cores where that pays"""
    if isinstance(data, Iterable):
        f.writelines(data)
        f.flush()
    else:
        f.flush()
        data.write(f.fileno())


def _mode(path: Path) -> int:
    """the target's own permissions when it exists, else what a new file gets"""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o666 & ~mask


def _remove(temp: Path) -> None:
    try:
        temp.unlink()
    except OSError:
        pass


@contextmanager
def _terminated_as_exception() -> Iterator[None]:
    """SIGTERM during the writes raises, so that temporary files are removed before the process ends"""

    def terminated(signum: int, frame: object) -> None:
        raise Interrupted()

    try:
        previous = signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    except Interrupted:
        raise SystemExit(128 + signal.SIGTERM) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def distinct(outputs: dict[str, Path | None] | Iterable[tuple[str, Path | None]],
             inputs: Iterable[str | Path | None]) -> None:
    """an output that is one of the inputs, or another output, is a usage error before anything is computed; outputs
    are named by the option that gives them ("-o", "--gradebook")"""
    inputs = list(inputs)
    seen: dict[str, str] = {}
    for item in inputs:
        if item is None or str(item) == "-":
            continue
        p = Path(item)
        for file in (sorted(p.iterdir()) if p.is_dir() else [p]):
            seen[_key(file)] = _("the input {file}").format(file=file)
    folders = {str(paths.resolved(item)): str(item) for item in inputs if item is not None and str(item) != "-"
               and any((Path(item) / name).exists() for name in ("x.csv", "x.npy"))}  # a problem's own folder
    for option, out in (outputs.items() if isinstance(outputs, dict) else outputs):
        if out is None or _replaced(out) is None:
            continue
        inside = folders.get(str(paths.resolved(out).parent))
        if inside is not None:
            raise AttntraceError(_("{option} {file} is inside the input directory {folder}; write it elsewhere").format(
                option=option, file=out, folder=inside), exit_code=ExitStatus.USAGE)
        key = _key(out)
        if key in seen:
            raise AttntraceError(_("{option} {file} is {what}; give {option} another file").format(
                option=option, file=out, what=seen[key]), exit_code=ExitStatus.USAGE)
        seen[key] = _("the file of {option} too").format(option=option)


def _key(path: Path) -> str:
    """a file's identity: its resolved path, or its device and inode when it exists (a hard link is the same file)"""
    try:
        info = os.stat(path)
        if stat.S_ISREG(info.st_mode):
            return f"{info.st_dev}:{info.st_ino}"
    except OSError:
        pass
    return str(paths.resolved(path))
