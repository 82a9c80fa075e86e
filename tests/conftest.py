from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from attntrace import cli
from attntrace.terminal import Environment

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"


class Run:
    def __init__(self, result):
        self.code = result.exit_code
        self.out = result.stdout
        self.err = result.stderr
        self.exception = result.exception


@pytest.fixture
def attntrace():
    """run the command line in-process, as a pipe would (no terminal)"""

    def invoke(*args: str, input: str | bytes | None = None, env: dict[str, str] | None = None) -> Run:
        result = CliRunner().invoke(cli.app, [str(a) for a in args], input=input, env=env)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return Run(result)

    return invoke


@pytest.fixture
def terminal(monkeypatch):
    """make the command line believe it writes to a terminal of the given width"""

    def set_terminal(width: int = 100, keys: str = "") -> None:
        pressed = iter(keys)
        monkeypatch.setattr(cli, "environment", lambda: Environment(
            stdout_isatty=True, stdin_isatty=True, no_color=False, width=width, read_key=lambda: next(pressed)))

    return set_terminal
