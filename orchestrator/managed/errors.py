"""The structured error of the managed-agent tools (seed 002).

Every managed-agent failure carries the same shape so a model (and a test) can act on it
without parsing prose: ``category``, ``message``, ``operation``, ``rollbackOccurred``,
``retryAttempted``, optional ``nextAction``, ``ids`` and ``details``. The categories are the
reference's closed set (pi-herdsman.md A.3); one exception type keeps them in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

ErrorCategory = Literal[
    "not_running_inside_herdr",
    "agent_label_exists",
    "pane_not_ready",
    "target_not_found",
    "target_ambiguous",
    "rollback_failure",
    "agent_busy",
    "invalid_request",
    "internal_failure",
    "incompatible_build",
]

ERROR_CATEGORIES: frozenset[str] = frozenset(get_args(ErrorCategory))


class ManagedAgentError(Exception):
    """A managed-agent operation failed; ``to_dict()`` is the public error detail."""

    def __init__(
        self,
        category: ErrorCategory,
        message: str,
        *,
        operation: str,
        rollback_occurred: bool = False,
        retry_attempted: bool = False,
        next_action: str | None = None,
        ids: Mapping[str, str] | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        if category not in ERROR_CATEGORIES:
            raise ValueError(f"unknown managed-agent error category: {category!r}")
        super().__init__(message)
        self.category: ErrorCategory = category
        self.message = message
        self.operation = operation
        self.rollback_occurred = rollback_occurred
        self.retry_attempted = retry_attempted
        self.next_action = next_action
        self.ids = dict(ids) if ids else None
        self.details = dict(details) if details else None

    def to_dict(self) -> dict[str, Any]:
        """The reference's StructuredError: absent optional fields are omitted."""
        out: dict[str, Any] = {
            "category": self.category,
            "message": self.message,
            "operation": self.operation,
            "rollbackOccurred": self.rollback_occurred,
            "retryAttempted": self.retry_attempted,
        }
        if self.ids:
            out["ids"] = dict(self.ids)
        if self.next_action:
            out["nextAction"] = self.next_action
        if self.details:
            out["details"] = dict(self.details)
        return out
