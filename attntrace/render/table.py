"""Rich tables in colour, after the seed article's figures: inputs green, Q red, K orange, V purple."""

from __future__ import annotations

from rich import box
from rich.color import Color
from rich.console import Console, Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text

from attntrace.render.escape import visible
from attntrace.render.layout import cells, hidden_line, runs, shown
from attntrace.views.page import Block, Note, Step

COLOURS = {
    "x": "green", "w": "grey70", "q": "red", "k": "dark_orange", "v": "medium_purple",
    "scores": "dodger_blue1", "weights": "dodger_blue1", "weighted": "yellow", "output": "green4",
}
BARS = " ▁▂▃▄▅▆▇█"  # the non-colour cue of the softmax heatmap


def render_step(step: Step, precision: int, width: int) -> RenderableType:
    parts: list[RenderableType] = [Text(visible(step.heading), style="bold underline"), Text("")]
    for item in step.items:
        if isinstance(item, Note):
            parts.append(Text(visible(item.text), style="italic"))
        else:
            parts.extend(tables(item, precision, step.prefix, width))
        parts.append(Text(""))
    return Group(*parts)


def _heat(weight: float) -> Style:
    """a blue background whose depth is the weight; white text once it is dark"""
    w = min(max(weight, 0.0), 1.0)
    bg = Color.from_rgb(255 - 225 * w, 255 - 165 * w, 255 - 60 * w)
    return Style(bgcolor=bg, color="white" if w > 0.5 else "black")


def tables(b: Block, precision: int, prefix: str, width: int) -> list[Table]:
    """the block as one table per run of columns that fits the width: never cut with an ellipsis"""
    rows, hidden_rows = shown(len(b.rows))
    cols, hidden_cols = shown(len(b.cols))
    colour = COLOURS[b.kind]
    heat = b.kind == "weights"
    texts = cells(b.values, rows, cols, precision)
    if heat:
        texts = [[f"{cell} {_bar(float(b.values[r, c]))}" for cell, c in zip(row, cols)] for row, r in zip(texts, rows)]
    labels = [visible(b.rows[r]) for r in rows]
    heads = [visible(b.cols[c]) for c in cols]
    label_width = max(len(s) for s in labels)
    widths = [max(len(heads[k]), *(len(row[k]) for row in texts)) for k in range(len(cols))]
    chunks = runs(widths, max(10, width - label_width - 4), 3)
    out = []
    for n, (start, stop) in enumerate(chunks):
        title = f"{visible(prefix + b.title)}  [{len(b.rows)} x {len(b.cols)}]"
        if len(chunks) > 1:
            title += f"  (columns {heads[start]} to {heads[stop - 1]})"
        table = Table(title=Text(title, style=f"bold {colour}"), title_justify="left", box=box.SIMPLE_HEAVY,
                      header_style=colour)
        table.add_column("", style="bold", no_wrap=True)
        for head in heads[start:stop]:
            table.add_column(Text(head), justify="right", no_wrap=True, overflow="fold")
        for k, r in enumerate(rows):
            if hidden_rows and k == len(rows) // 2:
                table.add_row("⋮", *["⋮"] * (stop - start))
            styled = [
                Text(texts[k][i], style=_heat(float(b.values[r, cols[i]])) if heat else colour)
                for i in range(start, stop)
            ]
            table.add_row(Text(labels[k]), *styled)
        captions = []
        if hidden_rows:
            captions.append(hidden_line(hidden_rows, "rows"))
        if hidden_cols and n == len(chunks) - 1:
            captions.append(hidden_line(hidden_cols, "columns"))
        if captions:
            table.caption = Text("; ".join(captions), style="italic")
            table.caption_justify = "left"
        out.append(table)
    return out


def _bar(weight: float) -> str:
    return BARS[round(min(max(weight, 0.0), 1.0) * (len(BARS) - 1))]


def console(file, colour: bool, width: int, record: bool = False) -> Console:  # type: ignore[no-untyped-def]
    """a console whose look depends only on our arguments, never on COLUMNS, TERM or NO_COLOR"""
    return Console(file=file, width=width, color_system="truecolor" if colour else None, force_terminal=colour,
                   no_color=not colour, highlight=False, emoji=False, markup=False, record=record,
                   legacy_windows=False, soft_wrap=False)
