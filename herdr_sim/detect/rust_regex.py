"""Translate Rust ``regex`` crate syntax into Python :mod:`re` syntax.

Herdr's detection manifests are written for Rust's ``regex`` crate.  Most of
that syntax means the same in Python, but not all of it:

* ``\\x{2733}``, ``\\u{fe0f}``, ``\\U{1F600}`` (braced code points) do not exist
  in Python; they become ``\\U0000xxxx``.
* ``$`` outside multi-line mode matches only at the very end of the text in
  Rust, while Python's ``$`` also matches before a trailing newline; it
  becomes ``\\Z``.  ``\\z`` (Rust's end of text) also becomes ``\\Z``.
* Flags set in the middle of a pattern (``a(?i)b``) apply to the rest of the
  enclosing group in Rust, but are an error in Python 3.11; they become scoped
  groups (``a(?i:b)``), reopened after every ``|`` of that group.
* ``(?-u:…)`` (ASCII-only classes) becomes ``(?a:…)``; ``(?<name>…)`` becomes
  ``(?P<name>…)``.
* ``\\p{…}`` / ``\\P{…}`` Unicode classes (general categories such as ``L`` or
  ``Uppercase_Letter``, and ``Alphabetic``, ``White_Space``) and ASCII classes
  such as ``[[:alpha:]]`` become explicit code-point ranges.
* ``\\s`` / ``\\S`` become explicit Unicode ``White_Space`` classes (Python's
  ``\\s`` also matches U+001C..U+001F); ``\\S`` inside a class stays Python's.
* ``\\b{start}``, ``\\b{end}``, ``\\<``, ``\\>`` become look-arounds.

What Rust rejects is rejected here too (with :class:`RustRegexError`) where
that is easy to see: look-around, back-references, octal escapes, unknown
letter escapes, surrogate code points.  Syntax Python cannot express
(swap-greed ``U``, CRLF ``R``, nested classes and class set operations,
unknown Unicode properties) is rejected as unsupported.

Known approximations: ``Alphabetic`` is computed as the general categories
``L*`` and ``Nl`` (Rust also counts ``Other_Alphabetic`` marks), and Unicode
tables are Python's (``unicodedata``), not the crate's.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from itertools import chain

from herdr_sim.protocol import RUST_WHITESPACE

__all__ = ["RustRegexError", "compile_rust_regex", "translate"]


class RustRegexError(ValueError):
    """A pattern Rust's ``regex`` crate rejects, or one that cannot be translated."""


_ASCII_CLASSES: dict[str, str] = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\x0b\\x0c\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}

_GENERAL_CATEGORY_NAMES: dict[str, tuple[str, ...]] = {
    "letter": ("L",),
    "casedletter": ("Lu", "Ll", "Lt"),
    "uppercaseletter": ("Lu",),
    "lowercaseletter": ("Ll",),
    "titlecaseletter": ("Lt",),
    "modifierletter": ("Lm",),
    "otherletter": ("Lo",),
    "mark": ("M",),
    "nonspacingmark": ("Mn",),
    "spacingmark": ("Mc",),
    "enclosingmark": ("Me",),
    "number": ("N",),
    "decimalnumber": ("Nd",),
    "digit": ("Nd",),
    "letternumber": ("Nl",),
    "othernumber": ("No",),
    "punctuation": ("P",),
    "connectorpunctuation": ("Pc",),
    "dashpunctuation": ("Pd",),
    "openpunctuation": ("Ps",),
    "closepunctuation": ("Pe",),
    "initialpunctuation": ("Pi",),
    "finalpunctuation": ("Pf",),
    "otherpunctuation": ("Po",),
    "symbol": ("S",),
    "mathsymbol": ("Sm",),
    "currencysymbol": ("Sc",),
    "modifiersymbol": ("Sk",),
    "othersymbol": ("So",),
    "separator": ("Z",),
    "spaceseparator": ("Zs",),
    "lineseparator": ("Zl",),
    "paragraphseparator": ("Zp",),
    "other": ("C",),
    "control": ("Cc",),
    "format": ("Cf",),
    "privateuse": ("Co",),
    "unassigned": ("Cn",),
    "alphabetic": ("L", "Nl"),
    "alpha": ("L", "Nl"),
}

_KNOWN_CATEGORIES = frozenset(
    {
        "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No",
        "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So",
        "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn",
    }
)  # fmt: skip


def _hex(cp: int) -> str:
    return f"\\U{cp:08x}"


_WS_BODY = "".join(_hex(ord(char)) for char in RUST_WHITESPACE)


@cache
def _category_ranges(categories: tuple[str, ...]) -> str:
    """Python class body covering every code point in the given general categories."""
    wanted = tuple(categories)

    def included(cp: int) -> bool:
        category = unicodedata.category(chr(cp))
        return any(category.startswith(prefix) for prefix in wanted)

    # Planes 4-13 and most of 14 hold no assigned code points in any Unicode
    # version Python ships, so only "other" categories need the full scan.
    full = any(prefix.startswith("C") for prefix in wanted)
    return _ranges_of(included, full=full)


@cache
def _white_space_ranges() -> str:
    return _ranges_of(lambda cp: chr(cp).isspace() and not 0x1C <= cp < 0x20)


def _ranges_of(included: Callable[[int], bool], *, full: bool = False) -> str:
    parts: list[str] = []
    start: int | None = None
    scanned: Iterable[int] = (
        range(sys.maxunicode + 2)
        if full
        else chain(range(0x40000), [0x40000], range(0xE0000, 0xE1000), [0xE1000])
    )
    for cp in scanned:
        in_gap = cp in (0x40000, 0xE1000) and not full
        inside = not in_gap and cp <= sys.maxunicode and not 0xD800 <= cp <= 0xDFFF and included(cp)
        if inside and start is None:
            start = cp
        elif not inside and start is not None:
            end = cp - 1
            parts.append(_hex(start) if start == end else f"{_hex(start)}-{_hex(end)}")
            start = None
    return "".join(parts)


def _property_class_body(name: str) -> str:
    """Class body (no brackets) for a ``\\p{name}`` property."""
    loose = re.sub(r"[\s_\-]", "", name).lower()
    if loose in ("whitespace", "wspace", "space"):
        return _white_space_ranges()
    if loose in ("any",):
        return f"{_hex(0)}-{_hex(sys.maxunicode)}"
    if loose in ("ascii",):
        return "\\x00-\\x7f"
    for category in _KNOWN_CATEGORIES | {"L", "M", "N", "P", "S", "Z", "C", "LC"}:
        if loose == category.lower():
            return _category_ranges(("Lu", "Ll", "Lt") if category == "LC" else (category,))
    categories = _GENERAL_CATEGORY_NAMES.get(loose)
    if categories is None:
        raise RustRegexError(f"unsupported Unicode property {name!r}")
    return _category_ranges(categories)


@dataclass
class _Frame:
    """One open group: its effective flags and the flag wrappers opened inside it."""

    flags: set[str]
    openers: list[str] = field(default_factory=list)


class _Translator:
    def __init__(self, pattern: str) -> None:
        self.src = pattern
        self.pos = 0
        self.out: list[str] = []
        self.frames: list[_Frame] = [_Frame(flags={"u"})]

    # -- helpers -------------------------------------------------------
    def error(self, message: str) -> RustRegexError:
        return RustRegexError(f"{message} at offset {self.pos} in {self.src!r}")

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.src[index] if index < len(self.src) else ""

    @property
    def frame(self) -> _Frame:
        return self.frames[-1]

    # -- entry ---------------------------------------------------------
    def run(self) -> str:
        while self.pos < len(self.src):
            self.step()
        if len(self.frames) != 1:
            raise self.error("unclosed group")
        self.out.append(")" * len(self.frame.openers))
        return "".join(self.out)

    def step(self) -> None:
        char = self.src[self.pos]
        flags = self.frame.flags
        if "x" in flags and char == "#":
            end = self.src.find("\n", self.pos)
            end = len(self.src) if end < 0 else end
            self.out.append(self.src[self.pos : end])
            self.pos = end
            return
        self.pos += 1
        if char == "\\":
            self.out.append(self.escape(in_class=False))
        elif char == "[":
            self.out.append(self.char_class())
        elif char == "(":
            self.open_group()
        elif char == ")":
            if len(self.frames) == 1:
                raise self.error("unopened group")
            closed = self.frames.pop()
            self.out.append(")" * len(closed.openers) + ")")
        elif char == "|":
            openers = self.frame.openers
            self.out.append(")" * len(openers) + "|" + "".join(openers))
        elif char == "$":
            self.out.append("$" if "m" in flags else "\\Z")
        else:
            self.out.append(char)

    # -- groups and flags ----------------------------------------------
    def open_group(self) -> None:
        parent_flags = set(self.frame.flags)
        if self.peek() != "?":
            self.frames.append(_Frame(flags=parent_flags))
            self.out.append("(")
            return
        self.pos += 1
        rest = self.src[self.pos :]
        if rest.startswith(("=", "!", "<=", "<!")):
            raise self.error("look-around is not supported")
        if rest.startswith("#"):
            raise self.error("comment groups are not supported")
        named = re.match(r"P?<([A-Za-z_][A-Za-z0-9_]*)>", rest)
        if named:
            self.pos += named.end()
            self.frames.append(_Frame(flags=parent_flags))
            self.out.append(f"(?P<{named.group(1)}>")
            return
        spec = re.match(r"([A-Za-z-]*)([:)])", rest)
        if spec is None:
            raise self.error("invalid group")
        self.pos += spec.end()
        text, terminator = spec.group(1), spec.group(2)
        if not text and terminator == ")":
            raise self.error("empty flag group")
        new_flags, python_flags = self.apply_flags(parent_flags, text)
        opener = f"(?{python_flags}:" if python_flags else "(?:"
        if terminator == ":":
            self.frames.append(_Frame(flags=new_flags))
            self.out.append(opener)
        else:
            self.frame.flags = new_flags
            self.frame.openers.append(opener)
            self.out.append(opener)

    def apply_flags(self, current: set[str], text: str) -> tuple[set[str], str]:
        flags = set(current)
        negate = False
        on: list[str] = []
        off: list[str] = []
        seen: set[str] = set()
        for letter in text:
            if letter == "-":
                if negate:
                    raise self.error("repeated negation in flags")
                negate = True
                continue
            if letter in seen:
                raise self.error(f"duplicate flag {letter!r}")
            seen.add(letter)
            if letter in ("U", "R"):
                raise self.error(f"flag {letter!r} is not supported")
            if letter not in ("i", "m", "s", "x", "u"):
                raise self.error(f"unrecognized flag {letter!r}")
            if negate:
                flags.discard(letter)
                if letter == "u":
                    on.append("a")
                else:
                    off.append(letter)
            else:
                flags.add(letter)
                if letter != "u":
                    on.append(letter)
        if negate and text.endswith("-"):
            raise self.error("dangling flag negation")
        python = "".join(on) + ("-" + "".join(off) if off else "")
        return flags, python

    # -- escapes -------------------------------------------------------
    def read_hex(self, letter: str) -> int:
        if self.peek() == "{":
            end = self.src.find("}", self.pos)
            if end < 0:
                raise self.error("unclosed hex escape")
            digits = self.src[self.pos + 1 : end]
            self.pos = end + 1
            if not 1 <= len(digits) <= 8:
                raise self.error("invalid hex escape")
        else:
            width = {"x": 2, "u": 4, "U": 8}[letter]
            digits = self.src[self.pos : self.pos + width]
            if len(digits) != width:
                raise self.error("invalid hex escape")
            self.pos += width
        if not re.fullmatch(r"[0-9A-Fa-f]+", digits):
            raise self.error("invalid hex escape")
        value = int(digits, 16)
        if value > sys.maxunicode or 0xD800 <= value <= 0xDFFF:
            raise self.error("invalid Unicode scalar value")
        return value

    def read_property_name(self) -> str:
        if self.peek() == "{":
            end = self.src.find("}", self.pos)
            if end < 0:
                raise self.error("unclosed Unicode class")
            name = self.src[self.pos + 1 : end]
            self.pos = end + 1
            return name
        name = self.peek()
        if not name:
            raise self.error("incomplete Unicode class")
        self.pos += 1
        return name

    def escape(self, *, in_class: bool) -> str:
        letter = self.peek()
        if not letter:
            raise self.error("incomplete escape")
        self.pos += 1
        if letter in "xuU":
            return _hex(self.read_hex(letter))
        if letter in "pP":
            body = _property_class_body(self.read_property_name())
            if in_class:
                if letter == "P":
                    raise self.error("negated Unicode class inside a class is not supported")
                return body
            return f"[^{body}]" if letter == "P" else f"[{body}]"
        if letter in "sS" and "u" in self.frame.flags:
            # Rust's Unicode \s is White_Space; Python's also has U+001C..U+001F.
            if letter == "s":
                return _WS_BODY if in_class else f"[{_WS_BODY}]"
            if not in_class:
                return f"[^{_WS_BODY}]"
        if letter in "dDsSwW":
            return "\\" + letter
        if letter in "ntrfva":
            return "\\" + letter
        if letter.isdigit():
            raise self.error("back-references and octal escapes are not supported")
        if in_class:
            if letter.isascii() and letter.isalpha():
                raise self.error(f"unrecognized escape \\{letter} in class")
            return "\\" + letter
        if letter == "z":
            return "\\Z"
        if letter == "A":
            return "\\A"
        if letter in "bB":
            if letter == "b" and self.peek() == "{":
                end = self.src.find("}", self.pos)
                kind = self.src[self.pos + 1 : end] if end >= 0 else ""
                boundary = {
                    "start": "\\b(?=\\w)",
                    "end": "\\b(?<=\\w)",
                    "start-half": "(?<!\\w)",
                    "end-half": "(?!\\w)",
                }.get(kind)
                if boundary is None:
                    raise self.error("invalid word boundary")
                self.pos = end + 1
                return boundary
            return "\\" + letter
        if letter == "<":
            return "\\b(?=\\w)"
        if letter == ">":
            return "\\b(?<=\\w)"
        if letter.isascii() and letter.isalpha():
            raise self.error(f"unrecognized escape \\{letter}")
        if not letter.isascii():
            raise self.error("escaping a non-ASCII character is not allowed")
        return "\\" + letter

    # -- classes -------------------------------------------------------
    def char_class(self) -> str:
        parts = ["["]
        if self.peek() == "^":
            parts.append("^")
            self.pos += 1
        first = True
        prev_single = False
        while True:
            char = self.peek()
            if not char:
                raise self.error("unclosed character class")
            if char == "]" and not first:
                self.pos += 1
                break
            first = False
            if char == "[":
                posix = re.match(r"\[:(\^?)([a-z]+):\]", self.src[self.pos :])
                if posix is None:
                    raise self.error("nested classes are not supported")
                if posix.group(1):
                    raise self.error("negated ASCII classes are not supported")
                body = _ASCII_CLASSES.get(posix.group(2))
                if body is None:
                    raise self.error(f"unknown ASCII class {posix.group(2)!r}")
                self.pos += posix.end()
                parts.append(body)
                prev_single = False
                continue
            two = self.src[self.pos : self.pos + 2]
            if two in ("&&", "--", "~~"):
                raise self.error("class set operations are not supported")
            if char == "-" and prev_single and self.peek(1) not in ("]", ""):
                parts.append("-")
                self.pos += 1
                prev_single = False
                continue
            self.pos += 1
            if char == "\\":
                item = self.escape(in_class=True)
                parts.append(item)
                prev_single = (item.startswith("\\U") and len(item) == 10) or (
                    len(item) == 2 and item[1] not in "dDsSwW"
                )
                continue
            parts.append("\\" + char if char in "[]\\^-&~|" else char)
            prev_single = True
        parts.append("]")
        return "".join(parts)


def translate(pattern: str) -> str:
    """Return the Python :mod:`re` equivalent of a Rust ``regex`` pattern."""
    return _Translator(pattern).run()


@lru_cache(maxsize=4096)
def compile_rust_regex(pattern: str) -> re.Pattern[str]:
    """Translate and compile a Rust pattern; errors are :class:`RustRegexError`."""
    translated = translate(pattern)
    try:
        return re.compile(translated)
    except re.error as exc:
        raise RustRegexError(f"invalid pattern {pattern!r}: {exc}") from exc
