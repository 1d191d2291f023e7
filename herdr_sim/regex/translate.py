"""Translate Rust ``regex`` crate syntax into RE2 syntax, refusing what Rust refuses.

Herdr compiles clients' patterns (``pane.wait_for_output``, output subscriptions) and
detection manifests with Rust's ``regex`` crate; the simulator runs them on RE2, the other
linear-time engine with nearly the same syntax. Where the two differ, the pattern is
rewritten here:

* Rust's ``\\w``, ``\\d``, ``\\s`` are Unicode (RE2's are ASCII): ``\\d`` becomes ``\\p{Nd}``,
  ``\\w`` and ``\\s`` explicit ranges (:mod:`.unicode_sets`); under ``(?-u)`` they become
  Rust's ASCII sets.
* ``\\x{…}``, ``\\u{…}``, ``\\uXXXX``, ``\\U{…}``, ``\\UXXXXXXXX`` become ``\\x{…}``.
* ``\\p{…}`` long names and boolean properties (``Uppercase_Letter``, ``Alphabetic``,
  ``White_Space``) become ranges; scripts are left to RE2, which knows them.
* ``(?x)`` (RE2 has no verbose mode) is applied here: whitespace and ``#`` comments go.
* ``(?u)``/``(?-u)`` are tracked here; ``i``, ``m``, ``s``, ``U`` pass to RE2, whose flag
  groups have Rust's scope (to the end of the enclosing group, across ``|``).
* Stacked repetitions (``a**``, ``a*+``), which Rust reads as nested and RE2 refuses, are
  wrapped in a group.

What Rust refuses is refused here with :class:`RustRegexError`, whose text is the one the
crate prints (``regex parse error:`` with the span marked): look-around, backreferences,
unknown escapes, unbalanced groups and classes, a repetition with nothing to repeat.

Known differences (a pattern Herdr accepts that is refused or read otherwise here):
Unicode ``\\b``/``\\B`` are RE2's ASCII word boundaries; ``\\b{start}``, ``\\b{end}``,
``\\b{start-half}``, ``\\b{end-half}``, ``\\<``, ``\\>``, CRLF mode ``R``, nested classes and
class set operations (``&&``, ``--``, ``~~``) have no RE2 form and are refused; a count
above RE2's 1000 is written as siblings of at most 1000 (:meth:`_Translator.long_count`), but
nested counted repetitions whose counts multiply to more than 1000 (``(a{10}){200}``) are
refused by RE2; Unicode tables are Python's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .engine import EngineError, Re2Pattern
from .unicode_sets import (
    Ranges,
    category_ranges,
    class_body,
    complement,
    property_ranges,
    white_space_ranges,
    word_ranges,
)

__all__ = ["RustRegexError", "translate"]


class RustRegexError(ValueError):
    """A pattern Rust's ``regex`` crate refuses (or one the simulator cannot run).

    ``str()`` is the crate's own error text: ``regex parse error:`` with the pattern and a
    ``^`` mark under the offending span.
    """

    def __init__(self, pattern: str, position: int | None, width: int, message: str) -> None:
        self.pattern = pattern
        self.position = position
        self.width = width
        self.message = message
        super().__init__(self.display())

    def display(self) -> str:
        """The text of Rust's ``regex::Error`` (span marked for one-line patterns)."""
        if self.position is None:
            return self.message
        pattern, position = self.pattern, min(self.position, len(self.pattern))
        column = len(pattern[:position].split("\n")[-1])
        line = pattern.split("\n")[pattern[:position].count("\n")]
        marks = " " * column + "^" * max(1, min(self.width, len(line) - column))
        return f"regex parse error:\n    {line}\n    {marks}\nerror: {self.message}"


LOOK_AROUND = "look-around, including look-ahead and look-behind, is not supported"
UNSUPPORTED = "not supported by the simulator's linear-time regex engine (RE2)"

_ASCII_CLASS_NAMES = frozenset(
    {
        "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph",
        "lower", "print", "punct", "space", "upper", "word", "xdigit",
    }
)  # fmt: skip
_ASCII_SPACE: Ranges = ((0x09, 0x0D), (0x20, 0x20))
_RE2_FLAGS = frozenset("imsU")
#: Characters with a meaning somewhere in RE2 syntax (in or out of a class).
_SPECIAL = frozenset("\\.+*?()|[]{}^$-:&~#")
_SCRIPT_KEYS = ("sc", "script", "scx", "scriptextensions")
_GROUP_NAME = re.compile(r"P?<([_A-Za-z][_A-Za-z0-9.\[\]]*)>")
_FLAGS_SPEC = re.compile(r"([A-Za-z-]*)([:)])")
_COUNTED = re.compile(r"\{(\d*)(,(\d*))?\}")


#: RE2's largest repetition count (``kMaxRepeat``); Rust's is bounded only by its size limit
RE2_MAX_REPEAT = 1000


def _chunks(count: int) -> list[int]:
    """``count`` as parts of at most :data:`RE2_MAX_REPEAT` (none for 0)."""
    full, rest = divmod(count, RE2_MAX_REPEAT)
    return [RE2_MAX_REPEAT] * full + ([rest] if rest else [])


def _literal(char: str) -> str:
    """``char`` as an RE2 literal that means itself inside and outside a class."""
    if char.isprintable() and char not in _SPECIAL:
        return char
    return f"\\x{{{ord(char):X}}}"


@dataclass
class _Frame:
    """One open group: where it opened, its flags, and where its output starts."""

    flags: set[str]
    opened_at: int = 0
    out_start: int = 0


class _Translator:
    def __init__(self, pattern: str) -> None:
        self.src = pattern
        self.pos = 0
        self.out: list[str] = []
        self.frames: list[_Frame] = [_Frame(flags={"u"})]
        self.names: set[str] = set()
        #: index in ``out`` where the last repeatable item starts (None: nothing to repeat)
        self.atom: int | None = None
        self.atom_repeated = False

    # -- helpers -------------------------------------------------------
    def error(self, message: str, position: int | None = None, width: int = 1) -> RustRegexError:
        return RustRegexError(self.src, self.pos if position is None else position, width, message)

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.src[index] if index < len(self.src) else ""

    @property
    def flags(self) -> set[str]:
        return self.frames[-1].flags

    def emit_atom(self, text: str) -> None:
        self.atom = len(self.out)
        self.atom_repeated = False
        self.out.append(text)

    def skip_verbose(self) -> bool:
        """In ``x`` mode, step over whitespace and a ``#`` comment; True when it did."""
        if "x" not in self.flags:
            return False
        char = self.peek()
        if char.isspace():
            self.pos += 1
            return True
        if char == "#":
            end = self.src.find("\n", self.pos)
            self.pos = len(self.src) if end < 0 else end + 1
            return True
        return False

    # -- entry ---------------------------------------------------------
    def run(self) -> str:
        while self.pos < len(self.src):
            if not self.skip_verbose():
                self.step()
        if len(self.frames) != 1:
            raise self.error("unclosed group", self.frames[-1].opened_at)
        return "".join(self.out)

    def step(self) -> None:
        start = self.pos
        char = self.src[self.pos]
        self.pos += 1
        if char == "\\":
            self.escape_outside(start)
        elif char == "[":
            self.emit_atom(self.char_class(start))
        elif char == "(":
            self.open_group(start)
        elif char == ")":
            self.close_group(start)
        elif char == "|":
            self.out.append("|")
            self.atom = None
        elif char in "^$.":
            self.emit_atom(char)
        elif char in "*+?":
            self.repeat(start, char)
        elif char == "{":
            self.counted(start)
        else:
            self.emit_atom(_literal(char))

    # -- repetition ----------------------------------------------------
    def repeat(self, start: int, operator: str) -> None:
        if self.atom is None:
            raise self.error("repetition operator missing expression", start)
        if self.atom_repeated:  # Rust nests ``a**``; RE2 wants the group spelled out
            self.out[self.atom :] = ["(?:", *self.out[self.atom :], ")"]
        if self.peek() == "?":
            operator += "?"
            self.pos += 1
        self.out.append(operator)
        self.atom_repeated = True

    def counted(self, start: int) -> None:
        if self.atom is None:
            raise self.error("repetition operator missing expression", start)
        end = self.src.find("}", self.pos)
        if end < 0:
            raise self.error("unclosed counted repetition", start)
        body = self.src[start : end + 1]
        if "x" in self.flags:
            body = "".join(body.split())
        match = _COUNTED.fullmatch(body)
        if match is None or not match.group(1):
            raise self.error("repetition quantifier expects a valid decimal", start + 1)
        low = int(match.group(1))
        high = low if match.group(2) is None else (int(match.group(3)) if match.group(3) else None)
        if high is not None and low > high:
            raise self.error(
                "invalid repetition count range, the start must be <= the end",
                start,
                end + 1 - start,
            )
        self.pos = end + 1
        if max(low, high or 0) > RE2_MAX_REPEAT:
            self.long_count(low, high)
            return
        upper = "" if high is None else str(high)
        text = f"{{{low}}}" if match.group(2) is None else f"{{{low},{upper}}}"
        self.repeat(start, text)

    def long_count(self, low: int, high: int | None) -> None:
        """A count above RE2's 1000, which Rust accepts (its limit is the compiled size):
        the same language as siblings of at most 1000 each, ``X{2500}`` as
        ``X{1000}X{1000}X{500}`` (still linear; the size is checked by RE2's memory budget).
        Greediness is moot: the simulator only asks whether a pattern matches."""
        assert self.atom is not None
        if self.atom_repeated:
            self.out[self.atom :] = ["(?:", *self.out[self.atom :], ")"]
        if self.peek() == "?":
            self.pos += 1
        item = "(?:" + "".join(self.out[self.atom :]) + ")"
        parts = [f"{item}{{{size}}}" for size in _chunks(low)]
        if high is None:
            parts.append(f"{item}*")
        else:
            parts += [f"{item}{{0,{size}}}" for size in _chunks(high - low)]
        self.out[self.atom :] = ["(?:", *parts, ")"]
        self.atom_repeated = True

    # -- groups and flags ----------------------------------------------
    def open_group(self, start: int) -> None:
        parent = set(self.flags)
        if self.peek() != "?":
            self.push(start, parent, "(")
            return
        self.pos += 1
        rest = self.src[self.pos :]
        if rest.startswith(("=", "!", "<=", "<!")):
            # Rust's span covers the whole opener: `(?=`, `(?!`, `(?<=`, `(?<!`
            raise self.error(LOOK_AROUND, start, 4 if rest.startswith("<") else 3)
        named = _GROUP_NAME.match(rest)
        if named:
            name = named.group(1)
            if name in self.names:
                at = self.pos + named.start(1)
                raise self.error("duplicate capture group name", at, len(name))
            self.names.add(name)
            self.pos += named.end()
            self.push(start, parent, "(")
            return
        if rest.startswith(("<", "P<")):
            raise self.error("invalid capture group character", self.pos)
        spec = _FLAGS_SPEC.match(rest)
        if spec is None:
            raise self.error("unrecognized flag", self.pos)
        text, terminator = spec.group(1), spec.group(2)
        flags, re2_flags = self.apply_flags(parent, text)
        self.pos += spec.end()
        if terminator == ":":
            self.push(start, flags, f"(?{re2_flags}:" if re2_flags else "(?:")
            return
        if not text:
            raise self.error("empty flag group", start)
        self.frames[-1].flags = flags
        if re2_flags:
            self.out.append(f"(?{re2_flags})")
        self.atom = None  # Rust: a flag group is nothing to repeat

    def push(self, start: int, flags: set[str], opener: str) -> None:
        self.frames.append(_Frame(flags=flags, opened_at=start, out_start=len(self.out)))
        self.out.append(opener)
        self.atom = None

    def close_group(self, start: int) -> None:
        if len(self.frames) == 1:
            raise self.error("unopened group", start)
        frame = self.frames.pop()
        self.out.append(")")
        self.atom = frame.out_start
        self.atom_repeated = False

    def apply_flags(self, current: set[str], text: str) -> tuple[set[str], str]:
        """The new flag set and the RE2 flag text (``i``, ``m``, ``s``, ``U``) for ``text``."""
        flags = set(current)
        negate = False
        on: list[str] = []
        off: list[str] = []
        seen: set[str] = set()
        for offset, letter in enumerate(text):
            at = self.pos + offset
            if letter == "-":
                if negate:
                    raise self.error("flag negation operator repeated", at)
                negate = True
                continue
            if letter in seen:
                raise self.error("duplicate flag", at)
            seen.add(letter)
            if letter == "R":
                raise self.error(f"CRLF mode (R) is {UNSUPPORTED}", at)
            if letter not in "imsUxu":
                raise self.error("unrecognized flag", at)
            (flags.discard if negate else flags.add)(letter)
            if letter in _RE2_FLAGS:
                (off if negate else on).append(letter)
        if negate and text.endswith("-"):
            dangling = self.pos + len(text) - 1
            raise self.error("flag negation operator not followed by any flags", dangling)
        return flags, "".join(on) + ("-" + "".join(off) if off else "")

    # -- escapes -------------------------------------------------------
    def escape_outside(self, start: int) -> None:
        letter = self.peek()
        if letter in ("A", "z"):
            self.pos += 1
            self.emit_atom("\\" + letter)
            return
        if letter in ("b", "B"):
            self.pos += 1
            if letter == "b" and self.peek() == "{":
                raise self.error(f"\\b{{…}} is {UNSUPPORTED}", start, 2)
            self.emit_atom("\\" + letter)
            return
        if letter in ("<", ">"):
            raise self.error(f"\\{letter} is {UNSUPPORTED}", start, 2)
        self.emit_atom(self.escape(start, in_class=False))

    def escape(self, start: int, *, in_class: bool) -> str:
        """The RE2 text for the escape starting at ``start`` (the backslash)."""
        letter = self.peek()
        if not letter:
            raise self.error(
                "incomplete escape sequence, reached end of pattern prematurely", start
            )
        self.pos += 1
        if letter in "xuU":
            return f"\\x{{{self.read_hex(start, letter):X}}}"
        if letter in "pP":
            return self.property(start, negated=letter == "P", in_class=in_class)
        if letter in "dDsSwW":
            return self.perl_class(letter, in_class=in_class)
        if letter in "ntrfva":
            return "\\" + letter
        if letter.isdigit():
            raise self.error("backreferences are not supported", start, 2)
        if letter in "AzbB<>" and in_class:
            raise self.error("invalid escape sequence found in character class", start, 2)
        if letter.isascii() and not letter.isalnum():
            return _literal(letter)
        raise self.error("unrecognized escape sequence", start, 2)

    def read_hex(self, start: int, letter: str) -> int:
        if self.peek() == "{":
            end = self.src.find("}", self.pos)
            if end < 0:
                raise self.error("unclosed hexadecimal literal", start)
            digits = self.src[self.pos + 1 : end]
            self.pos = end + 1
            if not digits:
                raise self.error("hexadecimal literal empty", start)
        else:
            width = {"x": 2, "u": 4, "U": 8}[letter]
            digits = self.src[self.pos : self.pos + width]
            self.pos += len(digits)
            if len(digits) != width:
                raise self.error(
                    "incomplete escape sequence, reached end of pattern prematurely", start
                )
        if not re.fullmatch(r"[0-9A-Fa-f]{1,8}", digits):
            raise self.error("invalid hexadecimal digit", start, self.pos - start)
        value = int(digits, 16)
        if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
            raise self.error(
                "hexadecimal literal is not a Unicode scalar value", start, self.pos - start
            )
        return value

    def property(self, start: int, *, negated: bool, in_class: bool) -> str:
        if self.peek() == "{":
            end = self.src.find("}", self.pos)
            if end < 0:
                raise self.error("unclosed Unicode class literal", start)
            name = self.src[self.pos + 1 : end]
            self.pos = end + 1
        else:
            name = self.peek()
            if not name:
                raise self.error(
                    "incomplete escape sequence, reached end of pattern prematurely", start
                )
            self.pos += 1
        negated ^= name.startswith("^")
        key, _, value = name.lstrip("^").rpartition("=")
        key = re.sub(r"[\s_\-]", "", key).lower()
        if key and key not in ("gc", "generalcategory", *_SCRIPT_KEYS):
            raise self.error("Unicode property not found", start, self.pos - start)
        ranges = None if key in _SCRIPT_KEYS else property_ranges(value)
        if ranges is not None:
            return self.ranges(ranges, negated=negated, in_class=in_class)
        # A script: RE2 knows them under their canonical names.
        script = value.strip()
        spelled = f"\\{'P' if negated else 'p'}{{{script}}}"
        try:
            Re2Pattern(spelled)
        except EngineError:
            raise self.error("Unicode property not found", start, self.pos - start) from None
        return spelled

    def perl_class(self, letter: str, *, in_class: bool) -> str:
        negated = letter.isupper()
        kind = letter.lower()
        if "u" not in self.flags:
            if kind == "s":  # Rust's ASCII \s has \v; RE2's does not
                return self.ranges(_ASCII_SPACE, negated=negated, in_class=in_class)
            return "\\" + letter  # RE2's \d and \w are Rust's ASCII ones
        if kind == "d":
            return self.ranges(category_ranges(("Nd",)), negated=negated, in_class=in_class)
        ranges = word_ranges() if kind == "w" else white_space_ranges()
        return self.ranges(ranges, negated=negated, in_class=in_class)

    @staticmethod
    def ranges(ranges: Ranges, *, negated: bool, in_class: bool) -> str:
        if in_class:
            return class_body(complement(ranges) if negated else ranges)
        return f"[{'^' if negated else ''}{class_body(ranges)}]"

    # -- classes -------------------------------------------------------
    def char_class(self, start: int) -> str:
        parts = ["["]
        if self.peek() == "^":
            parts.append("^")
            self.pos += 1
        first = True
        previous: str | None = None  # the last single character, which may open a range
        previous_at = start
        while True:
            if self.skip_verbose():
                continue
            char = self.peek()
            if not char:
                raise self.error("unclosed character class", start)
            if char == "]" and not first:
                self.pos += 1
                break
            first = False
            if char == "[":
                posix = re.match(r"\[:(\^?)([a-z]+):\]", self.src[self.pos :])
                if posix is None:
                    raise self.error(f"nested classes are {UNSUPPORTED}", self.pos)
                if posix.group(2) not in _ASCII_CLASS_NAMES:
                    raise self.error("invalid ASCII class name", self.pos, posix.end())
                parts.append(posix.group(0))
                self.pos += posix.end()
                previous = None
                continue
            if self.src.startswith(("&&", "--", "~~"), self.pos):
                raise self.error(f"class set operations are {UNSUPPORTED}", self.pos, 2)
            if char == "-" and previous is not None and self.range_follows():
                range_at = previous_at
                high = self.class_char()
                if high is None:
                    raise self.error("invalid range boundary, must be a literal", self.pos - 1)
                if ord(high) < ord(previous):
                    raise self.error(
                        "invalid character class range, the start must be <= the end",
                        range_at,
                        self.pos - range_at,
                    )
                parts.append("-" + _literal(high))
                previous = None
                continue
            item_start = self.pos
            single = self.class_char()
            if single is None:
                self.pos = item_start + 1
                parts.append(self.escape(item_start, in_class=True))
                previous = None
            else:
                parts.append(_literal(single))
                previous, previous_at = single, item_start
        parts.append("]")
        return "".join(parts)

    def range_follows(self) -> bool:
        """At a ``-`` after a single character: step past it (and, in ``x`` mode, the
        whitespace after it) when a range's upper bound follows; a ``-`` before ``]`` is
        a literal and stays unread."""
        dash = self.pos
        self.pos += 1
        while self.skip_verbose():
            pass
        if self.peek() in ("]", ""):
            self.pos = dash
            return False
        return True

    def class_char(self) -> str | None:
        """Read one class item that is a single character; None (nothing read) otherwise."""
        char = self.peek()
        if char != "\\":
            self.pos += 1
            return char
        letter = self.peek(1)
        if letter in "xuU" and letter:
            start = self.pos
            self.pos += 2
            return chr(self.read_hex(start, letter))
        if letter in "ntrfva" and letter:
            self.pos += 2
            return {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}[letter]
        if letter and letter.isascii() and not letter.isalnum() and letter not in "<>":
            self.pos += 2
            return letter
        return None


@lru_cache(maxsize=256)
def translate(pattern: str) -> str:
    """The RE2 spelling of a Rust ``regex`` pattern (:class:`RustRegexError` if refused)."""
    return _Translator(pattern).run()
