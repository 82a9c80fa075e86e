"""The docs cannot drift: every attntrace command they show is run, its shown output is the real output, and every
command and option is documented.

A fenced block whose first line starts with `$ ` is a transcript: each `$ attntrace ...` line is run and its stdout
must be the lines below it, up to the next `$` line. In any other block, each line starting with `attntrace ` is run
and must succeed. A block titled `title="NAME"` is written to NAME first (a roster, a problem file), and a python
block is executed. Each page runs in a fresh folder holding a copy of samples/.
"""

import re
import shlex
import shutil
from pathlib import Path

import pytest
import typer

from attntrace import cli
from tests.conftest import ROOT

README = ROOT / "README.md"
README_ZH = ROOT / "README.zh-CN.md"
PAGES = [README, README_ZH, *sorted((ROOT / "docs").rglob("*.md"))]
TEXT = {page: page.read_text(encoding="utf-8") for page in PAGES}

# models the docs name as examples, never on a test machine: their line must still parse and name the model in one line
ABSENT_MODELS = ("Qwen/Qwen2-0.5B", "./TinyLlama-1.1B-Chat-v1.0", "bert-base-chinese")

BLOCK = re.compile(r"^```([^\n]*)\n(.*?)^```$", flags=re.S | re.M)


def steps(text: str):
    """what a page shows, in order: ("file", name, text), ("python", code) or ("run", argv, shown stdout or None)"""
    for info, body in BLOCK.findall(text):
        title = re.search(r'title="([^"]+)"', info)
        if title:
            yield "file", title.group(1), body
        elif info.strip() == "python":
            yield "python", body
        elif body.startswith("$ "):
            for chunk in re.split(r"^(?=\$ )", body, flags=re.M)[1:]:
                command, _, shown = chunk[2:].partition("\n")
                assert command.startswith("attntrace "), command
                yield "run", shlex.split(command, comments=True)[1:], shown
        else:
            for line in body.splitlines():
                if line.startswith("attntrace "):
                    yield "run", shlex.split(line, comments=True)[1:], None


def test_the_pages_show_commands():
    for page in (README, README_ZH, ROOT / "docs" / "learner.md", ROOT / "docs" / "teacher.md"):
        assert any(kind == "run" for kind, *_ in steps(TEXT[page])), page


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_shown_runs_and_prints_what_is_shown(page, attntrace, tmp_path, monkeypatch):
    shutil.copytree(ROOT / "samples", tmp_path / "samples")
    monkeypatch.chdir(tmp_path)
    cache = {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_CACHE": str(tmp_path / "hf")}
    for kind, *rest in steps(TEXT[page]):
        if kind == "file":
            name, body = rest
            Path(name).write_text(body, encoding="utf-8")
        elif kind == "python":
            exec(rest[0], {})
        else:
            argv, shown = rest
            line = shlex.join(["attntrace", *argv])
            r = attntrace(*argv, env=cache)
            absent = [m for m in ABSENT_MODELS if m in argv]
            if absent:
                assert (r.code, r.out) == (1, "") and absent[0] in r.err and r.err.count("\n") == 1, line
                continue
            if argv[0] == "explore" or "--explore" in argv:  # needs a terminal; here it must only parse
                assert r.code == 1 and "needs a terminal" in r.err, line
                continue
            assert r.code in ((0, 1) if argv[0] == "check" else (0,)), (line, r.err)  # a sheet with a mistake exits 1
            if shown is not None:
                assert r.out == shown, line


def test_the_rounding_story_is_the_tools_own(attntrace):
    exact = attntrace("run").out
    carried = attntrace("run", "--carry-rounding", "--precision", "1").out
    assert "x1  1.9366  6.6831  1.5951" in exact
    assert "x1  0.1  0.5  0.5" in carried and "x1  2.1  7.2  1.8" in carried
    for page in (README, README_ZH):
        for numbers in ("1.9366", "6.6831", "1.5951", "[2.0, 7.0, 1.5]", "[0.0, 0.5, 0.5]", "[0.1, 0.5, 0.5]",
                        "[2.1, 7.2, 1.8]", "attntrace run --carry-rounding --precision 1"):
            assert numbers in TEXT[page], (page.name, numbers)


def test_every_command_is_on_the_first_pages():
    names = [c.name or c.callback.__name__ for c in cli.app.registered_commands]
    for page in (README, README_ZH):
        for name in names:
            assert f"`attntrace {name}" in TEXT[page], (page.name, name)


def test_every_option_of_every_command_is_documented():
    docs = "\n".join(TEXT.values())
    for name, command in typer.main.get_group(cli.app).commands.items():
        for param in command.params:
            for option in param.opts + param.secondary_opts:
                if option.startswith("--"):
                    assert option in docs, (name, option)


def test_the_readmes_link_to_pages_that_exist():
    for page in (README, README_ZH):
        links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", TEXT[page])
        local = [link for link in links if "://" not in link]
        assert local, page.name
        for link in local:
            assert (ROOT / link).is_file(), (page.name, link)
    assert "README.zh-CN.md" in TEXT[README].split("\n## ")[0]  # the Chinese page is linked from the top


def test_ci_runs_the_readme_test_command():
    command = re.search(r"^(pip install -e[^\n]*?python -m pytest -n auto)$", TEXT[README], flags=re.M).group(1)
    assert command in (ROOT / ".ci" / "run").read_text()


def test_ci_builds_the_docs_strictly():
    ci = (ROOT / ".ci" / "run").read_text()
    assert ".[docs]" in ci and "mkdocs build --strict" in ci
    assert re.search(r"^docs = \[.*mkdocs-material", (ROOT / "pyproject.toml").read_text(), flags=re.M)
    assert "site/" in (ROOT / ".gitignore").read_text().split()


def test_every_page_is_in_the_site():
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in (ROOT / "docs").rglob("*.md"):
        assert str(page.relative_to(ROOT / "docs")) in nav, page


def test_the_python_example_runs(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code = re.search(r"```python\n(.*?)```", TEXT[ROOT / "docs" / "python.md"], flags=re.S).group(1)
    exec(code, {})
    assert "query 9 is out of range; this problem has inputs 1 to 4" in capsys.readouterr().out


def test_the_python_example_of_flash_and_decode_runs(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code = re.findall(r"```python\n(.*?)```", TEXT[ROOT / "docs" / "python.md"], flags=re.S)[1]
    assert "attntrace.flash(" in code
    exec(code, {})
    out = capsys.readouterr().out
    assert "[1, 4, 3]" in out and "Decode step 4 of 4" in out


def test_the_readme_s_first_commands_run(attntrace, tmp_path, monkeypatch):
    """the table of what a newcomer types first: each line runs as it is written"""
    shutil.copytree(ROOT / "samples", tmp_path / "samples")
    monkeypatch.chdir(tmp_path)
    first = TEXT[README].split("\n## First commands\n")[1].split("\n## ")[0]
    lines = re.findall(r"^\| `(attntrace [^`]+)` \|", first, flags=re.M)
    assert len(lines) >= 6 and "attntrace run" in lines and "attntrace explore" in lines
    for line in lines:
        argv = shlex.split(line)[1:]
        r = attntrace(*argv)
        if "explore" in argv:  # needs a terminal; here it must only parse
            assert r.code == 1 and "needs a terminal" in r.err, line
        else:
            assert r.code == 0 and r.out, (line, r.err)


def test_the_readme_leaves_the_figures_to_the_benchmarks_page():
    """README.md is a first page: the speed figures live on the benchmarks page, every one it used to give"""
    assert not re.search(r"\d+(\.\d+)? ?(ms|s|MiB|MB|GB)\b", TEXT[README])
    assert "docs/developer/benchmarks.md" in TEXT[README]
    bench = TEXT[ROOT / "docs" / "developer" / "benchmarks.md"]
    for figure in ("114 ms", "183 ms", "111 ms", "1.16x", "167 against 145 ms", "0.50 s", "1.89 s", "0.80 s", "1.97 s",
                   "3.26 s", "3.98 s", "0.86 s", "2.11 s", "0.90 s", "1.16 s", "1.77 s", "2.12 s", "8.6%", "15.3 ms",
                   "18.3 ms", "22.5 ms", "2.92 s", "188 MiB", "13.46 s", "6.6 GB", "4.76 s", "17.56 s", "3.17 s",
                   "7.47 s", "0.55x", "0.89x", "1.55x", "1.20x", "13.9 ms", "2.5 s"):
        assert figure in bench, figure
