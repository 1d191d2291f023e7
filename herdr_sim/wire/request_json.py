"""Reading one request line the way Herdr's ``serde_json::from_str::<Request>`` reads it.

Herdr trims the line with Rust's ``str::trim`` (Unicode ``White_Space``, a different set
from Python's ``str.strip``), answers nothing when that leaves it empty, and otherwise
decodes it with serde_json (``src/api/server.rs``, ``handle_connection_with_stop``). Its
``Request`` is ``{ id: String, #[serde(flatten)] method: Method }`` (``src/api/schema.rs``),
so serde_json reads the top-level object key by key, in input order: ``id`` is decoded as a
string on the spot (a duplicate is ``duplicate field `id```), every other key is buffered as
serde's ``Content`` (any JSON value, duplicates and order kept). Syntax errors, the
recursion limit (128 nested containers), a non-string or repeated ``id`` are reported where
the reader stands. Everything after that — ``missing field `id```, the method tag, the params
struct — is checked on the buffered content once the object is read, and reported at the
position just past its closing brace.

:func:`read_request` does that. The happy path uses Python's C decoder (with hooks that keep
pairs and serde's number kinds); any line it rejects, or that serde_json would reject where
Python does not (too deep, a number out of range, a lone surrogate escape, a bad ``id``),
is read again by :class:`_Reader`, a byte-for-byte model of serde_json's reader
(``src/de.rs``, ``src/read.rs`` of serde-rs/json 1.0.149), to produce serde_json's message
and its ``at line L column C`` suffix.

Buffered values: JSON objects are :class:`Pairs` (a ``dict`` that keeps its pairs, as
``Content::Map``); integers that fit ``u64``/``i64`` are ``int``, every other number is
``float`` (serde_json reads ``-0`` and integers beyond 64 bits as ``f64``).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, NamedTuple

from orchestrator.client.protocol.kinds import RUST_WHITESPACE

#: serde_json's default nesting limit: the 128th open container is refused
RECURSION_LIMIT = 128

_U64_MAX = 2**64 - 1
_I64_MIN = -(2**63)
_STRING_STOP = re.compile(rb'[\x00-\x1f"\\]')
_HEX = frozenset(b"0123456789abcdefABCDEF")
_ESCAPES = {
    ord('"'): '"',
    ord("\\"): "\\",
    ord("/"): "/",
    ord("b"): "\b",
    ord("f"): "\f",
    ord("n"): "\n",
    ord("r"): "\r",
    ord("t"): "\t",
}


class Pairs(dict[str, Any]):
    """A JSON object: a ``dict`` as every JSON reader makes it (a repeated key keeps its last
    value), which also keeps :attr:`pairs` as serde's ``Content::Map`` holds them — in input
    order, duplicates included."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs


class JsonError(ValueError):
    """serde_json's error for the line, with its ``at line L column C`` suffix."""


class RequestObject(NamedTuple):
    """The top-level object as serde_json has read it before ``Method`` is decoded."""

    #: the ``id`` string, or None when the object has no ``id`` key
    id: str | None
    #: every other key, in input order, values as serde's ``Content``
    entries: list[tuple[str, Any]]
    #: the column just past the object's closing brace (where later errors are reported)
    end: int
    #: the column of the first non-whitespace character after the object, if any: serde_json
    #: reports ``trailing characters`` there once ``Request`` has been decoded
    trailing: int | None = None


def rust_trim(text: str) -> str:
    """Rust's ``str::trim``: strip Unicode ``White_Space`` at both ends."""
    return text.strip(RUST_WHITESPACE)


def at_column(message: str, column: int) -> str:
    """serde_json's ``Display`` of an error positioned on the (single) request line."""
    return f"{message} at line 1 column {column}"


def read_request(text: str) -> RequestObject:
    """Read a trimmed, non-empty request line up to serde's ``Method`` decoding, or raise
    :class:`JsonError` with serde_json's message."""
    fast = _fast(text)
    if fast is not None:
        return fast
    return _Reader(text.encode()).request()  # text came from UTF-8: no lone surrogate


# -- the fast path --------------------------------------------------------------------------------


def _serde_int(digits: str) -> int | float:
    """An integer literal as serde_json reads it: ``u64``/``i64``, else ``f64`` (and ``-0``
    is ``-0.0``). A literal longer than any ``u64``/``i64`` goes straight to ``f64``:
    Python's ``int`` refuses more than 4,300 digits, serde_json reads any length."""
    if len(digits) > _LONGEST_INT:
        return _finite(digits)
    value = int(digits)
    if digits.startswith("-") and value == 0:
        return -0.0
    if _I64_MIN <= value <= _U64_MAX:
        return value
    return _finite(digits)


#: characters of the longest ``i64``/``u64`` literal (``-9223372036854775808``)
_LONGEST_INT = 20


def _finite(literal: str) -> float:
    """A float literal; one serde_json finds out of range is left to :class:`_Reader`."""
    value = float(literal)
    if math.isinf(value):
        raise ValueError  # no message: the reader reports it, with serde's words
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


#: a ``\uD800``-``\uDBFF`` escape not followed by a low one, or a ``\uDC00``-``\uDFFF``
#: escape not preceded by a high one: what serde_json refuses and Python accepts
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def _fast(text: str) -> RequestObject | None:
    """The happy path with Python's decoder; None when serde_json's reader must decide.

    Every integer literal goes through :func:`_serde_int` (a request carries a handful), and
    the surrogate pattern runs only where a ``\\u`` escape could start one: scanning a
    one-MiB line with those patterns took 45 ms, eight times what decoding it does.
    """
    if "\\u" in text and _LONE_SURROGATE.search(text):
        return None
    try:
        value = json.loads(
            text,
            object_pairs_hook=Pairs,
            parse_float=_finite,
            parse_int=_serde_int,
            parse_constant=_refuse_constant,
        )
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, Pairs) or _too_deep(text, value):
        return None
    ids = [item for key, item in value.pairs if key == "id"]
    if len(ids) > 1 or (ids and not isinstance(ids[0], str)):
        return None
    entries = [(key, item) for key, item in value.pairs if key != "id"]
    return RequestObject(ids[0] if ids else None, entries, len(text.encode("utf-8")))


def _too_deep(text: str, value: Pairs) -> bool:
    """A container nested :data:`RECURSION_LIMIT` deep (the request object is level 1)."""
    if text.count("[") + text.count("{") < RECURSION_LIMIT:
        return False  # not enough brackets, in strings or not
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth >= RECURSION_LIMIT:
            return True
        children = (child for _, child in item.pairs) if isinstance(item, Pairs) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (list, dict)))
    return False


# -- serde_json's reader --------------------------------------------------------------------------


class _Reader:
    """serde_json's ``Deserializer<StrRead>`` over the line's bytes, reading ``Request``."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.index = 0
        self.remaining_depth = RECURSION_LIMIT

    # positions: ``error`` points at the last byte read, ``peek_error`` at the next one
    def error(self, message: str) -> JsonError:
        return JsonError(at_column(message, self.index))

    def peek_error(self, message: str) -> JsonError:
        return JsonError(at_column(message, min(len(self.data), self.index + 1)))

    def peek(self) -> int | None:
        return self.data[self.index] if self.index < len(self.data) else None

    def next_char(self) -> int | None:
        byte = self.peek()
        if byte is not None:
            self.index += 1
        return byte

    def whitespace(self) -> int | None:
        while (byte := self.peek()) in (0x20, 0x0A, 0x09, 0x0D):
            self.index += 1
        return byte

    # -- Request ---------------------------------------------------------------------------

    def request(self) -> RequestObject:
        peek = self.whitespace()
        if peek is None:
            raise self.peek_error("EOF while parsing a value")
        if peek != ord("{"):
            raise self.invalid_type("struct Request")
        self.enter()
        self.index += 1
        request_id: str | None = None
        entries: list[tuple[str, Any]] = []
        first = True
        while self.has_next_key(first):
            first = False
            key = self.key()
            if key == "id":
                if request_id is not None:
                    self.whitespace()  # end_map runs before the position is taken
                    raise self.error("duplicate field `id`")
                self.colon()
                request_id = self.string_value()
            else:
                self.colon()
                entries.append((key, self.value()))
        self.remaining_depth += 1
        self.index += 1  # the closing brace (has_next_key stopped on it)
        end = self.index
        trailing = None if self.whitespace() is None else self.index + 1
        return RequestObject(request_id, entries, end, trailing)

    def string_value(self) -> str:
        peek = self.whitespace()
        if peek is None:
            raise self.peek_error("EOF while parsing a value")
        if peek != ord('"'):
            raise self.invalid_type("a string")
        self.index += 1
        return self.string()

    def invalid_type(self, expected: str) -> JsonError:
        """serde_json's ``peek_invalid_type``: read the value, report its type."""
        peek = self.peek()
        if peek == ord("n"):
            self.index += 1
            self.ident(b"ull")
            found = "null"
        elif peek == ord("t"):
            self.index += 1
            self.ident(b"rue")
            found = "boolean `true`"
        elif peek == ord("f"):
            self.index += 1
            self.ident(b"alse")
            found = "boolean `false`"
        elif peek == ord("-") or (peek is not None and 0x30 <= peek <= 0x39):
            found = describe(self.number())
        elif peek == ord('"'):
            self.index += 1
            found = describe(self.string())
        elif peek == ord("["):
            found = "sequence"
        elif peek == ord("{"):
            found = "map"
        else:
            return self.peek_error("expected value")
        return self.error(f"invalid type: {found}, expected {expected}")

    # -- values ----------------------------------------------------------------------------

    def enter(self) -> None:
        self.remaining_depth -= 1
        if self.remaining_depth == 0:
            raise self.peek_error("recursion limit exceeded")

    def value(self) -> Any:
        peek = self.whitespace()
        if peek is None:
            raise self.peek_error("EOF while parsing a value")
        if peek == ord("n"):
            self.index += 1
            self.ident(b"ull")
            return None
        if peek == ord("t"):
            self.index += 1
            self.ident(b"rue")
            return True
        if peek == ord("f"):
            self.index += 1
            self.ident(b"alse")
            return False
        if peek == ord("-") or 0x30 <= peek <= 0x39:
            return self.number()
        if peek == ord('"'):
            self.index += 1
            return self.string()
        if peek == ord("["):
            self.enter()
            self.index += 1
            items = []
            first = True
            while self.has_next_element(first):
                first = False
                items.append(self.value())
            self.index += 1
            self.remaining_depth += 1
            return items
        if peek == ord("{"):
            self.enter()
            self.index += 1
            pairs: list[tuple[str, Any]] = []
            first = True
            while self.has_next_key(first):
                first = False
                key = self.key()
                self.colon()
                pairs.append((key, self.value()))
            self.index += 1
            self.remaining_depth += 1
            return Pairs(pairs)
        raise self.peek_error("expected value")

    def has_next_element(self, first: bool) -> bool:
        peek = self.whitespace()
        if peek is None:
            raise self.peek_error("EOF while parsing a list")
        if peek == ord("]"):
            return False
        if first:
            return True
        if peek != ord(","):
            raise self.peek_error("expected `,` or `]`")
        self.index += 1
        peek = self.whitespace()
        if peek == ord("]"):
            raise self.peek_error("trailing comma")
        if peek is None:
            raise self.peek_error("EOF while parsing a value")
        return True

    def has_next_key(self, first: bool) -> bool:
        peek = self.whitespace()
        if peek is None:
            raise self.peek_error("EOF while parsing an object")
        if peek == ord("}"):
            return False
        if first:
            if peek != ord('"'):
                raise self.peek_error("key must be a string")
            return True
        if peek != ord(","):
            raise self.peek_error("expected `,` or `}`")
        self.index += 1
        peek = self.whitespace()
        if peek == ord('"'):
            return True
        if peek == ord("}"):
            raise self.peek_error("trailing comma")
        if peek is None:
            raise self.peek_error("EOF while parsing a value")
        raise self.peek_error("key must be a string")

    def key(self) -> str:
        self.index += 1  # the opening quote, seen by has_next_key
        return self.string()

    def colon(self) -> None:
        peek = self.whitespace()
        if peek == ord(":"):
            self.index += 1
            return
        if peek is None:
            raise self.peek_error("EOF while parsing an object")
        raise self.peek_error("expected `:`")

    def ident(self, rest: bytes) -> None:
        for expected in rest:
            byte = self.next_char()
            if byte is None:
                raise self.error("EOF while parsing a value")
            if byte != expected:
                raise self.error("expected ident")

    def number(self) -> int | float:
        start = self.index
        positive = self.peek() != ord("-")
        if not positive:
            self.index += 1
        first = self.next_char()
        if first is None:
            raise self.error("EOF while parsing a value")
        if first == ord("0"):
            if (following := self.peek()) is not None and 0x30 <= following <= 0x39:
                raise self.peek_error("invalid number")
        elif not 0x31 <= first <= 0x39:
            raise self.error("invalid number")
        self.digits()
        is_float = False
        if self.peek() == ord("."):
            is_float = True
            self.index += 1
            if not self.digits():
                if self.peek() is None:
                    raise self.peek_error("EOF while parsing a value")
                raise self.peek_error("invalid number")
        if self.peek() in (ord("e"), ord("E")):
            is_float = True
            self.index += 1
            if self.peek() in (ord("+"), ord("-")):
                self.index += 1
            byte = self.next_char()
            if byte is None:
                raise self.error("EOF while parsing a value")
            if not 0x30 <= byte <= 0x39:
                raise self.error("invalid number")
            self.digits()
        literal = self.data[start : self.index].decode("ascii")
        try:
            value = float(literal) if is_float else _serde_int(literal)
        except ValueError:  # _finite: an integer literal beyond f64
            raise self.error("number out of range") from None
        if value in (float("inf"), float("-inf")):
            raise self.error("number out of range")
        return value

    def digits(self) -> bool:
        start = self.index
        while (byte := self.peek()) is not None and 0x30 <= byte <= 0x39:
            self.index += 1
        return self.index > start

    def string(self) -> str:
        """The rest of a string whose opening quote has been read."""
        parts: list[str] = []
        while True:
            found = _STRING_STOP.search(self.data, self.index)
            if found is None:
                self.index = len(self.data)
                raise self.error("EOF while parsing a string")
            stop = found.start()
            parts.append(self.data[self.index : stop].decode("utf-8", "surrogatepass"))
            byte = self.data[stop]
            self.index = stop + 1
            if byte == ord('"'):
                return "".join(parts)
            if byte != ord("\\"):
                raise self.error("control character (\\u0000-\\u001F) found while parsing a string")
            parts.append(self.escape())

    def escape(self) -> str:
        byte = self.next_char()
        if byte is None:
            raise self.error("EOF while parsing a string")
        if byte in _ESCAPES:
            return _ESCAPES[byte]
        if byte != ord("u"):
            raise self.error("invalid escape")
        unit = self.hex4()
        if not 0xD800 <= unit <= 0xDFFF:
            return chr(unit)
        if unit >= 0xDC00:  # a low half with no high one before it
            raise self.error("lone leading surrogate in hex escape")
        for expected in (ord("\\"), ord("u")):
            byte = self.peek()
            if byte is None:
                raise self.error("EOF while parsing a string")
            self.index += 1
            if byte != expected:
                raise self.error("unexpected end of hex escape")
        low = self.hex4()
        if not 0xDC00 <= low <= 0xDFFF:
            raise self.error("lone leading surrogate in hex escape")
        return chr(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))

    def hex4(self) -> int:
        if self.index + 4 > len(self.data):
            self.index = len(self.data)
            raise self.error("EOF while parsing a string")
        digits = self.data[self.index : self.index + 4]
        self.index += 4
        if not all(byte in _HEX for byte in digits):
            raise self.error("invalid escape")
        return int(digits, 16)


# -- serde's words for what it found --------------------------------------------------------------


def describe(value: Any) -> str:
    """serde_json's ``invalid type`` wording for a JSON value (``JsonUnexpected``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{rust_float(value)}`"
    if isinstance(value, str):
        return f"string {rust_debug_str(value)}"
    if isinstance(value, list):
        return "sequence"
    return "map"


def rust_float(value: float) -> str:
    """A float as serde_json 1.0.149 prints it in errors (zmij 1.0.21's ``format``): the
    shortest round-trip digits, plain for decimal exponents -5 to 15 (``1.0``, ``0.00001``),
    else ``1e+20``/``1.5e-7``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return str(value)  # "inf" or "-inf", as Rust prints them
    sign = "-" if str(value).startswith("-") else ""
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0") or "0"
    # the decimal exponent of the first significant digit
    exponent = int(exp_text or 0) + len(whole) - 1
    if whole == "0":
        exponent = int(exp_text or 0) - (len(fraction) - len(fraction.lstrip("0"))) - 1
    # (no trailing zeros to strip: repr's shortest digits end in one only as "X.0", whose
    # zero the plain form below prints back and the exponent form never has)
    if digits == "0":
        return f"{sign}0.0"
    if -5 <= exponent <= 15:
        if exponent >= 0:
            # repr is plain here too: its integer digits, then a fraction of one digit or more
            return f"{sign}{digits[: exponent + 1]}.{digits[exponent + 1 :]}"
        return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
    body = digits[0] + (f".{digits[1:]}" if len(digits) > 1 else "")
    return f"{sign}{body}e{exponent:+d}"


def rust_debug_str(text: str) -> str:
    """``{:?}`` of a Rust ``&str`` (serde's ``string "…"`` wording)."""
    from .rust_debug import rust_debug_str as debug

    return debug(text)
