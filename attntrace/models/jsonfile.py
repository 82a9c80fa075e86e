"""The JSON files of a model's folder (config.json, the shard index, tokenizer_config.json) and its numbers, read so that
any file, however broken, big or deep, is one line naming it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from attntrace.errors import AttntraceError
from attntrace.files.paths import regular_file
from attntrace.render.escape import visible


def read_json(path: Path, what: str = "a JSON object") -> dict[str, Any]:
    """a JSON object from a model's directory, its type and size checked before it is read, or one line saying what is
    wrong with it"""
    if regular_file(path, what) == 0:
        raise AttntraceError(f"{path}: is empty, expected {what}")
    try:
        value = json.loads(path.read_bytes().decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise AttntraceError(f"{path}: not UTF-8 text, expected {what}") from None
    except RecursionError:
        raise AttntraceError(f"{path}: nested too deeply to be {what}") from None
    except ValueError as e:
        raise AttntraceError(f"{path}: not a JSON file ({str(e)[:100]})") from None
    except OSError as e:
        raise AttntraceError(f"{path}: cannot be read ({e.strerror or e})") from None
    if not isinstance(value, dict):
        raise AttntraceError(f"{path}: not a JSON object, expected {what}")
    return value


def real(value: Any) -> float | None:
    """value as a finite float, None when it is not a number or has no finite float (1e400, an integer of 400 digits)"""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def huge(where: Path, key: str, value: Any) -> AttntraceError | None:
    """the error for a number too large for a float (10^400, or 1e400, which JSON reads as infinite), else None"""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or real(value) is not None:
        return None
    return AttntraceError(f"{where}: {key} = {shown(value)} is too large; a setting is a number up to about 1.8e308")


def shown(value: Any) -> str:
    """a setting's value in a message, short whatever its size"""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**15:
        return f"a number of {int(abs(value).bit_length() * math.log10(2)) + 1} digits"
    text = repr(value)
    return visible(text if len(text) <= 40 else text[:37] + "...")
