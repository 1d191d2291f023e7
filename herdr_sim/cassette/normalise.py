"""What may differ between a recorded answer and a replayed one, and how answers compare.

Herdr names things (``w1``, ``w1:t2``, ``w1:p3``, ``term_…``), so an :class:`IdMap` learns,
the first time an id field shows up in an answer, which replayed id stands for which recorded
one (a pane id ``w3:p2`` whose workspace is mapped follows its workspace), and later requests
and expected answers are rewritten with it. Then both sides are normalised
(:meth:`Rules.normalise`) and compared structurally (:func:`differences`):

* volatile values are compared by presence only: pids, terminal ``revision`` and other
  sequence counters, timestamps (:data:`VOLATILE_KEYS`, :data:`VOLATILE_SUFFIXES`);
* paths under the recording's runtime directories (the upstream socket's directory, the
  home directory, ...) and under the replay's are written ``<runtime>/…``, wherever they
  appear in a string (a process's command line too);
* screen text (:data:`SCREEN_KEYS`: a pane read's ``text``, a wait's ``matched_line``,
  terminal titles) by the screen rule: ``lines`` (the default) compares the non-blank lines
  with trailing spaces and a leading shell prompt removed and a line repeating the one
  before it dropped (:func:`screen_lines`), ``exact``
  compares the text as it is, ``ignore`` only that both have it;
* fields the user names (``--ignore``) are not compared at all (:class:`FieldPattern`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

ScreenRule = Literal["lines", "exact", "ignore"]
SCREEN_RULES: tuple[ScreenRule, ...] = ("lines", "exact", "ignore")

#: fields whose values vary on every run: compared by presence only
VOLATILE_KEYS = frozenset(
    {"pid", "pids", "revision", "seq", "timestamp", "time", "uptime_ms", "elapsed_ms"}
)
VOLATILE_SUFFIXES = ("_pid", "_seq", "_at", "_process_group_id")
#: screen text, compared by the screen rule
SCREEN_KEYS = frozenset({"text", "matched_line", "terminal_title", "terminal_title_stripped"})
#: a placeholder no JSON value equals: a field one side lacks
MISSING = "<missing>"
_VOLATILE = "<volatile>"
_RUNTIME = "<runtime>"
#: a shell prompt at the start of a screen line: up to 80 characters ending in ``$``, ``#``,
#: ``%``, ``>`` or ``❯`` and a space (or the line's end)
_PROMPT = re.compile(r"^.{0,80}?[$#%>❯](?: |$)")


def is_id_key(key: str) -> bool:
    """Whether a field holds a Herdr-named id (``pane_id``, ``focused_tab_id``, …)."""
    return key.endswith("_id") and key != "agent_session_id" and not is_volatile_key(key)


def is_volatile_key(key: str) -> bool:
    """Whether a field's value varies on every run (see :data:`VOLATILE_KEYS`)."""
    return key in VOLATILE_KEYS or key.endswith(VOLATILE_SUFFIXES)


def screen_lines(text: str) -> list[str]:
    """The ``lines`` rule: non-blank lines, trailing spaces and a leading prompt removed,
    a line repeating the one before it dropped (input typed before the shell showed its
    prompt is echoed once by the terminal and once more after the prompt: timing, not
    behaviour)."""
    out: list[str] = []
    for line in text.splitlines():
        kept = _PROMPT.sub("", line.rstrip(), count=1).strip()
        if kept and (not out or out[-1] != kept):
            out.append(kept)
    return out


class IdMap:
    """Recorded ids to replayed ids, learnt from answers."""

    def __init__(self) -> None:
        self._map: dict[str, str] = {}

    def translate(self, value: str) -> str:
        """The replayed id of a recorded one (itself when unknown); a ``wX:…`` id whose
        workspace is mapped follows it."""
        if value in self._map:
            return self._map[value]
        head, sep, rest = value.partition(":")
        if sep and head in self._map:
            return f"{self._map[head]}:{rest}"
        return value

    def learn(self, recorded: Any, replayed: Any) -> None:
        """Pair the ids at the same places of a recorded and a replayed answer (first sight
        wins: a later mismatch is a difference, not a new pairing)."""
        if isinstance(recorded, dict) and isinstance(replayed, dict):
            for key, value in recorded.items():
                if key not in replayed:
                    continue
                other = replayed[key]
                if is_id_key(key) and isinstance(value, str) and isinstance(other, str):
                    self._pair(value, other)
                else:
                    self.learn(value, other)
        elif isinstance(recorded, list) and isinstance(replayed, list):
            for value, other in zip(recorded, replayed, strict=False):
                self.learn(value, other)

    def _pair(self, recorded: str, replayed: str) -> None:
        if recorded in self._map:
            return
        self._map[recorded] = replayed
        head, sep, _ = recorded.partition(":")
        other_head, other_sep, _ = replayed.partition(":")
        if sep and other_sep and head not in self._map:
            self._map[head] = other_head

    def rewrite(self, value: Any) -> Any:
        """``value`` with every id field translated (a request's params before sending, a
        recorded answer before comparing)."""
        if isinstance(value, dict):
            return {
                key: self.translate(item)
                if is_id_key(key) and isinstance(item, str)
                else self.rewrite(item)
                for key, item in value.items()
            }
        if isinstance(value, list):
            return [self.rewrite(item) for item in value]
        return value


_SEGMENT = re.compile(r"\[(\d+|\*)\]|\.?([^.\[\]]+)")


def split_path(path: str) -> list[str]:
    """``result.panes[0].pane_id`` as segments ``["result", "panes", "[0]", "pane_id"]``."""
    out = []
    for match in _SEGMENT.finditer(path):
        index, key = match.groups()
        out.append(f"[{index}]" if index is not None else key)
    return out


def join_path(segments: Iterable[str]) -> str:
    """The inverse of :func:`split_path`."""
    text = ""
    for segment in segments:
        text += segment if segment.startswith("[") or not text else f".{segment}"
    return text


@dataclass(frozen=True)
class FieldPattern:
    """An ``--ignore`` pattern: a field path (``result.workspace.label``), ``*`` for any key
    and ``[*]`` for any list index; a path without a dot (``label``) matches that field
    anywhere. A pattern also covers everything under the field it matches."""

    text: str
    segments: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "segments", tuple(split_path(self.text)))

    def matches(self, path: list[str]) -> bool:
        """Whether the field at ``path`` (segments) or one above it is this pattern's."""
        if len(self.segments) == 1 and not self.segments[0].startswith("["):
            return self.segments[0] in path
        if len(path) < len(self.segments):
            return False
        return all(
            want == got or want == "*" or (want == "[*]" and got.startswith("["))
            for want, got in zip(self.segments, path, strict=False)
        )


@dataclass
class Rules:
    """How answers are normalised: the screen rule, ignored fields, runtime directories."""

    screen: ScreenRule = "lines"
    ignore: tuple[FieldPattern, ...] = ()

    def normalise(self, value: Any, runtime_dirs: tuple[str, ...]) -> Any:
        """``value`` with volatile values, runtime paths and screen text normalised and
        ignored fields removed."""
        dirs = sorted({d.rstrip("/") for d in runtime_dirs if d.rstrip("/")}, key=len)
        # longest first, each only where a path component ends (not /tmp/ab in /tmp/abc)
        pattern = (
            re.compile("|".join(re.escape(d) for d in reversed(dirs)) + r"(?=/|$|[^\w.-])")
            if dirs
            else None
        )
        return self._walk(value, [], pattern)

    def _walk(self, value: Any, path: list[str], dirs: re.Pattern[str] | None) -> Any:
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                here = [*path, key]
                if any(pattern.matches(here) for pattern in self.ignore):
                    continue
                if is_volatile_key(key):
                    out[key] = _VOLATILE
                elif key in SCREEN_KEYS and isinstance(item, str):
                    out[key] = self._screen(item)
                else:
                    out[key] = self._walk(item, here, dirs)
            return out
        if isinstance(value, list):
            return [self._walk(item, [*path, f"[{i}]"], dirs) for i, item in enumerate(value)]
        if isinstance(value, str) and dirs is not None:
            return dirs.sub(_RUNTIME, value)
        return value

    def _screen(self, text: str) -> Any:
        if self.screen == "exact":
            return text
        if self.screen == "ignore":
            return _VOLATILE
        return screen_lines(text)


def differences(
    recorded: Any, replayed: Any, path: list[str] | None = None
) -> Iterator[tuple[str, Any, Any]]:
    """Every ``(field path, recorded, replayed)`` where two normalised values differ; a
    field one side lacks is :data:`MISSING` on that side."""
    here = path or []
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in [*recorded, *(k for k in replayed if k not in recorded)]:
            yield from differences(
                recorded.get(key, MISSING), replayed.get(key, MISSING), [*here, key]
            )
        return
    if isinstance(recorded, list) and isinstance(replayed, list):
        for index in range(max(len(recorded), len(replayed))):
            yield from differences(
                recorded[index] if index < len(recorded) else MISSING,
                replayed[index] if index < len(replayed) else MISSING,
                [*here, f"[{index}]"],
            )
        return
    if type(recorded) is not type(replayed) or recorded != replayed:
        yield join_path(here) or "(line)", recorded, replayed
