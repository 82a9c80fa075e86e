"""Big traces: each figure of the scale table against a baseline measured in the same run, with peak memory.

    python benchmarks/bench_scale.py [--quick] [--only NAME ...] [--repeat N]

Every case runs in its own child process, piped into a reader that counts the bytes; its time is wall time and its
peak memory is the largest resident set of the child and of any process it started and waited for, such as the second
process that writes a big JSON trace (resource.getrusage(RUSAGE_CHILDREN) in a process that ran only it).
With --repeat N each case and its baseline run N times, in turns, and the median time is given (on a busy machine).
Children may write bytecode (to a cache in a temporary folder), as an installed package has it.
The JSON baseline is numpy + orjson: load the file, compute the same seven arrays per head, write them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# runs one command, counts what it prints, and says its wall time, peak memory and output size as JSON
MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
size = 0
while chunk := child.stdout.read(1 << 20):
    size += len(chunk)
code = child.wait()
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(json.dumps({"seconds": seconds, "peak": peak, "bytes": size, "code": code}))
"""

# where the time of a piped plain run goes: loading the file, the engine, the plain text
PHASES = """
import sys, time
start = time.perf_counter()
import attntrace
from attntrace.render.document import render_trace
from attntrace.core.engine import trace
imported = time.perf_counter()
problem = attntrace.load(sys.argv[1])
loaded = time.perf_counter()
t = trace(problem)
traced = time.perf_counter()
render_trace(t, "plain")
print(imported - start, loaded - imported, traced - loaded, time.perf_counter() - traced)
"""

# the baseline: numpy + orjson. "json" writes q, k, v, scores, scaled, weights, output per head; "compute" only
# computes them; "row" computes one query's row (argv[3], from 1) of each; "csv" writes the arrays at 4 decimals;
# "same" writes text like attntrace's: the problem's matrices too, a row a line, ", " between numbers
BASELINE = """
import sys, numpy as np, orjson
p = orjson.loads(open(sys.argv[1], "rb").read()); mode = sys.argv[2]; h = p.get("heads", 1)
x, w_q, w_k, w_v = (np.array(p[key], dtype=np.float64) for key in ("x", "w_q", "w_k", "w_v"))
rows = lambda m: (b"\\n".join([orjson.dumps(r, option=orjson.OPT_SERIALIZE_NUMPY) for r in m]).replace(b",", b", ")
                  .replace(b"\\n", b",\\n      "))
if mode == "same":
    for m in (x, w_q, w_k, w_v):
        sys.stdout.buffer.write(rows(m))
q, k, v = (x[int(sys.argv[3]) - 1:int(sys.argv[3])] if mode == "row" else x) @ w_q, x @ w_k, x @ w_v
d_k, d_v, out = q.shape[1] // h, v.shape[1] // h, sys.stdout.buffer
for a in range(h):
    qa, ka, va = (np.ascontiguousarray(m[:, a * d:(a + 1) * d]) for m, d in ((q, d_k), (k, d_k), (v, d_v)))
    scores = qa @ ka.T; scaled = scores / np.sqrt(d_k); e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    weights = e / e.sum(axis=1, keepdims=True); arrays = dict(q=qa, k=ka, v=va, scores=scores, scaled=scaled,
                                                              weights=weights, output=weights @ va)
    if mode == "json":
        out.write(orjson.dumps(arrays, option=orjson.OPT_SERIALIZE_NUMPY))
    if mode == "same":
        for m in arrays.values():
            out.write(rows(m))
    if mode == "csv":
        for m in arrays.values():
            np.savetxt(out, m, fmt="%.4f", delimiter=",")
"""


@dataclass(frozen=True)
class Run:
    seconds: float
    peak: int  # bytes
    size: int  # bytes printed


ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def measure(args: list[str], repeat: int = 1) -> Run:
    """the median wall time and the largest peak memory of `repeat` runs of args, each in a fresh process"""
    runs = []
    for _ in range(repeat):
        result = subprocess.run([sys.executable, "-c", MEASURE, *args], capture_output=True, text=True, check=True,
                                env=ENV)
        runs.append(json.loads(result.stdout))
        if runs[-1]["code"] != 0:
            raise SystemExit(f"failed (exit {runs[-1]['code']}): {' '.join(args)}")
    return Run(statistics.median(r["seconds"] for r in runs), max(r["peak"] for r in runs), runs[-1]["bytes"])


def pair(first: list[str], second: list[str], repeat: int) -> tuple[Run, Run]:
    """first and second run repeat times in turns: each one's median time and largest peak"""
    runs = [(measure(first), measure(second)) for _ in range(repeat)]
    return _median([a for a, _ in runs]), _median([b for _, b in runs])


def _median(runs: list[Run]) -> Run:
    return Run(statistics.median(r.seconds for r in runs), max(r.peak for r in runs), runs[-1].size)


def attntrace(*args: object) -> list[str]:
    """the console script a user runs (python -m attntrace adds runpy's frames)"""
    return [str(Path(sys.executable).with_name("attntrace")), *map(str, args)]


def baseline(path: Path, mode: str, *more: object) -> list[str]:
    return [sys.executable, "-c", BASELINE, str(path), mode, *map(str, more)]


def problem(folder: Path, name: str, n: int, d_model: int, heads: int = 1, d_k: int | None = None) -> Path:
    """a random problem file: x is n x d_model, each W is d_model x d_k (d_model when not given), 6 decimals"""
    rng = np.random.default_rng(n * 7919 + d_model)
    d_k = d_k or d_model
    path = folder / f"{name}.json"
    w = lambda: (rng.normal(size=(d_model, d_k)) / np.sqrt(d_model)).round(6).tolist()  # noqa: E731
    path.write_text(json.dumps({"x": rng.normal(size=(n, d_model)).round(6).tolist(), "w_q": w(), "w_k": w(),
                                "w_v": w(), "heads": heads}))
    return path


def trace_bytes(n: int, d_model: int, heads: int = 1, d_k: int | None = None) -> int:
    """the trace's own arrays: per head q, k, v and output (n x d_k / d_v) and scores, scaled, weights (n x n)"""
    d = (d_k or d_model) // heads
    return 8 * heads * (4 * n * d + 3 * n * n)


def mb(size: int) -> str:
    return f"{size / 1e6:,.0f} MB"


def line(label: str, run: Run, base: Run | None = None, note: str = "") -> None:
    ratio = f"   {run.seconds / base.seconds:5.2f}x" if base is not None else ""
    print(f"  {label:<46} {run.seconds:8.2f} s  {mb(run.peak):>10} peak  {mb(run.size):>9} out{ratio}  {note}")


SIZES = {  # full, quick
    "plain": ((512, 768, 12), (256, 384, 6)),
    "json_mid": ((2000, 32), (800, 32)),
    "big": ((5000, 64), (1500, 64)),
    "heads": ((1000,), (200,)),
    "step": ((20_000, 64), (5000, 64)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, a minute or so in all")
    parser.add_argument("--only", nargs="*", default=None,
                        help="some of: startup plain json json_mid json_big csv_big explain table step")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each case, taken in turns (median time)")
    opts = parser.parse_args()
    size = {key: value[opts.quick] for key, value in SIZES.items()}
    wanted = lambda name: opts.only is None or name in opts.only  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ENV["PYTHONPYCACHEPREFIX"] = str(folder / "bytecode")
        measure(attntrace("run"))  # writes the bytecode
        if wanted("startup"):
            repeat = 7 if opts.quick else 21
            base, run = pair([sys.executable, "-c", "import numpy"], attntrace("run"), repeat)
            print(f"start-up, median of {repeat}, taken in turns (target <= 1.25x)")
            line('python -c "import numpy"', base)
            line("attntrace run (built-in example)", run, base)
        n, d_model, heads = size["plain"]
        if wanted("plain") or wanted("json"):
            path = problem(folder, "plain", n, d_model, heads)
        if wanted("plain"):
            print(f"piped plain run, n = {n}, d_model = {d_model}, {heads} heads (target <= 1.0 s)")
            compute, run = pair(baseline(path, "compute"), attntrace("run", path), opts.repeat)
            line("numpy + orjson: load and compute", compute)
            line("attntrace run FILE | reader", run, compute)
            phases = subprocess.run([sys.executable, "-c", PHASES, str(path)], capture_output=True, text=True, check=True,
                                    env=ENV).stdout.split()
            print("  in one process: " + ", ".join(f"{what} {float(seconds):.2f} s" for what, seconds in
                                                   zip(("imports", "load", "engine", "plain text"), phases)))
        if wanted("json"):
            own = trace_bytes(n, d_model, heads)
            print(f"--format json, n = {n}, d_model = {d_model}, {heads} heads "
                  f"(target <= 2x, peak <= 2x the trace's arrays, {mb(2 * own)})")
            base, run = pair(baseline(path, "json"), attntrace("run", path, "--format", "json"), opts.repeat)
            same = measure(baseline(path, "same"), opts.repeat)
            line("numpy + orjson: load, compute, write", base)
            line("numpy + orjson, text like attntrace's", same, base, "(the problem too, a row a line, \", \")")
            line("attntrace run FILE --format json", run, base, f"({run.seconds / same.seconds:.2f}x the line above)")
        for name, fmt, (n, d_model), target in (("json_mid", "json", size["json_mid"], "600 MB"),
                                                ("json_big", "json", size["big"], "1.5 GB"),
                                                ("csv_big", "csv", size["big"], "1.5 GB")):
            if not wanted(name):
                continue
            path = problem(folder, name, n, d_model)
            print(f"run --format {fmt}, n = {n}, d_model = {d_model} (target: peak <= {target}; "
                  f"the trace's arrays are {mb(trace_bytes(n, d_model))})")
            base, run = pair(baseline(path, fmt), attntrace("run", path, "--format", fmt), opts.repeat)
            line(f"numpy + orjson: load, compute, write {fmt}", base)
            line(f"attntrace run FILE --format {fmt}", run, base)
        if wanted("explain"):
            n, d_model = size["big"]
            print(f"explain --input 1 (target: linear in n, <= 5 s at n = {n})")
            for count in (n // 2, n):
                path = problem(folder, f"explain{count}", count, d_model)
                base, run = pair(attntrace("step", path, "--input", 1), attntrace("explain", path, "--input", 1),
                                 opts.repeat)
                line(f"attntrace step FILE --input 1, n = {count}", base)
                line(f"attntrace explain FILE --input 1, n = {count}", run, base)
        if wanted("table"):
            (heads,) = size["heads"]
            path = problem(folder, "heads", 4, 8, heads, d_k=heads)
            print(f"{heads} heads, n = 4, d_model = 8, d_k = 1 (target: table <= 5x plain)")
            base, run = pair(attntrace("run", path, "--format", "plain"), attntrace("run", path, "--format", "table"),
                             opts.repeat)
            line("attntrace run FILE --format plain", base)
            line("attntrace run FILE --format table", run, base)
        if wanted("step"):
            n, d_model = size["step"]
            path = problem(folder, "step", n, d_model)
            print(f"step --input N, n = {n}, d_model = {d_model} (keep O(n d): one n x n matrix is {mb(8 * n * n)})")
            base, run = pair(baseline(path, "row", n // 2), attntrace("step", path, "--input", n // 2), opts.repeat)
            line("numpy + orjson: load, compute one row", base)
            line(f"attntrace step FILE --input {n // 2}", run, base)


if __name__ == "__main__":
    main()
