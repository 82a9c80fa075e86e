"""Labels are shown, never obeyed: control and bidi characters become visible escapes."""

from __future__ import annotations

import re

# C0 and C1 controls (tab and newline included: a label is one line), and the bidi embeddings, overrides and isolates
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """text with every control or bidi character written as an escape such as \\x1b or \\u202e"""
    return _HIDDEN.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)
