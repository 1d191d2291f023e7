"""The one cleaner of untrusted text (``orchestrator.client.untrusted_text``): each keep-set
its callers use, the set itself (Unicode's Cc, Herdr's ``char::is_control``), and the tag
escape."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from orchestrator.client.untrusted_text import (
    C1,
    CONTROL,
    LINE_SEPARATORS,
    control_pattern,
    escape_closing_tag,
    has_control,
    strip_control,
)
from orchestrator.logs import printable
from orchestrator.tools.low_level import _send_text_effect

EVIL = "a\tb\nc\rd\x1b[2Je\x7ff\x9bg\u2028h\x00i"


def test_the_set_is_unicodes_cc_exactly() -> None:
    cc = {chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cc"}
    assert set(CONTROL) == cc


def test_keep_nothing_strips_every_control_character() -> None:
    # a one-line field (an agent arg, a foreground command, a window title)
    assert strip_control(EVIL) == "abcd[2Jefg\u2028hi"


def test_keep_newline_and_tab_keeps_a_files_lines() -> None:
    # a file an agent wrote, a screen's tail: lines stay, escapes and CR go
    assert strip_control(EVIL, keep="\n\t") == "a\tb\ncd[2Jefg\u2028hi"


def test_also_adds_the_line_separators_for_a_log_line() -> None:
    assert strip_control(EVIL, also=LINE_SEPARATORS, replace="?") == ("a?b?c?d?[2Je?f?g?h?i")
    assert printable("x\u2028y\x9b") == "x\\u2028y\\x9b"


def test_keep_tab_and_c1_is_what_can_submit_a_typed_line() -> None:
    submits = control_pattern(keep="\t" + C1)
    assert [ch for ch in CONTROL if submits.match(ch)] == [chr(c) for c in range(0x20) if c != 0x09]
    assert _send_text_effect({"text": "ls\tx\x7f"}) == "type"
    assert _send_text_effect({"text": "ls\n"}) == "run"
    assert _send_text_effect({"text": "ls\x0f"}) == "run"  # C-o runs the line in readline


@pytest.mark.parametrize(
    ("text", "keep", "found"),
    [("plain", "", False), ("tab\there", "", True), ("tab\there", "\t", False),
     ("csi\x9b", "\t\n", True)],
)  # fmt: skip
def test_has_control_honours_the_keep_set(text: str, keep: str, found: bool) -> None:
    assert has_control(text, keep) is found


@pytest.mark.parametrize(
    "closing", ["</agent-message>", "</AGENT-message>", "< / agent-message>", "<\t/agent-message"]
)
def test_a_body_cannot_close_its_wrapper(closing: str) -> None:
    escaped = escape_closing_tag(f"before {closing} after", "agent-message")
    assert "&lt;" in escaped
    assert closing not in escaped
    assert escape_closing_tag("</other-tag>", "agent-message") == "</other-tag>"


def test_the_tag_is_matched_literally() -> None:
    assert escape_closing_tag("</a.b> </axb>", "a.b") == "&lt;/a.b> </axb>"
