"""Managed-agent labels: the grammar, automatic labels and collisions (seed 002).

A label is the exact live logical identity a controller passes to ``agent_steer``,
``agent_close`` and the rest, and the ``<label>`` of ``result:<label>#<n>`` refs, so it must be
unambiguous and safe in paths and Herdr names: seed 002's grammar is Herdr's agent-name rule
(``orchestrator.client.protocol.AGENT_NAME_PATTERN``, written once there), checked with
``fullmatch`` (``$`` alone would accept a trailing newline). An explicit label that is taken
fails with ``agent_label_exists``; an automatic label is the definition name, else
``<name>-2`` … ``<name>-999`` (reference A.7). "Taken" is decided by the caller (live labels
plus occupied mailboxes); this module holds only the rules.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from orchestrator.client.protocol import AGENT_NAME_PATTERN
from orchestrator.managed.errors import ManagedAgentError

LABEL_RE = re.compile(AGENT_NAME_PATTERN)
LABEL_RULE = (
    "a label starts with a lowercase letter and contains only lowercase letters, digits, "
    "'_' and '-', at most 32 characters"
)
AUTO_SUFFIX_MAX = 999


def is_valid_label(label: object) -> bool:
    """True when ``label`` is a string that fully matches the label grammar."""
    return isinstance(label, str) and LABEL_RE.fullmatch(label) is not None


def validate_label(label: object, *, operation: str) -> str:
    """Return ``label`` when it fits the grammar, else raise ``invalid_request``."""
    if not is_valid_label(label):
        raise ManagedAgentError(
            "invalid_request",
            f"Invalid agent label {label!r}: {LABEL_RULE}",
            operation=operation,
            next_action=f"Pass a label matching ^{AGENT_NAME_PATTERN}$, or omit it.",
        )
    assert isinstance(label, str)
    return label


def label_exists_error(label: str, *, operation: str) -> ManagedAgentError:
    """The collision error for an explicit or inherited label that is taken."""
    return ManagedAgentError(
        "agent_label_exists",
        f"Agent label already exists: {label}",
        operation=operation,
        ids={"label": label},
        next_action=(
            "Use agent_list to see the live agent with this label; choose another label, "
            "or close that agent first if abandoning its assignment is intended."
        ),
    )


def claim_label(label: object, taken: Collection[str], *, operation: str) -> str:
    """An explicit (or inherited) label: grammar first, then ``agent_label_exists``."""
    checked = validate_label(label, operation=operation)
    if checked in taken:
        raise label_exists_error(checked, operation=operation)
    return checked


def auto_label_candidates(definition: str) -> list[str]:
    """The automatic candidates in order: the name, then ``<name>-2`` … ``<name>-999``.

    Candidates that break the grammar (a long or non-lowercase definition name) are left out:
    an automatic label is never an invalid one.
    """
    names = [definition, *(f"{definition}-{n}" for n in range(2, AUTO_SUFFIX_MAX + 1))]
    return [name for name in names if is_valid_label(name)]


def choose_label(
    definition: str, taken: Collection[str], requested: str | None = None, *, operation: str
) -> str:
    """The label for a new assignment: ``requested`` if given, else the first free candidate."""
    if requested is not None:
        return claim_label(requested, taken, operation=operation)
    candidates = auto_label_candidates(definition)
    if not candidates:
        raise ManagedAgentError(
            "invalid_request",
            f"Definition name {definition!r} cannot form an agent label: {LABEL_RULE}",
            operation=operation,
            next_action="Pass an explicit label.",
        )
    for name in candidates:
        if name not in taken:
            return name
    raise ManagedAgentError(
        "agent_label_exists",
        f"Unable to choose agent label: {candidates[0]} through {candidates[-1]} are taken",
        operation=operation,
        next_action="Close finished agents of this definition, or pass an explicit label.",
    )
