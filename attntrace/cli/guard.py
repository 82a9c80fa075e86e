"""The one place where an expected failure becomes one line on stderr and an exit status, whichever way the command
line was read (typer in commands.py, or quick.py), and the streams set up before anything is written. Callers catch
EXPECTED themselves (`except EXPECTED as e: return failure(env, e)`), so no frame is added between the command line
and the work."""

from __future__ import annotations

import errno
import sys

from attntrace.cli.terminal import Environment
from attntrace.errors import AttntraceError, ExitStatus, OutOfRange, Setting
from attntrace.escape import visible
from attntrace.language import _

OPTIONS = {"query": "--input", "layer": "--layer", "head": "--head", "window": "--window", "sinks": "--sinks",
           "block": "--block", "carry_rounding": "--precision"}  # the option that sets each library argument


EXPECTED = (AttntraceError, MemoryError, UnicodeEncodeError, OSError)  # what failure() turns into one line


def failure(env: Environment, error: BaseException) -> int:
    """an expected failure (one of EXPECTED) said in one line on stderr; its exit status"""
    if isinstance(error, OutOfRange):  # an option's value out of range is a usage error, as any bad option value
        if error.name in OPTIONS:
            return fail(env, error.as_option(OPTIONS[error.name]), ExitStatus.USAGE)
        return fail(env, str(error), error.exit_code)
    if isinstance(error, AttntraceError):
        return fail(env, worded(error), error.exit_code)
    if isinstance(error, BrokenPipeError):
        env.quiet_stdout()
        return ExitStatus.SUCCESS
    if isinstance(error, MemoryError):
        return fail(env, _("out of memory; give a smaller problem, or one input at a time with step --input N"),
                    ExitStatus.ERROR)
    if isinstance(error, UnicodeEncodeError):
        return fail(env, _("this output's encoding ({encoding}) cannot show {text}; set PYTHONIOENCODING=utf-8, or "
                           "write to a file with -o (always UTF-8)").format(
                               encoding=error.encoding, text=repr(error.object[error.start:error.end])), ExitStatus.ERROR)
    if isinstance(error, OSError):
        why = error.strerror or str(error)
        said = (_("{file}: {reason}").format(file=error.filename, reason=why) if error.filename else
                _("cannot write to stdout: {reason}").format(reason=why) if error.errno in (errno.ENOSPC, errno.EIO)
                else why)
        env.quiet_stdout()
        return fail(env, said, ExitStatus.ERROR)
    raise error


def worded(error: AttntraceError) -> str:
    """an error as the command line says it: a setting by its option (--window 0), not as a Python argument"""
    return error.worded(OPTIONS) if isinstance(error, Setting) else str(error)


def fail(env: Environment, message: str, code: int) -> int:
    env.message(f"attntrace: {visible(message)}")  # a message quoting a file's text is shown, never obeyed
    return code


class _ClosedStdin:
    """stdin closed (<&-): reading it is one clear line, and nothing else needs it"""

    class _Buffer:
        def read(self, size: int = -1) -> bytes:
            raise AttntraceError(_("stdin is closed; give a file instead of -"))

    buffer = _Buffer()

    def isatty(self) -> bool:
        return False

    def read(self, size: int = -1) -> str:
        raise AttntraceError(_("stdin is closed; give a file instead of -"))


def attach_streams() -> None:
    """UTF-8 output whatever the locale says (a cp1252 or ascii stdout cannot show Σ or 我); a closed stdin named"""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", "") or "").lower().replace("-", "").replace("_", "")
        if stream is not None and encoding != "utf8":
            try:
                stream.reconfigure(encoding="utf-8", errors="backslashreplace")  # type: ignore[union-attr]
            except (AttributeError, ValueError, OSError):
                pass
    if sys.stdin is None:
        sys.stdin = _ClosedStdin()  # type: ignore[assignment]
