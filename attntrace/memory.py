"""What a trace needs in memory, checked against what the machine has before anything big is made."""

from __future__ import annotations

import math
import os

from attntrace.core.problem import Problem, dims
from attntrace.errors import AttntraceError, Setting
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


JSON_BLOCKS = 100_000  # the most block states flash writes as JSON: about half a minute and 350 MB; more is a flood
JSON_BYTES = 3_500  # what one block state of flash's JSON form holds in memory while it is written (measured: 3.2 KB)


def flash_bytes(states: int, d_v: int, json: bool) -> int:
    """about the memory flash's recurrence holds on top of the trace, for states = heads · queries · blocks: each
    state's block max, m, rescale factor, sum, ℓ and O (d_v numbers), and in JSON each state's objects as written"""
    return states * (8 * (5 + d_v) + 1 + (JSON_BYTES if json else 0))


def check_flash(problem: Problem, query: int | None, block: int | None, json: bool = False) -> None:
    """refuse up front an online softmax of problem (every query, or one) in blocks of `block` keys that would write
    more block states as JSON than JSON_BLOCKS, or not fit in memory beside its trace; naming what helps"""
    d = dims(problem)
    n_q = d.n if query is None else 1
    if block is None:
        from attntrace.core.flash import default_block  # the online softmax: more than 2% of start-up

        block = default_block(d.m)
    blocks = math.ceil(d.m / block)
    states = d.heads * n_q * blocks
    said = dict(states=f"{states:,}", queries=f"{n_q:,}", blocks=f"{blocks:,}", heads=f"{d.heads:,}")
    if json and states > JSON_BLOCKS:
        raise Setting(N_("the JSON of this online softmax holds {states} block states (queries × blocks × heads = "
                         "{queries} × {blocks} × {heads}), more than the {most} flash writes at once; {help}"), {}, 1,
                      most=f"{JSON_BLOCKS:,}", help=_smaller(n_q > 1, d.m, d.heads * n_q, JSON_BLOCKS), **said)
    each = flash_bytes(1, d.d_v, json)
    if states * each < 1 << 26:
        return
    trace = trace_bytes(n_q, d.m, d.d_model, d.d_src, d.d_k * d.heads, d.d_v * d.heads, d.heads, d.d_out)
    have = available_memory()
    if have is not None and states * each + trace > have:
        raise Setting(N_("this online softmax needs about {need} of memory for its {states} block states (queries × "
                         "blocks × heads = {queries} × {blocks} × {heads}) and the trace, more than the {have} this "
                         "machine has available; {help}"), {}, 1, need=_size(states * each + trace), have=_size(have),
                      help=_smaller(n_q > 1, d.m, d.heads * n_q, max(0, have - trace) // each), **said)


def _smaller(queries: bool, m: int, rows: int, most: int) -> Setting:
    """what makes an online softmax of m keys, rows (heads · queries) a block, hold no more than `most` block states:
    one query (when there are more), or a block size large enough, if one is"""
    blocks = most // rows
    block = {"block": ("block", str(math.ceil(m / blocks)))} if blocks >= 1 else {}  # as typed: no commas
    one = {"query": ("query", "N")}
    if block and queries:
        return Setting(N_("show one query with {query}, or take more keys a block with {block} or more"), one | block)
    if queries:
        return Setting(N_("show one query with {query}"), one)
    if block:
        return Setting(N_("take more keys a block with {block} or more"), block)
    return Setting(N_("give a smaller problem"), {})
