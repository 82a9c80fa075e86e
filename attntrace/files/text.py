"""Reading a file's text: within the size cap (cap.py), UTF-8 with or without a BOM, and a clear word for UTF-16 and UTF-32."""

from __future__ import annotations

import io
import os
import stat
import sys
from typing import TYPE_CHECKING, BinaryIO
from unicodedata import name as unicode_name

from attntrace.errors import AttntraceError
from attntrace.files.cap import DEFAULT_MAX_MB, advice, amount, max_bytes
from attntrace.files.paths import kind
from attntrace.language import N_, _, current
from attntrace.memory import available_memory

if TYPE_CHECKING:
    from pathlib import Path

# the characters an input method types where ASCII was meant, by their Unicode names (lower case): what is shown in
# English, and the catalogue's words for them in another language
NAMED = (N_("fullwidth comma"), N_("ideographic comma"), N_("ideographic full stop"), N_("fullwidth full stop"),
         N_("fullwidth colon"), N_("fullwidth semicolon"), N_("fullwidth left parenthesis"),
         N_("fullwidth right parenthesis"), N_("fullwidth left square bracket"), N_("fullwidth right square bracket"),
         N_("fullwidth left curly bracket"), N_("fullwidth right curly bracket"), N_("left corner bracket"),
         N_("right corner bracket"), N_("left black lenticular bracket"), N_("right black lenticular bracket"),
         N_("fullwidth quotation mark"), N_("fullwidth apostrophe"), N_("fullwidth question mark"),
         N_("fullwidth exclamation mark"), N_("fullwidth hyphen-minus"), N_("fullwidth plus sign"), N_("minus sign"),
         N_("ideographic space"), N_("no-break space"), N_("zero width space"), N_("zero width no-break space"),
         N_("middle dot"), N_("katakana middle dot"), N_("multiplication sign"), N_("horizontal ellipsis"))
_CHUNK = 1 << 20


def status(path: str | Path) -> str:
    """"file" (a regular file, a device or a FIFO), "directory" or "missing"; one clear error when the path cannot even
    be looked at"""
    found = kind(path)
    return "file" if found == "other" else found


def read_bytes(path: str | Path) -> bytes:
    """the bytes of a file, or of stdin for "-", refusing anything over the size cap.

    Whatever the file is (a device such as /dev/zero, a FIFO, a symlink to one), at most cap + 1 bytes are read: its
    size as the file system tells it only ever refuses early.
    """
    cap = max_bytes()
    if str(path) == "-":
        if not hasattr(sys.stdin, "buffer"):  # a text stream with no bytes beneath (a StringIO put in its place)
            return _read_capped(io.BytesIO(sys.stdin.read(cap + 1).encode("utf-8", "surrogatepass")), "stdin", cap)
        return _read_capped(sys.stdin.buffer, "stdin", cap)
    from pathlib import Path  # only when a file is read: the built-in example needs none, and it costs more than 2% of
    # start-up

    p = Path(path)
    found = status(p)
    if found == "missing":
        raise AttntraceError(_("{path}: no such file or directory").format(path=p))
    if found == "directory":
        raise AttntraceError(_("{path}: is a directory, expected a file").format(path=p))
    try:
        with open(p, "rb") as f:
            info = os.fstat(f.fileno())
            if stat.S_ISREG(info.st_mode) and info.st_size > cap:
                raise _too_big(str(p), info.st_size, cap)
            return _read_capped(f, str(p), cap)
    except OSError as e:
        raise AttntraceError(_("{path}: cannot be read ({why})").format(path=p, why=e.strerror or e)) from None


def _read_capped(stream: BinaryIO, name: str, cap: int) -> bytes:
    """at most cap bytes of stream, read a chunk at a time; one byte more is an error, and so is more than memory holds"""
    memory = available_memory() if cap > DEFAULT_MAX_MB * 1_000_000 else None  # a raised cap may be more than memory
    limit = cap if memory is None else min(cap, max(memory // 10, _CHUNK))  # parsed, text takes several times its size
    chunks: list[bytes] = []
    total = 0
    while total <= limit:
        chunk = stream.read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > limit:
        if limit < cap:
            raise AttntraceError(_(
                "{name} holds more than {limit} (reading stopped there), more than this machine can load with "
                "{memory} of memory available; lower ATTNTRACE_MAX_MB or give a smaller file"
            ).format(name=name, limit=amount(limit), memory=amount(memory or 0)))
        raise AttntraceError(_(
            "{name} is over the {cap} MB cap (reading stopped there); if it is meant to be that big, raise the cap "
            "with ATTNTRACE_MAX_MB={advice}").format(name=name, cap=f"{cap / 1e6:g}", advice=advice(2 * cap)))
    return b"".join(chunks)


def _too_big(name: str, size: int, cap: int) -> AttntraceError:
    return AttntraceError(_("{name} is {size}, over the {cap} MB cap; raise it with ATTNTRACE_MAX_MB={advice}").format(
        name=name, size=amount(size), cap=f"{cap / 1e6:g}", advice=advice(2 * size)))


_WIDE = (  # the byte order marks, longest first, and what each says
    (b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"),
)


def wide_encoding(data: bytes) -> str | None:
    """"UTF-16" or "UTF-32" when the bytes look like that text (with or without a BOM), else None"""
    for mark, encoding in _WIDE:
        if data.startswith(mark):
            return encoding
    head = data[:4]
    if len(head) == 4 and head[0] and not any(head[1:]) or len(head) == 4 and not any(head[:3]) and head[3]:
        return "UTF-32"  # one ASCII character then three NULs (little-endian), or three NULs then one (big-endian)
    if len(head) >= 2 and (bool(head[0]) != bool(head[1])):
        return "UTF-16"  # one ASCII character and one NUL, in either order
    return None


def decode(data: bytes, name: str) -> str:
    """UTF-8 text, with the BOM removed; UTF-16 (PowerShell's > writes it) and UTF-32 get a message saying so"""
    encoding = wide_encoding(data)
    if encoding is not None:
        said = _("{name} is {encoding} text (what PowerShell's > writes); save it as UTF-8, for example with: "
                 "Get-Content in | Set-Content -Encoding utf8 out") if encoding == "UTF-16" else _(
            "{name} is {encoding} text; save it as UTF-8, for example with: Get-Content in | Set-Content -Encoding "
            "utf8 out")
        raise AttntraceError(said.format(name=name, encoding=encoding))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AttntraceError(_("{name}: byte {index} is not UTF-8; save the file as UTF-8").format(
            name=name, index=e.start + 1)) from None
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise AttntraceError(_("{name} is empty").format(name=name))
    return text


def read_text(path: str | Path) -> str:
    return decode(read_bytes(path), "stdin" if str(path) == "-" else str(path))


def character_name(char: str) -> str:
    """what a character is called in a message: Unicode's name in English ("fullwidth comma"); in another language the
    catalogue's name for it, or for a full-width form the character it stands for, else the character itself"""
    said = unicode_name(char, "").lower()
    if current() == "en":
        return said or "unnamed"
    if said in NAMED:
        return _(said)
    if 0xFF01 <= ord(char) <= 0xFF5E:  # the full-width forms of ASCII's characters
        return _("full-width {character}").format(character=chr(ord(char) - 0xFEE0))
    if char.isprintable() and not char.isspace():
        return _("the character {character}").format(character=char)
    return _("an invisible character")
