"""Reading a file's text: the size cap, UTF-8 with or without a BOM, and a clear word for UTF-16."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from attntrace.errors import AttntraceError

DEFAULT_MAX_MB = 64.0


def max_bytes() -> int:
    """the size cap: ATTNTRACE_MAX_MB megabytes, 64 by default"""
    raw = os.environ.get("ATTNTRACE_MAX_MB", "")
    try:
        mb = float(raw) if raw else DEFAULT_MAX_MB
    except ValueError:
        raise AttntraceError(f"ATTNTRACE_MAX_MB = {raw!r} must be a number of megabytes") from None
    return int(mb * 1_000_000)


def read_bytes(path: str | Path) -> bytes:
    """the bytes of a file, or of stdin for "-", refusing anything over the size cap"""
    cap = max_bytes()
    if str(path) == "-":
        data = sys.stdin.buffer.read(cap + 1)
        name = "stdin"
    else:
        p = Path(path)
        if not p.exists():
            raise AttntraceError(f"{p}: no such file or directory")
        if p.is_dir():
            raise AttntraceError(f"{p}: is a directory, expected a file")
        size = p.stat().st_size
        if size > cap:
            raise _too_big(str(p), size, cap)
        try:
            data = p.read_bytes()
        except OSError as e:
            raise AttntraceError(f"{p}: cannot be read ({e.strerror})") from None
        name = str(p)
    if len(data) > cap:
        raise _too_big(name, len(data), cap)
    return data


def _too_big(name: str, size: int, cap: int) -> AttntraceError:
    return AttntraceError(
        f"{name} is {size / 1e6:.1f} MB, over the {cap / 1e6:g} MB cap; "
        f"raise it with ATTNTRACE_MAX_MB={2 * max(size, cap) / 1e6:.0f}"
    )


def decode(data: bytes, name: str) -> str:
    """UTF-8 text, with the BOM removed; UTF-16 (PowerShell's > writes it) gets a message saying so"""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(data) > 1 and data[1:2] == b"\x00" and data[:1] != b"\x00"):
        raise AttntraceError(
            f"{name} is UTF-16 text (what PowerShell's > writes); save it as UTF-8, "
            "for example with: Get-Content in | Set-Content -Encoding utf8 out"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AttntraceError(f"{name}: byte {e.start + 1} is not UTF-8; save the file as UTF-8") from None
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise AttntraceError(f"{name} is empty")
    return text


def read_text(path: str | Path) -> str:
    return decode(read_bytes(path), "stdin" if str(path) == "-" else str(path))
