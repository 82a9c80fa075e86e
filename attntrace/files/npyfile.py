"""NumPy files: one .npy per matrix, or an .npz of named arrays; never pickles."""

from __future__ import annotations

import io
import zipfile

import numpy as np

from attntrace.errors import AttntraceError
from attntrace.files.text import read_bytes


def load_npy(path: str) -> np.ndarray:
    try:
        return np.load(io.BytesIO(read_bytes(path)), allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise AttntraceError(f"{path}: not a readable .npy file without pickles ({e})") from None


def load_npz(path: str) -> dict[str, np.ndarray]:
    try:
        with np.load(io.BytesIO(read_bytes(path)), allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise AttntraceError(f"{path}: not a readable .npz file without pickles ({e})") from None
