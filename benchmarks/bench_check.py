"""Marking a class: 500 sheets in one `attntrace check` call, against marking one sheet, in the same run.

    python benchmarks/bench_check.py [--against DIR]

--against DIR also marks the class with another source tree of attntrace (a clone or worktree, through PYTHONPATH),
the two taken in turns so that a busy machine slows each alike. The sheets are the key of a two-head causal problem
with W_O at 2 decimals, every tenth with one of the usual mistakes (so diagnosis runs too), in one class directory
beside its problem.json.
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

CLASS_SIZE = 500


HERE = Path(__file__).resolve().parent.parent


def walls(args: list[str], repeat: int, trees: list[Path]) -> list[float]:
    """the median wall time of args run by each tree's attntrace, the trees taken in turns"""
    times: list[list[float]] = [[] for _ in trees]
    for _ in range(repeat):
        for tree, kept in zip(trees, times):
            start = time.perf_counter()
            subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env={**os.environ, "PYTHONPATH": str(tree)})
            kept.append(time.perf_counter() - start)
    return [statistics.median(kept) for kept in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another source tree of attntrace, measured in turns")
    trees = [HERE] + ([parser.parse_args().against.resolve()] if parser.parse_args().against else [])
    py = sys.executable
    attntrace = [py, "-m", "attntrace"]
    with tempfile.TemporaryDirectory() as tmp:
        room = Path(tmp) / "class"
        room.mkdir()
        problem = Path(__file__).resolve().parent.parent / "samples" / "two_heads.json"
        (room / "problem.json").write_text(problem.read_text())
        key = subprocess.run([*attntrace, "worksheet", str(problem), "--key", "--format", "json"], capture_output=True,
                             text=True, check=True, env={**os.environ, "PYTHONPATH": str(HERE)}).stdout
        wrong = json.loads(key)
        wrong["heads"][0]["scaled"] = wrong["heads"][0]["scores"]  # the scaling forgotten in head 1
        for i in range(CLASS_SIZE):
            (room / f"s{i:03}.json").write_text(json.dumps(wrong) if i % 10 == 0 else key)
        ones = walls([*attntrace, "check", str(room / "s001.json")], 5, trees)
        everys = walls([*attntrace, "check", str(room), "--gradebook", str(Path(tmp) / "grades.csv")], 3, trees)
    print(f"marking {CLASS_SIZE} sheets (median of 3) against one sheet (median of 5), same run")
    for tree, one, every in zip(trees, ones, everys):
        print(tree)
        print(f"  one sheet        {one * 1e3:8.1f} ms")
        print(f"  {CLASS_SIZE} sheets       {every * 1e3:8.1f} ms   {every / one:.1f}x one sheet; "
              f"{(every - one) / (CLASS_SIZE - 1) * 1e3:.1f} ms a sheet (target: <= 10 s for {CLASS_SIZE})")


if __name__ == "__main__":
    main()
