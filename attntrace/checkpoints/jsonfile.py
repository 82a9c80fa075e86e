"""The JSON files of a model's folder (config.json, the shard index, tokenizer_config.json) and its numbers, read so that
any file, however broken, big or deep, is one line naming it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from attntrace.errors import AttntraceError
from attntrace.escape import visible
from attntrace.files.paths import regular_file
from attntrace.language import _


def read_json(path: Path, what: str = "a JSON object") -> dict[str, Any]:
    """a JSON object from a model's directory, its type and size checked before it is read, or one line saying what is
    wrong with it"""
    if regular_file(path, what) == 0:
        raise AttntraceError(_("{file}: is empty, expected {what}").format(file=path, what=_(what)))
    try:
        value = json.loads(path.read_bytes().decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise AttntraceError(_("{file}: not UTF-8 text, expected {what}").format(file=path, what=_(what))) from None
    except RecursionError:
        raise AttntraceError(_("{file}: nested too deeply to be {what}").format(file=path, what=_(what))) from None
    except ValueError as e:
        raise AttntraceError(_("{file}: not a JSON file ({reason})").format(file=path, reason=str(e)[:100])) from None
    except OSError as e:
        raise AttntraceError(_("{file}: cannot be read ({reason})").format(file=path, reason=e.strerror or e)) from None
    if not isinstance(value, dict):
        raise AttntraceError(_("{file}: not a JSON object, expected {what}").format(file=path, what=_(what)))
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
    return AttntraceError(_("{file}: {key} = {value} is too large; a setting is a number up to about 1.8e308").format(
        file=where, key=key, value=shown(value)))


def shown(value: Any) -> str:
    """a setting's value in a message, short whatever its size"""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**15:
        return _("a number of {n} digits").format(n=int(abs(value).bit_length() * math.log10(2)) + 1)
    text = repr(value)
    return visible(text if len(text) <= 40 else text[:37] + "...")
