"""Herdr's public id scheme: bijective base-32 numbers and the ``wN`` / ``wN:tN`` / ``wN:pN`` forms.

Numbers use the alphabet ``123456789ABCDEFGHJKMNPQRSTVWXYZ0``: 1→``1``, 31→``Z``, 32→``0``,
33→``11``. There is no zero digit in the usual sense, so every positive number has exactly one
spelling and ids never collide.
"""

from __future__ import annotations

import functools
import os
import time
from itertools import count
from typing import Final

ALPHABET: Final = "123456789ABCDEFGHJKMNPQRSTVWXYZ0"
_DIGIT: Final = {ch: index for index, ch in enumerate(ALPHABET)}


@functools.lru_cache(maxsize=4096)  # every lookup of a public id encodes numbers
def encode_number(value: int) -> str:
    """Encode a positive number in Herdr's bijective base 32 (0 encodes as ``0``)."""
    if value < 0:
        raise ValueError("public numbers are never negative")
    if value == 0:
        return "0"
    digits: list[str] = []
    while value > 0:
        value -= 1
        digits.append(ALPHABET[value % 32])
        value //= 32
    return "".join(reversed(digits))


def decode_number(text: str) -> int | None:
    """Decode an encoded public number; ``None`` when ``text`` is not one."""
    if not text:
        return None
    value = 0
    for ch in text:
        digit = _DIGIT.get(ch)
        if digit is None:
            return None
        value = value * 32 + digit + 1
    return value


def workspace_public_id(number: int) -> str:
    """``w1``, ``wA``, …"""
    return f"w{encode_number(number)}"


def tab_public_id(workspace_id: str, number: int) -> str:
    """``w1:t1``, …"""
    return f"{workspace_id}:t{encode_number(number)}"


def pane_public_id(workspace_id: str, number: int) -> str:
    """``w1:p1``, …"""
    return f"{workspace_id}:p{encode_number(number)}"


_TERMINAL_COUNTER = count(1)


def new_terminal_id() -> str:
    """A unique ``term_…`` id: wall-clock microseconds and a process counter, both in hex.

    The pid is mixed in so two simulators started in the same microsecond still differ.
    """
    micros = time.time_ns() // 1000
    return f"term_{micros:x}{os.getpid() & 0xFFF:x}{next(_TERMINAL_COUNTER):x}"


def parse_position(text: str) -> int | None:
    """A bare 1-based position (``"1"``), as Herdr's legacy forms use; ``None`` otherwise."""
    digits = text.removeprefix("+")  # Rust's integer parsing accepts one leading plus
    if digits.isdigit() and digits.isascii():
        value = int(digits)
        return value if value >= 1 else None
    return None
