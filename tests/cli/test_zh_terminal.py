"""attntrace in Chinese in a real 80-column terminal: run --pause shows each step in Chinese, every line within the
screen, the pause prompt in Chinese, and q ends it."""

import pytest
from rich.cells import cell_len

from tests.tmux import Tmux


@pytest.fixture
def terminal(tmp_path):
    started = []

    def start(*args: str) -> Tmux:
        started.append(Tmux(tmp_path, *args, "--lang", "zh", width=80, height=30))
        return started[-1]

    yield start
    for session in started:
        session.close()


def test_run_pause_in_chinese_at_80_columns(terminal):
    t = terminal("run", "--pause")
    t.shows("Enter：下一步")
    first = t.screen()
    assert "步骤 1：准备输入" in first and "步骤 2" not in first
    assert all(cell_len(line) <= 80 for line in first.splitlines())
    assert "+--" in first and "━" not in first  # ASCII lines, as Chinese terminals draw them one column wide
    prompt = [line for line in first.splitlines() if "Enter" in line]
    assert prompt == ["-- Enter：下一步 | q：退出 --"]  # the prompt in ASCII too, no ambiguous-width ─ or ·
    t.keys("Enter")
    t.wait(lambda: "步骤 2：初始化权重" in t.screen(), "showed step 2")
    t.keys("q")
    assert t.ended() == 0
