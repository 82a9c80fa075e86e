"""Wall time and peak memory of `attntrace flash` and `attntrace decode` against `attntrace run` on the same problem.

    python benchmarks/bench_inference.py [--tokens N] [--repeat N] [--json-repeat N] [--python PATH]

The problem is one head of N tokens (default 4096) with small sizes and a causal mask, written by `attntrace new`.
Each command runs in a fresh process, the three commands taken in turns so that a busy machine slows each alike; the
figure is the median, and the ratio is to run's median. Plain text is piped to /dev/null (target: flash and decode in
at most 2x run's time); JSON is written to a file with -o. Peak memory is each child's largest resident set
(os.wait4's resource usage), the largest over its runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
COMMANDS = ("run", "flash", "decode")
TARGET = 2.0  # flash and decode, plain, at most this many times run's time


def timed(args: list[str], cwd: str) -> tuple[float, int]:
    """one run of a command: its wall time in seconds and its peak resident memory in bytes"""
    start = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV, cwd=cwd)
    assert child.stderr is not None
    errors = child.stderr.read()
    _pid, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if child.returncode:
        raise SystemExit(f"{' '.join(args)} failed: {errors.decode(errors='replace')}")
    return wall, usage.ru_maxrss * 1024  # kilobytes on Linux


def measured(lines: dict[str, list[str]], repeat: int, cwd: str) -> dict[str, tuple[float, int]]:
    """each command's median wall time and largest peak memory, the commands run in turns"""
    walls: dict[str, list[float]] = {name: [] for name in lines}
    peaks: dict[str, int] = dict.fromkeys(lines, 0)
    for _ in range(repeat):
        for name, args in lines.items():
            wall, peak = timed(args, cwd)
            walls[name].append(wall)
            peaks[name] = max(peaks[name], peak)
    return {name: (statistics.median(walls[name]), peaks[name]) for name in lines}


def report(title: str, figures: dict[str, tuple[float, int]], shown: dict[str, str], target: bool) -> None:
    print(title)
    base = figures["run"][0]
    for name, (wall, peak) in figures.items():
        ratio = wall / base
        mark = "" if not target or name == "run" else ("   ok" if ratio <= TARGET else f"   over {TARGET:g}x")
        print(f"  {shown[name]:54} {wall:8.2f} s  {ratio:5.2f}x  peak {peak / 2**20:7.0f} MiB{mark}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=4096, help="tokens in the problem (default 4096)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each plain command (default 5)")
    parser.add_argument("--json-repeat", type=int, default=3, help="runs of each JSON command (default 3; 0: none)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the environment to measure")
    opts = parser.parse_args()
    script = str(Path(opts.python).with_name("attntrace"))
    with tempfile.TemporaryDirectory() as tmp:
        ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "bytecode")
        problem = Path(tmp) / "problem.json"
        subprocess.run([script, "new", "--tokens", str(opts.tokens), "--d-model", "8", "--d-k", "8", "--d-v", "8",
                        "--init", "normal", "--seed", "1", "-o", str(problem)], check=True, env=ENV, cwd=tmp)
        data = json.loads(problem.read_text())
        problem.write_text(json.dumps({**data, "mask": "causal"}))
        size = f"n = {opts.tokens}, d_model = d_k = d_v = 8, one head, causal"
        plain = {name: [script, name, str(problem), "--format", "plain"] for name in COMMANDS}
        shown = {name: f"attntrace {name} problem.json --format plain" for name in COMMANDS}
        report(f"plain to /dev/null, {size} (median of {opts.repeat}, in turns; target <= {TARGET:g}x run)",
               measured(plain, opts.repeat, tmp), shown, True)
        if opts.json_repeat:
            out = str(Path(tmp) / "out.json")
            as_json = {name: [script, name, str(problem), "--format", "json", "-o", out] for name in COMMANDS}
            shown = {name: f"attntrace {name} problem.json --format json -o out.json" for name in COMMANDS}
            report(f"JSON to a file, {size} (median of {opts.json_repeat}, in turns)",
                   measured(as_json, opts.json_repeat, tmp), shown, False)


if __name__ == "__main__":
    main()
