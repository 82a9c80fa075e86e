"""attntrace explore in Chinese: the status line, the keys, the panels, the prompts and the messages, laid out by
display width at 80 columns; headless through Textual's Pilot, and in a real terminal (tmux)."""

from __future__ import annotations

import re

import pytest
from rich.cells import cell_len

from attntrace import language
from attntrace.explore.app import Explorer
from attntrace.explore.dialogs import Confirm, Keys, Prompt
from attntrace.explore.keys import KEYS
from attntrace.explore.state import STEPS, Selected
from attntrace.files.problemfile import read
from tests.conftest import SAMPLES
from tests.explore import test_explore_hostile as hostile
from tests.explore.test_explore import drive, every_arithmetic, screen_lines, status, variant_session
from tests.explore.test_explore_hostile import settled

SMALL = (80, 24)
tmux = hostile.tmux  # the fixture: attntrace in a tmux session of its own


def chinese(script, problem=None, size=SMALL, folder=None) -> Explorer:
    """run the explorer headless in Chinese on problem (default: the built-in example), script pressing its keys"""
    language.use("zh")
    return drive(script, problem, size, folder)


async def press(pilot, app: Explorer, *keys: str) -> None:
    """the keys, then a pause until the screen has answered them"""
    drawn = app.screen_stack[0].drawn
    await pilot.press(*keys)
    await settled(pilot, lambda: app.screen_stack[0].drawn > drawn or not isinstance(app.screen, type(app.screen_stack[0])))


def columns(line: str, start: int, end: int) -> str:
    """the characters of a screen line from column start to column end, a Chinese character taking two"""
    out, at = [], 0
    for character in line:
        if start <= at < end:
            out.append(character)
        at += cell_len(character)
    return "".join(out)


def box_text(app: Explorer) -> str:
    """the words of the dialog on top, without its borders, each row whole within them"""
    region = app.screen.query_one("#dialog").region
    assert region.right <= app.size.width and region.bottom <= app.size.height
    rows = [columns(line, region.x, region.right) for line in screen_lines(app)[region.y:region.bottom]]
    assert all(row.startswith("█") and row.endswith("█") for row in rows[1:-1])  # nothing pushes the border out
    return " ".join(row.strip("▀▄█ ").rstrip("▁▂▃▄▅▆▇█ ") for row in rows)


def joined(text: str) -> str:
    """text without its spaces: Chinese wrapped onto rows reads the same joined again"""
    return "".join(text.split())


def test_the_status_line_steps_and_message_are_chinese_and_fit_80_columns():
    async def script(pilot, app):
        lines = screen_lines(app)
        assert all(cell_len(line) <= 80 for line in lines)
        for number, name in enumerate(("准备输入", "权重", "推导键、查询和值", "得分", "softmax", "加权值", "输出",
                                       "所有输入一起"), start=1):
            assert lines[number - 1].startswith(f" {number} {name}")
        assert status(app) == ["输入 1/3（x1） · 头 1/1 · 精度 4 · 不缩放 · 无掩码", "X 的单元格 [1, 1] · ? 按键 · q 退出"]
        assert app.screen.status_rows == (1, 1)  # each whole on its row, nothing cut with …
        await press(pilot, app, "s", "m", "plus")
        assert status(app)[0] == "输入 1/3（x1） · 头 1/1 · 精度 5 · 缩放 ÷ sqrt(d_k = 3) · 掩码 因果 · 2 处修改（u 撤销）"
        assert status(app)[1].endswith("精度：5 位小数")
        await press(pilot, app, "u")
        assert status(app)[1].endswith("已撤销；还可撤销 1 处修改")

    chinese(script)


def test_the_keys_are_listed_in_chinese_each_whole_at_80_columns():
    async def script(pilot, app):
        await pilot.press("question_mark")
        await settled(pilot, lambda: isinstance(app.screen, Keys))
        box = joined(box_text(app))
        assert "attntraceexplore：按键" in box and "…" not in box
        for _keys, what in KEYS:
            assert joined(language._(what)) in box, what
        assert "Shift+方向键" in box and "next" not in box
        await pilot.press("q")
        await settled(pilot, lambda: not isinstance(app.screen, Keys))
        assert app.return_code is None

    chinese(script, size=(80, 30))  # 80 columns, and rows enough for the whole list (a shorter screen scrolls it)


def test_the_side_panel_shows_the_arithmetic_in_chinese_whole_at_80_columns():
    causal = read(str(SAMPLES / "causal.json"), {})[0]

    async def script(pilot, app):
        await press(pilot, app, "2", "right", "right", "right", "right", "enter", "t")
        text = joined("\n".join(screen_lines(app)))
        assert "选中单元格的算式" in text and "温度T下的softmax（[和]改变T）" in text
        arithmetic = app.session.arithmetic()
        assert arithmetic[0].startswith("w(2,1) = ") and arithmetic[-2] == "每行用表中显示的数计算，结果四舍五入到 4 位小数。"
        for line in (arithmetic[0], arithmetic[-2]):
            assert joined(line) in text

    chinese(script, causal)


def test_prompts_questions_and_errors_are_chinese(tmp_path):
    (tmp_path / "taken.json").write_text("{}", encoding="utf-8")

    async def script(pilot, app):
        await press(pilot, app, "u")
        assert status(app)[1].endswith("! 没有可撤销的修改")
        await press(pilot, app, "right", "right", "e")
        assert joined(status(app)[1]).endswith(joined("! Q = X · W_Q 是计算出来的；请编辑 X 或权重（步骤 1 和 2），再看它如何变化"))
        await press(pilot, app, "left", "left", "e")
        assert isinstance(app.screen, Prompt)
        assert joined("X[1, 1] 是 1。输入新值后按 Enter（Esc 保留原值）：") in joined(box_text(app))
        await pilot.press("escape", "w")
        await settled(pilot, lambda: isinstance(app.screen, Prompt))
        assert joined(f"把编辑后的题目写入 {tmp_path} 中的这个文件（Enter 确认；Esc 取消）：") in joined(box_text(app))
        await pilot.press("ctrl+u", *"taken.json", "enter")
        await settled(pilot, lambda: isinstance(app.screen, Confirm))
        assert joined(f"{tmp_path / 'taken.json'} 已存在。要用编辑后的题目覆盖它吗？按 y 覆盖；按其他任意键保留。") in \
            joined(box_text(app))
        await pilot.press("n")
        await settled(pilot, lambda: "保持原样" in status(app)[1])
        assert joined(status(app)[1]).endswith(joined(f"{tmp_path / 'taken.json'} 保持原样；再按 w 可写入另一个文件"))
        await pilot.press("w", "ctrl+u", *"folder/x.json", "enter")
        await settled(pilot, lambda: "没有这个文件夹" in status(app)[1])
        assert (tmp_path / "taken.json").read_text(encoding="utf-8") == "{}"

    chinese(script, folder=tmp_path)


@pytest.mark.parametrize("settings", [dict(rope=True), dict(rope=True, alibi=True, softcap=2.0, mask="causal", heads=2,
                                                             kv_heads=1)])
def test_every_cell_has_its_arithmetic_in_chinese(settings):
    """Enter on any cell finds its lines among explain's Chinese ones (a head's and an angle's names are translated)"""
    language.use("zh")
    session = variant_session(settings)
    heads = settings.get("heads", 1)
    for step, block, lines in every_arithmetic(session):
        assert any(" = " in line for line in lines), (step, block.title)
        assert lines[lines.index("") + 1].startswith("每行用表中显示的数计算")
    session.step = 3
    angles = [k for k, b in enumerate(session.blocks()) if b.answer is None]
    session.cell = Selected(angles[0], 0, 0)
    assert re.match(r"(头 1 · )?k1 的 θ，第 \(1,\d+\) 对 = ", session.arithmetic()[0])
    if heads > 1:
        session.step, session.cell = 4, Selected(0, 0, 0)
        assert session.arithmetic()[0].startswith("头 1 · score(2,1) = ")


def test_the_steps_list_is_translated_when_shown_not_when_imported():
    assert STEPS[0] == "prepare inputs"  # marked for the catalogue; the screen translates it
    language.use("zh")
    assert language._(STEPS[0]) == "准备输入"


def test_in_a_real_terminal_of_80_by_24_the_explorer_speaks_chinese_and_q_quits(tmux):
    t = tmux("explore", "--lang", "zh", width=80, height=24)
    t.shows("输入 1/3（x1） | 头 1/1 | 精度 4")  # ASCII separators, lines and edges, as in every Chinese command
    t.shows("X 的单元格 [1, 1] | ? 按键 | q 退出")
    assert "1 准备输入" in t.screen()
    assert "━" not in t.screen() and "-----" in t.screen()
    assert not set("│…█▀▄") & set(t.screen())  # (a table's title, as run writes it, may hold ·)
    assert "教程示例" in t.screen()  # the built-in example's name, as a title in the chosen language
    t.keys("q")
    assert t.ended() == 0



def test_a_long_chinese_path_is_shortened_by_its_width_on_screen():
    from pathlib import Path

    from attntrace.explore.saving import short as shortened

    path = Path("/作业/" + "文件夹" * 20 + "/题目.json")
    short = shortened(path)
    assert cell_len(short) <= 60 and short.startswith("/作业/文件夹") and short.endswith("文件夹/题目.json") and "…" in short
    plain = Path("/" + "a b" * 30 + "/x.json")
    assert shortened(plain) == str(plain)[:29] + "…" + str(plain)[-30:]
