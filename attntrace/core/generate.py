"""Random problems for `attntrace new`: exercises with small integers, or weights as networks start them."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from attntrace.core.arithmetic import EXACT
from attntrace.core.attention import heads
from attntrace.core.engine import trace
from attntrace.core.problem import Problem, divisor
from attntrace.core.variants import Rope
from attntrace.errors import AttntraceError
from attntrace.language import N_, _, ngettext

INITS = ("integers", "normal", "xavier", "kaiming")
INIT_WORDS = {"integers": N_("integers"), "normal": N_("normal"), "xavier": N_("xavier"), "kaiming": N_("kaiming")}
PER_HEAD = 3  # d_k and d_v per head when not given: the worked example's
ONE_HOT = 0.99  # a weight this large leaves the other keys nothing to speak of
CHECKED_ROWS = 64  # the queries looked at for one-hot weights: enough to judge, cheap for any n


def _weights(rng: np.random.Generator, init: str, rows: int, cols: int) -> np.ndarray:
    """[rows, cols]; the float inits keep x · W of the same order as x, so the scaled scores are of order 1"""
    if init == "integers":
        return rng.integers(-1, 3, size=(rows, cols)).astype(np.float64)
    if init == "normal":  # N(0, 1 / fan_in): a q · k / sqrt(d_k) of inputs N(0, 1) has variance 1
        std = math.sqrt(1.0 / rows)
        w = rng.normal(0.0, std, size=(rows, cols))
    elif init == "xavier":  # Glorot uniform: U(-a, a), a = sqrt(6 / (fan_in + fan_out))
        a = math.sqrt(6.0 / (rows + cols))
        std = a / math.sqrt(3.0)
        w = rng.uniform(-a, a, size=(rows, cols))
    else:  # Kaiming normal for fan_in: N(0, 2 / fan_in)
        std = math.sqrt(2.0 / rows)
        w = rng.normal(0.0, std, size=(rows, cols))
    return np.round(w, _decimals(std))


def _decimals(std: float) -> int:
    """4 decimals, or more when the weights are so small that 4 would leave them under 3 significant digits"""
    return max(4, 3 - math.floor(math.log10(std)))


def random_problem(*, n: int, d_model: int, d_k: int | None = None, d_v: int | None = None, heads: int = 1,
                   init: str = "integers", seed: int | None = None, tokens: tuple[str, ...] | None = None,
                   kv_heads: int | None = None, rope: bool = False, alibi: bool = False,
                   softcap: float | None = None, sink: float | None = None,
                   fits: Callable[[int, int, int, int, int], None] | None = None, student: str | None = None) -> Problem:
    """a problem ready to edit; integers (the default) can be computed by hand, like the worked example.

    d_k and d_v count every head's columns together; None gives each head 3, as the worked example has (4 with rope,
    which turns pairs of dimensions). kv_heads: grouped-query heads, W_K and W_V hold that many blocks.
    fits(n, d_model, d_k, d_v, heads): called once the sizes are known, before anything is drawn (memory.fits_new
    refuses what would not fit in memory). The name describes the problem in the chosen language (it is only a
    title), after the student's id when one is given.
    """
    if init not in INITS:
        raise AttntraceError(_('unknown init "{init}"; use {inits}').format(init=init, inits=", ".join(INITS)))
    for name, value in (("tokens", n), ("d_model", d_model), ("heads", heads)):
        _whole(name, value)
    heads = int(heads)
    d_k = (PER_HEAD + rope) * heads if d_k is None else _whole("d_k", d_k)
    d_v = PER_HEAD * heads if d_v is None else _whole("d_v", d_v)
    n, d_model = int(n), int(d_model)
    for name, size in (("d_k", d_k), ("d_v", d_v)):
        if size % heads:
            near = [s for s in (size - size % heads, size - size % heads + heads) if s > 0]
            raise AttntraceError(_("heads = {heads} does not divide {name} = {size} (each head takes {name} / heads "
                                   "of the columns); give {name} = {fits}").format(
                heads=heads, name=name, size=size, fits=_(" or ").join(map(str, near))))
    groups = heads if kv_heads is None else _whole("kv_heads", kv_heads)
    if heads % groups:
        raise AttntraceError(_("kv_heads = {groups} does not divide heads = {heads}; give a divisor of {heads}").format(
            groups=groups, heads=heads))
    if rope and (d_k // heads) % 2:
        raise AttntraceError(ngettext(
            "rope turns pairs of dimensions, so each head's d_k must be even; it is {each} (d_k = {d_k} over {n} head): "
            "give d_k = {fix}",
            "rope turns pairs of dimensions, so each head's d_k must be even; it is {each} (d_k = {d_k} over {n} heads): "
            "give d_k = {fix}", heads).format(each=d_k // heads, d_k=d_k, n=heads, fix=d_k + heads))
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise AttntraceError(_("seed = {seed} must be a whole number of at least 0").format(seed=repr(seed)))
    if tokens is not None and len(tokens) != n:
        raise AttntraceError(_("{count} token labels given for n = {n} inputs").format(count=len(tokens), n=n))
    if fits is not None:
        fits(n, d_model, d_k, d_v, heads)
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, size=(n, d_model)).astype(np.float64) if init == "integers" else np.round(
        rng.normal(size=(n, d_model)), 4)
    details = [_(INIT_WORDS[init])]
    if kv_heads is not None:
        details.append(ngettext("{n} key/value block", "{n} key/value blocks", groups).format(n=groups))
    details += [name for name, on in (("rope", rope), ("alibi", alibi)) if on]
    details += [f"softcap {softcap:g}"] if softcap is not None else []
    details += [f"sink {sink:g}"] if sink is not None else []
    return Problem(
        x=x, w_q=_weights(rng, init, d_model, d_k), w_k=_weights(rng, init, d_model, d_k // heads * groups),
        w_v=_weights(rng, init, d_model, d_v // heads * groups), heads=heads, scale=init != "integers", tokens=tokens,
        kv_heads=kv_heads, rope=Rope() if rope else None, alibi=alibi, softcap=softcap,
        sink=None if sink is None else (float(sink),) * heads,
        name=problem_name(n, d_model, d_k, d_v, heads, details, student),
    )


def problem_name(n: int, d_model: int, d_k: int, d_v: int, heads: int, details: list[str],
                 student: str | None = None) -> str:
    """a random problem's title in the chosen language: its sizes and how it was drawn, after the student's id"""
    sizes = _("{inputs}, d_model = {d_model}, d_k = {d_k}, d_v = {d_v}, {heads}").format(
        inputs=ngettext("{n} input", "{n} inputs", n).format(n=f"{n:,}"), d_model=d_model, d_k=d_k, d_v=d_v,
        heads=ngettext("{n} head", "{n} heads", heads).format(n=heads))
    listed = details[0]
    for detail in details[1:]:
        listed = _("{first}, {second}").format(first=listed, second=detail)
    if student is None:
        return _("{sizes} ({details})").format(sizes=sizes, details=listed)
    # TRANSLATORS: a student's problem: their id, then what the problem is
    return _("{student}: {sizes} ({details})").format(student=student, sizes=sizes, details=listed)


def _whole(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise AttntraceError(_("{name} = {value} must be a whole number of at least 1").format(name=name,
                                                                                             value=repr(value)))
    return int(value)


def notes(problem: Problem, init: str) -> tuple[str, ...]:
    """what a teacher should know about a problem random_problem drew, before handing it out"""
    said = []
    if init == "integers" and problem.scale is False:
        said.append(_('"scale" is false: integer exercises do not divide the scores by sqrt(d_k), as in the worked '
                      'example, so that every step stays exact by hand; set "scale": true to divide'))
    if one_hot(problem):
        said.append(_("every input puts over 99% of its weight on one key, so each output is just one row of V; "
                      "another seed, a smaller d_model or the normal init gives weights that spread"))
    cap = problem.softcap
    if cap is not None and (top := largest_logit(problem)) > 2 * cap:
        said.append(_("the scores reach {top} before the cap, over twice softcap = {cap}, and c · tanh(score / c) "
                      "takes every score beyond ±{twice} to within 4% of ±{cap}; a softcap near {near}, or the "
                      "normal init, keeps the cap's curve in view").format(
            top=f"{top:.3g}", cap=f"{cap:g}", twice=f"{2 * cap:g}", near=f"{top:.2g}"))
    return tuple(said)


def largest_logit(problem: Problem) -> float:
    """the largest |score| before soft-capping (scaled, biased) of the first CHECKED_ROWS queries, over every head"""
    heads = [h for i in range(min(problem.dims.n, CHECKED_ROWS)) for h in trace(problem, query=i + 1).heads]
    return max(float(np.abs(h.uncapped[np.isfinite(h.uncapped)]).max(initial=0.0)) for h in heads
               if h.uncapped is not None)


def one_hot(problem: Problem) -> bool:
    """whether every query (of the first CHECKED_ROWS) of every head gives one key over ONE_HOT of its weight.

    For a problem random_problem drew: self-attention with no mask and no bias. A sink logit counts only beside rope,
    ALiBi, a soft-cap or grouped heads (as attntrace new has always judged it).
    """
    d = problem.dims
    if d.m < 2:  # one key always takes all the weight
        return False
    plain = d.kv_heads == d.heads and problem.rope is None and not problem.alibi and problem.softcap is None
    rows = np.arange(min(d.n, CHECKED_ROWS))
    q_all = EXACT.affine(problem.x[rows], problem.w_q, None)  # [rows, d_model] @ [d_model, heads*d_k]
    k_all = EXACT.affine(problem.x, problem.w_k, None)  # [n, d_model] @ [d_model, kv_heads*d_k]
    v_all = EXACT.affine(problem.x, problem.w_v, None)
    made = heads(replace(problem, sink=None) if plain else problem, d, rows, q_all, k_all, v_all, None,
                 divisor(problem, d.d_k))
    return all((head.attended.weights.max(axis=-1) > ONE_HOT).all() for head in made)
