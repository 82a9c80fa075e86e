"""attntrace explore on a terminal of 80 x 24, in English and in Chinese, with box lines and with ASCII lines: the key
list whole on the screen, the status line in words, and no character a Chinese terminal may draw two columns wide."""

from __future__ import annotations

import pytest

from attntrace import language
from attntrace.explore.app import Explorer
from attntrace.explore.dialogs import Keys, Prompt
from attntrace.render.table import Look
from tests.explore.test_explore import drive, screen_lines, status
from tests.explore.test_explore_hostile import settled

SMALL = (80, 24)
WIDE = set("│┃─━┌┐└┘├┤┬┴┼╭╮╰╯█▀▄▁▂▃▅▆▇▉▊▋▌▍▎▏▔→←↑↓…")  # box-drawing, blocks, arrows, the ellipsis: East Asian
# "ambiguous" width, two columns in many Chinese terminals


def explore(script, lang: str, ascii_: bool, problem=None) -> Explorer:
    """run the explorer headless at 80 x 24 in a language, with ASCII lines or box lines, script pressing its keys"""
    language.use(lang)
    return drive(script, problem, size=SMALL, look=Look(ascii_))


async def keys(pilot, app: Explorer) -> None:
    await pilot.press("question_mark")
    await settled(pilot, lambda: isinstance(app.screen, Keys))
    await pilot.pause()


@pytest.mark.parametrize("ascii_", [False, True])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_key_list_fits_80_by_24_whole_each_key_on_one_row(lang, ascii_):
    async def script(pilot, app):
        await keys(pilot, app)
        box = app.screen.query_one("#dialog")
        assert box.max_scroll_y == 0  # nothing to scroll to: PgUp PgDn, Esc and q are on the screen
        assert box.virtual_size.height <= box.scrollable_content_region.height
        assert box.region.bottom <= 24 and box.region.right <= 80
        text = "\n".join(screen_lines(app))
        assert "PgUp PgDn" in text and "Ctrl-C" in text
        assert box.virtual_size.height == 2 + 19  # the title, a blank, and a row each: no description wraps

    explore(script, lang, ascii_)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_status_line_says_the_temperature_in_words_once_t_shows_it(lang):
    words = {"en": "temperature T = ", "zh": "温度 T = "}[lang]

    async def script(pilot, app):
        first = status(app)[0]
        assert "T 1" not in first and words not in first  # the temperature changes nothing until t shows it
        await pilot.press("t")
        await settled(pilot, lambda: words in status(app)[0])
        assert status(app)[0].endswith(words + "1")
        await pilot.press("right_square_bracket", "t")  # warmer, then the panel closed: T is no longer 1
        await settled(pilot, lambda: not app.session.tempered)
        assert status(app)[0].endswith(words + "2")

    explore(script, lang, False)


def test_in_chinese_the_masks_are_named_in_chinese_on_the_status_line():
    async def script(pilot, app):
        seen = []
        for _ in range(3):
            await pilot.press("m")
            await settled(pilot, lambda: len(app.session.history) == len(seen) + 1)
            seen.append(status(app)[0])
        assert "掩码 因果" in seen[0] and "掩码 窗口 1" in seen[1] and "无掩码" in seen[2]
        assert not any(word in " ".join(seen) for word in ("causal", "window", "padding"))
        await keys(pilot, app)
        assert "下一种掩码：无、因果、窗口、填充、题目自带的" in "".join("\n".join(screen_lines(app)).split())

    explore(script, "zh", True)


def test_with_ascii_lines_no_character_is_of_ambiguous_width_on_the_explorer_s_own_parts():
    """the edges, the scroll bars, the dialogs' borders, the status line's separators and the key names: ASCII; the
    tables in ASCII lines too, as every Chinese command draws them"""
    async def script(pilot, app):
        def chrome() -> str:
            lines = screen_lines(app)
            steps = [line[:26] for line in lines[:-4]]  # the list of steps and the edge beside it
            return "\n".join([*steps, *lines[-4:]])

        screens = []
        await pilot.press("right", "right", "right", "t")  # a side panel, below the main pane at 80 columns
        await settled(pilot, lambda: app.session.tempered)
        screens.append("\n".join(screen_lines(app)))
        for _ in range(30):
            await pilot.press("pagedown")  # a scroll bar with its thumb part way down
        await pilot.pause()
        screens.append(chrome())
        await keys(pilot, app)
        screens.append("\n".join(screen_lines(app)))
        await pilot.press("escape", "left", "left", "left", "e")
        await settled(pilot, lambda: isinstance(app.screen, Prompt))
        screens.append("\n".join(screen_lines(app)))
        wide = {c for screen in screens for c in screen if c in WIDE}
        assert not wide, wide
        assert "|" in screens[0] and " | " in status(app)[0]
        assert "右、左方向键，n p" in screens[2]

    explore(script, "zh", True)


def test_with_box_lines_the_explorer_keeps_its_box_drawing():
    async def script(pilot, app):
        assert "│" in "\n".join(screen_lines(app)) and " · " in status(app)[0]
        await keys(pilot, app)
        assert "→ ← (n p)" in "\n".join(screen_lines(app))

    explore(script, "en", False)
