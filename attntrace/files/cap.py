"""The size cap on what is read: ATTNTRACE_MAX_MB megabytes, 64 by default; a file, an inflated .npz member or a
declared array over it is refused in one line that says how to raise it."""

from __future__ import annotations

import math
import os
import sys

from attntrace.errors import AttntraceError, ExitStatus
from attntrace.language import _

DEFAULT_MAX_MB = 64.0


def max_bytes() -> int:
    """the size cap: ATTNTRACE_MAX_MB megabytes (a positive, finite number), 64 by default"""
    raw = os.environ.get("ATTNTRACE_MAX_MB", "")
    if not raw.strip():
        return int(DEFAULT_MAX_MB * 1_000_000)
    try:
        mb = float(raw)
    except ValueError:
        mb = math.nan
    if not math.isfinite(mb) or mb <= 0:
        shown = raw if len(raw) <= 20 and raw.isprintable() else ascii(raw[:20])
        raise AttntraceError(_(
            "ATTNTRACE_MAX_MB = {value} must be a positive, finite number of megabytes, such as {default} (the cap "
            "when it is unset)").format(value=shown, default=f"{DEFAULT_MAX_MB:g}"), exit_code=ExitStatus.USAGE)
    return max(1, min(int(mb * 1_000_000), sys.maxsize // 4))


def too_big(name: str, what: str, size: int) -> AttntraceError:
    """name holds `what` of size bytes, over the cap (an .npz member as it inflates, an array as its header declares)"""
    cap = max_bytes()
    return AttntraceError(_(
        "{name}: {what} is {size}, over the {cap} MB cap; raise it with ATTNTRACE_MAX_MB={advice} if that is meant"
    ).format(name=name, what=what, size=amount(size), cap=f"{cap / 1e6:g}", advice=advice(2 * size)))


def amount(size: int) -> str:
    """a number of bytes as a reader takes it in: 341 bytes, 1.5 MB, 80,000.0 TB"""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if size >= scale or unit == "MB" and size >= 100_000:
            return f"{size / scale:,.1f} {unit}"
    return _("{n} bytes").format(n=f"{size:,}")


def advice(size: int) -> str:
    """a cap in whole megabytes that holds size bytes: never 0"""
    return str(max(1, math.ceil(size / 1e6)))
