"""NumPy files: one .npy per matrix, or an .npz of named arrays; never pickles, and nothing inflated or allocated before
its size, as the zip member and the .npy header declare it, is checked against the cap."""

from __future__ import annotations

import io
import math
import zipfile
import zlib
from typing import IO, Any

import numpy as np
from numpy.lib import format as npy_format

from attntrace.errors import AttntraceError
from attntrace.escape import quoted, visible
from attntrace.files.cap import amount, max_bytes, too_big
from attntrace.files.text import read_bytes
from attntrace.language import _

_NPY_MAGIC = b"\x93NUMPY"
_BROKEN = (ValueError, TypeError, SyntaxError, EOFError, OSError, zlib.error, zipfile.BadZipFile, NotImplementedError,
           RuntimeError)  # what numpy and zipfile raise on damaged or unsupported bytes (RuntimeError: encrypted)


def load_npy(path: str) -> np.ndarray:
    """the array in an .npy file"""
    data = read_bytes(path)
    if data.startswith(b"PK"):
        raise AttntraceError(_("{path} is an .npz archive (several arrays), not an .npy file; name it .npz to load "
                               "it").format(path=path))
    try:
        return _array(io.BytesIO(data), path, len(data))
    except AttntraceError:
        raise
    except _BROKEN as e:
        raise AttntraceError(_("{path}: not a readable .npy file ({why})").format(path=path, why=_said(e))) from None


def load_npz(path: str) -> dict[str, Any]:
    """the named arrays of an .npz file; a 0-d array (np.savez(..., heads=2)) is its scalar, a 1-D array of strings or
    booleans (tokens, padding) a list"""
    data = read_bytes(path)
    if data.startswith(_NPY_MAGIC):
        raise AttntraceError(_("{path} is an .npy file (one array), not an .npz archive; give it as x.npy, or with "
                               "--x").format(path=path))
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except _BROKEN:
        raise AttntraceError(_("{path} is not an .npz file: it is not a zip archive (numpy.savez writes one)").format(
            path=path)) from None
    with archive:
        members = archive.infolist()
        _check_sizes(path, members)
        out: dict[str, Any] = {}
        for member in members:
            name = member.filename
            if not name.endswith(".npy"):
                raise AttntraceError(_("{path}: {name} is not an array; an .npz holds .npy arrays (numpy.savez)").format(
                    path=path, name=quoted(name, 40)))
            key = name[: -len(".npy")]
            if key in out:
                raise AttntraceError(_("{path}: the array {name} appears twice; keep one").format(
                    path=path, name=quoted(key, 40)))
            where = f"{path}: {visible(key[:40])}"
            try:
                with archive.open(member) as stream:
                    out[key] = _value(_array(stream, where, member.file_size))
            except AttntraceError:
                raise
            except _BROKEN as e:
                raise AttntraceError(_("{where}: not a readable .npy array ({why})").format(
                    where=where, why=_said(e))) from None
    if not out:
        raise AttntraceError(_("{path} holds no arrays").format(path=path))
    return out


def _check_sizes(path: str, members: list[zipfile.ZipInfo]) -> None:
    """the arrays as they would inflate, against the cap, before any is inflated"""
    total = sum(m.file_size for m in members)
    if total > max_bytes():
        largest = max(members, key=lambda m: m.file_size)
        raise too_big(path, _("what it inflates to ({name} alone {size})").format(
            name=visible(largest.filename[:40]), size=amount(largest.file_size)), total)


def _array(stream: IO[bytes], name: str, size: int) -> np.ndarray:
    """the array of an .npy stream of size bytes: its header read and checked (never objects; the declared shape no
    larger than the bytes that follow, nor than the cap) before anything is allocated"""
    try:
        version = npy_format.read_magic(stream)
    except ValueError:
        raise AttntraceError(_("{name} is not an .npy array: it does not begin as numpy.save writes one").format(
            name=name)) from None
    if version not in ((1, 0), (2, 0)):
        raise AttntraceError(_("{name}: .npy format version {version} is not read; save plain numbers with "
                               "numpy.save").format(name=name, version=f"{version[0]}.{version[1]}"))
    read_header = npy_format.read_array_header_1_0 if version == (1, 0) else npy_format.read_array_header_2_0
    try:
        shape, fortran, dtype = read_header(stream)
    except Exception as e:  # a damaged header: numpy's parser of it raises ValueError, SyntaxError, tokenize errors...
        raise AttntraceError(_("{name}: not a readable .npy array; its header is damaged ({why})").format(
            name=name, why=_said(e))) from None
    if dtype.hasobject:
        raise AttntraceError(_("{name} holds Python objects, which would need pickles; attntrace never loads pickles "
                               "(save numbers, e.g. a.astype(float))").format(name=name))
    count = math.prod(shape)
    declared = count * max(dtype.itemsize, 1)
    described = _("a {shape} array of {dtype}").format(shape=" x ".join(str(s) for s in shape) or "0-d", dtype=dtype)
    left = size - stream.tell()
    if declared > left:
        raise AttntraceError(_("{name} declares {described} ({size}) but holds {left} of data; the file is cut short "
                               "or damaged").format(name=name, described=described, size=amount(declared),
                                                    left=amount(max(left, 0))))
    if declared > max_bytes():  # the bytes that follow are within the cap already: this only guards that promise
        raise too_big(name, _("the array it declares ({described})").format(described=described), declared)
    raw = stream.read(count * dtype.itemsize)
    if len(raw) != count * dtype.itemsize:
        raise AttntraceError(_("{name} declares {described} but its data ends early; the file is cut short or "
                               "damaged").format(name=name, described=described))
    flat = np.frombuffer(raw, dtype=dtype, count=count) if dtype.itemsize else np.zeros(count, dtype=dtype)
    return flat.reshape(shape, order="F" if fortran else "C")


def _value(a: np.ndarray) -> Any:
    """a setting saved as a 0-d array is its scalar; labels and flags are lists; matrices stay arrays"""
    if a.ndim == 0:
        return a.item()
    if a.ndim == 1 and a.dtype.kind in "USb":
        return a.tolist()
    return a


def _said(e: BaseException) -> str:
    text = str(e).split("\n", 1)[0] or type(e).__name__
    return quoted(text, 120)[1:-1]
