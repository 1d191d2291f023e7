"""Untrusted text, cleaned in one place: control characters with an explicit keep-set, and
the escape that stops a text from closing the tag it travels in.

Text from outside — an agent's screen, a file an agent wrote, a request's argument, a log
line's payload — may hold control characters that end a line, move a terminal's cursor,
start an escape sequence or (typed into a pane) submit a command. Each caller says which
characters it keeps (a file keeps its newlines and tabs, a one-line field keeps none); the
set is always Unicode's control characters, category Cc (C0, DEL and C1: what Herdr's Rust
``char::is_control`` means), plus whatever ``also`` adds (a log line adds the line and
paragraph separators).

Imports nothing of ours: the simulator and every orchestrator layer use it.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "C0",
    "C1",
    "CONTROL",
    "LINE_SEPARATORS",
    "control_pattern",
    "escape_closing_tag",
    "has_control",
    "strip_control",
]

#: the C0 controls, U+0000 to U+001F (newline, tab, ESC, ...)
C0 = "".join(map(chr, range(0x20)))
#: DEL and the C1 controls, U+007F to U+009F (U+009B is a one-character CSI)
C1 = "".join(map(chr, range(0x7F, 0xA0)))
#: Unicode's control characters (category Cc): C0, DEL and C1
CONTROL = C0 + C1
#: Unicode's line and paragraph separators (not Cc, but they end a line)
LINE_SEPARATORS = "\u2028\u2029"


@functools.cache
def control_pattern(keep: str = "", also: str = "") -> re.Pattern[str]:
    """A pattern matching one control character (:data:`CONTROL` plus ``also``) that is not
    in ``keep``."""
    chars = [ch for ch in CONTROL + also if ch not in keep]
    return re.compile("[" + "".join(f"\\u{ord(ch):04x}" for ch in chars) + "]")


def strip_control(text: str, keep: str = "", *, also: str = "", replace: str = "") -> str:
    """``text`` with every control character not in ``keep`` (and every one of ``also``)
    removed, or replaced by ``replace``."""
    return control_pattern(keep, also).sub(replace, text)


def has_control(text: str, keep: str = "", *, also: str = "") -> bool:
    """Whether ``text`` holds a control character not in ``keep`` (or one of ``also``)."""
    return control_pattern(keep, also).search(text) is not None


@functools.cache
def _closing(tag: str) -> re.Pattern[str]:
    return re.compile(rf"<(\s*/\s*{re.escape(tag)})", re.IGNORECASE)


def escape_closing_tag(text: str, tag: str) -> str:
    """``text`` with every ``</tag`` (any case, blanks around the slash) defused as
    ``&lt;/tag``, so a body can never close the ``<tag>`` wrapper it travels in."""
    return _closing(tag).sub(r"&lt;\1", text)
