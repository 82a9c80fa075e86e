"""Time from command start to the first table for the last layer of a Llama-style model (bfloat16 weights, grouped-query
heads), against loading its weights alone, in the same run. The model is random, written here with numpy; the
tokenizer is trained here on one sentence.

    python benchmarks/bench_models.py
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

RUNS = 7
SENTENCE = "The animal didn't cross the street because it was too tired"
SIZES = dict(hidden_size=1024, num_attention_heads=16, num_key_value_heads=4, intermediate_size=2816,
             num_hidden_layers=6, vocab_size=32000)
LOAD = ("import sys; from pathlib import Path; from attntrace.checkpoints.tensors import open_weights\n"
        "w = open_weights(Path(sys.argv[1]))\nfor name in w.names: w.get(name)")  # each tensor widened, then let go


def write_model(directory: Path) -> int:
    """config.json, model.safetensors (bfloat16) and tokenizer.json of a random Llama-style model; its size in bytes"""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    s = SIZES
    hidden, d = s["hidden_size"], s["hidden_size"] // s["num_attention_heads"]
    shapes = {"model.embed_tokens.weight": (s["vocab_size"], hidden)}
    for i in range(s["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes |= {p + "input_layernorm.weight": (hidden,), p + "post_attention_layernorm.weight": (hidden,),
                   p + "self_attn.q_proj.weight": (hidden, hidden), p + "self_attn.o_proj.weight": (hidden, hidden),
                   p + "self_attn.k_proj.weight": (s["num_key_value_heads"] * d, hidden),
                   p + "self_attn.v_proj.weight": (s["num_key_value_heads"] * d, hidden),
                   p + "mlp.gate_proj.weight": (s["intermediate_size"], hidden),
                   p + "mlp.up_proj.weight": (s["intermediate_size"], hidden),
                   p + "mlp.down_proj.weight": (hidden, s["intermediate_size"])}
    rng = np.random.default_rng(0)
    header, blobs, offset = {}, [], 0
    for name, shape in shapes.items():
        values = (rng.standard_normal(shape, dtype=np.float32) / np.sqrt(shape[-1])).astype(np.float32)
        if name.endswith("layernorm.weight"):
            values = values + 1
        bits = (values.view(np.uint32) >> 16).astype("<u2")  # bfloat16: the upper half of each float32
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + bits.nbytes]}
        blobs.append(bits)
        offset += bits.nbytes
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(directory / "model.safetensors", "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text)
        for blob in blobs:
            f.write(blob.tobytes())
    config = {"model_type": "llama", **SIZES, "max_position_embeddings": 2048, "rms_norm_eps": 1e-5,
              "rope_theta": 10000.0, "hidden_act": "silu", "torch_dtype": "bfloat16"}
    (directory / "config.json").write_text(json.dumps(config), encoding="utf-8")
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.train_from_iterator([SENTENCE], trainers.BpeTrainer(vocab_size=200, special_tokens=["<unk>", "<s>"],
                                                                  show_progress=False))
    tokenizer.save(str(directory / "tokenizer.json"))
    return (directory / "model.safetensors").stat().st_size


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
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        size = write_model(directory)
        layer = str(SIZES["num_hidden_layers"])
        command = [py, "-m", "attntrace", "model", folder, SENTENCE, "--layer", layer, "--head", "1"]
        wall([py, "-c", LOAD, folder])  # the file in the page cache for both
        loads, firsts, bares = [], [], []
        for _ in range(RUNS):  # interleaved, so that whatever else the machine does weighs on each alike
            loads.append(wall([py, "-c", LOAD, folder]))
            firsts.append(first_line_after(command))
            bares.append(wall([py, "-c", "import numpy"]))
        load, first, bare = (statistics.median(times) for times in (loads, firsts, bares))
    s = SIZES
    print(f"model, layer {layer} of a random Llama-style model: {s['num_hidden_layers']} layers, hidden size "
          f"{s['hidden_size']}, {s['num_attention_heads']} heads on {s['num_key_value_heads']} key/value heads, "
          f"{size / 1e6:.0f} MB of bfloat16 (median of {RUNS})")
    print(f"  python -c 'import numpy'                  {bare * 1e3:7.1f} ms")
    print(f"  load the weights alone, widened (python -c) {load * 1e3:7.1f} ms")
    print(f"  attntrace model … first table               {first * 1e3:7.1f} ms   ratio {first / load:.2f}x the load")


if __name__ == "__main__":
    main()
