"""Counts in words, for every message and view: "1 row", "2 rows"."""

from __future__ import annotations


def plural(count: int, noun: str) -> str:
    """a count and its noun, "1 row" or "2 rows\""""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"
