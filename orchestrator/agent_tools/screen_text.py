"""Reading an agent's words off its terminal screen: the last message, the question, the tail.

Why a module of its own: a pane read is a picture of a TUI, not a message. It holds blank
filler rows, horizontal rules and boxes, the input line, key hints and the agent's banner; a
caller handed that as ``finalMessage`` or ``question`` has to dig for the few words that
matter (and pays for the rest in tokens). These functions keep only the words. They are
heuristics over the shapes agent TUIs share (pi, Claude Code, Codex, OpenCode and the
simulator's fakes of them), so each falls back to the cleaned text rather than to nothing.

* :func:`clean_screen` — blank runs collapsed, rules and box borders dropped, box sides
  stripped, trailing spaces removed.
* :func:`last_lines` — the last ``n`` lines of that (a failure's context, e.g. an agent that
  exited during start).
* :func:`last_message` — the agent's last message: what follows the last prompt echo
  (``> …`` / ``❯ …``), above the input box and hints.
* :func:`screen_question` — the question of a blocked agent's dialog, without its options,
  input line and hints.
* :func:`blocked_header_question` — the question of a text whose first line is the
  protocol header ``BLOCKED`` (an agent's final message), or None.
"""

from __future__ import annotations

import re

__all__ = [
    "blocked_header_question",
    "clean_screen",
    "last_lines",
    "last_message",
    "screen_question",
]

#: Characters that draw rules and boxes (a line made only of these and blanks is chrome).
_BOX = "─━═│┃║╭╮╰╯┌┐└┘├┤┬┴┼╴╶╵╷╹╻▀▄▔▁-_=+*~·•"
_RULE = re.compile(rf"^[\s{re.escape(_BOX)}]*$")
_SIDES = re.compile(r"^\s*[│┃║]\s?|\s?[│┃║]\s*$")
_SIDE = re.compile(r"^\s*[│┃║]")
#: A prompt echo or input line: ``> text``, ``❯ text``, ``› text`` (not a numbered option).
_PROMPT = re.compile(r"^\s*(?:[\w-]*>|[❯›])(?:\s|$)(?!\s*\d+\.\s)")
_OPTION = re.compile(r"^\s*(?:[❯›>]\s*)?\d+\.\s")
_HINT = re.compile(
    r"esc to (?:cancel|interrupt)|enter to (?:submit|confirm)|press enter|enter confirm|"
    r"esc dismiss|enter send|\? for shortcuts|↑↓|ctrl\+c to|shift\+tab",
    re.IGNORECASE,
)
#: A marker before a message's first line: Claude Code's ``●``/``⏺``, Codex's ``•``, a
#: dialog's ``?``/``△``/``⚠``; the message's further lines are indented as wide.
_MARK = re.compile(r"^\s*(?:[?△⚠⏺●•]\s+)")
_BANNER = re.compile(r"\(herdr-sim fake agent\)\s*$")
#: The protocol header, as the envelope spells it (upper case: "Blocked by a flaky test" is
#: prose, not a header).
_BLOCKED = re.compile(r"^\s*(?:\*\*)?BLOCKED(?:\*\*)?(?![A-Za-z0-9_])[\s:.\-—]*")
#: How far up from the bottom a dialog is looked for (lines), and a footer (non-blank lines).
_BOTTOM = 14
_FOOTER = 7


def clean_screen(text: str) -> list[str]:
    """The screen's lines without chrome: rules and box borders dropped, box sides and
    trailing blanks stripped, the fake agents' banner dropped, runs of blank lines collapsed
    to one, no blank line first or last."""
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if _is_rule(line):
            continue
        if _BANNER.search(line):
            continue
        line = _SIDES.sub("", line).rstrip()
        if not line.strip():
            if out and out[-1] != "":
                out.append("")
            continue
        out.append(line)
    while out and out[-1] == "":
        out.pop()
    return out


def last_lines(text: str, n: int) -> str:
    """The last ``n`` non-blank lines of the cleaned screen, dedented by their common indent."""
    lines = [line for line in clean_screen(text) if line.strip()][-n:]
    return _dedent(lines)


def _dedent(lines: list[str]) -> str:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents) if indents else 0
    return "\n".join(line[cut:] for line in lines).strip("\n")


def _is_rule(line: str) -> bool:
    """A border or rule; an empty row of a box (only its side bars, as OpenCode's ``┃``
    rail draws around a dialog) is a blank line of the box, not a border."""
    bare = line.strip()
    return bool(bare) and _RULE.match(line) is not None and bool(bare.strip(" │┃║"))


def _above_footer(raw: list[str]) -> list[str]:
    """The screen's lines above its footer (input box, hints, status line): cut at the
    topmost rule or box-side line among the last few non-blank lines, else at the lowest input
    line among the last five (Codex's footer under its input line is three lines, four when
    its status line wraps in a narrow pane)."""
    filled = [i for i, line in enumerate(raw) if line.strip()]
    cut: int | None = None
    for i in filled[-_FOOTER:]:
        if _is_rule(raw[i]) or _SIDE.match(raw[i]):
            cut = i
            break
    if cut is None:
        for i in reversed(filled[-5:]):
            if _PROMPT.match(raw[i]):
                cut = i
                break
    return raw if cut is None else raw[:cut]


def _unmark(lines: list[str]) -> list[str]:
    """The lines without their markers; the lines indented under a marked line lose that
    indent with it (Claude Code's ``● first`` then ``  second``)."""
    out: list[str] = []
    hang = ""
    for line in lines:
        match = _MARK.match(line)
        if match is not None:
            hang = " " * len(match.group())
            out.append(line[match.end() :])
        elif hang and line.startswith(hang):
            out.append(line[len(hang) :])
        else:
            hang = "" if line.strip() else hang
            out.append(line)
    return out


def last_message(text: str) -> str | None:
    """The agent's last message on screen: the lines after the last prompt echo above the
    footer, markers (``⏺``) stripped and chrome removed; the cleaned screen's last lines when
    nothing is found that way; None for an empty screen."""
    raw = [line.rstrip() for line in text.splitlines()]
    body = _above_footer(raw)
    for i in range(len(body) - 1, -1, -1):
        if _PROMPT.match(body[i]):
            body = body[i + 1 :]
            break
    lines = _unmark(clean_screen("\n".join(body)))
    while lines and _HINT.search(lines[-1]):
        lines.pop()
    if not any(line.strip() for line in lines):
        return last_lines(text, 20) or None
    return _dedent(lines)


def screen_question(text: str) -> str | None:
    """The question of a blocked agent's dialog: the lines after the last rule near the
    bottom (else the bottom lines), without numbered options, the input line, key hints and
    leading markers (``?``, ``△``); None when nothing is left."""
    raw = [line.rstrip() for line in text.splitlines()]
    while raw and not raw[-1].strip():
        raw.pop()
    start = max(0, len(raw) - _BOTTOM)
    for i in range(len(raw) - 1, start - 1, -1):
        if _is_rule(raw[i]):
            start = i + 1
            break
    kept: list[str] = []
    for line in raw[start:]:
        line = _SIDES.sub("", line).rstrip()
        if not line.strip() or _RULE.match(line) or _BANNER.search(line):
            continue
        if _OPTION.match(line) or _PROMPT.match(line) or _HINT.search(line):
            continue
        kept.append(_MARK.sub("", line))
    question = _dedent(kept)
    return question or None


def blocked_header_question(text: str | None) -> str | None:
    """For a message whose first non-blank line starts with the ``BLOCKED`` header: the
    question (the rest of that line and the lines after it, trimmed); ``""`` when the header
    stands alone; None when the message is not BLOCKED."""
    if not text:
        return None
    stripped = text.strip()
    match = _BLOCKED.match(stripped)
    if match is None:
        return None
    return stripped[match.end() :].strip()
