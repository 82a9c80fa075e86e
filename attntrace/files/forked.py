"""A big output written on two cores: a forked process formats every other block of rows, and the two write in turn.

The text is a sequence of pieces: strings, and blocks whose text() is formatted only when asked for. Cut before each
block but the first, it falls into segments; the process that owns a segment (the parent the even ones, the child the
odd ones) formats it while the other writes, then waits for its turn (a byte on a pipe), writes it whole to stdout's
file descriptor and hands the turn on. The bytes are those of the pieces in order, as one process writes them.

Linux only (fork and a pipe between the two; elsewhere, and for a terminal, one process writes it all). The child
never returns into the caller: it leaves by os._exit, with FAILED_WRITE + errno when a write failed (the reader gone,
the disk full), and it ends with its parent (PR_SET_PDEATHSIG), whose Ctrl-C handler exits at once. The parent waits
for the child before it returns, and stops it (SIGTERM) when anything fails on its side.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Union

from attntrace.errors import AttntraceError
from attntrace.language import _


class Later(Protocol):
    """a piece formatted when its text is asked for"""

    @property
    def cells(self) -> int: ...  # the numbers it holds

    def text(self) -> str: ...

    def encoded(self) -> bytes: ...  # text() in UTF-8


Piece = Union[str, Later]

FROM = 1 << 18  # numbers: fewer are formatted (about 70 ms) in about the time a fork and the turns cost
FAILED_WRITE = 100  # the child's exit status, plus the errno, when a write failed: the parent raises the same OSError
_TURN = b"t"


class _OtherGone(Exception):
    """the other process closed its end of the turns: it has ended"""


@dataclass(frozen=True)
class Segments:
    """a text cut before each block but the first: every segment holds one block (the first may hold only strings)"""

    parts: list[list[Piece]]

    @classmethod
    def of(cls, pieces: Iterable[Piece]) -> Segments:
        parts: list[list[Piece]] = [[]]
        seen = False
        for piece in pieces:
            if not isinstance(piece, str):
                if seen:
                    parts.append([])
                seen = True
            parts[-1].append(piece)
        return cls(parts)

    def texts(self) -> Iterator[str]:
        """each segment's text, in order (for a stream that takes text)"""
        for part in self.parts:
            yield "".join(p if isinstance(p, str) else p.text() for p in part)

    def worth_sharing(self, fd: int) -> bool:
        """whether writing on two cores pays: Linux, fd a pipe or a file (not a terminal), FROM numbers or more"""
        if sys.platform != "linux" or not hasattr(os, "fork") or len(self.parts) < 2 or os.isatty(fd):
            return False
        return sum(p.cells for part in self.parts for p in part if not isinstance(p, str)) >= FROM

    def write(self, fd: int) -> None:
        """every segment written to fd in order: on two cores where that pays, else by this process alone"""
        if self.worth_sharing(fd) and _shared(fd, self.parts):
            return
        for part in self.parts:
            _write_all(fd, _encoded(part))


def _encoded(part: list[Piece]) -> bytes:
    return b"".join(p.encode("utf-8") if isinstance(p, str) else p.encoded() for p in part)


def _shared(fd: int, parts: Sequence[list[Piece]]) -> bool:
    """write every segment to fd in order, the child formatting and writing the odd ones, the parent the even ones;
    False, with nothing written, when the second process cannot be had (no file descriptors or processes left, or
    not the main thread)"""
    made: list[int] = []
    try:
        reaped = signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # ignored, the child's status would be lost
    except ValueError:  # not the main thread
        return False
    try:
        to_child = os.pipe()  # (read end, write end)
        made += to_child
        to_parent = os.pipe()
        made += to_parent
        parent = os.getpid()
        with warnings.catch_warnings():  # Python 3.12+ warns of threads (numpy's BLAS pool); the child uses none of them
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        for end in made:
            os.close(end)
        _restore(reaped)
        return False
    if pid == 0:  # the child: never returns
        code = 1
        try:
            for number in (signal.SIGINT, signal.SIGTERM):  # Ctrl-C ends it at once, quietly: the parent says so
                signal.signal(number, signal.SIG_DFL)
            _end_with(parent)
            os.close(to_child[1])
            os.close(to_parent[0])
            _take_turns(fd, parts, 1, to_child[0], to_parent[1])
            code = 0
        except OSError as e:
            code = FAILED_WRITE + e.errno if e.errno and 0 < e.errno < 256 - FAILED_WRITE else 1
        except BaseException:  # noqa: B036 - whatever it is, the child must end here and not in the caller's code
            code = 1
        finally:
            os._exit(code)
    os.close(to_child[0])
    os.close(to_parent[1])
    try:
        try:
            _take_turns(fd, parts, 0, to_parent[0], to_child[1])
        except _OtherGone:
            pass  # the child's status, below, says why
        finally:
            os.close(to_parent[0])
            os.close(to_child[1])
        status = os.waitpid(pid, 0)[1]
    except BaseException:
        _stop(pid)
        raise
    finally:
        _restore(reaped)
    _ended(status)
    return True


def _restore(handler: Any) -> None:
    """SIGCHLD's handler as it was (None: set outside Python, and left as it is)"""
    if handler is not None:
        signal.signal(signal.SIGCHLD, handler)


def _end_with(parent: int) -> None:
    """this process ends (SIGTERM) when its parent does, even by os._exit or a signal (Linux's PR_SET_PDEATHSIG)"""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent ended before it was asked
        os._exit(1)


def _take_turns(fd: int, parts: Sequence[list[Piece]], me: int, turn_in: int, turn_out: int) -> None:
    """format my segments (me, me + 2, ...), each written when the turn comes, and hand the turn on after each"""
    for number in range(me, len(parts), 2):
        data = _encoded(parts[number])
        if number:
            try:
                turn = os.read(turn_in, 1)
            except OSError:
                turn = b""
            if turn != _TURN:
                raise _OtherGone()
        _write_all(fd, data)
        if number + 1 < len(parts):
            try:
                os.write(turn_out, _TURN)
            except OSError:
                raise _OtherGone() from None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _stop(pid: int) -> None:
    """end the child now and reap it"""
    try:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
    except OSError:
        pass


def _ended(status: int) -> None:
    """raise as the child ended: a failed write as the same OSError (the reader gone, a full disk), else one line"""
    code = os.waitstatus_to_exitcode(status)
    if code == 0:
        return
    if code > FAILED_WRITE:
        number = code - FAILED_WRITE
        raise OSError(number, os.strerror(number))  # BrokenPipeError for EPIPE
    if code < 0:
        raise AttntraceError(_("the process writing half of the output was ended by signal {signal}; the output is not "
                               "whole").format(signal=-code))
    raise AttntraceError(_("the process writing half of the output ended with status {status}; the output is not "
                           "whole").format(status=code))
