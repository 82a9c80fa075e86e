"""The explorer in a real terminal (a pseudo-terminal, through pexpect): the first screen on the built-in example, a
key press to the redrawn screen on a 64-token problem, and the first looks there that cost the most (step 8's 64 x 64
tables, the first Enter), each in a new explorer, as `attntrace explore` runs and with nothing drawn ahead; against
`python -c "import numpy"` and a plain `attntrace run` measured in the same run.

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
TARGET = 0.050  # seconds from a key to its screen
LOOKS = 5  # new explorers for each kind of first look
KEYS = {"right": "\x1b[C", "left": "\x1b[D", "down": "\x1b[B", "up": "\x1b[A", "tab": "\t"}


def wall(args: list[str], repeat: int = 9) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


ALONE = """import sys
from attntrace.explore.app import Explorer
from attntrace.explore.state import Session
from attntrace.files.problemfile import read
Explorer(Session(read(sys.argv[1])[0]), draw_ahead=False).run()
"""  # the explorer as `attntrace explore FILE` opens it, but drawing nothing ahead: each step drawn at its key


def spawn(*args: str, ahead: bool = True) -> pexpect.spawn:
    env = {**os.environ, "COLUMNS": str(COLUMNS), "LINES": str(ROWS), "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    command = ["-m", "attntrace", "explore", *args] if ahead else ["-c", ALONE, *args]
    child = pexpect.spawn(sys.executable, command, env=env, encoding="utf-8", timeout=60, dimensions=(ROWS, COLUMNS))
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


def first_looks(problem: Path, ahead: bool) -> dict[str, float]:
    """in a new explorer each: the first look at step 8 (its 64 x 64 tables) after stepping there from step 1, then the
    first Enter there (the arithmetic panel opens, so the tables are drawn again narrower); and the first Enter at
    step 5. Keys come as in key_presses"""
    out = {}
    for steps, name in ((7, "step 8"), (4, "step 5")):
        child = spawn(str(problem), ahead=ahead)
        child.expect("Step 1 · prepare inputs")
        for k in range(steps):
            drain(child)
            start = time.perf_counter()
            child.send(KEYS["right"])
            child.expect_exact(f"Step {k + 2} · ")
            seconds = time.perf_counter() - start
        if name == "step 8":
            out["first look at step 8"] = seconds
        drain(child)
        start = time.perf_counter()
        child.send("\r")
        child.expect_exact("the selected cell's arithmetic")
        out[f"first Enter at {name}"] = time.perf_counter() - start
        child.send("q")
        child.expect(pexpect.EOF)
        child.close()
    return out


def main() -> None:
    from attntrace.core.generate import random_problem
    from attntrace.render.jsonform import dumps, problem_to_dict

    py = sys.executable
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.2f} on {os.cpu_count()} CPUs: every figure below is measured now, against the baselines")
    base = wall([py, "-c", "import numpy"])
    run = wall([str(Path(py).with_name("attntrace")), "run"])  # the console script a user runs
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
        looks = {ahead: [first_looks(path, ahead) for _ in range(LOOKS)] for ahead in (True, False)}
    print("a key press to the redrawn screen, 64 tokens, d_model = 16, d_k = d_v = 8 (target <= 50 ms)")
    for key, shows, seconds in presses:
        aside = "  (a lone Esc waits ESCDELAY, 100 ms, for the rest of a key sequence)" if key == "\x1b" else ""
        print(f"  {key!r:8} → {shows:40} {seconds * 1e3:7.1f} ms{aside}")
    times = [seconds for _, _, seconds in presses]
    print(f"  median {statistics.median(times) * 1e3:.1f} ms, slowest {max(times) * 1e3:.1f} ms")
    print(f"first looks, each in a new explorer on the same problem (median of {LOOKS}, and the slowest; target <= 50 ms)")
    for ahead, words in ((True, "as attntrace explore runs"), (False, "nothing drawn ahead: all drawn at the key")):
        print(f"  {words}:")
        for what in looks[ahead][0]:
            seen = [found[what] for found in looks[ahead]]
            median = statistics.median(seen)
            verdict = "within" if median <= TARGET else "OVER"
            print(f"    {what:24} {median * 1e3:7.1f} ms  (slowest {max(seen) * 1e3:6.1f} ms)  {verdict} the 50 ms target")


if __name__ == "__main__":
    main()
