"""Start-up and large-run wall times of the command line, against `python -c "import numpy"` in the same run.

    python benchmarks/bench_cli.py [--repeat N] [--python PATH] [--pieces] [--against DIR]

Each command runs in a fresh process, the commands taken in turns so that a busy machine slows each alike; the figure
is the median. Children may write bytecode (to a cache in a temporary folder), as an installed package has it.
--python measures another environment's interpreter and its attntrace script: an editable install (pip install -e)
imports pathlib and more at start-up for both commands, so a regular install's ratio is the one a user meets.
--pieces measures a piece of speed code with and without it, in turns in one run: each line runs main() through the
same `python -c` wrapper, once as it is and once with the piece turned off (PIECES).
--against measures the start-up in every language of this source tree and of another one (a clone or worktree of
attntrace, through PYTHONPATH), in turns in one run: each language's ratio to the other tree's, whose Simplified Chinese
stands for Traditional when it has none.
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

import numpy as np

ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}

# what `attntrace run` does, written as a script: the floor for the command line
BARE_RUN = """
import sys
from attntrace.files.problemfile import load
from attntrace.core.engine import trace
from attntrace.render.document import Document, Style, render
from attntrace.views.walkthrough import run_steps
problem = load(None)
t = trace(problem)
sys.stdout.write("".join(render(Document(run_steps(t), title=problem.name), "plain", Style(4))))
"""


def walls(commands: dict[str, list[str]], repeat: int, cwd: str,
          envs: dict[str, dict[str, str]] | None = None, cpu: dict[str, float] | None = None) -> dict[str, float]:
    """each command's median wall time, the commands run in turns (in cwd: python -c imports from its folder first),
    each in ENV or its own environment of envs; cpu, when given, gets each one's median processor time (user and
    system), which a busy machine disturbs less"""
    import resource

    times: dict[str, list[float]] = {name: [] for name in commands}
    used: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, args in commands.items():
            env = (envs or {}).get(name, ENV)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env, cwd=cwd)
            times[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            used[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    if cpu is not None:
        cpu.update({name: statistics.median(values) for name, values in used.items()})
    return {name: statistics.median(values) for name, values in times.items()}


WRAPPED = "import sys; {off}; from attntrace.cli import main; raise SystemExit(main())"  # argv after -c: the line's
PIECES = {  # a piece of speed code: how to turn it off, and the lines it is meant to speed up
    "quick.py (run and step read without typer)": ("import attntrace.cli.quick as q; q.recognise = lambda argv: None",
                                                   [["run", "--format", "plain"], ["run"], ["--version"]]),
}
BIG = ["--tokens", "512", "--d-model", "768", "--d-k", "768", "--d-v", "768", "--heads", "12", "--init", "normal",
       "--seed", "1"]  # a problem written by new: its JSON trace is large


def pieces(py: str, repeat: int, tmp: str) -> None:
    """each piece's lines, with and without it, in turns; the medians side by side"""
    big, out = str(Path(tmp) / "new.json"), str(Path(tmp) / "out.json")
    subprocess.run([str(Path(py).with_name("attntrace")), "new", *BIG, "-o", big], check=True, env=ENV)
    for piece, (off, lines) in PIECES.items():
        times = repeat if "{big}" not in str(lines) else 5
        print(f"{piece} (median of {times}, in turns)")
        for line in ([word.format(big=big, out=out) for word in line] for line in lines):
            with_it = [py, "-c", WRAPPED.format(off="pass"), *line]
            without = [py, "-c", WRAPPED.format(off=off), *line]
            t = walls({"with": with_it, "without": without}, times, tmp)
            shown = " ".join(w if w not in (big, out) else Path(w).name for w in line)
            print(f"  attntrace {shown:42} with {t['with'] * 1e3:8.1f} ms   without {t['without'] * 1e3:8.1f} ms   "
                  f"{t['without'] / t['with']:.2f}x")


LANGUAGES = ("en", "zh", "zh-TW")
ROOT = Path(__file__).resolve().parent.parent


def against(script: str, other: Path, repeat: int, tmp: str) -> None:
    """attntrace run in every language, from this source tree and from the other, in turns; the medians side by side"""
    commands, envs = {}, {}
    for tree, name in ((ROOT, "this"), (other, "other")):
        for lang in LANGUAGES:
            spoken = lang if lang != "zh-TW" or (tree / "attntrace" / "locale" / "zh_TW").is_dir() else "zh"
            commands[f"{name} {lang}"] = [script, "run", "--lang", spoken]
            envs[f"{name} {lang}"] = {**ENV, "PYTHONPATH": str(tree)}
    for name, args in commands.items():  # bytecode
        subprocess.run(args, stdout=subprocess.DEVNULL, check=True, env=envs[name])
    cpu: dict[str, float] = {}
    t = walls(commands, repeat, tmp, envs, cpu)
    print(f"attntrace run --lang L, {ROOT} against {other} (median of {repeat}, taken in turns; target <= 1.03x)")
    for lang in LANGUAGES:
        this, that = f"this {lang}", f"other {lang}"
        print(f"  {lang:6} wall {t[this] * 1e3:6.1f} ms against {t[that] * 1e3:6.1f} ms {t[this] / t[that]:.3f}x   "
              f"processor {cpu[this] * 1e3:6.1f} ms against {cpu[that] * 1e3:6.1f} ms {cpu[this] / cpu[that]:.3f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21, help="runs of each start-up command (default 21)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the environment to measure")
    parser.add_argument("--pieces", action="store_true", help="each piece of speed code with and without it")
    parser.add_argument("--against", metavar="DIR", type=Path, help="another source tree, measured in the same run")
    opts = parser.parse_args()
    py = opts.python
    script = str(Path(py).with_name("attntrace"))  # the console script a user runs (python -m adds runpy's frames)
    with tempfile.TemporaryDirectory() as tmp:
        ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "bytecode")
        subprocess.run([script, "run"], stdout=subprocess.DEVNULL, check=True, env=ENV)  # bytecode
        if opts.pieces:
            pieces(py, opts.repeat, tmp)
            return
        if opts.against:
            against(script, opts.against.resolve(), opts.repeat, tmp)
            return
        start = walls({"numpy": [py, "-c", "import numpy"], "typer": [py, "-c", "import numpy, typer"],
                       "bare": [py, "-c", BARE_RUN], "run": [script, "run"],
                       "run zh": [script, "run", "--lang", "zh"], "run zh-TW": [script, "run", "--lang", "zh-TW"]},
                      opts.repeat, tmp)
        base = start["numpy"]
        print(f"start-up (median of {opts.repeat}, taken in turns, piped to /dev/null; target <= 1.5x)")
        for name, label in (("numpy", 'python -c "import numpy"'), ("typer", 'python -c "import numpy, typer"'),
                            ("bare", "the run's own work, as a script"), ("run", "attntrace run (built-in)"),
                            ("run zh", "attntrace run --lang zh"), ("run zh-TW", "attntrace run --lang zh-TW")):
            print(f"  {label:36} {start[name] * 1e3:7.1f} ms   {start[name] / base:.2f}x")

        rng = np.random.default_rng(0)
        path = Path(tmp) / "big.json"
        w = lambda: (rng.normal(size=(768, 768)) / 28).round(6).tolist()  # noqa: E731
        path.write_text(json.dumps({"x": rng.normal(size=(512, 768)).round(6).tolist(), "w_q": w(), "w_k": w(),
                                    "w_v": w(), "heads": 12}))
        big = walls({"en": [script, "run", str(path)], "zh": [script, "run", str(path), "--lang", "zh"]}, 3, tmp)
        out = subprocess.run([script, "run", str(path)], capture_output=True, check=True, env=ENV).stdout
    print("piped run, n=512, d_model=768, 12 heads (median of 3)")
    print(f"  attntrace run big.json > /dev/null   {big['en'] * 1e3:7.1f} ms   (target <= 1000 ms; {len(out) / 1e6:.1f} MB "
          "of text)")
    print(f"  the same with --lang zh              {big['zh'] * 1e3:7.1f} ms   {big['zh'] / big['en']:.2f}x")


if __name__ == "__main__":
    main()
