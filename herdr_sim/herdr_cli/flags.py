"""Small argument-parsing helpers with Rust's parsing rules.

Herdr's subcommand parsers are hand-written loops over ``argv`` that call Rust's
``str::parse``. Python's ``int()``/``float()`` accept more (whitespace, underscores,
non-ASCII digits), so a value real Herdr rejects would slip through; these helpers
accept exactly what Rust accepts. The converters of :mod:`.options` are built on them.
"""

from __future__ import annotations

from .errors import FatalError
from .output import rust_custom_error, rust_debug_str

# `re` (and the `enum` it imports) costs the CLI milliseconds at start-up, so the float
# pattern is compiled on first use; the integer check needs no regular expression.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

__all__ = [
    "expand_equals",
    "f32_value",
    "fatal_other",
    "invalid_value",
    "is_finite",
    "parse_f32",
    "parse_unsigned",
]

_FLOAT_PATTERN = r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)"
_float_re: re.Pattern[str] | None = None
_F32_MAX = 3.4028234663852886e38


def expand_equals(args: list[str], value_options: tuple[str, ...]) -> list[str]:
    """Split ``--flag=value`` into ``--flag value`` for the listed value options only.

    Boolean and unknown options keep their attached value, so they still reach the
    parser's ``unknown option`` branch, as in Herdr.
    """
    expanded: list[str] = []
    for arg in args:
        flag, sep, value = arg.partition("=")
        if sep and flag in value_options:
            expanded.extend((flag, value))
        else:
            expanded.append(arg)
    return expanded


def is_finite(number: float) -> bool:
    """``math.isfinite`` without importing :mod:`math` (``inf - inf`` and NaN are NaN)."""
    return number - number == 0.0


def parse_unsigned(value: str, bits: int) -> int | None:
    """Rust's ``u32``/``u64`` ``from_str``: optional ``+``, ASCII digits, in range."""
    digits = value.removeprefix("+")
    if not (digits.isascii() and digits.isdigit()):
        return None
    number = int(digits)
    return number if number < (1 << bits) else None


def invalid_value(flag: str, value: str) -> str:
    """Herdr's message for a number flag that does not parse."""
    return f"invalid value for {flag}: {value}"


def fatal_other(message: str) -> FatalError:
    """The error Herdr raises with ``io::Error::other(message)`` and lets escape ``main``."""
    return FatalError(rust_custom_error(rust_debug_str(message)), message)


def parse_f32(value: str) -> float | None:
    """Rust's ``f32`` ``from_str``; ``None`` when it does not parse (may return inf/nan)."""
    global _float_re
    if _float_re is None:
        import re

        _float_re = re.compile(_FLOAT_PATTERN, re.IGNORECASE)
    if not _float_re.fullmatch(value):
        return None
    import math

    number = float(value)
    if math.isnan(number):
        return number
    if abs(number) > _F32_MAX:
        return float("inf") if number > 0 else float("-inf")
    return f32_value(number)


def f32_value(number: float) -> float:
    """Round to ``f32`` and return the shortest decimal that survives the round trip.

    Real Herdr sends ``f32`` fields (ratios, resize amounts) as ``ryu``'s shortest
    ``f32`` rendering, so ``0.333`` goes on the wire as ``0.333``, not as the ``f64``
    nearest to the ``f32`` value.
    """
    import struct

    packed = struct.pack("<f", number)
    rounded: float = struct.unpack("<f", packed)[0]
    for digits in range(1, 10):
        candidate = float(f"{rounded:.{digits}g}")
        if struct.pack("<f", candidate) == packed:
            return candidate
    return rounded
