"""What `attntrace flash` does once its options are read: trace the problem, run the online softmax block by block
and show it (its warnings on stderr first), or its JSON form."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attntrace.cli import tracing
from attntrace.cli.output import show
from attntrace.language import _
from attntrace.render.document import Document

if TYPE_CHECKING:
    from attntrace.cli.options import Given
    from attntrace.cli.terminal import Environment


def flash(env: Environment, g: Given) -> None:
    """`attntrace flash`: every query's (or input i's) online softmax over blocks of --block keys"""
    from attntrace.core.flash import flash as online
    from attntrace.memory import check_flash
    from attntrace.views.describe import shown_name
    from attntrace.views.walkthrough import warnings

    opts = g.opts()
    problem = tracing.problem(g.file, env, g.matrices(), g.settings())
    check_flash(problem, g.input_, g.block, json=opts.resolved_format(env) == "json" and not g.explain)
    t = tracing.traced(g.file, problem, g.matrices(), query=g.input_)
    f = online(t, g.block)
    for warning in warnings(t):
        env.message(_("warning: {warning}").format(warning=warning))
    if opts.resolved_format(env) == "json":
        from attntrace.render.flashform import flash_form

        show(env, Document(data=flash_form(f)), opts)
        return
    if g.explain:
        from attntrace.views.explain_flash import explain_flash_steps

        show(env, Document(explain_flash_steps(f, opts.precision), title=shown_name(problem.name)), opts)
        return
    from attntrace.views.flash import flash_steps

    show(env, Document(flash_steps(f), title=shown_name(problem.name)), opts)
