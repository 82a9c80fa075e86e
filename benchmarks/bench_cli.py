"""Start-up and large-run wall times of the command line, against `python -c "import numpy"` in the same run.

    python benchmarks/bench_cli.py
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def wall(args: list[str], repeat: int = 15) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    py = sys.executable
    base = wall([py, "-c", "import numpy"])
    run = wall([py, "-m", "attntrace", "run"])
    print("start-up (median of 15, piped to /dev/null)")
    print(f"  python -c 'import numpy'       {base * 1e3:7.1f} ms")
    print(f"  attntrace run (built-in)       {run * 1e3:7.1f} ms   ratio {run / base:.2f}x (target <= 1.5x)")

    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.json"
        w = lambda: (rng.normal(size=(768, 768)) / 28).round(6).tolist()  # noqa: E731
        path.write_text(json.dumps({"x": rng.normal(size=(512, 768)).round(6).tolist(), "w_q": w(), "w_k": w(),
                                    "w_v": w(), "heads": 12}))
        big = wall([py, "-m", "attntrace", "run", str(path)], repeat=3)
        out = subprocess.run([py, "-m", "attntrace", "run", str(path)], capture_output=True, check=True).stdout
    print("piped run, n=512, d_model=768, 12 heads (median of 3)")
    print(f"  attntrace run big.json > file  {big * 1e3:7.1f} ms   (target <= 2000 ms; {len(out) / 1e6:.1f} MB of text)")


if __name__ == "__main__":
    main()
