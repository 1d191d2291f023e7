"""Line shapes of transcripts, to hold a fake agent's transcript against the real agent's.

A shape is, per kind of line, the set of key paths its lines use (``message.content[].type``
…). A fake's transcript is true to the real one when every kind of line it writes is one the
real agent wrote in the same run, with no key the real one's lines of that kind lack, and
when it writes every kind a reader needs. Values are not compared (ids, times, token counts
differ by nature); the few values readers branch on are checked by the tests themselves.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["Shapes", "assert_within", "claude_kind", "codex_kind", "shapes"]

Shapes = dict[str, set[str]]


def _paths(value: Any, prefix: str = "") -> Iterable[str]:
    """The key paths of ``value``: ``a``, ``a.b``, ``a[].c`` (lists of objects as one)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            yield path
            yield from _paths(inner, path)
    elif isinstance(value, list):
        for item in value:
            yield from _paths(item, f"{prefix}[]")


def claude_kind(entry: dict[str, Any]) -> str:
    """Claude Code's line kind: ``type`` (and ``subtype`` of a ``system`` entry; ``user``
    entries holding a tool result apart from prompts)."""
    kind = str(entry.get("type"))
    if kind == "system":
        kind += "/" + str(entry.get("subtype"))
    if kind == "user" and not isinstance((entry.get("message") or {}).get("content"), str):
        kind += "/tool_result"
    return kind


def codex_kind(line: dict[str, Any]) -> str:
    """Codex's line kind: ``type`` and its payload's ``type``."""
    payload = line.get("payload") or {}
    inner = payload.get("type") if isinstance(payload, dict) else None
    return f"{line.get('type')}/{inner}" if inner else str(line.get("type"))


#: key paths whose values are free-form objects (their keys are data, not shape)
_OPAQUE = ("input", "arguments", "payload.base_instructions", "state.input", "state.metadata")


def shapes(lines: Iterable[dict[str, Any]], kind: Callable[[dict[str, Any]], str]) -> Shapes:
    """Per kind of line, the union of its lines' key paths."""
    found: Shapes = defaultdict(set)
    for line in lines:
        paths = {
            p for p in _paths(line)
            if not any(f".{o}." in f".{p}" for o in _OPAQUE)
        }  # fmt: skip
        found[kind(line)] |= paths
    return dict(found)


def assert_within(fake: Shapes, real: Shapes, needed: Iterable[str]) -> None:
    """Every kind the fake writes is a real kind with no key the real one lacks, and the
    fake writes every ``needed`` kind (with every key the real one has at the top level
    being free to be left out)."""
    unknown = sorted(set(fake) - set(real))
    assert not unknown, f"kinds the real agent never wrote: {unknown}; real: {sorted(real)}"
    extra = {k: sorted(fake[k] - real[k]) for k in fake if fake[k] - real[k]}
    assert not extra, f"keys the real agent's lines lack: {extra}"
    missing = sorted(set(needed) - set(fake))
    assert not missing, f"kinds a reader needs that the fake does not write: {missing}"
