"""Every command on the samples, run by two versions of attntrace: the bytes each writes must be the same.

    python benchmarks/same_output.py REV [--jobs N] [--show K] [--only WORD ...] [--random N]

REV is a git revision (a commit, a tag, main~3). Its `attntrace/` is unpacked into a temporary folder and each case
runs twice, once with that package and once with the working tree's, in fresh processes with the same environment
and the same input files. A case compares its exit status, stdout, stderr and every file it writes (`-o`, exports,
Gradescope files, a class folder). The cases: every command in every format and language on the samples, on variant
problems, on the problems of the test fixtures, on flash and decode worksheets filled in right and wrong, and N random
problems (default 100; their cases run in one process per version, through cli.main). --only keeps the cases whose
command line holds one of the words. The script prints one line per differing case (with the first differing line of
each stream, up to --show cases in full) and exits 1 if any differs, 0 if all agree.
"""

from __future__ import annotations

import argparse
import base64
import difflib
import json
import os
import random
import re
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
        add("run", p, "--format", "plain", "--lang", "zh-TW")
        add("explain", p, "--input", "1", "--format", "plain", "--lang", "zh-TW")
        for fmt in ("table", "plain", "json", "csv", "markdown"):
            add("flash", p, "--format", fmt)
            add("decode", p, "--format", fmt)
        add("flash", p, "--block", "1", "--input", "2", "--format", "plain", "--explain")
        add("flash", p, "--format", "table", "--color", "always", "--lang", "zh")
        add("flash", p, "--format", "plain", "--explain", "--lang", "zh-TW")
        add("decode", p, "--window", "2", "--format", "plain", "--explain")
        add("decode", p, "--window", "2", "--sinks", "1", "--format", "json")
        add("decode", p, "--window", "1", "--input", "3", "--format", "table", "--color", "always", "--lang", "zh")
        add("decode", p, "--format", "plain", "--explain", "--lang", "zh-TW")
        for fmt in ("markdown", "plain", "json"):
            add("worksheet", p, "--flash", "2", "--format", fmt, "--key")
            add("worksheet", p, "--decode", "--window", "2", "--format", fmt, "--key")
        add("worksheet", p, "--flash", "1", "--format", "plain", "--lang", "zh")
        add("worksheet", p, "--decode", "--window", "2", "--sinks", "1", "--format", "markdown", "--key", "--lang",
            "zh-TW")
        add("worksheet", p, "--format", "markdown", "--key", "--lang", "zh-TW")
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
    for sheet in sorted((made / "sheets").glob("*")):
        problem_of = str(made / "sheets" / "problems" / (sheet.name.split("~")[0] + ".json"))
        if sheet.is_file():
            for lang in ("en", "zh", "zh-TW"):
                add("check", str(sheet), "--problem", problem_of, lang=lang)
            add("check", str(sheet), "--problem", problem_of, "--format", "json")
            add("check", str(sheet), "--problem", problem_of, "--gradebook", "OUT/book.csv", "--gradescope",
                "OUT/gs.json", lang="zh")
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
    for fixture in FIXTURES:  # the problems of the reference fixtures, as problem files
        cases = json.loads((REPO / "tests" / "fixtures" / fixture).read_text(encoding="utf-8"))
        listed = cases["cases"] if "cases" in cases else list(cases.values())
        for i, case in enumerate(listed[:12]):
            if isinstance(case, dict) and isinstance(case.get("problem"), dict):
                name = f"{fixture.split('_')[0]}_{i}.json"
                (into / name).write_text(json.dumps(case["problem"]), encoding="utf-8")
    _sheets(base, into)


FIXTURES = ("torch_reference.json", "variant_reference.json", "sink_reference.json", "decode_reference.json",
            "flash_reference.json")


def _sheets(base: Path, made: Path) -> None:
    """flash and decode worksheets' keys in each language, as written by the base version, and the same keys with
    some cells changed: sheets/<problem>~<kind>~<lang>~<right|wrong>.md, the problems under sheets/problems"""
    sheets, problems = made / "sheets", made / "sheets" / "problems"
    problems.mkdir(parents=True)
    chosen = {"causal": SAMPLES / "causal.json", "two_heads": SAMPLES / "two_heads.json",
              "worked": SAMPLES / "worked_example.json", "sink": made / "sink_3.json"}
    kinds = {"flash": ("--flash", "2"), "flash1": ("--flash", "1"), "decode": ("--decode", "--window", "2"),
             "decodesinks": ("--decode", "--window", "2", "--sinks", "1")}
    keys = []
    for name, path in chosen.items():
        if path.exists():
            shutil.copy(path, problems / f"{name}.json")
            for kind, options in kinds.items():
                for lang in ("en", "zh", "zh-TW"):
                    sheet = f"{name}~{kind}~{lang}~right.md"
                    keys += [(Case(("worksheet", str(path), *options, "--key", "-o", str(sheets / sheet)), lang=lang),
                              made / "keys" / sheet),
                             (Case(("worksheet", str(path), *options, "-o", str(made / "blanks" / sheet)), lang=lang),
                              made / "blanks" / f"made {sheet}")]
    _in_one_process(base, keys)
    for sheet in sorted(sheets.glob("*~right.md")):
        text, blank = sheet.read_text(encoding="utf-8"), (made / "blanks" / sheet.name).read_text(encoding="utf-8")
        sheet.with_name(sheet.name.replace("~right", "~wrong")).write_text(_changed(text, blank), encoding="utf-8")


def _changed(text: str, blank: str) -> str:
    """a key with every fifth decimal number of the tables the students fill in (those with blank cells on the blank
    sheet) one unit off in its last digit, and one cell left blank"""
    count = 0

    def tables(sheet: str) -> list[list[int]]:  # the line numbers of each table's rows of cells
        found: list[list[int]] = []
        for n, line in enumerate(sheet.split("\n")):
            if line.startswith("|") and not line.startswith("|---"):
                if not found or found[-1][-1] != n - 1 and not sheet.split("\n")[n - 1].startswith("|---"):
                    found.append([])
                found[-1].append(n)
        return found

    blank_lines = blank.split("\n")
    answered = {n for rows, blank_rows in zip(tables(text), tables(blank))
                if any(re.search(r"\|\s*\|", blank_lines[b]) for b in blank_rows[1:]) for n in rows}

    def change(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        number = match.group(0)
        if count == 7:
            return " "
        if count % 5:
            return number
        last = int(number[-1])
        return number[:-1] + str((last + 1) % 10)

    lines = text.split("\n")
    for n, line in enumerate(lines):
        if n in answered:
            cells = line.split("|")
            lines[n] = "|".join([cells[0], cells[1], *(re.sub(r"-?\d+\.\d+", change, c) for c in cells[2:])])
    return "\n".join(lines)


def _random_problems(base: Path, made: Path, count: int) -> list[Case]:
    """count random problems written by the base version's `new`, with random variants and masks, and the command
    lines run on each"""
    folder = made / "random"
    folder.mkdir()
    draw = random.Random(2026)
    lines: list[tuple[str, ...]] = []
    news: list[tuple[str, ...]] = []
    draws = []
    for seed in range(count):
        heads = draw.choice((1, 1, 2))
        d_k = heads * draw.choice((1, 2, 3))
        options = ["--seed", str(seed), "--tokens", str(draw.randint(1, 6)), "--d-model", str(draw.randint(1, 5)),
                   "--heads", str(heads), "--d-k", str(d_k), "--d-v", str(heads * draw.choice((1, 2))),
                   "--init", draw.choice(("integers", "normal", "xavier"))]
        if heads == 2 and draw.random() < 0.3:
            options += ["--kv-heads", "1"]
        if draw.random() < 0.3 and d_k % 2 == 0 and d_k // heads % 2 == 0:
            options.append("--rope")
        if draw.random() < 0.2:
            options.append("--alibi")
        if draw.random() < 0.2:
            options += ["--softcap", str(draw.choice((1, 2.5, 5)))]
        if draw.random() < 0.2:
            options += ["--sink", str(draw.choice((-1, 0, 0.5)))]
        news.append(("new", *options, "-o", str(folder / f"p{seed}.json")))
        draws.append((draw.random(), draw.randint(0, 4), draw.randint(1, 3), draw.randint(1, 3)))
    _in_one_process(base, [(Case(line), made / "new" / str(n)) for n, line in enumerate(news)])
    for seed, (causal, digits, block, window) in enumerate(draws):
        path = folder / f"p{seed}.json"
        if not path.exists():
            continue
        if causal < 0.4:
            problem = json.loads(path.read_text(encoding="utf-8"))
            problem["mask"] = "causal"
            path.write_text(json.dumps(problem), encoding="utf-8")
        p = str(path)
        precision = str(digits)
        lines += [("run", p, "--format", "json"), ("run", p, "--format", "plain", "--precision", precision,
                                                   "--carry-rounding"),
                  ("step", p, "--input", "1", "--format", "plain", "--explain"),
                  ("flash", p, "--block", str(block), "--format", "json"),
                  ("flash", p, "--format", "plain", "--explain"),
                  ("decode", p, "--window", str(window), "--format", "plain"),
                  ("decode", p, "--format", "json"),
                  ("worksheet", p, "--key", "--format", "plain", "--precision", precision),
                  ("worksheet", p, "--flash", "2", "--key", "--format", "plain", "--precision", precision),
                  ("worksheet", p, "--decode", "--key", "--format", "json", "--precision", precision)]
    return [Case(line) for line in lines]


DRIVER = """
import base64, json, os, sys
from pathlib import Path
from click.testing import CliRunner
from attntrace import cli
done = []
for args, stdin, lang, cwd in json.load(sys.stdin):
    os.chdir(cwd)
    out = Path(cwd) / "out"
    out.mkdir(parents=True, exist_ok=True)
    args = [a.replace("OUT", str(out)) for a in args]
    with CliRunner().isolation(input=stdin.encode(), env={"ATTNTRACE_LANG": lang, "HOME": cwd}) as (o, e, _):
        try:
            code = cli.main(args)
        except SystemExit as stop:
            code = stop.code
        sys.stdout.flush()
        sys.stderr.flush()
        seen = {"exit": str(code), "stdout": o.getvalue(), "stderr": e.getvalue()}
    for path in sorted(out.rglob("*")):
        if path.is_file():
            seen["file " + str(path.relative_to(out))] = path.read_bytes()
    done.append({key: base64.b64encode(value if isinstance(value, bytes) else value.encode()).decode()
                 for key, value in seen.items()})
with os.fdopen(int(sys.argv[1]), "wb") as answer:
    answer.write(json.dumps(done).encode())
"""


def _in_one_process(tree: Path, jobs: list[tuple[Case, Path]]) -> list[dict[str, bytes]]:
    """each case run by cli.main in one process of tree's attntrace, in its own scratch folder (OUT: its out/): exit
    status, streams and the files written, with the scratch folder's name taken out"""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("ATTNTRACE_", "LC_", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "PYTHON"))}
    env.update(PYTHONPATH=str(tree), ATTNTRACE_LANG="en", LANG="C.UTF-8", COLUMNS="100", LINES="40",
               PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    read, write = os.pipe()
    with subprocess.Popen([sys.executable, "-c", DRIVER, str(write)], stdin=subprocess.PIPE, env=env,
                          pass_fds=(write,), stdout=subprocess.DEVNULL) as child:
        os.close(write)
        assert child.stdin is not None
        for _case, scratch in jobs:
            scratch.mkdir(parents=True, exist_ok=True)
        child.stdin.write(json.dumps([[list(case.args), case.stdin, case.lang, str(scratch)]
                                      for case, scratch in jobs]).encode())
        child.stdin.close()
        with os.fdopen(read, "rb") as f:
            answer = f.read()
    if not answer:
        raise SystemExit(f"the cases stopped the process of {tree}: run them with --processes to see which")
    out = []
    for (_case, scratch), seen in zip(jobs, json.loads(answer)):
        name = str(scratch).encode()
        out.append({key: base64.b64decode(value).replace(name, b"SCRATCH") for key, value in seen.items()})
    return out


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
    parser.add_argument("--only", nargs="*", default=[],
                        help="keep the cases whose command line (its paths left out) holds one of these")
    parser.add_argument("--random", type=int, default=100, help="how many random problems (0: none)")
    parser.add_argument("--processes", action="store_true",
                        help="run each case in a fresh process, as a user does (slower: by default each version runs "
                             "every case in one process, through cli.main)")
    options = parser.parse_args()

    def wanted(args: tuple[str, ...]) -> bool:  # the words of the command line, not the paths in it
        said = " ".join(a for a in args if "/" not in a)
        return not options.only or any(word in said for word in options.only)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = _unpack(options.rev, root)
        made = root / "made"
        made.mkdir()
        _made(base, made)
        cases = [case for case in _cases(made) if wanted(case.args)]
        cases += [case for case in _random_problems(base, made, options.random) if wanted(case.args)]

        if options.processes:
            def compare(numbered: tuple[int, Case]) -> tuple[Case, dict[str, bytes], dict[str, bytes]]:
                i, case = numbered
                before = _outcome(base, case, root / f"{i}a")
                after = _outcome(REPO, case, root / f"{i}b")
                for side in ("a", "b"):
                    shutil.rmtree(root / f"{i}{side}", ignore_errors=True)
                return case, before, after

            with ThreadPoolExecutor(options.jobs) as pool:
                results = list(pool.map(compare, enumerate(cases)))
        else:
            with ThreadPoolExecutor(2) as pool:
                sides = [pool.submit(_in_one_process, tree, [(case, root / f"{i}{side}") for i, case in enumerate(cases)])
                         for tree, side in ((base, "a"), (REPO, "b"))]
                before_all, after_all = (side.result() for side in sides)
            results = list(zip(cases, before_all, after_all))
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
