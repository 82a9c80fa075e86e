"""What `validate` says about a problem: its kind and sizes, computed from the problem, never traced."""

from __future__ import annotations

from attntrace.core.problem import EXAMPLE, Problem, dims, problem_error
from attntrace.errors import AttntraceError
from attntrace.language import N_, _
from attntrace.memory import check_memory

# the names of the problems in samples/: data, as every problem's name; shown in the chosen language, as the built-in
# example's is
SAMPLE_NAMES = frozenset({EXAMPLE, N_("worked example, scaled by sqrt(d_k)"),
                          N_("decoder self-attention with a causal mask"), N_("two heads of d_k = 2, joined by W_O"),
                          N_("encoder-decoder (cross) attention"), N_("我喜欢猫: one head, d_k = d_v = 2, scaled")})


def shown_name(name: str | None) -> str | None:
    """a problem's name as a title a person reads: the built-in example's and the samples' in the chosen language, any
    other as it is (a name the user wrote)"""
    return _(name) if name in SAMPLE_NAMES else name


def scale_text(scale: bool | float) -> str:
    if scale is True:
        return _("true (divide the scores by sqrt(d_k))")
    return _("false (no scaling)") if scale is False else _("divide the scores by {scale}").format(scale=f"{scale:g}")


def sink_text(sink: tuple[float, ...]) -> str:
    """each head's sink logit, or the one every head shares"""
    return f"{sink[0]:g}" if len(set(sink)) == 1 else ", ".join(f"{s:g}" for s in sink)


def describe(problem: Problem, origin: str) -> str:
    """the problem's kind, n, m, d_model, d_k, d_v per head, heads, d_out, scale and masks, one a line"""
    d = dims(problem)
    try:  # would a run fit?
        check_memory(d.n, d.m, d.d_model, d.d_src, d.d_k * d.heads, d.d_v * d.heads, d.heads, d.d_out)
    except AttntraceError as e:
        raise problem_error(origin, e) from None
    if problem.source is not None:
        valid = _("{origin}: a valid problem (cross-attention, m = {m} source rows)").format(origin=origin, m=d.m)
    else:
        valid = _("{origin}: a valid problem (self-attention)").format(origin=origin)
    per_head = _("{n} per head")
    lines = [
        valid,
        f"n        {d.n}", f"m        {d.m}", f"d_model  {d.d_model}",
        *([f"d_src    {d.d_src}"] if problem.source is not None else []),
        f"d_k      {per_head.format(n=d.d_k)}", f"d_v      {per_head.format(n=d.d_v)}", f"heads    {d.heads}",
        f"d_out    {d.d_out}", f"scale    {scale_text(problem.scale)}", f"mask     {', '.join(problem.masks) or _('none')}",
    ]
    if d.kv_heads != d.heads:
        lines.insert(lines.index(f"heads    {d.heads}") + 1, "kv_heads " + _(
            "{kv_heads} (grouped-query: {n} query heads per key/value block)").format(kv_heads=d.kv_heads,
                                                                                      n=d.heads // d.kv_heads))
    if problem.rope is not None:
        at = "0 … n-1" if problem.rope.positions is None else _("as given")
        turns = (_("base {base}").format(base=f"{problem.rope.base:g}") if problem.rope.frequencies is None else
                 _("{n} frequencies given").format(n=len(problem.rope.frequencies)))
        lines.append("rope     " + _("{turns}, pairs {pairs}, positions {positions}").format(
            turns=turns, pairs=problem.rope.pairs, positions=at))
    if problem.alibi:
        lines.append("alibi    " + _("-slope · |i - j| added to the scaled scores"))
    if problem.softcap is not None:
        lines.append(f"softcap  {problem.softcap:g} · tanh(score / {problem.softcap:g})")
    if problem.sink is not None:
        lines.append("sink     " + _("{logits}: one more logit in each row's softmax, with no value; the weights sum to "
                                     "less than 1").format(logits=sink_text(problem.sink)))
    return "\n".join(lines) + "\n"
