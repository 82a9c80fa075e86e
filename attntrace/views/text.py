"""Text as a terminal lays it out: columns by display width, so 我 and 😀 take two and a combining accent none."""

from __future__ import annotations


def width(text: str) -> int:
    """the columns a terminal gives text, as the rich tables measure it: wide and full-width characters (我, 😀) two,
    combining and zero-width ones none, an emoji sequence (👨‍👩‍👧, ❤️, 👍🏽) as one emoji"""
    if text.isascii() or (text.isprintable() and max(text) < "\u0300"):  # Latin letters and signs (·, ×, é): one
        # column each, as the tables measure them
        return len(text)
    wide = _chinese(text)
    if wide is not None:  # Chinese sentences and labels: no need of rich, which costs a Chinese run start-up time
        return len(text) + wide
    from rich.cells import cell_len  # only for a label of other characters: it costs start-up time

    return cell_len(text)


def _chinese(text: str) -> int | None:
    """how many characters of text are wide, when each is printable ASCII, a Latin sign (·, ×, é) or a CJK character
    or full-width form that rich also gives two columns; None for any other"""
    wide = 0
    for ch in text:
        if " " <= ch < "\u0300" and ch != "\x7f" and not "\x80" <= ch < "\xa0" or "\u2010" <= ch <= "\u2027":
            continue  # one column: Latin letters and signs, dashes, quotes and ellipses
        if "\u3000" <= ch <= "\u3029" or "\u3400" <= ch <= "\u4dbf" or "\u4e00" <= ch <= "\u9fff" \
                or "\uff01" <= ch <= "\uff60" or "\uffe0" <= ch <= "\uffe6":
            wide += 1
            continue
        return None
    return wide


def left(text: str, columns: int) -> str:
    """text padded on the right to fill columns on screen"""
    return text + " " * max(0, columns - width(text))


def right(text: str, columns: int) -> str:
    """text padded on the left to fill columns on screen"""
    return " " * max(0, columns - width(text)) + text


def cut(text: str, columns: int, ellipsis: str = "…") -> str:
    """text that fits in columns on screen, its end replaced by an ellipsis when it is too long"""
    if width(text) <= columns:
        return text
    room = columns - width(ellipsis)
    kept = ""
    for ch in text:
        if width(kept + ch) > room:
            break
        kept += ch
    return kept + ellipsis


def lines(parts: list[str], columns: int, gap: str = "  ") -> list[str]:
    """parts joined on one line while they fit in columns, otherwise broken between them (never inside one)"""
    out: list[str] = []
    for part in parts:
        if out and width(out[-1] + gap + part) <= columns:
            out[-1] += gap + part
        else:
            out.append(part)
    return out


def fits(text: str, columns: int) -> bool:
    """whether text takes at most columns on screen; measured only when its UTF-8 length is more (a character takes
    at most as many columns as its bytes, so a label need not bring in rich to be measured)"""
    return len(text.encode("utf-8", "surrogatepass")) <= columns or width(text) <= columns


def wrapped(text: str, columns: int, indent: str = "") -> list[str]:
    """text broken at spaces into lines of at most columns on screen, each after the first after indent; a word too
    long for a line of its own is broken where the line ends"""
    if fits(text, columns):
        return [text]
    out: list[str] = []
    body = text.lstrip(" ")
    line = text[:len(text) - len(body)]  # the line being filled, from its indent
    used = len(line)  # its width
    for word in body.split(" "):
        size = width(word)
        if line.strip() and used + 1 + size <= columns:
            line, used = f"{line} {word}", used + 1 + size
            continue
        head = _cjk_head(word, columns - used - 1) if line.strip() and not word.isascii() else ""
        if head:  # Chinese text breaks between its characters, where no space is written
            out.append(f"{line} {head}")
            line, used, word = indent, width(indent), word[len(head):]
            size = width(word)
        elif line.strip():
            out.append(line)
            line, used = indent, width(indent)
        while used + size > columns and used + 1 < columns:  # a word longer than a line: as much as fits
            head = cut(word, columns - used, "")
            if not head:
                break
            out.append(line + head)
            word = word[len(head):]
            line, used, size = indent, width(indent), width(word)
        line, used = line + word, used + size
    out.append(line)
    return [piece.rstrip() for piece in out]


NO_START = "，。、；：！？）》」』”’…·"  # what never starts a line of Chinese text
NO_END = "（《「『“‘"  # what never ends one


def _cjk_head(word: str, columns: int) -> str:
    """the longest start of word that fits in columns and ends where Chinese text may break: beside a wide character
    (two columns), never before a closing mark nor after an opening one; "" when there is none"""
    best, used = "", 0
    for k, ch in enumerate(word[:-1]):
        used += width(ch)
        if used > columns:
            break
        after = word[k + 1]
        if (width(ch) == 2 or width(after) == 2) and after not in NO_START and ch not in NO_END:
            best = word[:k + 1]
    return best
