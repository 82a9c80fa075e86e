"""Pictures and pages of the coloured tables: an SVG for slides, an HTML page for the web or paper.

Neither loads anything remote: the fonts are the reader's own monospace ones, so a picture looks the same offline.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from rich.terminal_theme import DEFAULT_TERMINAL_THEME, SVG_EXPORT_THEME, TerminalTheme

from attntrace.escape import visible
from attntrace.render.document import recorder
from attntrace.views.page import Step

THEMES: dict[str, TerminalTheme] = {"dark": SVG_EXPORT_THEME, "light": DEFAULT_TERMINAL_THEME}
FONTS = "'Fira Code', 'DejaVu Sans Mono', Menlo, Consolas, 'Liberation Mono', 'Courier New', monospace"

SVG = """<svg class="rich-terminal" viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">
    <style>
    .{unique_id}-matrix {{
        font-family: FONTS;
        font-size: {char_height}px;
        line-height: {line_height}px;
        font-variant-east-asian: full-width;
    }}

    .{unique_id}-title {{
        font-size: 18px;
        font-weight: bold;
        font-family: arial, sans-serif;
    }}

    {styles}
    </style>

    <defs>
    <clipPath id="{unique_id}-clip-terminal">
      <rect x="0" y="0" width="{terminal_width}" height="{terminal_height}" />
    </clipPath>
    {lines}
    </defs>

    {chrome}
    <g transform="translate({terminal_x}, {terminal_y})" clip-path="url(#{unique_id}-clip-terminal)">
    {backgrounds}
    <g class="{unique_id}-matrix">
    {matrix}
    </g>
    </g>
</svg>
""".replace("FONTS", FONTS)

HTML = """<!DOCTYPE html>
<html>
<head>
<meta charset="UTF-8">
<title>TITLE</title>
<style>
{stylesheet}
body {{
    color: {foreground};
    background-color: {background};
}}
</style>
</head>
<body>
    <pre style="font-family:FONTS"><code style="font-family:inherit">{code}</code></pre>
</body>
</html>
""".replace("FONTS", FONTS)


def exports(steps: Sequence[Step], precision: int, svg: Path | None = None, html_path: Path | None = None,
            title: str | None = None, theme: str = "dark") -> dict[Path, str]:
    """the coloured tables as an SVG picture and/or an HTML page, exactly as a terminal would show them"""
    if svg is None and html_path is None:
        return {}
    recording = recorder(steps, precision, title, theme)
    named = visible(title or "attntrace")
    out: dict[Path, str] = {}
    if svg is not None:
        out[svg] = recording.export_svg(title=named, theme=THEMES[theme], clear=False, code_format=SVG)
    if html_path is not None:
        page = HTML.replace("TITLE", _html_text(named))
        out[html_path] = recording.export_html(theme=THEMES[theme], clear=False, code_format=page)
    return out


def _html_text(text: str) -> str:
    """text for an HTML element, braces doubled for the page template's own formatting"""
    return html.escape(text).replace("{", "{{").replace("}", "}}")
