"""Time from command start to the first table for layer 6, against loading the weights alone, in the same run.

    python benchmarks/bench_bert.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

SENTENCE = "The animal didn't cross the street because it was too tired"
LOAD = ("from attntrace.checkpoints.bert.files import default_model_dir, load_model\n"  # every tensor read, as a run reads
        "m = load_model(default_model_dir())\nfor n in m.tensors.names: m.tensors.get(n) if 'position_ids' not in n "
        "else None")  # those it needs (the position ids are whole numbers, never read)


def first_line_after(args: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    proc.stdout.readline()
    elapsed = time.perf_counter() - start
    proc.stdout.close()
    proc.wait()
    return elapsed


def wall(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    py = sys.executable
    load = statistics.median(wall([py, "-c", LOAD]) for _ in range(5))
    first = statistics.median(first_line_after([py, "-m", "attntrace", "bert", SENTENCE, "--layer", "6", "--head", "1"])
                              for _ in range(5))
    bare = statistics.median(wall([py, "-c", "import numpy"]) for _ in range(5))
    print("bert, layer 6 of all-MiniLM-L6-v2, 15 wordpieces (median of 5)")
    print(f"  python -c 'import numpy'              {bare * 1e3:7.1f} ms")
    print(f"  load the weights alone (python -c)    {load * 1e3:7.1f} ms")
    print(f"  attntrace bert … first table          {first * 1e3:7.1f} ms   ratio {first / load:.2f}x the load")


if __name__ == "__main__":
    main()
