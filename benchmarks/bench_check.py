"""Marking a class: 500 sheets in one `attntrace check` call, against marking one sheet, in the same run.

    python benchmarks/bench_check.py

The sheets are the key of a two-head causal problem with W_O at 2 decimals, every tenth with one of the usual
mistakes (so diagnosis runs too), in one class directory beside its problem.json.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLASS_SIZE = 500


def wall(args: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    py = sys.executable
    attntrace = [py, "-m", "attntrace"]
    with tempfile.TemporaryDirectory() as tmp:
        room = Path(tmp) / "class"
        room.mkdir()
        problem = Path(__file__).resolve().parent.parent / "samples" / "two_heads.json"
        (room / "problem.json").write_text(problem.read_text())
        key = subprocess.run([*attntrace, "worksheet", str(problem), "--key", "--format", "json"], capture_output=True,
                             text=True, check=True).stdout
        wrong = json.loads(key)
        wrong["heads"][0]["scaled"] = wrong["heads"][0]["scores"]  # the scaling forgotten in head 1
        for i in range(CLASS_SIZE):
            (room / f"s{i:03}.json").write_text(json.dumps(wrong) if i % 10 == 0 else key)
        one = wall([*attntrace, "check", str(room / "s001.json")], repeat=5)
        every = wall([*attntrace, "check", str(room), "--gradebook", str(Path(tmp) / "grades.csv")], repeat=3)
    print(f"marking {CLASS_SIZE} sheets (median of 3) against one sheet (median of 5), same run")
    print(f"  one sheet        {one * 1e3:8.1f} ms")
    print(f"  {CLASS_SIZE} sheets       {every * 1e3:8.1f} ms   {every / one:.1f}x one sheet; "
          f"{(every - one) / (CLASS_SIZE - 1) * 1e3:.1f} ms a sheet (target: <= 10 s for {CLASS_SIZE})")


if __name__ == "__main__":
    main()
