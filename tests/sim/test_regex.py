"""herdr_sim.regex: Rust ``regex`` syntax on RE2, linear time, Rust's refusals and wording.

Herdr compiles client and manifest patterns with Rust's ``regex`` crate (``src/api/wait.rs``,
``src/api/subscriptions.rs``, ``src/detect/manifest.rs``: ``Regex::new``; the crate is
``regex`` 1.12 in Herdr's ``Cargo.lock``). The translation tests of the detection manifests
live in ``test_detect_manifest.py``; these cover what the linear-time engine adds.
"""

from __future__ import annotations

import time

import pytest

from herdr_sim.regex import RustRegexError, compile_rust_regex, translate
from tests.waits import SCALE


def test_catastrophic_backtracking_patterns_match_in_linear_time() -> None:
    started = time.monotonic()
    assert not compile_rust_regex("(a|a)+$").search("a" * 34 + "!")
    assert not compile_rust_regex("(x+x+)+y").search("x" * 5000)
    assert not compile_rust_regex("^(a+)+$").search("a" * 100_000 + "b")
    assert time.monotonic() - started < 2.0 * SCALE


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        (r"^\w+$", "héllo_ß١", True),  # Rust's \w is Unicode; RE2's alone is ASCII
        (r"^\d$", "٣", True),
        (r"(?-u:\d)", "٣", False),
        (r"(?-u:\s)", "\x0b", True),  # Rust's ASCII \s has \v, RE2's does not
        (r"[^\W\d]", "é", True),
        (r"[\W]", "é", False),
        (r"a**", "aaa", True),  # Rust nests stacked repetitions; RE2 refuses them bare
        (r"^a*+$", "aaa", True),
        (r"(?x) a \  b # comment", "a b", True),  # RE2 has no verbose mode
        (r"(?x)[a b]", " ", False),
        (r"(?x)[a - c]", "b", True),
        (r"[a-]", "-", True),
        (r"\p{Greek}+", "αβγ", True),
        (r"\p{sc=Greek}", "a", False),
        (r"\p{Uppercase_Letter}", "É", True),
        (r"(?U)a+", "aaa", True),  # swap-greed, which Python lacked
        (r"(?i)straße", "STRASSE", False),  # simple case folding only, as Rust
        (r"\u{1F600}", "😀", True),
        (r"[[:^alpha:]]", "1", True),
    ],
)
def test_rust_semantics_hold(pattern: str, text: str, matches: bool) -> None:
    assert compile_rust_regex(pattern).search(text) is matches


@pytest.mark.parametrize(
    ("pattern", "marks", "message"),
    [
        # the span covers the whole opener, as Rust's regex-syntax marks it
        ("a(?=b)", " ^^^", "look-around, including look-ahead and look-behind, is not supported"),
        ("a(?!b)", " ^^^", "look-around, including look-ahead and look-behind, is not supported"),
        ("(?<=a)b", "^^^^", "look-around, including look-ahead and look-behind, is not supported"),
        ("(?<!a)b", "^^^^", "look-around, including look-ahead and look-behind, is not supported"),
        ("(a)\\1", "   ^^", "backreferences are not supported"),
        ("x\\q", " ^^", "unrecognized escape sequence"),
        ("a)", " ^", "unopened group"),
        ("(unclosed", "^", "unclosed group"),
        ("[ab", "^", "unclosed character class"),
        ("*a", "^", "repetition operator missing expression"),
        ("a{3,1}", " ^^^^^", "invalid repetition count range, the start must be <= the end"),
        ("[z-a]", " ^^^", "invalid character class range, the start must be <= the end"),
        ("\\p{Nope}", "^^^^^^^^", "Unicode property not found"),
        ("(?y)", "  ^", "unrecognized flag"),
        ("x\\", " ^", "incomplete escape sequence, reached end of pattern prematurely"),
    ],
)
def test_refusals_carry_rusts_text(pattern: str, marks: str, message: str) -> None:
    with pytest.raises(RustRegexError) as caught:
        compile_rust_regex(pattern)
    assert str(caught.value) == f"regex parse error:\n    {pattern}\n    {marks}\nerror: {message}"


def test_counts_above_re2s_limit_are_accepted_as_rust_accepts_them() -> None:
    # Rust's regex bounds a count only by the compiled size; RE2 stops at 1000
    exact = compile_rust_regex("^a{1001}$")
    assert exact.fullmatch("a" * 1001)
    assert not exact.fullmatch("a" * 1000) and not exact.fullmatch("a" * 1002)
    ranged = compile_rust_regex("^(?:ab){999,2001}$")
    assert ranged.fullmatch("ab" * 2001) and ranged.fullmatch("ab" * 999)
    assert not ranged.fullmatch("ab" * 2002) and not ranged.fullmatch("ab" * 998)
    assert compile_rust_regex("x{1500,}").search("x" * 1600)
    assert not compile_rust_regex("x{1500,}?").search("x" * 1499)
    # still linear: an ambiguous body over a long text answers at once (no backtracking)
    assert not compile_rust_regex("(a|a){1001}!").search("a" * 100_000)


@pytest.mark.parametrize("pattern", [r"\b{start}x", r"\<x", r"[a&&b]", r"(?R)x", r"[[a]]"])
def test_what_re2_cannot_express_is_refused_and_says_so(pattern: str) -> None:
    with pytest.raises(RustRegexError, match="not supported by the simulator"):
        compile_rust_regex(pattern)


def test_plain_patterns_translate_to_themselves() -> None:
    assert translate(r"^done (\d+)s$") != ""
    assert translate(r"^─+$") == r"^─+$"
    assert translate(r"^\$ ") == r"^\x{24} "
