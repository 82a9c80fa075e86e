"""What a trace needs in memory, checked against what the machine has before anything big is made."""

from __future__ import annotations

import os

from attntrace.core.problem import Problem, dims
from attntrace.errors import AttntraceError
from attntrace.language import N_, _


def available_memory() -> int | None:
    """the bytes of memory this machine can give now (Linux's MemAvailable, else the free pages); None if unknown"""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        pages, size = os.sysconf("SC_AVPHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return pages * size if pages > 0 and size > 0 else None


def trace_bytes(n: int, m: int, d_model: int, d_src: int, width_k: int, width_v: int, heads: int, d_out: int) -> int:
    """about the most memory a trace of every input holds at once, in bytes (widths are every head's columns together):
    per head the scores, scaled scores and weights (n · m float64 each), two more n · m while a softmax is taken and
    the mask (n · m booleans); then x, the source, the weights, Q, K, V, the heads' outputs, their concatenation and
    the output"""
    cells = n * m
    matrices = 3 * cells * heads + 2 * cells
    weights = d_model * width_k + d_src * (width_k + width_v) + width_v * d_out
    vectors = n * d_model + m * d_src + n * width_k + m * (width_k + width_v) + 2 * n * width_v + n * d_out + weights
    return 8 * (matrices + vectors) + cells


def check_memory(n: int, m: int, d_model: int, d_src: int, width_k: int, width_v: int, heads: int, d_out: int,
                 what: str = N_("tracing this problem")) -> None:
    """refuse up front what would need more memory than the machine has, saying the estimate and the limit (what is
    said as it is given, after _())"""
    need = trace_bytes(n, m, d_model, d_src, width_k, width_v, heads, d_out)
    if need < 1 << 26:  # under 64 MiB: never worth a look at the machine
        return
    have = available_memory()
    if have is not None and need > have:
        raise AttntraceError(_(
            "{what} needs about {need} of memory (n · m · heads = {n} · {m} · {heads} scores, scaled scores and "
            "weights, 8 bytes each), more than the {have} this machine has available; use fewer inputs or keys"
        ).format(what=_(what), need=_size(need), n=f"{n:,}", m=f"{m:,}", heads=f"{heads:,}", have=_size(have)))


def _size(nbytes: int) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if nbytes >= size:
            return f"{nbytes / size:,.1f} {unit}"
    return _("{n} bytes").format(n=f"{nbytes:,}")


def check_trace(problem: Problem, query: int | None = None) -> None:
    """refuse up front a trace of problem (every input, or one) that would not fit in memory"""
    d = dims(problem)
    check_memory(d.n if query is None else 1, d.m, d.d_model, d.d_src, d.d_k * d.heads, d.d_v * d.heads, d.heads,
                 d.d_out)


def fits_new(n: int, d_model: int, d_k: int, d_v: int, heads: int) -> None:
    """refuse a random problem (generate.random_problem's fits) whose arrays and trace would not fit in memory"""
    check_memory(n, n, d_model, d_model, d_k, d_v, heads, d_v,
                 what=_("a problem of {n} inputs, d_model = {d_model}").format(n=f"{n:,}", d_model=f"{d_model:,}"))
