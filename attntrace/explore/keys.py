"""The explorer's keys: what each does to the session, the list ? shows, and the keys likely pressed next, which
drawing ahead draws first."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from textual.binding import Binding

from attntrace.explore.state import STEPS, Session
from attntrace.language import N_

HINT = N_("? keys · q quit")  # translated where it is shown, as are the keys' words
KEYS = (
    ("→ ← (n p)", N_("next / previous step")),
    ("↓ ↑, 1-9", N_("the input that steps 4-7 follow")),
    ("h H", N_("next / previous head")),
    ("Tab, Shift+Tab", N_("next / previous cell")),
    (N_("Shift+arrows"), N_("move between cells; a click selects one too")),
    ("Enter", N_("the selected cell's arithmetic; again hides it")),
    ("e", N_("edit a cell of X or a weight; later steps are recomputed")),
    ("u", N_("undo the last change (an edit, s or m)")),
    ("s", N_("scaling on / off")),
    ("m", N_("next mask: none, causal, window, padding, the problem's own")),
    ("+ -", N_("more / fewer decimals")),
    ("t", N_("softmax at a temperature T; [ and ] change T")),
    ("f, b B", N_("FlashAttention's online softmax; b and B change the block")),
    ("d", N_("the decode step of the followed input, with its KV cache")),
    ("x", N_("save the screen as an SVG picture")),
    ("w", N_("write the problem, as edited, to a file")),
    ("PgUp PgDn", N_("scroll the step")),
    ("Esc", N_("close the side panel")),
    ("q", N_("quit; Ctrl-C ends with exit status 130")),
)  # each a row of the key list, which fits a screen of 80 x 24 whole
ASCII_KEYS = {"→ ← (n p)": N_("Right Left, n p"), "↓ ↑, 1-9": N_("Down Up, 1-9")}  # the arrows are two columns
# wide in many Chinese terminals: with ASCII lines, the keys are named in words
Action = Callable[[Session], str | None]  # what a key does to a session, and what it says


def first(*bindings: Binding) -> list[Binding | tuple[str, str] | tuple[str, str, str]]:
    """the bindings, each answered as the app reads its key, before the next key is read. Textual hands a key to the
    widget focused when the key is read but looks its binding up only once the key is handled, on the screen then on
    top: a key that opens a prompt would leave the keys typed right after it (a paste, a burst over a slow link) to
    the screen below, where they are lost"""
    return [replace(binding, priority=True) for binding in bindings]


BINDINGS = first(  # no footer shows them: KEYS, translated, is what ? lists
    Binding("right,n", "step(1)", show=False),
    Binding("left,p", "step(-1)", show=False),
    Binding("down", "input(1)", show=False),
    Binding("up", "input(-1)", show=False),
    *(Binding(str(d), f"choose({d})", show=False) for d in range(1, 10)),
    Binding("h", "head(1)", show=False),
    Binding("H", "head(-1)", show=False),
    Binding("tab", "tab(1)", show=False),
    Binding("shift+tab", "tab(-1)", show=False),
    Binding("shift+right", "move(0, 1)", show=False),
    Binding("shift+left", "move(0, -1)", show=False),
    Binding("shift+down", "move(1, 0)", show=False),
    Binding("shift+up", "move(-1, 0)", show=False),
    Binding("enter", "explain", show=False),
    Binding("e", "edit", show=False),
    Binding("u", "undo", show=False),
    Binding("s", "scale", show=False),
    Binding("m", "mask", show=False),
    Binding("plus,equals_sign", "precision(1)", show=False),
    Binding("minus,underscore", "precision(-1)", show=False),
    Binding("t", "temperature", show=False),
    Binding("left_square_bracket", "warmer(-1)", show=False),
    Binding("right_square_bracket", "warmer(1)", show=False),
    Binding("f", "flash", show=False),
    Binding("b", "block(1)", show=False),
    Binding("B", "block(-1)", show=False),
    Binding("d", "decode", show=False),
    Binding("x", "picture", show=False),
    Binding("w", "write", show=False),
    Binding("question_mark", "keys", show=False),
    Binding("q", "quit", show=False),
    Binding("escape", "close", show=False),
    Binding("pageup", "scroll(-1)", show=False),
    Binding("pagedown", "scroll(1)", show=False),
    Binding("ctrl+c", "app.interrupt", show=False),
)


def likely(s: Session, again: Action | None) -> tuple[list[Action], list[Action]]:
    """the keys a reader likely presses next, each as what it does to a session: all of them, the likeliest first
    (this screen, the last key again, the next step, Enter, t, ] and [, s, the next input, + and -, m, the previous
    input, h and H, the previous step, the other steps, nearest first), and those that open a step; again: the last
    key that changed the session"""
    others = sorted((n for n in range(1, len(STEPS) + 1) if abs(n - s.step) > 1),
                    key=lambda n: (abs(n - s.step), n < s.step))
    steps: list[Action] = [lambda v: None, lambda v: v.next_step(1), lambda v: v.next_step(-1),
                        *(lambda v, n=n: v.go(n) for n in others)]  # this one, the next, the previous, ...
    keys: list[Action] = [Session.toggle_explaining, Session.toggle_temperature, lambda v: v.warmer(1),
                       lambda v: v.warmer(-1), Session.toggle_scale, lambda v: v.next_input(1),
                       lambda v: v.more_precision(1), lambda v: v.more_precision(-1), Session.cycle_mask,
                       lambda v: v.next_input(-1)]
    if s.problem.dims.heads > 1:
        keys += [lambda v: v.next_head(1), lambda v: v.next_head(-1)]
    pressed = [] if again is None else [again]
    return [steps[0], *pressed, steps[1], *keys, *steps[2:]], steps
