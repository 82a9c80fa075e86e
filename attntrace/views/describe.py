"""What `validate` says about a problem: its kind and sizes, computed from the problem, never traced."""

from __future__ import annotations

from attntrace.errors import AttntraceError
from attntrace.model.problem import Problem, check_memory, dims, problem_error


def scale_text(scale: bool | float) -> str:
    if scale is True:
        return "true (divide the scores by sqrt(d_k))"
    return "false (no scaling)" if scale is False else f"divide the scores by {scale:g}"


def describe(problem: Problem, origin: str) -> str:
    """the problem's kind, n, m, d_model, d_k, d_v per head, heads, d_out, scale and masks, one a line"""
    d = dims(problem)
    try:  # would a run fit?
        check_memory(d.n, d.m, d.d_model, d.d_src, d.d_k * d.heads, d.d_v * d.heads, d.heads, d.d_out)
    except AttntraceError as e:
        raise problem_error(origin, e) from None
    kind = f"cross-attention, m = {d.m} source rows" if problem.source is not None else "self-attention"
    lines = [
        f"{origin}: a valid problem ({kind})",
        f"n        {d.n}", f"m        {d.m}", f"d_model  {d.d_model}",
        *([f"d_src    {d.d_src}"] if problem.source is not None else []),
        f"d_k      {d.d_k} per head", f"d_v      {d.d_v} per head", f"heads    {d.heads}", f"d_out    {d.d_out}",
        f"scale    {scale_text(problem.scale)}", f"masks    {', '.join(problem.masks) or 'none'}",
    ]
    if d.kv_heads != d.heads:
        lines.insert(lines.index(f"heads    {d.heads}") + 1, f"kv_heads {d.kv_heads} (grouped-query: "
                     f"{d.heads // d.kv_heads} query heads per key/value block)")
    if problem.rope is not None:
        at = "0 … n-1" if problem.rope.positions is None else "as given"
        turns = (f"base {problem.rope.base:g}" if problem.rope.frequencies is None else
                 f"{len(problem.rope.frequencies)} frequencies given")
        lines.append(f"rope     {turns}, pairs {problem.rope.pairs}, positions {at}")
    if problem.alibi:
        lines.append("alibi    -slope · |i - j| added to the scaled scores")
    if problem.softcap is not None:
        lines.append(f"softcap  {problem.softcap:g} · tanh(score / {problem.softcap:g})")
    return "\n".join(lines) + "\n"
