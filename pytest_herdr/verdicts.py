"""Remembered schema verdicts, so a suite that checks every wire line stays fast.

Checking one line against Herdr's bundle with jsonschema takes 80-190 µs (its ``$ref``\\ s
are resolved anew each time), and a test suite sends the same lines over and over: the same
poll, the same list, the same answer to it. The verdict (the list of schema errors) is a
pure function of the schema and the instance, so :class:`VerdictMemo` keeps it, keyed by
the schema's pointer and the instance's canonical JSON, in a bounded least-recently-used
table. A compiled validator would not need this, but the maintained one for Python
(fastjsonschema) stops at draft 7 and the bundle is draft 2020-12.

A request's ``id`` differs on every line; :func:`ignores` tells whether a schema's verdict
can depend on one member at all, so the key may leave it out and still be exact.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

__all__ = ["Verdict", "VerdictMemo", "ignores"]

#: the errors of one instance: (message, location) pairs, in the validator's order
Verdict = tuple[tuple[str, tuple[str | int, ...]], ...]

#: schema keywords that only say something about the members they name
_NAMING_KEYWORDS = frozenset({"properties", "required"})
#: keywords that say nothing about an object's members
_INERT_KEYWORDS = frozenset({"type", "title", "description", "$comment", "examples"})
#: the canonical JSON of a key: members sorted, no spaces (an encoder of its own, so the
#: checks never show up among the encodings a test counts through ``json.dumps``)
_canonical = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode


def ignores(schema: Any, name: str) -> bool:
    """Whether ``schema``'s verdict on an object cannot depend on its member ``name``: the
    schema uses only keywords that name members (``properties``, ``required``) or say
    nothing of them, and names neither ``name`` nor anything that could match it."""
    if not isinstance(schema, Mapping):
        return False
    for keyword, value in schema.items():
        if keyword in _INERT_KEYWORDS or keyword.startswith("x-"):
            continue
        if keyword not in _NAMING_KEYWORDS:
            return False
        if name in value:
            return False
    return True


class VerdictMemo:
    """Verdicts by (pointer, canonical JSON of the instance), the oldest dropped first.

    Instances whose JSON is longer than ``max_chars`` are never kept (their key would cost
    as much memory as they do); ``entries`` bounds the table.
    """

    def __init__(self, entries: int = 4096, max_chars: int = 8192) -> None:
        self.entries = entries
        self.max_chars = max_chars
        self._kept: OrderedDict[str, Verdict] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def key(self, pointer: str, instance: Any, *, without: str | None = None) -> str | None:
        """The key of ``instance`` checked at ``pointer`` (its member ``without`` left out,
        for a schema that :func:`ignores` it); None when it is not to be kept."""
        if without is not None and isinstance(instance, dict) and without in instance:
            instance = {k: v for k, v in instance.items() if k != without}
        try:
            text = _canonical(instance)
        except (TypeError, ValueError):  # not JSON (a test's own object): checked each time
            return None
        if len(text) > self.max_chars:
            return None
        return f"{pointer}\n{text}"

    def get(self, key: str) -> Verdict | None:
        """The kept verdict for ``key``, or None."""
        with self._lock:
            found = self._kept.get(key)
            if found is None:
                self.misses += 1
                return None
            self._kept.move_to_end(key)
            self.hits += 1
            return found

    def put(self, key: str, verdict: Verdict) -> None:
        """Keep ``verdict`` for ``key``, dropping the least recently used beyond the bound."""
        with self._lock:
            self._kept[key] = verdict
            self._kept.move_to_end(key)
            while len(self._kept) > self.entries:
                self._kept.popitem(last=False)
