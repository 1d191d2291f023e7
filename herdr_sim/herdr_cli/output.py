"""Byte-faithful output helpers: Herdr's JSON rendering and its Rust error formatting.

Real Herdr parses every response into a ``serde_json::Value`` and prints it again. Its
``serde_json`` is built without ``preserve_order``, so object keys come out sorted, and
floats are rendered by ``ryu`` (``1e-7``, ``0.00001``), not the way Python's ``repr`` would.
Clients that compare the CLI's output byte for byte (snapshot tests, shell pipelines) see
no difference between the two implementations only if these details match, so this module
renders JSON itself instead of calling :func:`json.dumps` with its defaults. It does not
import :mod:`json` at all (that package imports :mod:`re`, which costs every CLI start a few
milliseconds): strings are escaped by the C function ``json.dumps`` itself uses.

Errors that real Herdr lets escape ``main`` are printed by Rust as ``Error: <Debug>``; the
``rust_*`` helpers below reproduce the ``Debug`` text of ``std::io::Error`` for the cases
the CLI can hit.
"""

from __future__ import annotations

import os
import sys

from ..wire.rust_debug import rust_debug_str

try:
    from _json import encode_basestring
except ImportError:  # pragma: no cover - an interpreter without json's C accelerator
    from json.encoder import py_encode_basestring as encode_basestring

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TextIO

__all__ = [
    "CliExit",
    "dumps",
    "dumps_compact",
    "print_read_response",
    "print_response",
    "rust_custom_error",
    "rust_debug_str",
    "rust_os_error",
    "write_err",
    "write_out",
]


class CliExit(Exception):
    """Stop the command with ``code``; raised after everything has been printed."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _emit(stream: TextIO, text: str) -> None:
    """Write UTF-8 bytes whatever the locale, as Rust does; text streams without a byte
    layer (an in-memory capture, say) get the text itself."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text)
        stream.flush()
        return
    stream.flush()
    buffer.write(text.encode("utf-8", "replace"))
    buffer.flush()


def write_out(text: str, stream: TextIO | None = None) -> None:
    """Write ``text`` to stdout (or ``stream``) exactly, without adding a newline."""
    _emit(stream if stream is not None else sys.stdout, text)


def write_err(text: str) -> None:
    """Write one line to stderr, newline added, as Rust's ``eprintln!`` does."""
    _emit(sys.stderr, text + "\n")


def _format_float(value: float) -> str:
    """Render a finite float the way ``ryu`` (serde_json's float printer) does."""
    if value - value != 0.0:  # inf or NaN (`math` is not imported, for start-up time)
        return "null"
    text = repr(value)
    sign = ""
    if text.startswith("-"):
        sign, text = "-", text[1:]
    mantissa, _, exponent_text = text.partition("e")
    exponent = int(exponent_text) if exponent_text else 0
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    if not digits:
        return sign + "0.0"
    # Position of the decimal point relative to the start of ``digits``.
    leading_zeros = len(whole + fraction) - len((whole + fraction).lstrip("0"))
    point = len(whole) - leading_zeros + exponent
    digits = digits.rstrip("0")
    length = len(digits)
    if point - length >= 0 and point <= 16:
        return f"{sign}{digits}{'0' * (point - length)}.0"
    if 0 < point <= 16:
        return f"{sign}{digits[:point]}.{digits[point:]}"
    if -5 < point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    exp = point - 1
    if length == 1:
        return f"{sign}{digits}e{exp}"
    return f"{sign}{digits[0]}.{digits[1:]}e{exp}"


def _python_float(value: float) -> str:
    """A float as :func:`json.dumps` renders it (``repr``; ``NaN``/``Infinity`` allowed)."""
    if value - value == 0.0:  # finite
        return float.__repr__(value)
    if value > 0:
        return "Infinity"
    return "-Infinity" if value < 0 else "NaN"


def _encode(
    value: Any, sort_keys: bool, parts: list[str], float_text: Callable[[float], str]
) -> None:
    if value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, str):
        parts.append(encode_basestring(value))
    elif isinstance(value, int):
        parts.append(str(value))
    elif isinstance(value, float):
        parts.append(float_text(value))
    elif isinstance(value, dict):
        parts.append("{")
        items = sorted(value.items()) if sort_keys else list(value.items())
        for index, (key, item) in enumerate(items):
            if index:
                parts.append(",")
            parts.append(encode_basestring(str(key)))
            parts.append(":")
            _encode(item, sort_keys, parts, float_text)
        parts.append("}")
    elif isinstance(value, list | tuple):
        parts.append("[")
        for index, item in enumerate(value):
            if index:
                parts.append(",")
            _encode(item, sort_keys, parts, float_text)
        parts.append("]")
    else:
        raise TypeError(f"cannot render {type(value).__name__} as JSON")


def dumps(value: Any, *, sort_keys: bool = True) -> str:
    """Compact JSON as real Herdr prints it.

    ``sort_keys=True`` is the rendering of a parsed ``serde_json::Value`` (every server
    response, every ``json!`` literal); ``sort_keys=False`` keeps insertion order, the
    rendering of a Rust struct (``status --json``, the ``protocol_mismatch`` and
    ``server_not_running`` envelopes).
    """
    parts: list[str] = []
    _encode(value, sort_keys, parts, _format_float)
    return "".join(parts)


def dumps_compact(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` for JSON values
    with string keys, without importing :mod:`json` (the request encoding of the CLI)."""
    parts: list[str] = []
    _encode(value, False, parts, _python_float)
    return "".join(parts)


def print_response(response: Any) -> int:
    """Herdr's ``print_response``: success to stdout (exit 0), error to stderr (exit 1)."""
    if isinstance(response, dict) and "error" in response:
        write_err(dumps(response))
        return 1
    write_out(dumps(response) + "\n")
    return 0


def print_read_response(response: Any) -> int:
    """Herdr's ``print_read_response``: the raw ``result.read.text``, no newline added."""
    if not isinstance(response, dict):
        return 0
    if "error" in response:
        write_err(dumps(response))
        return 1
    result = response.get("result")
    read = result.get("read") if isinstance(result, dict) else None
    text = read.get("text") if isinstance(read, dict) else None
    if isinstance(text, str):
        write_out(text)
    return 0


def rust_custom_error(inner_debug: str) -> str:
    """The ``Debug`` text of ``io::Error::other(e)``, given ``e``'s own ``Debug`` text."""
    return f"Custom {{ kind: Other, error: {inner_debug} }}"


# errno -> Rust `std::io::ErrorKind` variant name, for the errors a socket client can see.
_ERROR_KINDS = {
    1: "PermissionDenied",
    2: "NotFound",
    4: "Interrupted",
    11: "WouldBlock",
    13: "PermissionDenied",
    17: "AlreadyExists",
    20: "NotADirectory",
    21: "IsADirectory",
    22: "InvalidInput",
    28: "StorageFull",
    30: "ReadOnlyFilesystem",
    32: "BrokenPipe",
    36: "InvalidFilename",
    88: "Uncategorized",
    98: "AddrInUse",
    99: "AddrNotAvailable",
    103: "ConnectionAborted",
    104: "ConnectionReset",
    107: "NotConnected",
    110: "TimedOut",
    111: "ConnectionRefused",
    113: "HostUnreachable",
}


def rust_os_error(err: OSError) -> str:
    """The ``Debug`` text of a Rust ``io::Error`` built from an OS error code."""
    code = err.errno
    if code is None:
        return rust_custom_error(rust_debug_str(str(err)))
    kind = _ERROR_KINDS.get(code, "Uncategorized")
    return f"Os {{ code: {code}, kind: {kind}, message: {rust_debug_str(os.strerror(code))} }}"


def rust_os_error_display(err: OSError) -> str:
    """The ``Display`` text of a Rust OS ``io::Error``: ``<strerror> (os error N)``."""
    if err.errno is None:
        return str(err)
    return f"{os.strerror(err.errno)} (os error {err.errno})"


def rust_value_debug(value: Any) -> str:
    """``format!("{:?}", value)`` for a ``serde_json::Value`` (used by ``agent explain``)."""
    if value is None:
        return "Null"
    if value is True or value is False:
        return f"Bool({'true' if value else 'false'})"
    if isinstance(value, int | float):
        return f"Number({dumps(value)})"
    if isinstance(value, str):
        return f"String({rust_debug_str(value)})"
    if isinstance(value, list):
        return "Array [" + ", ".join(rust_value_debug(item) for item in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(
            f"{rust_debug_str(str(key))}: {rust_value_debug(item)}"
            for key, item in sorted(value.items())
        )
        return "Object {" + items + "}"
    return rust_debug_str(str(value))
