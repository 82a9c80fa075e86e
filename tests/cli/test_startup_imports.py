"""A plain run imports only what it needs: no rich, no file readers when there is no file, no exports when none is
asked for. The README lists what it does import."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from pathlib import Path

import attntrace

IMPORTED = """
import contextlib, io, json, sys
from attntrace.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps([code, sorted(sys.modules)]))
"""


def imported(*args: str) -> set[str]:
    """the modules a command imports, without site (an editable install's finder imports pathlib, say, before any)"""
    path = os.pathsep.join([str(Path(attntrace.__file__).parents[1]), *site.getsitepackages()])
    out = subprocess.run([sys.executable, "-S", "-c", IMPORTED, *args], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": path}).stdout
    code, modules = json.loads(out.splitlines()[-1])
    assert code == 0
    return set(modules)


def test_a_plain_run_of_the_built_in_example_imports_no_rich_and_no_file_reader():
    modules = imported("run", "--format", "plain")
    assert {"numpy", "attntrace.render.plain", "attntrace.core.engine"} <= modules
    never = {"rich", "attntrace.render.table", "attntrace.render.export", "attntrace.files.jsonfile",
             "attntrace.files.csvfile", "attntrace.files.npyfile", "tempfile", "zipfile", "typer", "click",
             "attntrace.cli.commands", "shutil", "decimal", "pathlib", "attntrace.files.written"}
    assert not never & modules, never & modules


def test_a_json_problem_file_brings_in_its_reader_alone(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"x": [[1, 0], [0, 1]], "scale": false}')
    modules = imported("run", str(path), "--format", "plain")
    assert "attntrace.files.jsonfile" in modules
    assert not {"attntrace.files.csvfile", "attntrace.files.npyfile", "rich"} & modules
