"""Write attntrace/locale/zh_CN/earlier.py: the Simplified Chinese of each message as an earlier revision said it, where
it differs from today's, so that `check` still reads a worksheet printed by that revision.

    python scripts/earlier_words.py REVISION    # e.g. the commit before the catalogue was reworded
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULE = "attntrace/locale/zh_CN/messages.py"
OUT = ROOT / "attntrace" / "locale" / "zh_CN" / "earlier.py"


def messages(source: str) -> dict[str, str]:
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "MESSAGES":
            return ast.literal_eval(node.value)
    raise SystemExit(f"no MESSAGES in {MODULE}")


def main(revision: str) -> int:
    before = messages(subprocess.run(["git", "show", f"{revision}:{MODULE}"], cwd=ROOT, check=True, capture_output=True,
                                     text=True).stdout)
    now = messages((ROOT / MODULE).read_text(encoding="utf-8"))
    changed = {key: value for key, value in before.items() if key in now and now[key] != value}
    lines = [f'"""The Simplified Chinese of each message as revision {revision[:12]} said it, where today\'s differs: what a',
             'worksheet printed by it says, read by check. Written by scripts/earlier_words.py: never edit it."""', "",
             "MESSAGES = {"]
    lines += [f"    {key!r}: {value!r}," for key, value in changed.items()]
    lines += ["}", ""]
    OUT.write_text("\n".join(lines), encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(changed)} messages")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
