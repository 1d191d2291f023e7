"""Keeping secrets off disk and out of reports: ``env`` values never leave the process.

A request's ``env`` map (``workspace.create``, ``tab.create``, ``pane.split``, …) is where
callers put tokens and keys. Everything that writes wire lines somewhere a person may read
later — the failure forensics of ``pytest_herdr`` and the simulator's own wire log
(``$HERDR_SIM_WIRE_LOG``) — passes them through :func:`redact` first; one helper, so both
redact the same way.
"""

from __future__ import annotations

from typing import Any

REDACTED = "<redacted>"


def redact(value: Any) -> Any:
    """A copy of ``value`` with every ``env`` map's values replaced (secrets stay out)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key == "env" and isinstance(item, dict):
                out[key] = dict.fromkeys(item, REDACTED)
            else:
                out[key] = redact(item)
        return out
    if isinstance(value, list):
        return [redact(item) for item in value]
    return value
