"""A real-size checkpoint, traced by attntrace and by Hugging Face transformers side by side: wall time and peak memory.

    python benchmarks/bench_models.py [--shape tinyllama|qwen2|gpt2] [--checkpoint DIR] [--layer L] [--head H]
                                      [--repeat N] [--transformers-python PATH]

The checkpoint is a random one of the shape's real size, written by scripts/make_checkpoint.py into a scratch folder
(or the one --checkpoint names; it is written there when the folder is empty), and read once before the runs so that
both read it from the system's cache. The sentence is scripts/make_checkpoint.py's (82 tokens with the Llama shape's
tokenizer).

Each command runs in a fresh process, the commands in turns so that a busy machine slows each alike; the figure is
the median wall time and the largest peak resident memory (os.wait4's resource usage) of its runs:
- `attntrace model DIR SENTENCE --layer L --head H --format json -o FILE` at the last layer (the ratio's subject), and
  at layers 2 and L/2 (the peak memory must not grow with the layer);
- the same head's eight steps as plain text, and --all-heads' summary of the layer (target: 1.2x the one head), both to
  a file with -o; and --all-heads --format json, every head's arrays (18 times the single head's JSON);
- transformers (torch on the CPU, float32, eager attention, output_attentions=True) loading the model and writing the
  same head's weights as JSON: the baseline (target: attntrace at most 0.5x its time). transformers is optional: it is
  imported by --transformers-python (default: this Python); without it the comparison is skipped, and said so.

It also states how far the traced head's numbers are from a run with every layer in float64 (`--float64`), and from
transformers' attention weights.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_checkpoint  # noqa: E402

ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
TRANSFORMERS = """
import json, sys, torch
from transformers import AutoModelForCausalLM, AutoTokenizer
folder, sentence, layer, head, out = sys.argv[1:6]
torch.set_grad_enabled(False)
model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager")
ids = AutoTokenizer.from_pretrained(folder)(sentence, return_tensors="pt")
weights = model(**ids, output_attentions=True).attentions[int(layer) - 1][0, int(head) - 1]
with open(out, "w") as f:
    json.dump({"weights": weights.double().tolist()}, f)
"""
HEAD = 5


def timed(args: list[str]) -> tuple[float, int]:
    """one run of a command: its wall time in seconds and its peak resident memory in bytes"""
    start = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    assert child.stderr is not None
    errors = child.stderr.read()
    _pid, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(args[:4])} … failed: {errors.decode(errors='replace')[-2000:]}")
    return wall, usage.ru_maxrss * 1024  # kilobytes on Linux


def has_transformers(python: str) -> bool:
    return subprocess.run([python, "-c", "import torch, transformers"], capture_output=True).returncode == 0


def head_of(file: Path) -> dict[str, np.ndarray]:
    doc = json.loads(file.read_text(encoding="utf-8"))
    head = doc["heads"][0] if "heads" in doc else doc
    return {key: np.array(head[key]) for key in ("scores", "weights", "output") if key in head}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", choices=("tinyllama", "qwen2", "gpt2"), default="tinyllama")
    parser.add_argument("--checkpoint", type=Path, help="the checkpoint's folder (written there when empty)")
    parser.add_argument("--layer", type=int, help="the layer traced (default: the last)")
    parser.add_argument("--head", type=int, default=HEAD)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--transformers-python", default=sys.executable,
                        help="a Python with torch and transformers (default: this one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.checkpoint or Path(scratch) / args.shape
        if not (folder / "config.json").exists():
            print(f"writing a {args.shape}-shaped checkpoint into {folder} …", file=sys.stderr)
            make_checkpoint.write(args.shape, folder)
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        layers = config.get("num_hidden_layers") or config["n_layer"]
        last = args.layer or layers
        size = sum(p.stat().st_size for p in folder.glob("*.safetensors"))
        for shard in folder.glob("*.safetensors"):  # into the system's cache, for every command alike
            with open(shard, "rb") as f:
                while f.read(1 << 24):
                    pass
        out = Path(scratch)
        sentence = make_checkpoint.SENTENCE

        def attntrace(layer: int, *more: str, file: str = "") -> list[str]:
            return [sys.executable, "-m", "attntrace", "model", str(folder), sentence, "--layer", str(layer),
                    "--head", str(args.head), *more, "--format", "json", "-o", str(out / (file or f"layer{layer}.json"))]

        commands = {f"attntrace, layer {last}, head {args.head}": attntrace(last)}
        for layer in sorted({2, max(1, last // 2)} - {last}):
            commands[f"attntrace, layer {layer}"] = attntrace(layer)
        commands[f"attntrace, layer {last}, plain"] = attntrace(last, file="one.txt")[:-4] + ["-o", str(out / "one.txt")]
        commands[f"attntrace, layer {last}, --all-heads"] = attntrace(last, "--all-heads")[:-4] + ["-o", str(out / "all.txt")]
        commands[f"attntrace, layer {last}, --all-heads json"] = attntrace(last, "--all-heads", file="all.json")
        comparing = has_transformers(args.transformers_python)
        if comparing:
            commands[f"transformers, layer {last}, head {args.head}"] = [
                args.transformers_python, "-c", TRANSFORMERS, str(folder), sentence, str(last), str(args.head),
                str(out / "transformers.json")]
        walls: dict[str, list[float]] = {name: [] for name in commands}
        peaks = dict.fromkeys(commands, 0)
        for _ in range(args.repeat):
            for name, line in commands.items():
                wall, peak = timed(line)
                walls[name].append(wall)
                peaks[name] = max(peaks[name], peak)
        timed(attntrace(last, "--float64", file="float64.json"))
        fast, exact = head_of(out / f"layer{last}.json"), head_of(out / "float64.json")
        tokens = len(json.loads((out / f"layer{last}.json").read_text(encoding="utf-8"))["tokens"])
        theirs = head_of(out / "transformers.json") if comparing else None

    shape = args.shape if args.checkpoint is None else f"{args.checkpoint} ({config['model_type']})"
    print(f"{shape}: {layers} layers, {size / 1e9:.2f} GB; a sentence of {tokens} tokens; "
          f"median of {args.repeat}, in turns")
    one = statistics.median(walls[f"attntrace, layer {last}, plain"])
    one_json = statistics.median(walls[f"attntrace, layer {last}, head {args.head}"])
    base = statistics.median(walls[f"transformers, layer {last}, head {args.head}"]) if comparing else None
    for name in commands:
        wall = statistics.median(walls[name])
        said = f"  {name:<40} {wall:6.2f} s  peak {peaks[name] / 2 ** 20:6.0f} MiB"
        if name.endswith("--all-heads"):
            said += f"   {wall / one:.2f}x one head's steps (target 1.2x)"
        elif name.endswith("--all-heads json"):
            said += f"   {wall / one_json:.2f}x one head's JSON"
        elif base is not None and name.startswith(f"attntrace, layer {last},"):
            said += f"   {wall / base:.2f}x transformers (target 0.5x)"
        print(said)
    if not comparing:
        print(f"  transformers: not installed for {args.transformers_python}; the comparison is skipped "
              "(pip install torch transformers, or --transformers-python PATH)")
    print(f"  the default run (the layers before {last} in float32 in a model of more than 300 million weights) against "
          "every layer in float64 (--float64), largest difference:")
    for key in fast:
        print(f"    {key:<8} {np.abs(fast[key] - exact[key]).max():.1e}   (largest value {np.abs(exact[key]).max():.3g})")
    if theirs is not None and theirs["weights"].shape == exact["weights"].shape:
        print(f"  transformers' float32 weights against --float64, largest difference: "
              f"{np.abs(theirs['weights'] - exact['weights']).max():.1e}")


if __name__ == "__main__":
    main()
