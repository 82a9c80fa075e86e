"""The command line: typer commands (app.py), the terminal they write to (terminal.py), the output options (output.py)."""

from attntrace.cli.app import app, main

__all__ = ["app", "main"]
