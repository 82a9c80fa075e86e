"""A big output written on two cores: a forked process formats every other block of rows, and the two write in turn.

The text is a sequence of pieces: strings, and blocks whose text() is formatted only when asked for. Cut before each
block but the first, it falls into segments; the process that owns a segment (the parent the even ones, the child the
odd ones) formats it while the other writes, then waits for its turn (a byte on a pipe), writes it whole to stdout's
file descriptor and hands the turn on. The bytes are those of the pieces in order, as one process writes them.

Linux only (fork and a pipe between the two; elsewhere, and for a terminal, one process writes it all). The child
never returns into the caller: it leaves by os._exit, with BROKEN_PIPE when the reader went away. The parent waits for
the child before it returns, and stops it (SIGTERM) when anything fails on its side, Ctrl-C included.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterable, Sequence
from typing import Protocol, Union

from attntrace.errors import AttntraceError


class Later(Protocol):
    """a piece formatted when its text is asked for"""

    @property
    def cells(self) -> int: ...  # the numbers it holds

    def text(self) -> str: ...

    def encoded(self) -> bytes: ...  # text() in UTF-8


Piece = Union[str, Later]

FROM = 1 << 18  # numbers: fewer are formatted (about 70 ms) in about the time a fork and the turns cost
BROKEN_PIPE = 3  # the child's exit status when stdout's reader has gone away
_TURN = b"t"


class _OtherGone(Exception):
    """the other process closed its end of the turns: it has ended"""


def worth_it(fd: int, parts: Sequence[list[Piece]]) -> bool:
    """whether writing on two cores pays: Linux, fd a pipe or a file (not a terminal), FROM numbers or more"""
    if sys.platform != "linux" or not hasattr(os, "fork") or len(parts) < 2 or os.isatty(fd):
        return False
    return sum(p.cells for part in parts for p in part if not isinstance(p, str)) >= FROM


def segments(pieces: Iterable[Piece]) -> list[list[Piece]]:
    """the pieces cut before each block but the first: every segment holds one block (the first may be all strings)"""
    out: list[list[Piece]] = [[]]
    seen = False
    for piece in pieces:
        if not isinstance(piece, str):
            if seen:
                out.append([])
            seen = True
        out[-1].append(piece)
    return out


def write(fd: int, parts: Sequence[list[Piece]]) -> None:
    """write every segment to fd in order, the child formatting and writing the odd ones, the parent the even ones"""
    to_child = os.pipe()  # (read end, write end)
    to_parent = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.close(to_child[1])
            os.close(to_parent[0])
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            _take_turns(fd, parts, 1, to_child[0], to_parent[1])
            code = 0
        except BrokenPipeError:
            code = BROKEN_PIPE
        except KeyboardInterrupt:
            code = 128 + signal.SIGINT
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
    _ended(status)


def _take_turns(fd: int, parts: Sequence[list[Piece]], me: int, turn_in: int, turn_out: int) -> None:
    """format my segments (me, me + 2, ...), each written when the turn comes, and hand the turn on after each"""
    for number in range(me, len(parts), 2):
        data = b"".join(p.encode("utf-8") if isinstance(p, str) else p.encoded() for p in parts[number])
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
    """raise as the child ended: a reader gone is a broken pipe, Ctrl-C is Ctrl-C, anything else one line"""
    code = os.waitstatus_to_exitcode(status)
    if code == 0:
        return
    if code == BROKEN_PIPE:
        raise BrokenPipeError()
    if code in (128 + signal.SIGINT, -signal.SIGINT):
        raise KeyboardInterrupt()
    raise AttntraceError(f"the process writing half of the output ended with status {code}; the output is not whole")
