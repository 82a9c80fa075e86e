"""The command line: typer commands (commands.py), the terminal they write to (terminal.py), the output options (output.py)."""

from attntrace.cli.commands import app, main

__all__ = ["app", "main"]
