"""The README cannot drift: its transcripts are real output, and every command and option is documented."""

import re
import shlex

from attntrace import cli
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_transcript_in_the_readme_is_the_real_output(attntrace):
    transcripts = re.findall(r"```\n\$ attntrace (.*?)\n(.*?)```", README, flags=re.S)
    assert transcripts
    for command, expected in transcripts:
        r = attntrace(*shlex.split(command))
        marked = command.startswith("check")  # a sheet with a mistake exits 1
        assert r.code in ((0, 1) if marked else (0,)) and r.out == expected, command


def test_every_command_is_documented():
    names = [c.name or c.callback.__name__ for c in cli.app.registered_commands]
    for name in names:
        assert f"`attntrace {name}" in README, name


def test_every_shared_option_is_documented():
    for option in ("--format", "--precision", "--carry-rounding", "--pause", "--scale", "--scale-by", "--mask",
                   "--window", "--heads", "--output", "--color", "--x", "--w-q"):
        assert option in README, option


def test_ci_runs_the_readme_test_command():
    command = re.search(r"^(pip install -e[^\n]*?python -m pytest)$", README, flags=re.M).group(1)
    assert command in (ROOT / ".ci" / "run").read_text()


def test_the_python_example_in_the_readme_runs(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code = re.search(r"## From Python\n\n```python\n(.*?)```", README, flags=re.S).group(1)
    exec(code, {})
    assert "query 9 is out of range; this problem has inputs 1 to 4" in capsys.readouterr().out
