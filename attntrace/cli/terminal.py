"""What the process is attached to, and the only place that writes to stdout, pauses or reads keys."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from attntrace.errors import AttntraceError, ExitStatus
from attntrace.language import _

if TYPE_CHECKING:
    from attntrace.checkpoints.session import Progress
    from attntrace.files.forked import Segments

PIPE_SIZE = 1 << 20  # what an unprivileged process may ask for by default (/proc/sys/fs/pipe-max-size)
YES, NO = ("1", "true", "yes", "on"), ("0", "false", "no", "off")  # how a yes or a no is spelt in a variable


def ascii_chosen(environ: Mapping[str, str]) -> bool | None:
    """ATTNTRACE_ASCII: True (1, true, yes, on: ASCII lines), False (0, false, no, off: box lines), in any case; None
    when unset or empty (the language decides); anything else a usage error naming it"""
    raw = environ.get("ATTNTRACE_ASCII", "")
    word = raw.strip().lower()
    if not word:
        return None
    if word in YES or word in NO:
        return word in YES
    shown = raw if len(raw) <= 20 and raw.isprintable() else ascii(raw[:20])
    raise AttntraceError(_("ATTNTRACE_ASCII = {value} must be 1, true, yes or on (tables in ASCII lines), or 0, false, "
                           "no or off (box lines)").format(value=shown), ExitStatus.USAGE)


@dataclass
class Environment:
    """the terminal state, injectable so tests can simulate a terminal or a pipe"""

    stdout_isatty: bool = field(default_factory=lambda: sys.stdout is not None and sys.stdout.isatty())
    stdin_isatty: bool = field(default_factory=lambda: sys.stdin is not None and sys.stdin.isatty())
    no_color: bool = field(default_factory=lambda: bool(os.environ.get("NO_COLOR")))
    width: int | None = None  # None: the terminal's own, asked only when a table is drawn for it
    height: int | None = None  # None: the terminal's own, asked only when pausing
    stdout: IO[str] | None = field(default_factory=lambda: sys.stdout)  # None: closed (>&-)
    stderr: IO[str] = field(default_factory=lambda: sys.stderr)
    read_key: Callable[[], str] | None = None

    def colour(self, choice: str, to_file: bool) -> bool:
        """auto: colour only for a terminal and only without NO_COLOR; always and never as said"""
        if choice == "always":
            return True
        if choice == "never" or to_file:
            return False
        return self.stdout_isatty and not self.no_color

    def columns(self) -> int:
        """the terminal's width (COLUMNS first, 100 when it cannot say)"""
        if self.width is None:
            import shutil  # shutil brings in zlib, bz2 and lzma: only a table drawn for a terminal needs it

            self.width = shutil.get_terminal_size((100, 24)).columns
        return self.width

    def rows(self) -> int:
        """the terminal's height (LINES first, 24 when it cannot say)"""
        if self.height is None:
            import shutil

            self.height = shutil.get_terminal_size((100, 24)).lines
        return self.height

    def can_pause(self, to_file: bool) -> bool:
        """pausing needs a person: stdin and stdout both terminals, and stdout not redirected to a file"""
        return self.stdin_isatty and self.stdout_isatty and not to_file

    @contextmanager
    def progress(self, text: str) -> Iterator[Progress | None]:
        """a progress line on stderr while a model runs up to a layer, told (k, L) as each layer is done, only when a
        person is watching stderr (None otherwise) and only once it has taken more than a second"""
        if not self.stderr.isatty():
            yield None
            return
        from attntrace.cli.progress import LayerProgress

        shown = LayerProgress(self.stderr, self.no_color, text)
        try:
            yield shown.tell
        finally:
            shown.stop()

    def message(self, text: str) -> None:
        self.stderr.write(text + "\n")
        self.stderr.flush()

    def write(self, text: str) -> None:
        """write data to stdout; a reader that has gone away (| head) raises BrokenPipeError, which main() ends quietly"""
        if self.stdout is None:
            raise AttntraceError(_("stdout is closed; redirect it to a file (> FILE), or give -o FILE where the "
                                   "command takes it"))
        with self._writing():
            self.stdout.write(text)
            self.stdout.flush()

    def write_segments(self, segments: Segments) -> None:
        """write a text given in segments, blocks of rows formatted as they are written: on two cores where that pays,
        a forked process formatting and writing every other block (files/forked.py)"""
        fd = self._fd()
        if fd is None or not segments.worth_sharing(fd):  # through sys.stdout: a Windows console takes text, not bytes
            for text in segments.texts():
                self.write(text)
            return
        self.write("")  # what is still held in stdout's buffer goes out before the fork (never twice)
        with self._writing():
            segments.write(fd)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """a failed write to stdout as one line; a reader gone (| head) stays BrokenPipeError, which main() ends quietly"""
        try:
            yield
        except BrokenPipeError:
            raise
        except OSError as e:
            self.quiet_stdout()
            raise AttntraceError(_("cannot write to stdout: {reason}").format(reason=e.strerror or e)) from None

    def _fd(self) -> int | None:
        """stdout's file descriptor, or None when it has none (closed, or text gathered in memory)"""
        try:
            return self.stdout.fileno() if self.stdout is not None else None
        except (OSError, ValueError, AttributeError):
            return None

    def widen_pipe(self) -> None:
        """a pipe on stdout holds 1 MB rather than 64 KB (Linux), so a large output reaches its reader in fewer turns"""
        try:
            import fcntl
            import stat

            fd = self._fd()
            if fd is not None and stat.S_ISFIFO(os.fstat(fd).st_mode):
                fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_SIZE)
        except (ImportError, OSError, ValueError, AttributeError):  # not Linux, not a real file, or over the user's limit
            pass

    def quiet_stdout(self) -> None:
        """after a broken pipe: point stdout at /dev/null, so the interpreter's last flush cannot fail"""
        if self.stdout is sys.stdout:
            _silence_stdout()

    def pause(self, more: bool = False, ascii_lines: bool = False) -> bool:
        """wait for a key on the terminal; False when the user asks to quit. more: the step goes on past the screen;
        ascii_lines: the prompt's rules and dot in ASCII, as the tables' lines are"""
        prompt = _("── Enter: more of this step · q: quit ──") if more else _("── Enter: next step · q: quit ──")
        if ascii_lines:
            prompt = prompt.replace("─", "-").replace(" · ", " | ").replace("·", " | ")
        self.stderr.write(prompt)
        self.stderr.flush()
        key = (self.read_key or _read_key)()
        self.stderr.write("\r\033[K")
        self.stderr.flush()
        return key.lower() != "q"


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


_restore_tty: Callable[[], None] | None = None  # set while a key is being read in cbreak mode


def _read_key() -> str:
    """one key press, without waiting for Enter where the platform allows it"""
    global _restore_tty
    try:
        import termios
        import tty
    except ImportError:  # Windows
        import msvcrt

        return msvcrt.getwch()  # type: ignore[attr-defined]
    fd = sys.stdin.fileno()
    old = termios.tcgetattr(fd)
    _restore_tty = lambda: termios.tcsetattr(fd, termios.TCSADRAIN, old)  # noqa: E731
    try:
        tty.setcbreak(fd)
        return os.read(fd, 1).decode(errors="replace")
    finally:
        _restore_tty()
        _restore_tty = None


def exit_on_interrupt() -> None:
    """Ctrl-C ends the run at once with status 130 and no traceback.

    The handler exits the process itself: an exception raised from a signal handler can land in a finalizer,
    where Python prints and swallows it, and the run would go on. Data is written only once rendered, so
    nothing half-made is left on stdout.
    """

    def interrupted(signum: int, frame: object) -> None:
        if _restore_tty is not None:
            _restore_tty()
        try:
            sys.stderr.write("\n")
            sys.stderr.flush()
        finally:
            os._exit(ExitStatus.ERROR_CTRL_C)

    signal.signal(signal.SIGINT, interrupted)
