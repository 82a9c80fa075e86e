"""Every command on the samples, run by two versions of attntrace: the bytes each writes must be the same.

    python benchmarks/same_output.py REV [--jobs N] [--show K]

REV is a git revision (a commit, a tag, main~3). Its `attntrace/` is unpacked into a temporary folder and each case
runs twice, once with that package and once with the working tree's, in fresh processes with the same environment
and the same input files. A case compares its exit status, stdout, stderr and every file it writes (`-o`, exports,
Gradescope files, a class folder). The script prints one line per differing case (with the first differing line of
each stream, up to --show cases in full) and exits 1 if any differs, 0 if all agree.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
MODEL = "all-MiniLM-L6-v2"
SENTENCE = "The cat sat on the mat because it was tired."


@dataclass(frozen=True)
class Case:
    """one command line; OUT in an argument is a fresh folder for what the command writes"""

    args: tuple[str, ...]
    stdin: str = ""
    lang: str = "en"


def _cases(made: Path) -> list[Case]:
    """the commands compared: every format of every command on every sample and on variant problems"""
    problems = [str(p) for p in sorted(SAMPLES.glob("*.json"))] + [str(SAMPLES / "worked_example_csv"), ""]
    problems += [str(p) for p in sorted(made.glob("*.json"))]
    cases: list[Case] = []

    def add(*args: str, lang: str = "en", stdin: str = "") -> None:
        cases.append(Case(tuple(a for a in args if a), stdin, lang))

    for p in problems:
        for fmt in ("table", "plain", "json", "csv", "markdown"):
            add("run", p, "--format", fmt)
            add("step", p, "--input", "2", "--format", fmt)
        add("run", p, "--format", "plain", "--precision", "2", "--carry-rounding")
        add("run", p, "--format", "json", "--precision", "3", "--carry-rounding")
        add("run", p, "--format", "table", "--color", "always")
        add("run", p, "--format", "table", "--ascii", "--color", "always")
        add("step", p, "--input", "1", "--format", "table", "--color", "always", "--explain")
        add("run", p, "--format", "plain", "--export-svg", "OUT/t.svg", "--export-html", "OUT/t.html")
        add("run", p, "--format", "json", "-o", "OUT/t.json")
        add("run", p, "--format", "plain", "--lang", "zh")
        add("step", p, "--input", "1", "--format", "table", "--lang", "zh", "--color", "always")
        for fmt in ("plain", "markdown", "table"):
            add("explain", p, "--input", "1", "--format", fmt)
        add("explain", p, "--input", "2", "--format", "plain", "--precision", "2", "--carry-rounding")
        add("explain", p, "--input", "1", "--format", "plain", "--lang", "zh")
        add("validate", p)
        add("validate", p, "--lang", "zh")
        for fmt in ("markdown", "plain", "json"):
            add("worksheet", p, "--format", fmt)
            add("worksheet", p, "--format", fmt, "--key")
        add("worksheet", p, "--format", "plain", "--key", "--input", "1", "--lang", "zh")
        for name in ("symmetric", "permute", "similarity", "temperature"):
            add("experiment", name, p, "--format", "plain")
            add("experiment", name, p, "--format", "csv")
        add("experiment", "temperature", p, "--format", "table", "--color", "always", "--lang", "zh")
    for p in (str(SAMPLES / "causal.json"), ""):
        add("run", p, "--format", "plain", "--no-scale", "--heads", "2")
        add("run", p, "--format", "json", "--scale-by", "3")
        add("run", p, "--format", "plain", "--mask", "window", "--window", "1")
        add("run", p, "--format", "plain", "--mask", "padding", "--padding", "1")
    sheets = [str(p) for p in sorted((SAMPLES / "homework").glob("[ab]*.json"))]
    problem = str(SAMPLES / "homework" / "problem.json")
    for lang in ("en", "zh"):
        add("check", *sheets, "--problem", problem, lang=lang)
        add("check", *sheets, "--problem", problem, "--format", "json", lang=lang)
        add("check", *sheets, "--problem", problem, "--gradebook", "OUT/book.csv", "--gradescope", "OUT/gs.json",
            lang=lang)
        add("check", *sheets, "--problem", problem, "--precision", "3", "--points", "scores=2,weights=2", lang=lang)
        add("assign", "--seed", "7", "-o", "OUT/class", stdin="ana\nben\n陈\n", lang=lang)
        add("schema", lang=lang)
        add("--help", lang=lang)
        add(lang=lang)
        for command in ("run", "step", "explain", "experiment", "validate", "schema", "new", "check", "worksheet",
                        "assign", "bert", "model", "explore"):
            add(command, "--help", lang=lang)
        add("run", str(made / "missing.json"), lang=lang)
        add("run", str(made / "bad.json"), lang=lang)
        add("run", "--format", "nope", lang=lang)
        add("step", lang=lang)
        add("new", "--seed", "3", "--tokens", "4", "--heads", "2", "--d-k", "4", "--d-v", "4", lang=lang)
        add("new", "--seed", "5", "--rope", "--alibi", "--softcap", "5", "--kv-heads", "1", "--heads", "2",
            "--d-k", "4", "--d-v", "2", "--init", "normal", lang=lang)
        add("model", MODEL, SENTENCE, "--layer", "2", "--head", "3", "--format", "plain", lang=lang)
        add("model", MODEL, SENTENCE, "--layer", "6", "--head", "1", "--format", "json", lang=lang)
        add("model", MODEL, SENTENCE, "--who", "--format", "plain", lang=lang)
        add("model", MODEL, SENTENCE, "--all-heads", "--format", "plain", lang=lang)
        add("model", MODEL, SENTENCE, "--input", "3", "--format", "markdown", lang=lang)
        add("model", MODEL, SENTENCE, "--extract", "OUT/head.json", lang=lang)
        add("bert", SENTENCE, "--layer", "1", "--head", "2", "--format", "csv", lang=lang)
    big = str(made / "big.json")
    add("run", big, "--format", "json", "-o", "OUT/big.json")
    add("run", big, "--format", "json")
    add("run", big, "--format", "csv")
    add("step", big, "--input", "300", "--format", "plain")
    return cases


def _made(base: Path, into: Path) -> None:
    """the variant problems, a big one and two bad files, written once by the base version"""
    variants = {
        "rope": ["--rope", "--tokens", "4", "--d-k", "4"],
        "alibi": ["--alibi", "--heads", "2", "--d-k", "4", "--d-v", "4", "--mask", "causal"],
        "softcap": ["--softcap", "2", "--init", "normal"],
        "gqa": ["--heads", "4", "--kv-heads", "2", "--d-k", "8", "--d-v", "4", "--d-model", "4"],
        "everything": ["--rope", "--alibi", "--softcap", "3", "--heads", "2", "--kv-heads", "1", "--d-k", "4",
                       "--d-v", "4", "--tokens", "5", "--mask", "causal", "--init", "normal"],
        "big": ["--tokens", "520", "--d-model", "8", "--d-k", "8", "--d-v", "8", "--init", "normal"],
    }
    for name, args in variants.items():
        _run(base, ("new", "--seed", "11", *args, "-o", str(into / f"{name}.json")), "", "en", into)
    (into / "bad.json").write_text('{"x": [[1, 2], [3]], }\n', encoding="utf-8")


def _run(tree: Path, args: tuple[str, ...], stdin: str, lang: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("ATTNTRACE_", "LC_", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "PYTHON"))}
    env.update(PYTHONPATH=str(tree), ATTNTRACE_LANG=lang, LANG="C.UTF-8", COLUMNS="100", LINES="40",
               HOME=str(cwd), PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    return subprocess.run([sys.executable, "-m", "attntrace", *args], input=stdin.encode(), capture_output=True,
                          env=env, cwd=cwd, timeout=600)


def _outcome(tree: Path, case: Case, scratch: Path) -> dict[str, bytes]:
    """what one case writes: exit status, streams and files, with the scratch folder's name taken out"""
    out = scratch / "out"
    out.mkdir(parents=True)
    args = tuple(a.replace("OUT", str(out)) for a in case.args)
    done = _run(tree, args, case.stdin, case.lang, scratch)
    seen = {"exit": str(done.returncode).encode(), "stdout": done.stdout, "stderr": done.stderr}
    for path in sorted(out.rglob("*")):
        if path.is_file():
            seen["file " + str(path.relative_to(out))] = path.read_bytes()
    name = str(scratch).encode()
    return {key: value.replace(name, b"SCRATCH") for key, value in seen.items()}


def _unpack(rev: str, into: Path) -> Path:
    archive = into / "base.tar"
    with archive.open("wb") as f:
        subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev, "attntrace"], stdout=f, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "base", filter="data")
    return into / "base"


def _first_difference(a: bytes, b: bytes) -> str:
    lines = list(difflib.unified_diff(a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines(),
                                      "before", "after", n=0, lineterm=""))
    return "\n".join(lines[:8])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--show", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = _unpack(options.rev, root)
        made = root / "made"
        made.mkdir()
        _made(base, made)
        cases = _cases(made)

        def compare(numbered: tuple[int, Case]) -> tuple[Case, dict[str, bytes], dict[str, bytes]]:
            i, case = numbered
            before = _outcome(base, case, root / f"{i}a")
            after = _outcome(REPO, case, root / f"{i}b")
            for side in ("a", "b"):
                shutil.rmtree(root / f"{i}{side}", ignore_errors=True)
            return case, before, after

        with ThreadPoolExecutor(options.jobs) as pool:
            results = list(pool.map(compare, enumerate(cases)))
    differing = [(case, a, b) for case, a, b in results if a != b]
    for n, (case, a, b) in enumerate(differing):
        print(f"DIFFERS ({case.lang}): attntrace {' '.join(case.args)}")
        if n < options.show:
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key):
                    print(f"  {key}:\n" + _first_difference(a.get(key, b""), b.get(key, b"")))
    print(f"{len(results) - len(differing)} of {len(results)} cases write the same bytes as {options.rev}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
