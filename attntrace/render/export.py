"""Pictures and pages of the coloured tables: an SVG for slides, an HTML page for the web."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from attntrace.render.document import recorder
from attntrace.views.page import Step


def exports(steps: Sequence[Step], precision: int, svg: Path | None = None, html: Path | None = None) -> dict[Path, str]:
    """the coloured tables as an SVG picture and/or an HTML page, exactly as a terminal would show them"""
    if svg is None and html is None:
        return {}
    recording = recorder(steps, precision)
    out: dict[Path, str] = {}
    if svg is not None:
        out[svg] = recording.export_svg(title="attntrace", clear=False)
    if html is not None:
        out[html] = recording.export_html(clear=False)
    return out
