"""A model's safetensors weights read without torch: one tensor (or a slice of it) at a time from a memory map, widened to
float64 when it is used, bfloat16 included (its 16 bits are the upper half of a float32)."""

from __future__ import annotations

import json
import math
import mmap
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from attntrace.checkpoints.jsonfile import read_json
from attntrace.errors import AttntraceError
from attntrace.escape import visible
from attntrace.files import paths
from attntrace.files.cap import max_bytes
from attntrace.language import N_, _

SINGLE = "model.safetensors"
INDEX = "model.safetensors.index.json"
MAX_HEADER = 100_000_000  # bytes of JSON before the data, as the safetensors library allows (and at most the size cap)
MAX_DIMENSIONS, MAX_SIZE = 8, 1 << 40  # far beyond any model's tensor, and within what numpy can shape
FLOATS: dict[str, np.dtype[Any]] = {"F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "BF16": np.dtype("<u2")}
OTHERS: dict[str, np.dtype[Any]] = {"I64": np.dtype("<i8"), "I32": np.dtype("<i4"), "I16": np.dtype("<i2"), "I8": np.dtype("i1"),
          "U8": np.dtype("u1"), "BOOL": np.dtype("?")}  # buffers some checkpoints keep (position ids, masks)
DTYPES: dict[str, np.dtype[Any]] = {**FLOATS, **OTHERS}
_SHARD_NAME = re.compile(r"[\w.-]+\.safetensors")


@dataclass(frozen=True)
class Entry:
    """where one tensor lies: its file, dtype, shape and byte range within the file"""

    file: Path
    dtype: str
    shape: tuple[int, ...]
    start: int
    end: int


class Tensors:
    """the tensors of a model directory, by name; nothing is read until a tensor is asked for"""

    def __init__(self, entries: dict[str, Entry]) -> None:
        self._entries = entries
        self._maps: dict[Path, mmap.mmap] = {}
        self._scratch = np.empty(0, np.float32)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._entries)

    def shape(self, name: str) -> tuple[int, ...]:
        return self._entries[name].shape

    def file(self, name: str) -> Path:
        """the file that holds the tensor"""
        return self._entries[name].file

    def raw(self, name: str) -> np.ndarray:
        """the stored array, read-only and unconverted (bfloat16 as its uint16 bits)"""
        entry = self._entries[name]
        data = self._map(entry.file)
        if len(data) < entry.end:
            raise AttntraceError(_("{file}: shorter than when it was opened; it changed while being read").format(
                file=entry.file))
        count = math.prod(entry.shape)
        return np.frombuffer(data, DTYPES[entry.dtype], count, entry.start).reshape(entry.shape)

    def get(self, name: str, index: Any = (), dtype: type[np.floating[Any]] = np.float64,
            checked: bool = True) -> np.ndarray:
        """the tensor, or raw(name)[index], widened (or narrowed) to dtype, float64 unless asked: only the part asked for
        is converted; checked: an infinite or NaN weight is refused (unchecked, a product of it is, see check_finite)"""
        entry = self._entries[name]
        if entry.dtype not in FLOATS:
            raise AttntraceError(_("{file}: the tensor {name} holds {dtype}, not floating-point weights").format(
                file=entry.file, name=visible(name), dtype=entry.dtype))
        part = self.raw(name)[index]
        if entry.dtype == "BF16":  # the upper half of a float32, exactly
            part = np.left_shift(part, 16, dtype=np.uint32).view(np.float32)
        if checked:
            self.check_finite(name, part)
        wide = part.astype(dtype)
        wide.setflags(write=False)  # the weights as read: a trace keeps views of them, never copies
        return wide

    def borrow32(self, name: str) -> np.ndarray:
        """the whole tensor as float32, unchecked, in a buffer kept for the next one: valid until borrow32 is called
        again. One tensor is widened at a time, into the same memory each time (no new pages to map for each); a
        float32 one is read where it lies in the file"""
        entry = self._entries[name]
        if entry.dtype not in FLOATS:
            self.get(name)  # says it is not floating-point weights
        raw = self.raw(name)
        if entry.dtype == "F32":
            return raw  # float32 already: the memory map itself, read-only, nothing copied
        if self._scratch.size < raw.size:
            self._scratch = np.empty(raw.size, np.float32)
        out = self._scratch[:raw.size].reshape(raw.shape)
        if entry.dtype == "BF16":  # the upper half of a float32, exactly
            np.left_shift(raw, 16, out=out.view(np.uint32), dtype=np.uint32)
        else:
            np.copyto(out, raw, casting="unsafe")  # float16 widens exactly; float64 rounds to the nearest float32
        return out

    def check_finite(self, name: str, values: np.ndarray | None = None) -> None:
        """refuse the tensor (values, read from it; else the whole tensor) when it holds an infinite or NaN weight"""
        if values is None:
            values = self.get(name, checked=False)
        if not np.isfinite(values).all():
            raise AttntraceError(_("{file}: the tensor {name} holds an infinite or NaN weight; the file is damaged, or "
                                   "the model diverged in training").format(file=self._entries[name].file,
                                                                            name=visible(name)))

    def release(self) -> None:
        """give back the pages of the files read so far (they stay in the system's cache): what a layer read is not
        kept in this process's memory while the next layer runs"""
        for data in self._maps.values():
            if hasattr(data, "madvise") and hasattr(mmap, "MADV_DONTNEED"):  # Linux and macOS; elsewhere kept
                data.madvise(mmap.MADV_DONTNEED)

    @property
    def count(self) -> int:
        """how many floating-point weights the files hold"""
        return sum(math.prod(entry.shape) for entry in self._entries.values() if entry.dtype in FLOATS)

    def _map(self, file: Path) -> mmap.mmap:
        if file not in self._maps:
            with open(file, "rb") as f:
                self._maps[file] = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        return self._maps[file]


def open_weights(directory: Path) -> Tensors:
    """the weights in directory: model.safetensors, or the shards model.safetensors.index.json names"""
    single, index = directory / SINGLE, directory / INDEX
    if weights_file(single):
        return Tensors(read_header(single))
    if paths.kind(index) != "missing":
        return Tensors(_sharded(directory, index))
    others = sorted(p.name for p in directory.glob("*.bin")) + sorted(p.name for p in directory.glob("*.pt*"))
    if others:
        raise AttntraceError(_("{folder}: no {single} (or {index} and its shards); it has {other}, which attntrace does "
                               "not read (it never unpickles)").format(
                                   folder=directory, single=SINGLE, index=INDEX, other=visible(others[0])))
    raise AttntraceError(_("{folder}: no {single} (or {index} and its shards)").format(
        folder=directory, single=SINGLE, index=INDEX))


def weights_file(path: Path) -> bool:
    """whether path is a file of weights, which is read through a memory map, whatever its size; a folder, a device or a
    pipe in its place is one line (a symbolic link loop too)"""
    found = paths.kind(path)
    if found in ("directory", "other"):
        said = (_("{file}: is a folder, expected a .safetensors file of weights") if found == "directory" else
                _("{file}: is a device or pipe, expected a .safetensors file of weights"))
        raise AttntraceError(said.format(file=path))
    return found == "file"


def _sharded(directory: Path, index: Path) -> dict[str, Entry]:
    shards = read_json(index, N_("a shard index (a JSON object whose weight_map names each tensor's file)"))
    weight_map = shards.get("weight_map")
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise AttntraceError(_("{file}: not a shard index (a JSON object whose weight_map names each tensor's "
                               "file)").format(file=index))
    headers: dict[str, dict[str, Entry]] = {}
    entries: dict[str, Entry] = {}
    for name, shard in weight_map.items():
        if not _SHARD_NAME.fullmatch(shard) or shard.startswith("."):
            raise AttntraceError(_("{file}: the shard {shard} is not a .safetensors file name in this folder").format(
                file=index, shard=repr(visible(shard[:80]))))
        if shard not in headers:
            path = directory / shard
            if not weights_file(path):
                raise AttntraceError(_("{folder}: no {shard}, a shard {index} names; the download is incomplete").format(
                    folder=directory, shard=shard, index=INDEX))
            headers[shard] = read_header(path)
        if name not in headers[shard]:
            raise AttntraceError(_("{file}: no tensor {name}, which {index} puts there").format(
                file=directory / shard, name=visible(name[:80]), index=INDEX))
        entries[name] = headers[shard][name]
    return entries


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """a JSON object whose names are each given once: a second entry of the same tensor is refused, never chosen"""
    names = [name for name, _ in pairs]
    if len(set(names)) < len(names):
        twice = next(name for k, name in enumerate(names) if name in names[:k])
        raise _Duplicate(twice)
    return dict(pairs)


class _Duplicate(Exception):
    pass


def read_header(path: Path) -> dict[str, Entry]:
    """the tensors a .safetensors file holds, checked against its size: an 8-byte length, a JSON header, the data"""
    def broken(why: str) -> AttntraceError:
        return AttntraceError(_("{file}: not a readable safetensors file ({reason})").format(file=path, reason=why))

    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(8)
            if len(head) < 8:
                raise broken(_("shorter than its 8-byte header length"))
            length = int.from_bytes(head, "little")
            if length > min(MAX_HEADER, max_bytes(), size - 8):
                raise broken(_("a header of {length} bytes in a file of {size}").format(length=f"{length:,}", size=f"{size:,}"))
            text = f.read(length)
    except OSError as e:
        raise AttntraceError(_("{file}: cannot be read ({reason})").format(file=path, reason=e.strerror or e)) from None
    try:
        header = json.loads(text.decode("utf-8"), object_pairs_hook=_unique)
    except _Duplicate as e:
        raise broken(_("the tensor {name} is listed twice").format(name=visible(str(e.args[0])[:80]))) from None
    except RecursionError:
        raise broken(_("its header is nested too deeply")) from None
    except (UnicodeDecodeError, ValueError):
        raise broken(_("its header is not JSON")) from None
    if not isinstance(header, dict):
        raise broken(_("its header is not a JSON object"))
    data_start, data_size = 8 + length, size - 8 - length
    entries = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        shown = visible(str(name)[:80])
        try:
            dtype, shape, (start, end) = info["dtype"], tuple(info["shape"]), info["data_offsets"]
            if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (*shape, start, end)):
                raise TypeError
        except (KeyError, TypeError, ValueError):
            raise broken(_("the entry of {name} is not dtype, shape and data_offsets").format(name=shown)) from None
        if not isinstance(dtype, str) or dtype not in DTYPES:
            raise broken(_("{name} has the dtype {dtype}, which attntrace does not read").format(
                name=shown, dtype=visible(str(dtype)[:20])))
        if len(shape) > MAX_DIMENSIONS or any(n > MAX_SIZE for n in shape):
            raise broken(_("{name} has the shape {shape}, more than a tensor can hold").format(
                name=shown, shape=visible(str(list(shape))[:60])))
        if not start <= end <= data_size or end - start != math.prod(shape) * DTYPES[dtype].itemsize:
            raise broken(_("{name} lies outside the file or does not fit its shape").format(name=shown))
        entries[name] = Entry(path, dtype, shape, data_start + start, data_start + end)
    return entries
