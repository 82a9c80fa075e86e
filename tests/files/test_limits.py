"""Reading within limits: every read stops at the cap whatever the file is, archives and array headers are checked
before anything is inflated or allocated, labels have a sane length, and a problem too big for memory is refused up
front. Every refusal is one line."""

import io
import json
import os
import subprocess
import sys
import threading
import zipfile

import numpy as np
import pytest

import attntrace as at
from attntrace import memory as memory_module
from attntrace.core import problem as problem_module
from attntrace.core.generate import random_problem
from attntrace.errors import AttntraceError
from attntrace.files import text
from attntrace.files.problemfile import load
from tests.conftest import ROOT, SAMPLES

GOOD = json.loads((SAMPLES / "worked_example.json").read_text())


def _one_line(r, *parts):
    assert r.code == 1 and r.out == "" and "Traceback" not in r.err, r.err
    line = r.err.strip()
    assert "\n" not in line and line.startswith("attntrace: ")
    for part in parts:
        assert part in line, line
    return line


# --- every read stops at the cap -----------------------------------------------------------------------------------


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_named_json_stops_at_the_cap(tmp_path, device):
    """read in a process limited to 4 GB of address space: reading the whole device would end in a MemoryError"""
    resource = pytest.importorskip("resource")
    if not os.path.exists(device) or not hasattr(os, "symlink"):
        pytest.skip(f"no {device} here")
    link = tmp_path / "x.json"
    os.symlink(device, link)
    code = (f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({4 << 30}, {4 << 30})); "
            "from attntrace.cli import main; raise SystemExit(main())")
    env = {**os.environ, "ATTNTRACE_MAX_MB": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", code, "run", str(link)], capture_output=True, env=env, cwd=ROOT,
                          timeout=120, check=False)
    assert resource  # the limit was set in the child
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 1 and done.stdout == b"" and "Traceback" not in err, err
    assert err.count("\n") == 1 and "x.json is over the 1 MB cap" in err and "ATTNTRACE_MAX_MB=2" in err


class _Fifo:
    """a FIFO named x.json and a thread writing data into it (then closing it, or stopping when the reader goes)"""

    def __init__(self, path, data: bytes):
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs here")
        self.path = path
        os.mkfifo(path)
        self.thread = threading.Thread(target=self._write, args=(data,), daemon=True)
        self.thread.start()

    def _write(self, data: bytes) -> None:
        try:
            with open(self.path, "wb") as f:
                for start in range(0, len(data), 1 << 16):
                    f.write(data[start:start + (1 << 16)])
        except OSError:  # the reader stopped reading and closed its end
            pass

    def close(self) -> None:
        if self.thread.is_alive():  # the reader never opened the FIFO: open it so that the writer can finish
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
            try:
                while self.thread.is_alive():
                    try:
                        os.read(fd, 1 << 16)
                    except BlockingIOError:
                        pass
                    self.thread.join(0.01)
            finally:
                os.close(fd)
        self.thread.join(5)


def test_a_fifo_stops_at_the_cap(attntrace, tmp_path):
    fifo = _Fifo(tmp_path / "x.json", b" " * 3_000_000)  # st_size is 0: only reading tells the size
    try:
        r = attntrace("run", fifo.path, env={"ATTNTRACE_MAX_MB": "1"})
    finally:
        fifo.close()
    _one_line(r, "x.json is over the 1 MB cap", "ATTNTRACE_MAX_MB=2")


def test_a_fifo_holding_a_problem_is_read(attntrace, tmp_path):
    fifo = _Fifo(tmp_path / "x.json", json.dumps(GOOD).encode())
    try:
        r = attntrace("run", fifo.path, "--format", "json")
    finally:
        fifo.close()
    assert r.code == 0 and json.loads(r.out)["name"] == "worked example"


def test_stdin_stops_at_the_cap(attntrace):
    r = attntrace("run", "-", input=json.dumps(GOOD) + " " * 2_000_000, env={"ATTNTRACE_MAX_MB": "1"})
    _one_line(r, "stdin is over the 1 MB cap")


def test_a_regular_file_is_refused_by_its_size_without_reading_it(attntrace, tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(GOOD) + " " * 2_000_000)
    monkeypatch.setattr(text, "_read_capped", lambda *a: pytest.fail("read although its size is over the cap"))
    _one_line(attntrace("run", path, env={"ATTNTRACE_MAX_MB": "1"}), "is 2.0 MB, over the 1 MB cap",
              "ATTNTRACE_MAX_MB=5")


# --- ATTNTRACE_MAX_MB ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1", "abc", "1e999"])
def test_a_cap_that_is_not_a_positive_finite_number_is_one_line(attntrace, value):
    r = attntrace("run", SAMPLES / "worked_example.json", env={"ATTNTRACE_MAX_MB": value})
    assert r.code == 2 and r.out == "" and r.err.count("\n") == 1  # a setting, like an option: a usage error
    assert "ATTNTRACE_MAX_MB" in r.err and "positive, finite number" in r.err and "ATTNTRACE_MAX_MB=0" not in r.err


def test_a_huge_cap_reads_files_and_stdin(attntrace):
    env = {"ATTNTRACE_MAX_MB": "1e30"}
    assert attntrace("run", SAMPLES / "worked_example.json", env=env).code == 0
    assert attntrace("run", "-", input=json.dumps(GOOD), env=env).code == 0


def test_the_advice_for_a_tiny_cap_is_never_zero(attntrace):
    line = _one_line(attntrace("run", SAMPLES / "worked_example.json", env={"ATTNTRACE_MAX_MB": "0.0001"}),
                     "is 341 bytes, over the 0.0001 MB cap", "ATTNTRACE_MAX_MB=1")
    assert "ATTNTRACE_MAX_MB=0" not in line and "0.0 MB" not in line


# --- NumPy files: checked before anything is inflated or allocated ----------------------------------------------------


def test_an_npz_that_would_inflate_past_the_cap_is_refused_before_inflating(attntrace, tmp_path, monkeypatch):
    path = tmp_path / "bomb.npz"
    np.savez_compressed(path, x=np.zeros((600, 600)))  # 2.9 MB of zeros in a few kB
    assert path.stat().st_size < 100_000
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda *a, **k: pytest.fail("a member was inflated"))
    _one_line(attntrace("run", path, env={"ATTNTRACE_MAX_MB": "1"}), "bomb.npz: what it inflates to",
              "2.9 MB, over the 1 MB cap")


def _npy_header(shape, descr="<f8") -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": descr, "fortran_order": False, "shape": shape})
    return out.getvalue()


def test_an_npy_header_declaring_more_than_the_file_holds(attntrace, tmp_path):
    path = tmp_path / "x.npy"
    path.write_bytes(_npy_header((10**8, 10**8)))
    assert len(path.read_bytes()) == 128
    _one_line(attntrace("run", "--x", path), "x.npy declares a 100000000 x 100000000 array of float64",
              "0 bytes of data", "cut short")


def test_an_npz_member_header_declaring_more_than_the_member_holds(attntrace, tmp_path):
    path = tmp_path / "p.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("x.npy", _npy_header((1000, 1000)) + b"\0" * 16)
    _one_line(attntrace("run", path), "p.npz: x declares a 1000 x 1000 array of float64", "16 bytes of data")


@pytest.mark.parametrize("descr", ["|O", "<U0"])
def test_an_npy_header_is_read_without_trusting_it(tmp_path, descr):
    from attntrace.files.npyfile import load_npy

    path = tmp_path / "x.npy"
    path.write_bytes(_npy_header((10**9, 10**9), descr))
    with pytest.raises(AttntraceError):
        load_npy(str(path))


def test_valid_npy_and_npz_files_are_read_as_numpy_reads_them(tmp_path):
    from attntrace.files.npyfile import load_npy, load_npz

    rng = np.random.default_rng(0)
    for a in (rng.normal(size=(3, 4)), np.asfortranarray(rng.normal(size=(4, 3))), np.arange(6, dtype=">i4").reshape(2, 3),
              np.array([[True, False]])):
        np.save(tmp_path / "a.npy", a)
        np.testing.assert_array_equal(load_npy(str(tmp_path / "a.npy")), a)
    np.savez_compressed(tmp_path / "p.npz", x=np.eye(3), tokens=np.array(["a", "b", "c"]), heads=1, scale=False,
                        padding=np.array([False, True, False]), name="n")
    got = load_npz(str(tmp_path / "p.npz"))
    assert got["tokens"] == ["a", "b", "c"] and got["heads"] == 1 and got["scale"] is False and got["name"] == "n"
    assert got["padding"] == [False, True, False] and got["x"].shape == (3, 3)


# --- labels of a sane length ----------------------------------------------------------------------------------------


def test_a_two_megabyte_label_is_refused(attntrace, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({**GOOD, "tokens": ["a" * 2_000_000, "b", "c"]}))
    _one_line(attntrace("run", path), "tokens[0] (label 1) is 2,000,000 characters long", "at most 200")


def test_labels_up_to_the_limit_are_fine_and_the_library_checks_them_too():
    ok = at.Problem(x=np.eye(2), tokens=["a" * problem_module.MAX_LABEL, "b"])
    assert len(ok.tokens[0]) == problem_module.MAX_LABEL
    with pytest.raises(AttntraceError, match="source_tokens\\[1\\] \\(label 2\\) is 201 characters"):
        at.Problem(x=np.eye(2), source=np.eye(2), source_tokens=["s", "s" * 201])
    with pytest.raises(AttntraceError, match="name is 1,001 characters long"):
        at.Problem(x=np.eye(2), name="n" * 1001)


def test_a_long_token_line_in_a_csv_directory(attntrace, tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    (d / "x.csv").write_text("1,0\n0,1\n")
    (d / "tokens.txt").write_text("a\n" + "b" * 300 + "\n")
    _one_line(attntrace("run", d), "tokens[1] (label 2) is 300 characters long")


# --- a problem too big for memory -----------------------------------------------------------------------------------


def test_a_problem_whose_trace_cannot_fit_is_refused_up_front(attntrace, tmp_path, monkeypatch):
    path = tmp_path / "x.npy"
    np.save(path, np.zeros((3000, 2)))  # 48 kB, but its scores, scaled scores and weights are 3000 x 3000 each
    monkeypatch.setattr(memory_module, "available_memory", lambda: 100_000_000)
    line = _one_line(attntrace("validate", path), "x.npy: tracing this problem needs about", "more than the 100.0 MB",
                     "3,000 · 3,000 · 1")
    assert "GB" not in line.split("needs about")[1].split("of memory")[0]
    monkeypatch.setattr(memory_module, "available_memory", lambda: 10_000_000_000)
    assert attntrace("validate", path).code == 0


def test_a_small_problem_never_looks_at_the_memory(monkeypatch):
    monkeypatch.setattr(memory_module, "available_memory", lambda: pytest.fail("asked for a small problem"))
    at.trace(at.load(SAMPLES / "two_heads.json"))


def test_the_estimate_names_the_machine_limit():
    if memory_module.available_memory() is None:
        pytest.skip("this platform does not say how much memory it has")
    with pytest.raises(AttntraceError, match="needs about .* TB of memory .* this machine has available"):
        at.trace(x=np.zeros((1_000_000, 1)))


def test_one_input_of_a_problem_too_big_for_a_full_trace_is_still_traced(monkeypatch):
    monkeypatch.setattr(memory_module, "available_memory", lambda: 100_000_000)
    p = at.Problem(x=np.eye(3000, 2))
    with pytest.raises(AttntraceError, match="needs about"):
        at.trace(p)
    assert at.trace(p, query=3000).heads[0].weights.shape == (1, 3000)


def test_available_memory_is_a_positive_number_or_unknown():
    memory = memory_module.available_memory()
    assert memory is None or memory > 0


def test_new_with_a_hundred_billion_tokens_is_one_line(attntrace):
    if memory_module.available_memory() is None:
        pytest.skip("this platform does not say how much memory it has")
    r = attntrace("new", "--tokens", "100000000000")  # sizes are options: a usage error
    assert r.code == 2 and r.out == "" and r.err.count("\n") == 1
    assert "new: --tokens 100000000000: a problem of 100,000,000,000 inputs" in r.err and "this machine has available" in r.err


def test_random_problem_refuses_before_drawing(monkeypatch):
    monkeypatch.setattr(memory_module, "available_memory", lambda: 1_000_000_000)
    monkeypatch.setattr(np.random, "default_rng", lambda *a: pytest.fail("drew numbers for a problem that cannot fit"))
    with pytest.raises(AttntraceError, match="a problem of 100,000 inputs, d_model = 4 needs about"):
        random_problem(n=100_000, d_model=4, d_k=3, d_v=3, fits=memory_module.fits_new)


@pytest.mark.parametrize("given, words", [
    (dict(seed=-1), "seed = -1 must be a whole number of at least 0"),
    (dict(seed=True), "seed = True"),
    (dict(n=0), "tokens = 0 must be a whole number of at least 1"),
    (dict(d_k=2.5), "d_k = 2.5"),
])
def test_random_problem_refuses_bad_sizes_and_seeds(given, words):
    sizes = {"n": 3, "d_model": 4, "d_k": 3, "d_v": 3, **given}
    with pytest.raises(AttntraceError, match=words):
        random_problem(**sizes)


def test_new_with_a_negative_seed_is_a_usage_error_in_one_line(attntrace):
    r = attntrace("new", "--seed", "-1")
    assert r.code == 2 and r.out == "" and r.err.count("\n") == 1 and "-1 is not in the range x>=0" in r.err


# --- paths that cannot be looked at ---------------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="needs a user whom permissions bind")
def test_a_file_inside_an_unreadable_directory(attntrace, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "x.json").write_text(json.dumps(GOOD))
    locked.chmod(0)
    try:
        r = attntrace("run", locked / "x.json")
    finally:
        locked.chmod(0o755)
    _one_line(r, "x.json: cannot be read", "ermission")


def test_a_path_that_cannot_be_looked_at_is_one_line(attntrace, tmp_path, monkeypatch):
    """as above, for any user: the file system refuses to say what the path is"""
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "x.json").write_text(json.dumps(GOOD))
    real = os.stat

    def stat(path, *args, **kwargs):
        if str(path).startswith(str(locked)):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    for args in (["run", locked / "x.json"], ["run", "--x", locked / "x.csv"], ["validate", locked]):
        _one_line(attntrace(*args), "locked", "Permission denied")
    with pytest.raises(AttntraceError, match="x.json: cannot be read \\(Permission denied\\)"):
        at.load(locked / "x.json")
    with pytest.raises(AttntraceError, match="x.csv: cannot be read \\(Permission denied\\)"):
        load(None, {"x": str(locked / "x.csv")})


def test_a_5000_digit_integer_is_a_number_too_large(attntrace, tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"x": [[1, %s]]}' % ("9" * 5000))
    _one_line(attntrace("run", path), "x row 1, column 2 is inf; every value must be finite")
    path.write_text('{"x": [[1]], "heads": %s}' % ("9" * 5000))
    _one_line(attntrace("run", path), "heads = inf must be a whole number")
