"""The command line: typer commands (commands.py), the terminal they write to (terminal.py), the output options
(output.py), files written whole (files.py). Importing it is light, so Ctrl-C is handled before the heavy imports."""

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
    """the console script; args None: this process's own arguments and terminal"""
    if args is None:
        from attntrace.cli.terminal import exit_on_interrupt

        exit_on_interrupt()
    from attntrace.cli.commands import main as run

    return run(args, env)


def __getattr__(name: str) -> Any:
    if name == "app":
        from attntrace.cli.commands import app

        return app
    raise AttributeError(f"module 'attntrace.cli' has no attribute {name!r}")
