"""Write a random checkpoint of a real model's shape into a folder, with numpy only: config.json, the weights as
safetensors (bfloat16 for the Llama and Qwen2 shapes, float32 for GPT-2, as their real checkpoints store them; in
shards with their index where the real one is sharded) and the tokenizer of a committed tiny model
(tests/fixtures/models/). The weights come from a counter-based generator (SplitMix64), so a shape and a seed give the
same bytes on every machine and with every numpy.

    python scripts/make_checkpoint.py tinyllama /tmp/tinyllama        # TinyLlama-1.1B's shape: 2.2 GB, 2 shards
    python scripts/make_checkpoint.py qwen2 /tmp/qwen2                # Qwen2.5-1.5B's: 3.1 GB, biases on Q, K, V
    python scripts/make_checkpoint.py gpt2 /tmp/gpt2                  # GPT-2 large's: 3.1 GB of float32
    python scripts/make_checkpoint.py small /tmp/small                # 6 layers of cut-down widths: 136 MB, for tests
    python scripts/make_checkpoint.py tinyllama /tmp/t --layers 4     # fewer layers of the same widths
    python scripts/make_checkpoint.py small /tmp/small --force        # replace the checkpoint already there

Each weight matrix is uniform with the variance 1/fan_in, each norm's weight near 1, each bias near 0, so the hidden
state keeps its size through every layer and the attention rows are far from uniform. Never committed: the tests and
benchmarks make what they use in a scratch folder.

A checkpoint already in the folder (its config.json, weights or tokenizer) is never replaced unless --force is given;
the size is checked before anything is written, against the disk's free space and 100 GB at most, and a write that
fails leaves nothing behind.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "models"
SENTENCE = ("The animal didn't cross the street because it was too tired, so the cat sat on the warm mat and watched "
            "the dog on the log while she sells sea shells by the sea shore, because attention is all you need: "
            "queries, keys and values. A dog and a cat were warm on the warm mat.")  # 82 tokens, <s> included, with
# the tiny Llama tokenizer

SHAPES = {
    "tinyllama": dict(model_type="llama", hidden_size=2048, num_attention_heads=32, num_key_value_heads=4,
                      intermediate_size=5632, num_hidden_layers=22, vocab_size=32000, max_position_embeddings=2048,
                      rms_norm_eps=1e-5, rope_theta=10000.0, hidden_act="silu", tie_word_embeddings=False),
    "qwen2": dict(model_type="qwen2", hidden_size=1536, num_attention_heads=12, num_key_value_heads=2,
                  intermediate_size=8960, num_hidden_layers=28, vocab_size=151936, max_position_embeddings=32768,
                  rms_norm_eps=1e-6, rope_theta=1000000.0, hidden_act="silu", tie_word_embeddings=True,
                  use_sliding_window=False, sliding_window=None),
    "gpt2": dict(model_type="gpt2", n_embd=1280, n_head=20, n_layer=36, n_positions=1024, vocab_size=50257,
                 activation_function="gelu_new", layer_norm_epsilon=1e-5),
    "small": dict(model_type="llama", hidden_size=1024, num_attention_heads=16, num_key_value_heads=4,
                  intermediate_size=2816, num_hidden_layers=6, vocab_size=4096, max_position_embeddings=2048,
                  rms_norm_eps=1e-5, rope_theta=10000.0, hidden_act="silu", tie_word_embeddings=False),
}
TOKENIZERS = {"llama": "llama", "qwen2": "qwen2", "gpt2": "gpt2"}  # the committed tiny model whose tokenizer it takes
SHARD_BYTES = 2_000_000_000  # a shard holds at most this much, as Hugging Face's save_pretrained cuts them (2 GB)
MAX_BYTES = 100_000_000_000  # the most weights it writes (100 GB): thirty times the largest shape's own


def tensors(config: dict[str, object]) -> dict[str, tuple[tuple[int, ...], str]]:
    """each tensor's name, shape and kind ("matrix", "norm", "bias"), in the order a checkpoint stores them"""
    c: dict[str, int] = {k: v for k, v in config.items() if isinstance(v, int) and not isinstance(v, bool)}
    out: dict[str, tuple[tuple[int, ...], str]] = {}
    if config["model_type"] == "gpt2":
        hidden, layers = c["n_embd"], c["n_layer"]
        out["wte.weight"] = ((c["vocab_size"], hidden), "embedding")
        out["wpe.weight"] = ((c["n_positions"], hidden), "embedding")
        for i in range(layers):
            p = f"h.{i}."
            for norm in ("ln_1", "ln_2"):
                out[p + norm + ".weight"], out[p + norm + ".bias"] = ((hidden,), "norm"), ((hidden,), "bias")
            for key, into, width in (("attn.c_attn", hidden, 3 * hidden), ("attn.c_proj", hidden, hidden),
                                     ("mlp.c_fc", hidden, 4 * hidden), ("mlp.c_proj", 4 * hidden, hidden)):
                out[p + key + ".weight"], out[p + key + ".bias"] = ((into, width), "conv1d"), ((width,), "bias")
        out["ln_f.weight"], out["ln_f.bias"] = ((hidden,), "norm"), ((hidden,), "bias")
        return out
    hidden, inner = c["hidden_size"], c["intermediate_size"]
    d = hidden // c["num_attention_heads"]
    kv = c["num_key_value_heads"] * d
    biased = config["model_type"] == "qwen2"
    out["model.embed_tokens.weight"] = ((c["vocab_size"], hidden), "embedding")
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        out[p + "input_layernorm.weight"] = ((hidden,), "norm")
        for key, rows in (("q_proj", hidden), ("k_proj", kv), ("v_proj", kv)):
            out[p + f"self_attn.{key}.weight"] = ((rows, hidden), "matrix")
            if biased:
                out[p + f"self_attn.{key}.bias"] = ((rows,), "bias")
        out[p + "self_attn.o_proj.weight"] = ((hidden, hidden), "matrix")
        out[p + "post_attention_layernorm.weight"] = ((hidden,), "norm")
        out[p + "mlp.gate_proj.weight"] = ((inner, hidden), "matrix")
        out[p + "mlp.up_proj.weight"] = ((inner, hidden), "matrix")
        out[p + "mlp.down_proj.weight"] = ((hidden, inner), "matrix")
    out["model.norm.weight"] = ((hidden,), "norm")
    if not config.get("tie_word_embeddings"):
        out["lm_head.weight"] = ((c["vocab_size"], hidden), "embedding")
    return out


def uniform(seed: int, start: int, count: int) -> np.ndarray:
    """count float32 numbers uniform in [-1, 1), the start-th to the (start + count - 1)-th of stream seed: SplitMix64
    of the counter, each 64 bits giving two numbers of 23 random bits"""
    pairs = (count + 1) // 2
    z = np.arange(start // 2, start // 2 + pairs, dtype=np.uint64)
    z += np.uint64((seed * 0x9E3779B97F4A7C15) % (1 << 64))
    z *= np.uint64(0x9E3779B97F4A7C15)
    z ^= z >> np.uint64(30)
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    halves = z.view(np.uint32)  # two 32-bit numbers from each
    halves >>= np.uint32(9)
    halves |= np.uint32(0x3F800000)  # 1.m: uniform in [1, 2)
    values = halves.view(np.float32)
    values *= np.float32(2)
    values -= np.float32(3)  # [-1, 1)
    return values[:count]


def values(seed: int, shape: tuple[int, ...], kind: str) -> np.ndarray:
    """float32 weights of one tensor: uniform with variance 1/fan_in (a matrix, an embedding: variance 1), norms'
    weights 1 ± 0.2, biases ± 0.3"""
    count = int(np.prod(shape))
    u = np.empty(count, np.float32)
    chunk = 1 << 24
    for start in range(0, count, chunk):
        u[start:start + chunk] = uniform(seed, start, min(chunk, count - start))
    u = u.reshape(shape)
    if kind == "norm":
        return 1 + 0.2 * u
    if kind == "bias":
        return 0.3 * u
    if kind == "embedding":
        return u * np.float32(np.sqrt(3.0))
    fan_in = shape[0] if kind == "conv1d" else shape[-1]
    u *= np.float32(np.sqrt(3.0 / fan_in))
    return u


def stored(a: np.ndarray, dtype: str) -> np.ndarray:
    """a float32 array as the checkpoint stores it: BF16 as the upper 16 bits of each float32 (rounded to nearest)"""
    if dtype == "F32":
        return a.astype("<f4")
    bits = a.view(np.uint32).astype(np.uint64)
    bits += np.uint64(0x7FFF) + ((bits >> np.uint64(16)) & np.uint64(1))
    return (bits >> np.uint64(16)).astype("<u2")


class Refused(Exception):
    """what the script will not do, said in one line; exit status 1, or 2 for a bad argument"""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _config(shape: str, layers: int | None) -> dict[str, object]:
    """the config.json of shape (SHAPES), with layers layers if given"""
    config: dict[str, object] = dict(SHAPES[shape])
    if layers is not None:
        if isinstance(layers, bool) or not isinstance(layers, int) or layers < 1:
            raise Refused(f"--layers {layers}: give a whole number of layers, 1 or more", 2)
        config["n_layer" if config["model_type"] == "gpt2" else "num_hidden_layers"] = layers
    dtype = "F32" if config["model_type"] == "gpt2" else "BF16"
    config["torch_dtype"] = config["dtype"] = "float32" if dtype == "F32" else "bfloat16"
    return config


def checkpoint_bytes(config: dict[str, object]) -> int:
    """the bytes of the weights of a checkpoint of this config, worked out from a model of no layer and one of one
    (never by listing the tensors of every layer: a billion layers are sized at once)"""
    layer_key = "n_layer" if config["model_type"] == "gpt2" else "num_hidden_layers"
    size = 4 if config["model_type"] == "gpt2" else 2

    def weights(layers: int) -> int:
        return sum(int(np.prod(dims)) for dims, _kind in tensors({**config, layer_key: layers}).values()) * size

    base = weights(0)
    return base + int(config[layer_key]) * (weights(1) - base)  # type: ignore[call-overload]


WRITTEN = ("config.json", "model.safetensors", "model.safetensors.index.json", "tokenizer.json", "tokenizer_config.json")


def _checked_folder(folder: Path, force: bool) -> Path:
    """the nearest folder that exists on the way to folder (where its free space is asked); refused: a file in the way,
    or a checkpoint there already unless force"""
    try:
        for place in (folder, *folder.parents):
            if place.is_dir():
                break
            if place.exists() or place.is_symlink():
                raise Refused(f"{place} is a file, not a folder" if place.exists() else f"{place} is a broken link")
        taken = [name for name in WRITTEN if (folder / name).exists() or (folder / name).is_symlink()] + sorted(
            p.name for p in folder.glob("model-*-of-*.safetensors")) if place == folder else []
    except OSError as e:  # a name too long, a folder that cannot be read
        raise Refused(f"{e.filename or folder}: {e.strerror or e}") from None
    if taken and not force:
        raise Refused(f"{folder} already holds {taken[0]}: give another folder, or --force to replace the "
                      "checkpoint there")
    return place


def _size(nbytes: int) -> str:
    if nbytes >= 1e15:
        return f"{nbytes:.1e} bytes"
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if nbytes >= size:
            return f"{nbytes / size:,.1f} {unit}"
    return f"{nbytes:,} bytes"


def write(shape: str, folder: Path, layers: int | None = None, seed: int = 0, force: bool = False) -> Path:
    """write the checkpoint of shape (SHAPES) into folder, with layers layers if given; the folder. Everything is checked
    before the first byte: a file in the way, a checkpoint already there (replaced only with force), the size against
    the disk's free space. The files are written under temporary names and renamed once all are whole; on a failure
    nothing of it is left, not even the folders it made."""
    config = _config(shape, layers)
    existing = _checked_folder(folder, force)
    need = checkpoint_bytes(config)
    try:
        disk = shutil.disk_usage(existing)
    except OSError:
        disk = None
    layers_said = f"{shape} with {config.get('num_hidden_layers') or config.get('n_layer')} layers"
    if need > MAX_BYTES:
        raise Refused(f"{layers_said} needs about {_size(need)}, more than the {_size(MAX_BYTES)} this script writes "
                      "at most; give fewer --layers")
    if disk is not None and disk.total and need > disk.free:  # a pseudo file system (/proc) says total 0: unknown
        raise Refused(f"{layers_said} needs about {_size(need)}, more than the {_size(disk.free)} free on {existing}; "
                      "give fewer --layers, or another folder")
    made = [place for place in (folder, *folder.parents) if not place.is_dir()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        _remove([], made)
        raise Refused(f"cannot make {folder}: {e.strerror or e}") from None
    done: list[Path] = []
    try:
        for name, text in _files(config, seed):
            temporary = folder / f".{name}.partial"
            done.append(temporary)
            with open(temporary, "wb") as f:
                for piece in text:
                    f.write(piece)
        if force:  # the old checkpoint goes whole: none of its shards, nor its index, stays beside the new one
            for old in [*folder.glob("model*.safetensors"), folder / "model.safetensors.index.json"]:
                if old.exists() and old.name not in {p.name[1:-len(".partial")] for p in done}:
                    old.unlink()
        for temporary in done:
            temporary.replace(folder / temporary.name[1:-len(".partial")])
    except OSError as e:
        _remove(done, made)
        raise Refused(f"cannot write {e.filename or folder}: {e.strerror or e}") from None
    except BaseException:
        _remove(done, made)
        raise
    return folder


def _remove(files: list[Path], folders: list[Path]) -> None:
    """what a failed write made: its files, then its folders (deepest first), where they are still there and empty"""
    for file in files:
        file.unlink(missing_ok=True)
    for place in folders:
        try:
            place.rmdir()
        except OSError:
            pass


def _files(config: dict[str, object], seed: int) -> Iterator[tuple[str, Iterator[bytes]]]:
    """each file of the checkpoint, its name and its bytes a tensor at a time"""
    dtype = "F32" if config["model_type"] == "gpt2" else "BF16"
    listed = tensors(config)
    size = 4 if dtype == "F32" else 2
    shards: list[list[str]] = [[]]
    filled = 0
    for name, (dims, _kind) in listed.items():
        nbytes = int(np.prod(dims)) * size
        if filled and filled + nbytes > SHARD_BYTES:
            shards.append([])
            filled = 0
        shards[-1].append(name)
        filled += nbytes
    files = (["model.safetensors"] if len(shards) == 1 else
             [f"model-{k + 1:05d}-of-{len(shards):05d}.safetensors" for k in range(len(shards))])
    numbers = {name: number for number, name in enumerate(listed)}

    def shard(names: list[str]) -> Iterator[bytes]:
        header: dict[str, object] = {"__metadata__": {"format": "pt"}}
        offset = 0
        for name in names:
            dims, _kind = listed[name]
            nbytes = int(np.prod(dims)) * size
            header[name] = {"dtype": dtype, "shape": list(dims), "data_offsets": [offset, offset + nbytes]}
            offset += nbytes
        text = json.dumps(header).encode()
        text += b" " * (-len(text) % 8)
        yield len(text).to_bytes(8, "little") + text
        for name in names:
            dims, kind = listed[name]
            yield stored(values(seed * 100_003 + numbers[name], dims, kind), dtype).tobytes()

    for file, names in zip(files, shards):
        yield file, shard(names)
    if len(files) > 1:
        weight_map = {name: file for file, names in zip(files, shards) for name in names}
        total = sum(int(np.prod(dims)) * size for dims, _kind in listed.values())
        index = {"metadata": {"total_size": total}, "weight_map": weight_map}
        yield "model.safetensors.index.json", iter([json.dumps(index, indent=2).encode()])
    yield "config.json", iter([json.dumps(config, indent=2).encode()])
    tiny = FIXTURES / TOKENIZERS[str(config["model_type"])]
    for name in ("tokenizer.json", "tokenizer_config.json"):
        yield name, iter([(tiny / name).read_bytes()])


def _layers(text: str) -> int:
    """--layers: a whole number, 1 or more"""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: a checkpoint has 1 layer or more")
    return value


def _folder(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("empty: give the folder to write the checkpoint into")
    return Path(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("shape", choices=sorted(SHAPES))
    parser.add_argument("folder", type=_folder, help="where to write it; made if missing")
    parser.add_argument("--layers", type=_layers, help="this many layers instead of the shape's own")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--force", action="store_true",
                        help="replace a checkpoint already in the folder (its config.json, weights and tokenizer)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))  # killed: what was written goes too
    try:
        write(args.shape, args.folder, args.layers, args.seed, args.force)
    except Refused as e:
        print(f"make_checkpoint.py: {e}", file=sys.stderr)
        return e.exit_code
    total = sum(p.stat().st_size for p in args.folder.glob("*.safetensors"))
    print(f"wrote {args.folder}: {args.shape}, {total / 1e9:.2f} GB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
