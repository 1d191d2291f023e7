"""Byte bounds on text that never split a UTF-8 character.

Why: the managed-agent read paths (``agent_inspect``'s 16 KiB terminal tail,
``agent_transcript``'s 16 KiB tail and 4 KiB tool results, process evidence) are bounded in
UTF-8 *bytes* (reference A.13), while the text is Python ``str``. Cutting the encoded bytes
at an arbitrary offset can land inside a multi-byte character; these helpers cut only at
character boundaries, so the kept part is always valid text no longer than the bound.
"""

from __future__ import annotations

__all__ = ["utf8_head", "utf8_len", "utf8_middle", "utf8_tail"]


def utf8_len(text: str) -> int:
    """The UTF-8 size of ``text`` in bytes."""
    return len(text.encode("utf-8", "surrogatepass"))


def utf8_head(text: str, limit: int) -> tuple[str, bool]:
    """The longest prefix of ``text`` of at most ``limit`` UTF-8 bytes, and whether it cut."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text, False
    cut = max(0, limit)
    while cut > 0 and (data[cut] & 0xC0) == 0x80:  # data[cut] starts the first dropped char
        cut -= 1
    return data[:cut].decode("utf-8", "surrogatepass"), True


def utf8_tail(text: str, limit: int) -> tuple[str, bool]:
    """The longest suffix of ``text`` of at most ``limit`` UTF-8 bytes, and whether it cut."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text, False
    start = len(data) - max(0, limit)
    while start < len(data) and (data[start] & 0xC0) == 0x80:  # inside a character
        start += 1
    return data[start:].decode("utf-8", "surrogatepass"), True


def utf8_middle(text: str, limit: int, marker: str) -> tuple[str, bool]:
    """``text`` if it fits ``limit`` bytes; else its head and tail around ``marker``, the
    whole at most ``limit`` bytes (head ``ceil(p/2)``, tail ``floor(p/2)`` bytes at most,
    ``p = limit - len(marker)``, each cut at a character boundary)."""
    if utf8_len(text) <= limit:
        return text, False
    room = max(0, limit - utf8_len(marker))
    head, _ = utf8_head(text, (room + 1) // 2)
    tail, _ = utf8_tail(text, room // 2)
    return head + marker + tail, True
