"""What Herdr (and a command line) can carry: the text and name rules of every tool's schema.

Why one module: both tool families send strings to Herdr — over its socket (JSON read by
serde) or as ``herdr`` argv — and both must refuse the same strings before anything runs,
in their own result shape. A string holding NUL cannot be an argv element, an environment
value or a path, and no Herdr text wants one; a lone surrogate (JSON allows ``"\\ud800"``) is
not Unicode: serde refuses it and Python cannot encode it. An agent name follows Herdr's
grammar exactly, a trailing newline included.

Schemas are read by two regex dialects: Python's ``jsonschema`` and an MCP host's
(ECMAScript). The patterns here mean the same in both: no ``$`` (Python's matches before a
trailing newline), no ``\\z``/``\\Z`` (one dialect each), and no surrogate ranges (ECMAScript
without the ``u`` flag sees an emoji as two surrogates), so lone surrogates are found by
:func:`unsendable` after the schema check instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from orchestrator.client import protocol

#: No NUL anywhere in the string.
NO_NUL = "^[^\\x00]*$"
#: Herdr's agent name grammar (:mod:`orchestrator.client.protocol`; always matched whole in Python).
AGENT_NAME = protocol.AGENT_NAME_PATTERN
#: :data:`AGENT_NAME` as a schema pattern: the whole string, in both dialects (the lookahead
#: says "nothing follows", where ``$`` would let Python accept ``"evil\n"``).
AGENT_NAME_PATTERN = f"^{AGENT_NAME}(?![\\s\\S])"
#: a task id as the agent tools mint it (``t-`` and 12 hex digits): what a ``target`` holding
#: one addresses is a task, not an agent name
_TASK_ID = re.compile(r"t-[0-9a-f]{12}")


def is_task_id(text: str) -> bool:
    """Whether ``text`` has the shape of a task id (used to route a ``target``)."""
    return _TASK_ID.fullmatch(text) is not None


_SURROGATE = re.compile("[\ud800-\udfff]")


def is_agent_name(value: object) -> bool:
    """Whether ``value`` is a name Herdr accepts for an agent (a string, by the protocol's
    rule)."""
    return isinstance(value, str) and protocol.is_agent_name(value)


def refuse_nul(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of an object schema whose every string parameter (and string array item)
    refuses NUL: :data:`NO_NUL` where the parameter has no pattern of its own (enums and
    patterned strings are left as they are)."""
    return _no_nul(schema)


def _no_nul(schema: Mapping[str, Any]) -> dict[str, Any]:
    copy = dict(schema)
    kinds = copy.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "string" in kinds and "pattern" not in copy and "enum" not in copy:
        copy["pattern"] = NO_NUL
    properties = copy.get("properties")
    if isinstance(properties, Mapping):
        copy["properties"] = {
            key: _no_nul(value) if isinstance(value, Mapping) else value
            for key, value in properties.items()
        }
    items = copy.get("items")
    if isinstance(items, Mapping):
        copy["items"] = _no_nul(items)
    extra = copy.get("additionalProperties")
    if isinstance(extra, Mapping):
        copy["additionalProperties"] = _no_nul(extra)
    return copy


def unsendable(value: Any, path: tuple[str, ...] = ()) -> tuple[tuple[str, ...], str] | None:
    """The first string in ``value`` (arguments: objects, arrays, strings; keys included) that
    no transport can carry, as ``(path, reason)``; ``None`` when every string is sendable."""
    if isinstance(value, str):
        if "\x00" in value:
            return path, "holds a NUL character, which Herdr cannot carry"
        if _SURROGATE.search(value):
            return path, "is not valid Unicode text (it holds a lone surrogate)"
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = unsendable(str(key), (*path, str(key))) or unsendable(item, (*path, str(key)))
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = unsendable(item, (*path, str(index)))
            if found is not None:
                return found
    return None


__all__ = [
    "AGENT_NAME",
    "AGENT_NAME_PATTERN",
    "NO_NUL",
    "is_agent_name",
    "is_task_id",
    "refuse_nul",
    "unsendable",
]
