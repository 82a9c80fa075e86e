"""A plain run imports none of the heavy libraries it does not need (rich, typer and click, Textual, orjson, a real
model's readers) and none of the readers, writers and forms of what it is not asked for: the heavy boundaries, where
imports wait until they are needed. What start-up costs in all is benchmarks/bench_cli.py's to measure."""

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


HEAVY = {"rich", "typer", "click", "textual", "orjson", "safetensors", "tokenizers"}  # each waits until it is needed
# pathlib, measured: more than 2% of start-up


def test_a_plain_run_of_the_built_in_example_imports_no_heavy_library_and_no_file_reader():
    modules = imported("run", "--format", "plain")
    assert {"numpy", "attntrace.render.plain", "attntrace.core.engine"} <= modules
    never = {*HEAVY, "pathlib", "attntrace.cli.commands", "attntrace.checkpoints.session", "attntrace.explore.app",
             "attntrace.render.table", "attntrace.render.export", "attntrace.views.explain",
             "attntrace.files.jsonfile", "attntrace.files.csvfile", "attntrace.files.npyfile", "attntrace.files.written",
             "attntrace.homework.sheet"}
    assert not never & modules, never & modules


def test_a_json_problem_file_brings_in_its_reader_alone(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"x": [[1, 0], [0, 1]], "scale": false}')
    modules = imported("run", str(path), "--format", "plain")
    assert "attntrace.files.jsonfile" in modules
    assert not {"attntrace.files.csvfile", "attntrace.files.npyfile", "rich"} & modules
