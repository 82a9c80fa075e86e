from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import settings

from attntrace import cli
from attntrace.cli.terminal import Environment

# the same examples on every run and machine, so a result can be reproduced; HYPOTHESIS_PROFILE=explore draws new
# ones each run, to look for what the fixed ones miss
settings.register_profile("fixed", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
# the tests read English unless they ask for another language, whatever the machine's locale (subprocesses too)
os.environ["ATTNTRACE_LANG"] = "en"


@pytest.fixture(autouse=True)
def _english_after():
    """a test that writes Chinese in-process leaves English behind it"""
    yield
    from attntrace import language

    language.use("en")


class Run:
    def __init__(self, code: int, out: str, err: str):
        self.code = code
        self.out = out
        self.err = err


@pytest.fixture
def environment():
    """what the command line is attached to: a pipe unless a test sets a terminal (see `terminal`)"""
    return {"make": lambda: Environment(stdout_isatty=False, stdin_isatty=False)}


@pytest.fixture
def attntrace(environment):
    """run the command line in-process through cli.main, with stdin, stdout, stderr and os.environ isolated"""

    def invoke(*args: str, input: str | bytes | None = None, env: dict[str, str] | None = None) -> Run:
        runner = CliRunner()
        with runner.isolation(input=input, env=env) as (out, err, _):
            code = cli.main([str(a) for a in args], env=environment["make"]())
            sys.stdout.flush()
            sys.stderr.flush()
            return Run(code, out.getvalue().decode("utf-8"), err.getvalue().decode("utf-8"))

    return invoke


@pytest.fixture
def terminal(environment):
    """make the command line believe it writes to a terminal of the given width"""

    def set_terminal(width: int = 100, keys: str = "") -> None:
        pressed = iter(keys)
        environment["make"] = lambda: Environment(stdout_isatty=True, stdin_isatty=True, no_color=False, width=width,
                                                  read_key=lambda: next(pressed))

    return set_terminal


@pytest.fixture(scope="session")
def small_checkpoint(tmp_path_factory):
    """the six-layer checkpoint of cut-down widths scripts/make_checkpoint.py writes (136 MB), made once a session"""
    sys.path.insert(0, str(ROOT / "scripts"))
    import make_checkpoint

    return make_checkpoint.write("small", tmp_path_factory.mktemp("checkpoint") / "small")
