"""What a delegate or a continue starts from: a definition by name, a session to continue.

Why apart from the launch: both are resolved before anything starts (the runner's gates
check a continue's directory and label first, :func:`continue_source`), and a continue's
session is resolved again under the store's lock, so of two concurrent continues of one
session the second fails.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

from orchestrator.client.file_trust.private_files import UnsafeFile, read_bounded
from orchestrator.managed.definitions import AgentDefinition
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.footing import ServiceFooting
from orchestrator.managed.store import Generation
from orchestrator.managed.supervisor import SESSION_RETIRED

__all__ = ["find_definition", "session_source"]

_SESSION_HEADER_LIMIT = 64 * 1024


def find_definition(footing: ServiceFooting, name: str, operation: str) -> AgentDefinition:
    """The enabled definition ``name`` of the roster (a delegating child's: its allowlist's)."""
    roster = footing.roster()
    found = roster.definitions.get(name)
    if found is None and footing.delegating is not None:
        raise ManagedAgentError(
            "invalid_request",
            f"Agent definition {name} is not in the roster of agent "
            f"{footing.delegating.label}: it may delegate only to the enabled definitions "
            "its definition's agents list names",
            operation=operation,
            next_action="Use agent_list to see the definitions you may delegate to.",
        )
    if found is None:
        known = ", ".join(d.name for d in roster.enabled()) or "none"
        raise ManagedAgentError(
            "invalid_request",
            f"Agent definition {name} was not found (the roster has: {known})",
            operation=operation,
            next_action="Use agent_list to see the effective definition roster. "
            + footing.where_definitions_go(),
        )
    if not found.enabled:
        raise ManagedAgentError(
            "invalid_request",
            f"Agent definition {name} is disabled; choose another enabled definition",
            operation=operation,
        )
    return found


def session_source(footing: ServiceFooting, session: str, operation: str) -> Generation:
    """The owned generation whose pi session ``session`` (exact path or full UUID) is."""
    text = session.strip()
    if not text:
        raise ManagedAgentError(
            "invalid_request",
            "assignment requires an exact session path or full UUID session ID",
            operation=operation,
        )
    path_like = "/" in text or "\\" in text or text.endswith(".jsonl") or text.startswith("~")
    owned = [
        g
        for g in footing.store.scan()[0]
        if g.owner_session_id == footing.controller_id and g.pi_session_file
    ]
    if path_like:
        candidate = Path(text).expanduser()
        if not candidate.is_absolute():
            candidate = footing.cwd / candidate
        try:
            real = os.path.realpath(candidate, strict=True)
        except OSError as exc:
            raise ManagedAgentError(
                "invalid_request",
                f"could not canonicalize session path {text}: {exc.strerror}",
                operation=operation,
            ) from None
        header = _session_header(Path(real), operation)
        matches = [g for g in owned if os.path.realpath(str(g.pi_session_file)) == real]
        session_id = header.get("id")
    else:
        session_id = _uuid(text)
        if session_id is None:
            raise ManagedAgentError(
                "invalid_request",
                f"{text!r} is neither a session path nor a full UUID (prefixes are not allowed)",
                operation=operation,
            )
        matches = [g for g in owned if g.pi_session_id == session_id]
    if session_id == footing.controller_id:
        raise ManagedAgentError(
            "invalid_request",
            "Cannot continue the controller's currently active Pi session.",
            operation=operation,
        )
    if not matches:
        raise ManagedAgentError(
            "invalid_request",
            "Assignment source is outside the caller's proven session ownership tree",
            operation=operation,
            next_action="Continue only a session of an agent this controller owned.",
        )
    if footing.settings.context_retirement and any(g.extra.get(SESSION_RETIRED) for g in matches):
        raise ManagedAgentError(
            "invalid_request",
            "The managed-agent session was retired after context pressure; "
            "agent_continue is refused for a retired session while contextRetirement "
            "is on.",
            operation=operation,
            next_action=(
                "Delegate a fresh agent with agent_delegate and pass the previous "
                "handoff/result (its result: ref) and the relevant files instead."
            ),
        )
    active = [g for g in matches if g.active]
    if len(active) > 1:
        raise ManagedAgentError(
            "target_ambiguous",
            "The exact Pi session is represented by more than one managed agent",
            operation=operation,
        )
    if active:
        raise ManagedAgentError(
            "agent_busy",
            "The exact Pi session is already represented by active managed work: "
            f"{active[0].label}",
            operation=operation,
            ids={"label": active[0].label},
            next_action="Let that agent finish or close it before continuing its session.",
        )
    latest = max(matches, key=lambda g: (g.created_at, g.run_id))
    return latest


def _uuid(text: str) -> str | None:
    try:
        value = str(uuid.UUID(text))
    except ValueError:
        return None
    return value if value == text.lower() else None


def _session_header(path: Path, operation: str) -> dict[str, Any]:
    """The first JSONL entry of a pi session file (``type: session``)."""
    try:
        read = read_bounded(path, _SESSION_HEADER_LIMIT)
    except (UnsafeFile, OSError) as exc:
        raise ManagedAgentError(
            "invalid_request", f"session file {path} is not readable: {exc}", operation=operation
        ) from None
    first = read.data.split(b"\n", 1)[0]
    try:
        header = json.loads(first.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        header = None
    if not isinstance(header, dict) or header.get("type") != "session":
        raise ManagedAgentError(
            "invalid_request", f"{path} is not a pi session file", operation=operation
        )
    if not isinstance(header.get("cwd"), str) or not header["cwd"]:
        raise ManagedAgentError(
            "invalid_request", f"session {path} has no cwd in its header", operation=operation
        )
    return header
