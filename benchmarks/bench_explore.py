"""The explorer in a real terminal (a pseudo-terminal, through pexpect): the first screen on the built-in example, and
a key press to the redrawn screen on a 64-token problem, against `python -c "import numpy"` and a plain `attntrace run`
measured in the same run.

    python benchmarks/bench_explore.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pexpect

ROWS, COLUMNS = 50, 160
KEYS = {"right": "\x1b[C", "left": "\x1b[D", "down": "\x1b[B", "up": "\x1b[A", "tab": "\t"}


def wall(args: list[str], repeat: int = 9) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def spawn(*args: str) -> pexpect.spawn:
    env = {**os.environ, "COLUMNS": str(COLUMNS), "LINES": str(ROWS), "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    child = pexpect.spawn(sys.executable, ["-m", "attntrace", "explore", *args], env=env, encoding="utf-8",
                          timeout=60, dimensions=(ROWS, COLUMNS))
    child.delaybeforesend = None  # pexpect waits 50 ms before each key otherwise
    return child


def drain(child: pexpect.spawn) -> None:
    """read what the terminal has been sent until it has been quiet for a moment"""
    while True:
        try:
            child.read_nonblocking(1 << 16, timeout=0.15)
        except pexpect.TIMEOUT:
            return


def first_screen(repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        child = spawn()
        child.expect("Step 1 · prepare inputs")
        times.append(time.perf_counter() - start)
        child.send("q")
        child.expect(pexpect.EOF)
        child.close()
    return statistics.median(times)


def key_presses(problem: Path) -> list[tuple[str, str, float]]:
    """each key of a tour of the explorer, what its redrawn screen shows, and how long until it showed; a key is sent
    once the screen has been quiet for 150 ms, as a reader's next key comes"""
    child = spawn(str(problem))
    child.expect("Step 1 · prepare inputs")
    tour = [("right", "Step 2 · weights"), ("right", "Step 3 · derive Q, K, V"),
            ("right", "Step 4 · attention scores for input 1"), ("right", "Step 5 · softmax for input 1"),
            ("down", "Step 5 · softmax for input 2"), ("3", "Step 5 · softmax for input 3"),
            ("tab", "cell [1, 2] of w(3, j)"), ("+", "precision 5"), ("-", "precision 4"),
            ("s", "scale none"), ("s", "scale ÷ sqrt"), ("m", "masks causal"), ("t", "softmax at a temperature"),
            ("]", "T 2"), ("\r", "the selected cell's arithmetic"), ("\x1b", "? keys"),
            ("right", "Step 6 · multiply"), ("right", "Step 7 · sum"), ("right", "Step 8 · every input"),
            ("left", "Step 7 · sum"), ("right", "Step 8 · every input"), ("left", "Step 7 · sum"),
            ("1", "output 1 = "), ("left", "Step 6 · multiply")]
    out = []
    for key, shows in tour:
        drain(child)
        start = time.perf_counter()
        child.send(KEYS.get(key, key))
        child.expect_exact(shows)
        out.append((key, shows, time.perf_counter() - start))
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    return out


def main() -> None:
    from attntrace.model.contract import dumps, problem_to_dict
    from attntrace.model.generate import random_problem

    py = sys.executable
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.2f} on {os.cpu_count()} CPUs: every figure below is measured now, against the baselines")
    base = wall([py, "-c", "import numpy"])
    run = wall([py, "-m", "attntrace", "run"])
    first = first_screen()
    print("first screen of attntrace explore on the built-in example (median of 7, a pseudo-terminal of "
          f"{COLUMNS} x {ROWS})")
    print(f"  python -c 'import numpy'        {base * 1e3:7.1f} ms")
    print(f"  attntrace run (piped)           {run * 1e3:7.1f} ms")
    print(f"  attntrace explore, first screen {first * 1e3:7.1f} ms   (target <= 1000 ms)")

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tokens64.json"
        problem = random_problem(n=64, d_model=16, d_k=8, d_v=8, init="normal", seed=0)
        path.write_text(dumps(problem_to_dict(problem)), encoding="utf-8")
        presses = key_presses(path)
    print("a key press to the redrawn screen, 64 tokens, d_model = 16, d_k = d_v = 8 (target <= 50 ms)")
    for key, shows, seconds in presses:
        aside = "  (a lone Esc waits ESCDELAY, 100 ms, for the rest of a key sequence)" if key == "\x1b" else ""
        print(f"  {key!r:8} → {shows:40} {seconds * 1e3:7.1f} ms{aside}")
    times = [seconds for _, _, seconds in presses]
    print(f"  median {statistics.median(times) * 1e3:.1f} ms, slowest {max(times) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
