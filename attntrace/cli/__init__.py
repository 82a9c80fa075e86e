"""The command line: the typer commands (commands.py) made of options declared once (options.py) and read by typer
(reading.py), the commonest lines read without typer (quick.py), what the tracing commands do (tracing.py), failures
said in one line (guard.py), the terminal they write to (terminal.py), the output options (output.py). Importing it is
light, so Ctrl-C is handled before the heavy imports."""

from __future__ import annotations

import os
import signal
import sys

if os.path.basename(sys.argv[0] if sys.argv else "") in ("attntrace", "attntrace.exe"):  # the console script:
    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(130))  # Ctrl-C ends it quietly, even while importing

from collections.abc import Sequence  # noqa: E402
from typing import TYPE_CHECKING, Any  # noqa: E402

if TYPE_CHECKING:
    from attntrace.cli.terminal import Environment

__all__ = ["app", "main"]


def main(args: Sequence[str] | None = None, env: Environment | None = None) -> int:
    """the command line on args (None: this process's own arguments and terminal, as the console script runs it)"""
    from attntrace.cli.guard import EXPECTED, attach_streams, failure
    from attntrace.cli.quick import recognise
    from attntrace.cli.terminal import Environment, ascii_chosen, exit_on_interrupt

    if args is None:
        exit_on_interrupt()
        attach_streams()
    env = env or Environment()
    argv = list(sys.argv[1:] if args is None else args)
    from attntrace import choosing, language

    try:
        language.use(choosing.from_arguments(argv, os.environ))
        ascii_chosen(os.environ)  # a value it cannot read is refused before anything is done, as ATTNTRACE_LANG's
        rest = choosing.without_option(argv)
        quick = recognise(rest)
        if quick is not None:  # run or step, read without typer
            return quick(env)
        from attntrace.cli.reading import read

        return read(argv if rest else [], env)  # --lang alone is bare `attntrace` in that language: its help
    except EXPECTED as e:
        return failure(env, e)


def __getattr__(name: str) -> Any:
    if name == "app":
        from attntrace.cli.commands import app

        return app
    raise AttributeError(f"module 'attntrace.cli' has no attribute {name!r}")
