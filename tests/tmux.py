"""attntrace in a real terminal: a tmux session of its own, read as a person would see it."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path


class Tmux:
    """attntrace in a tmux session of its own (its own server), read as a person would see it"""

    def __init__(self, tmp_path: Path, *args: str, width: int = 100, height: int = 30,
                 python: tuple[str, ...] = ("-m", "attntrace")) -> None:
        """python: what the Python interpreter is given before args (a module to run, or -c and a program)"""
        self.socket = f"attntrace-test-{os.getpid()}-{id(self)}"
        self.exit = tmp_path / "exit-status"
        command = f"{shlex.join([sys.executable, *python, *args])}; echo $? > {shlex.quote(str(self.exit))}" \
                  "; exec sleep 600"  # the screen stays to be read, until the server is killed
        env = {**os.environ, "TERM": "xterm-256color"}
        env.pop("NO_COLOR", None)
        self.tmux("new-session", "-d", "-x", str(width), "-y", str(height), "-s", "t", "-c", str(tmp_path), command,
                  env=env)

    def tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        return subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args], capture_output=True, text=True,
                              env=env, check=True).stdout

    def keys(self, *keys: str) -> None:
        """the keys in one write to the terminal"""
        self.tmux("send-keys", "-t", "t", *keys)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "t")

    def title(self) -> str:
        return self.tmux("display-message", "-p", "-t", "t", "#{pane_title}").strip()

    def wait(self, done, what: str) -> None:
        """until done() holds, checked as the screen changes; a generous limit only for a broken run"""
        deadline = time.monotonic() + 60
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError(f"never {what}; the screen:\n{self.screen()}")
            time.sleep(0.05)

    def shows(self, text: str) -> None:
        self.wait(lambda: text in self.screen(), f"showed {text!r}")

    def ended(self) -> int:
        self.wait(self.exit.exists, "ended")
        self.wait(lambda: self.exit.read_text().strip(), "ended")
        return int(self.exit.read_text())

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
