"""Keeping secrets off disk and out of reports: ``env`` values never leave the process.

A request's ``env`` map (``workspace.create``, ``tab.create``, ``pane.split``, …) is where
callers put tokens and keys. Everything that writes wire lines somewhere a person may read
later — the failure forensics of ``pytest_herdr`` and the simulator's own wire log
(``$HERDR_SIM_WIRE_LOG``) — passes them through :func:`redact` first; one helper, so both
redact the same way.

A cassette (``herdr-sim record``) is meant to be committed and shared, so it goes further
(:func:`redact_secrets`): also the value of any field named like a secret (``token``,
``api_key``, ``password``, ``authorization``, …) and any substring of a string that has the
shape of a well-known credential (``sk-…``, ``ghp_…``, ``xoxb-…``, ``AKIA…``, a bearer
header), wherever it appears — a prompt or a ``report_agent`` payload can carry one.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "<redacted>"

#: field names whose value is a secret (matched on the lower-cased name); ``tokens`` — a
#: pane's metadata tokens — is not one
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:token|secret|password|passwd|api_?key|authorization|credentials?|private_key)$"
)
#: credential shapes recognised inside any string
_SECRET_SHAPE = re.compile(
    r"(?:sk-(?:ant-)?[A-Za-z0-9_-]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|AKIA[0-9A-Z]{16}"
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/=-]{16,})"
)


def redact(value: Any) -> Any:
    """A copy of ``value`` with every ``env`` map's values replaced (secrets stay out)."""
    return _walk(value, secrets=False)


def redact_secrets(value: Any) -> Any:
    """A copy of ``value`` as :func:`redact` makes it, with secret-named fields and
    credential-shaped substrings replaced too (see the module doc)."""
    return _walk(value, secrets=True)


def redact_text(text: str) -> str:
    """``text`` with every credential-shaped substring replaced."""
    return _SECRET_SHAPE.sub(REDACTED, text)


def _walk(value: Any, *, secrets: bool) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key == "env" and isinstance(item, dict):
                out[key] = dict.fromkeys(item, REDACTED)
            elif secrets and isinstance(key, str) and _SECRET_NAME.search(key.lower()):
                out[key] = REDACTED
            else:
                out[key] = _walk(item, secrets=secrets)
        return out
    if isinstance(value, list):
        return [_walk(item, secrets=secrets) for item in value]
    if secrets and isinstance(value, str):
        return redact_text(value)
    return value
