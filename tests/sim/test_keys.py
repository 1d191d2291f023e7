"""Tests for Herdr key-combo parsing and legacy key encoding (``herdr_sim.host.keys``).

The expected bytes come from Herdr's tests (reference §3.5), Herdr's legacy encoder
(``src/input/encode.rs``) and libghostty's legacy key table, which Herdr uses for every
non-character key.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from herdr_sim.host.keys import (
    FunctionKey,
    InvalidKeyError,
    KeyCombo,
    Modifiers,
    NamedKey,
    encode_key,
    encode_keys,
    encode_text,
    parse_key,
)


def enc(key: str, *, application_cursor: bool = False) -> bytes:
    return encode_key(parse_key(key), application_cursor=application_cursor)


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        # Pinned by Herdr's own tests.
        ("ctrl+h", b"\x08"),
        ("ctrl+j", b"\x0a"),
        ("ctrl+k", b"\x0b"),
        ("ctrl+l", b"\x0c"),
        ("ctrl+c", b"\x03"),
        ("Enter", b"\r"),
        ("shift+tab", b"\x1b[Z"),
        ("+", b"+"),
        # Aliases and named keys.
        ("C-c", b"\x03"),
        ("c-c", b"\x03"),
        ("return", b"\r"),
        ("Tab", b"\t"),
        ("Backspace", b"\x7f"),
        ("bs", b"\x7f"),
        ("Esc", b"\x1b"),
        ("escape", b"\x1b"),
        ("space", b" "),
        ("plus", b"+"),
        ("minus", b"-"),
        ("comma", b","),
        ("period", b"."),
        ("slash", b"/"),
        ("backslash", b"\\"),
        ("quote", b"'"),
        ("double_quote", b'"'),
        ("double-quote", b'"'),
        ("semicolon", b";"),
        ("colon", b":"),
        ("percent", b"%"),
        ("ampersand", b"&"),
        ("backtick", b"`"),
        # Characters.
        ("a", b"a"),
        ("A", b"A"),
        ("shift+a", b"A"),
        ("shift+1", b"1"),
        ("é", "é".encode()),
        ("日", "日".encode()),
        # Control characters.
        ("ctrl+a", b"\x01"),
        ("ctrl+z", b"\x1a"),
        ("ctrl+A", b"\x01"),
        ("ctrl+space", b"\x00"),
        ("ctrl+@", b"\x00"),
        ("ctrl+[", b"\x1b"),
        ("ctrl+backslash", b"\x1c"),
        ("ctrl+]", b"\x1d"),
        ("ctrl+^", b"\x1e"),
        ("ctrl+_", b"\x1f"),
        ("ctrl+slash", b"\x1f"),
        ("ctrl+minus", b"\x1f"),
        ("ctrl+1", b"1"),
        # Alt prefixes ESC.
        ("alt+x", b"\x1bx"),
        ("meta+x", b"\x1bx"),
        ("option+x", b"\x1bx"),
        ("alt+X", b"\x1bX"),
        ("ctrl+alt+c", b"\x1b\x03"),
        ("alt+space", b"\x1b "),
        # Super and Hyper do not change a legacy character.
        ("super+a", b"a"),
        ("cmd+a", b"a"),
        ("hyper+a", b"a"),
        # Arrows (normal cursor mode) and modified arrows.
        ("up", b"\x1b[A"),
        ("down", b"\x1b[B"),
        ("right", b"\x1b[C"),
        ("left", b"\x1b[D"),
        ("shift+up", b"\x1b[1;2A"),
        ("alt+up", b"\x1b[1;3A"),
        ("ctrl+right", b"\x1b[1;5C"),
        ("ctrl+shift+left", b"\x1b[1;6D"),
        ("ctrl+alt+shift+down", b"\x1b[1;8B"),
        ("super+up", b"\x1b[1;9A"),
        ("hyper+up", b"\x1b[A"),
        # Function keys.
        ("F1", b"\x1bOP"),
        ("f2", b"\x1bOQ"),
        ("f3", b"\x1bOR"),
        ("f4", b"\x1bOS"),
        ("f5", b"\x1b[15~"),
        ("f6", b"\x1b[17~"),
        ("f7", b"\x1b[18~"),
        ("f8", b"\x1b[19~"),
        ("f9", b"\x1b[20~"),
        ("f10", b"\x1b[21~"),
        ("f11", b"\x1b[23~"),
        ("f12", b"\x1b[24~"),
        ("shift+f1", b"\x1b[1;2P"),
        ("ctrl+f3", b"\x1b[13;5~"),
        ("alt+f5", b"\x1b[15;3~"),
        ("f13", b""),
        ("f255", b""),
        ("f0", b""),
        ("alt+f13", b"\x1b"),
        # Enter, Tab, Escape and Backspace with modifiers (libghostty's table).
        ("shift+enter", b"\x1b[27;2;13~"),
        ("alt+enter", b"\x1b\r"),
        ("ctrl+enter", b"\x1b[27;5;13~"),
        ("ctrl+tab", b"\t"),
        ("alt+tab", b"\x1b\t"),
        ("ctrl+shift+tab", b"\x1b[27;6;9~"),
        ("alt+shift+tab", b"\x1b[27;4;9~"),
        ("hyper+ctrl+tab", b"\x1b[27;5;9~"),
        ("alt+esc", b"\x1b\x1b"),
        ("shift+esc", b"\x1b[27;2;27~"),
        ("ctrl+esc", b"\x1b[27;5;27~"),
        ("ctrl+backspace", b"\x08"),
        ("alt+backspace", b"\x1b\x7f"),
        ("shift+backspace", b"\x7f"),
        ("ctrl+alt+backspace", b"\x1b\x08"),
        ("ctrl+alt+shift+backspace", b"\x7f"),
    ],
)
def test_encoding(key: str, expected: bytes) -> None:
    assert enc(key) == expected


@pytest.mark.parametrize(
    ("key", "expected"),
    [("up", b"\x1bOA"), ("down", b"\x1bOB"), ("right", b"\x1bOC"), ("left", b"\x1bOD")],
)
def test_application_cursor_mode_changes_unmodified_arrows(key: str, expected: bytes) -> None:
    assert enc(key, application_cursor=True) == expected
    assert enc(f"ctrl+{key}", application_cursor=True) == enc(f"ctrl+{key}")


@pytest.mark.parametrize(
    ("key", "combo"),
    [
        ("Shift+Tab", KeyCombo(NamedKey.BACKTAB)),
        ("ctrl+shift+tab", KeyCombo(NamedKey.BACKTAB, Modifiers.CONTROL)),
        ("A", KeyCombo("a", Modifiers.SHIFT)),
        ("F", KeyCombo("f", Modifiers.SHIFT)),
        ("f", KeyCombo("f")),
        ("F12", KeyCombo(FunctionKey(12))),
        ("f007", KeyCombo(FunctionKey(7))),
        ("  enter  ", KeyCombo(NamedKey.ENTER)),
        ("CTRL + c", KeyCombo("c", Modifiers.CONTROL)),
        ("ctrl+C", KeyCombo("c", Modifiers.CONTROL | Modifiers.SHIFT)),
        ("Control+Alt+x", KeyCombo("x", Modifiers.CONTROL | Modifiers.ALT)),
        ("command+k", KeyCombo("k", Modifiers.SUPER)),
        ("SPACE", KeyCombo(" ")),
        ("ctrl+ctrl+c", KeyCombo("c", Modifiers.CONTROL)),
        ("-", KeyCombo("-")),
    ],
)
def test_parse_normalises_like_herdr(key: str, combo: KeyCombo) -> None:
    assert parse_key(key) == combo


@pytest.mark.parametrize(
    "key",
    [
        "",
        " ",
        "ctrl+",
        "+ctrl",
        "++",
        "ctrl++",
        "a+b",
        "ctrl+a+b",
        "shift",
        "ctrl+shift",
        "prefix+c",
        "prefix",
        "f256",
        "f-1",
        "f1x",
        "home",
        "pageup",
        "delete",
        "enterx",
        "C-d",
        "\ud800",
    ],
)
def test_invalid_keys_raise_with_the_key_as_given(key: str) -> None:
    with pytest.raises(InvalidKeyError) as excinfo:
        parse_key(key)
    assert excinfo.value.key == key
    assert isinstance(excinfo.value, ValueError)


def test_encode_keys_concatenates_in_order() -> None:
    keys = ["h", "i", "Enter", "ctrl+c", "up"]
    assert encode_keys(keys) == b"hi\r\x03\x1b[A"
    assert encode_keys(["up"], application_cursor=True) == b"\x1bOA"
    assert encode_keys([]) == b""


def test_encode_keys_reports_the_first_invalid_key_before_encoding() -> None:
    with pytest.raises(InvalidKeyError) as excinfo:
        encode_keys(["a", "Enter", "bogus1", "bogus2"])
    assert excinfo.value.key == "bogus1"


def test_encode_text_wraps_only_in_bracketed_paste_mode() -> None:
    assert encode_text("ls -l", bracketed_paste=False) == b"ls -l"
    assert encode_text("ls\n", bracketed_paste=True) == b"\x1b[200~ls\n\x1b[201~"
    assert encode_text("日", bracketed_paste=False) == "日".encode()


@given(st.text(max_size=20))
def test_any_string_parses_and_encodes_or_is_invalid(key: str) -> None:
    """Nothing but InvalidKeyError escapes, and whatever parses can be encoded."""
    combo: KeyCombo | None = None
    error: InvalidKeyError | None = None
    try:
        combo = parse_key(key)
    except InvalidKeyError as exc:
        error = exc
    if combo is None:
        assert error is not None
        assert error.key == key
    else:
        assert isinstance(encode_key(combo), bytes)
        assert isinstance(encode_key(combo, application_cursor=True), bytes)


@given(
    st.sampled_from(["", "ctrl+", "alt+", "shift+", "ctrl+alt+", "super+shift+"]),
    st.sampled_from(["a", "z", "Enter", "tab", "up", "f5", "space", "bs", "esc", "7"]),
)
def test_modifier_combinations_always_encode_to_some_bytes(prefix: str, key: str) -> None:
    assert enc(prefix + key) != b""
