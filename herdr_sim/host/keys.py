"""Herdr key-combo parsing and legacy terminal key encoding.

``pane.send_keys``, ``pane.send_input`` (``keys``) and ``agent.send_keys`` accept key
names such as ``"Enter"``, ``"ctrl+c"`` or ``"C-c"``. Real Herdr parses every name with
its keybinding parser (``src/config/keybinds.rs``, ``parse_key_combo``) and rejects the
whole request with ``invalid_key`` before writing anything if one name is bad, so
:func:`encode_keys` validates all keys first and only then encodes.

The encoding follows what Herdr writes to a pane whose program has not enabled an
enhanced keyboard protocol (kitty keyboard flags 0, modifyOtherKeys off):

* character keys go through Herdr's own legacy encoder (``src/input/encode.rs``);
* every other key (Enter, Tab, Backspace, Escape, arrows, F1-F12) goes through
  libghostty's key encoder, whose legacy table (``input/function_keys.zig``) produces
  xterm "PC-style" sequences, ``CSI 27;<mod>;<key>~`` for modified Enter/Tab/Escape,
  and honours application cursor mode (DECCKM) for unmodified arrows;
* Ctrl+Tab alone is special-cased by Herdr to a plain ``\\t``.

The simulator never switches to the kitty keyboard protocol: it does not answer the
``CSI ? u`` query (see :mod:`herdr_sim.terminal`), so well-behaved programs stay in legacy
mode and these bytes are what real Herdr would send them.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "FunctionKey",
    "InvalidKeyError",
    "KeyCode",
    "KeyCombo",
    "Modifiers",
    "NamedKey",
    "encode_key",
    "encode_keys",
    "encode_text",
    "parse_key",
]


class InvalidKeyError(ValueError):
    """A key name Herdr would answer with the ``invalid_key`` error.

    ``key`` keeps the string exactly as the client sent it, because Herdr's error
    message quotes the offending key verbatim.
    """

    def __init__(self, key: str) -> None:
        super().__init__(f"invalid key: {key!r}")
        self.key = key


class Modifiers(enum.Flag):
    """Modifier keys of a combo (crossterm's ``KeyModifiers`` subset Herdr parses)."""

    NONE = 0
    SHIFT = enum.auto()
    CONTROL = enum.auto()
    ALT = enum.auto()
    SUPER = enum.auto()
    HYPER = enum.auto()


class NamedKey(enum.Enum):
    """Non-character keys Herdr's parser can produce (``BACKTAB`` is shift+tab)."""

    ENTER = "enter"
    ESCAPE = "escape"
    TAB = "tab"
    BACKTAB = "backtab"
    BACKSPACE = "backspace"
    LEFT = "left"
    RIGHT = "right"
    UP = "up"
    DOWN = "down"


@dataclass(frozen=True)
class FunctionKey:
    """``f<N>`` with N in 0..255 (Herdr parses the number as a ``u8``)."""

    number: int


#: A key: a named key, a function key, or exactly one character.
KeyCode = NamedKey | FunctionKey | str


@dataclass(frozen=True)
class KeyCombo:
    """One parsed key: the key itself plus its modifiers."""

    code: KeyCode
    modifiers: Modifiers = Modifiers.NONE


# Rust's str::trim removes characters with the Unicode White_Space property; Python's
# str.strip() also removes U+001C..U+001F, so spell the Rust set out.
_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

_ALIASES = {"C-c": "ctrl+c", "c-c": "ctrl+c", "+": "plus"}

_MODIFIER_NAMES = {
    "ctrl": Modifiers.CONTROL,
    "control": Modifiers.CONTROL,
    "shift": Modifiers.SHIFT,
    "alt": Modifiers.ALT,
    "option": Modifiers.ALT,
    "meta": Modifiers.ALT,
    "cmd": Modifiers.SUPER,
    "command": Modifiers.SUPER,
    "super": Modifiers.SUPER,
    "hyper": Modifiers.HYPER,
}

_NAMED_KEYS: dict[str, KeyCode] = {
    "space": " ",
    "enter": NamedKey.ENTER,
    "return": NamedKey.ENTER,
    "esc": NamedKey.ESCAPE,
    "escape": NamedKey.ESCAPE,
    "tab": NamedKey.TAB,
    "backspace": NamedKey.BACKSPACE,
    "bs": NamedKey.BACKSPACE,
    "left": NamedKey.LEFT,
    "right": NamedKey.RIGHT,
    "up": NamedKey.UP,
    "down": NamedKey.DOWN,
    "minus": "-",
    "comma": ",",
    "period": ".",
    "slash": "/",
    "backslash": "\\",
    "quote": "'",
    "double_quote": '"',
    "double-quote": '"',
    "semicolon": ";",
    "colon": ":",
    "percent": "%",
    "ampersand": "&",
    "backtick": "`",
    "plus": "+",
}

_FUNCTION_KEY = re.compile(r"f([0-9]+)")
_SURROGATE = re.compile("[\ud800-\udfff]")


def parse_key(combo: str) -> KeyCombo:
    """Parse one Herdr key name, raising :class:`InvalidKeyError` if Herdr would reject it.

    Mirrors ``parse_key_combo``: ``+``-separated tokens, each trimmed; empty tokens, a
    second non-modifier or no key at all are errors; an uppercase ASCII letter implies
    Shift; ``shift+tab`` becomes BackTab. ``prefix+…`` is rejected because ``prefix`` is
    neither a modifier nor a key.
    """
    if _SURROGATE.search(combo):
        # JSON allows lone surrogates but Rust strings cannot hold them; Herdr never
        # gets this far with such a key, and they cannot be encoded to UTF-8 anyway.
        raise InvalidKeyError(combo)
    text = combo.strip(_WHITESPACE)
    text = _ALIASES.get(text, text)
    modifiers = Modifiers.NONE
    key: str | None = None
    for part in text.split("+"):
        token = part.strip(_WHITESPACE)
        if not token:
            raise InvalidKeyError(combo)
        modifier = _MODIFIER_NAMES.get(token.lower())
        if modifier is not None:
            modifiers |= modifier
        elif key is not None:
            raise InvalidKeyError(combo)
        else:
            key = token
    if key is None:
        raise InvalidKeyError(combo)

    lower = key.lower()
    code: KeyCode
    if lower == "tab" and Modifiers.SHIFT in modifiers:
        code = NamedKey.BACKTAB
    elif lower in _NAMED_KEYS:
        code = _NAMED_KEYS[lower]
    elif len(key) == 1:
        if "A" <= key <= "Z":
            modifiers |= Modifiers.SHIFT
            code = key.lower()
        else:
            code = key
    elif (match := _FUNCTION_KEY.fullmatch(lower)) is not None and int(match[1]) <= 255:
        code = FunctionKey(int(match[1]))
    else:
        raise InvalidKeyError(combo)

    if code is NamedKey.BACKTAB:
        modifiers &= ~Modifiers.SHIFT
    return KeyCombo(code, modifiers)


def encode_keys(keys: Sequence[str], *, application_cursor: bool = False) -> bytes:
    """Validate every key, then return their concatenated encodings.

    Raises :class:`InvalidKeyError` for the first bad key before encoding anything, so a
    caller that writes the result writes all keys or none (as Herdr does).
    """
    combos = [parse_key(key) for key in keys]
    return b"".join(encode_key(combo, application_cursor=application_cursor) for combo in combos)


def encode_text(text: str, *, bracketed_paste: bool) -> bytes:
    """Encode literal text the way Herdr's ``send_text`` does.

    Herdr wraps the text in bracketed-paste markers when the pane's program has turned
    DECSET 2004 on, so that shells and editors treat it as pasted, not typed.
    """
    data = text.encode("utf-8", "surrogatepass")
    if bracketed_paste:
        return b"\x1b[200~" + data + b"\x1b[201~"
    return data


def encode_key(combo: KeyCombo, *, application_cursor: bool = False) -> bytes:
    """Encode one parsed key for a pane in legacy keyboard mode."""
    code = combo.code
    if isinstance(code, str):
        return _encode_char(code, combo.modifiers)
    if isinstance(code, FunctionKey) and not 1 <= code.number <= 12:
        return _encode_unmapped_function_key(combo.modifiers)
    if code is NamedKey.TAB and combo.modifiers == Modifiers.CONTROL:
        # Herdr bypasses libghostty for exactly Ctrl+Tab in legacy mode.
        return b"\t"
    return _encode_pc_style(code, combo.modifiers, application_cursor=application_cursor)


# -- character keys: Herdr's own legacy encoder ------------------------------------------

_SHIFTED_PUNCTUATION = frozenset('!@#$%^&*()_+{}|:"<>?~')

_CTRL_SYMBOLS = {
    " ": 0,
    "@": 0,
    "2": 0,
    "[": 27,
    "3": 27,
    "\\": 28,
    "4": 28,
    "]": 29,
    "5": 29,
    "^": 30,
    "6": 30,
    "_": 31,
    "/": 31,
    "7": 31,
    "-": 31,
}


def _shifted_char(char: str) -> str | None:
    """The character Shift+<char> types, when Herdr can tell without a keyboard layout."""
    if "a" <= char <= "z":
        return char.upper()
    if "A" <= char <= "Z" or char in _SHIFTED_PUNCTUATION:
        return char
    return None


def _encode_char(char: str, modifiers: Modifiers) -> bytes:
    if modifiers == Modifiers.NONE:
        return char.encode("utf-8")
    if modifiers == Modifiers.SHIFT:
        return (_shifted_char(char) or char).encode("utf-8")
    prefix = b""
    if Modifiers.ALT in modifiers:
        prefix = b"\x1b"
        modifiers &= ~Modifiers.ALT
    if Modifiers.CONTROL in modifiers:
        upper = char.upper() if char.isascii() else char
        if "A" <= upper <= "Z":
            return prefix + bytes([ord(upper) - 64])
        if upper in _CTRL_SYMBOLS:
            return prefix + bytes([_CTRL_SYMBOLS[upper]])
        # Herdr casts the char to a byte here (`ch as u8`), keeping the low 8 bits.
        return prefix + bytes([ord(char) & 0xFF])
    if modifiers == Modifiers.SHIFT:
        char = _shifted_char(char) or char
    # Super and Hyper do not change a legacy character key.
    return prefix + char.encode("utf-8")


def _encode_unmapped_function_key(modifiers: Modifiers) -> bytes:
    """F0 and F13-F255: libghostty has no key for them and Herdr's fallback has no bytes.

    The fallback still adds the Alt ESC prefix before the (empty) key, so alt+f13 sends a
    lone ESC, exactly as Herdr does.
    """
    return b"\x1b" if Modifiers.ALT in modifiers else b""


# -- everything else: libghostty's legacy "PC-style" table ---------------------------------

_ARROW_FINALS = {
    NamedKey.UP: "A",
    NamedKey.DOWN: "B",
    NamedKey.RIGHT: "C",
    NamedKey.LEFT: "D",
}

# F1-F12: (sequence with modifier, sequence without). libghostty sends modified F3 as
# CSI 13;<m>~ rather than CSI 1;<m>R, because the latter collides with a cursor report.
_FUNCTION_SEQUENCES = {
    1: ("\x1b[1;{}P", "\x1bOP"),
    2: ("\x1b[1;{}Q", "\x1bOQ"),
    3: ("\x1b[13;{}~", "\x1bOR"),
    4: ("\x1b[1;{}S", "\x1bOS"),
    5: ("\x1b[15;{}~", "\x1b[15~"),
    6: ("\x1b[17;{}~", "\x1b[17~"),
    7: ("\x1b[18;{}~", "\x1b[18~"),
    8: ("\x1b[19;{}~", "\x1b[19~"),
    9: ("\x1b[20;{}~", "\x1b[20~"),
    10: ("\x1b[21;{}~", "\x1b[21~"),
    11: ("\x1b[23;{}~", "\x1b[23~"),
    12: ("\x1b[24;{}~", "\x1b[24~"),
}

_SHIFT, _ALT, _CTRL, _SUPER = 1, 2, 4, 8

# Backspace rows of the table that apply while modifyOtherKeys is not in state 2; any
# other modifier set falls through to the catch-all DEL.
_BACKSPACE = {
    _SHIFT: "\x7f",
    _ALT: "\x1b\x7f",
    _ALT | _SHIFT: "\x1b\x7f",
    _CTRL | _SHIFT: "\x08",
    _ALT | _CTRL: "\x1b\x08",
    _SUPER: "\x7f",
    _SUPER | _SHIFT: "\x7f",
    _ALT | _SUPER: "\x1b\x7f",
    _ALT | _SUPER | _SHIFT: "\x1b\x7f",
    _SUPER | _CTRL: "\x08",
    _SUPER | _CTRL | _SHIFT: "\x08",
    _ALT | _SUPER | _CTRL: "\x1b\x08",
    _ALT | _SUPER | _CTRL | _SHIFT: "\x1b\x08",
    _CTRL: "\x08",
}


def _modifier_bits(modifiers: Modifiers) -> int:
    """xterm modifier bits; Hyper is dropped because Herdr never passes it to libghostty."""
    bits = 0
    if Modifiers.SHIFT in modifiers:
        bits |= _SHIFT
    if Modifiers.ALT in modifiers:
        bits |= _ALT
    if Modifiers.CONTROL in modifiers:
        bits |= _CTRL
    if Modifiers.SUPER in modifiers:
        bits |= _SUPER
    return bits


def _encode_pc_style(
    code: NamedKey | FunctionKey, modifiers: Modifiers, *, application_cursor: bool
) -> bytes:
    bits = _modifier_bits(modifiers)
    if code is NamedKey.BACKTAB:
        # libghostty models BackTab as Tab with Shift.
        code, bits = NamedKey.TAB, bits | _SHIFT
    param = bits + 1
    sequence: str
    if isinstance(code, FunctionKey):
        modified, plain = _FUNCTION_SEQUENCES[code.number]
        sequence = modified.format(param) if bits else plain
    elif code in _ARROW_FINALS:
        final = _ARROW_FINALS[code]
        if bits:
            sequence = f"\x1b[1;{param}{final}"
        else:
            sequence = ("\x1bO" if application_cursor else "\x1b[") + final
    elif code is NamedKey.BACKSPACE:
        sequence = _BACKSPACE.get(bits, "\x7f")
    elif code is NamedKey.TAB:
        sequence = _modified_csi27(bits, 9, {0: "\t", _SHIFT: "\x1b[Z", _ALT: "\x1b\t"})
    elif code is NamedKey.ENTER:
        sequence = _modified_csi27(bits, 13, {0: "\r", _ALT: "\x1b\r"})
    else:  # NamedKey.ESCAPE
        sequence = _modified_csi27(bits, 27, {0: "\x1b", _ALT: "\x1b\x1b"})
    return sequence.encode("ascii")


def _modified_csi27(bits: int, key: int, special: dict[int, str]) -> str:
    """Enter/Tab/Escape: a few fixed rows, otherwise xterm's ``CSI 27;<mod>;<key>~``."""
    if bits in special:
        return special[bits]
    return f"\x1b[27;{bits + 1};{key}~"
