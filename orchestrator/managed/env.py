"""The environment a controller gives a managed pi child, and the child's check of it.

Why: the child learns who it is (its mailbox, generation, owner, label, workspace, definition
and delegation allowlist) only from its environment, set by the controller when it launches
pi. Both sides must agree on the names, so they live here once: the controller builds the
values with :func:`child_env`, the child (the fake pi, or the bridge the pi extension runs)
reads them back with :meth:`ChildIdentity.from_env`. A child with a broken environment must
not speak the mailbox at all, so the check is strict and every refusal is a fixed, clear
sentence naming the variable (a value is quoted only shortened, never a secret).

The child's pane id is Herdr's ``HERDR_PANE_ID`` (Herdr sets it in the child's pane); the
owner's own ``HERDR_PANE_ID``/``HERDR_TAB_ID``/``HERDR_WORKSPACE_ID`` must not leak into the
child, so :func:`without_owner_identity` removes them (and any ``PI_HERDSMAN_*`` of a
delegating owner) from what the controller passes on.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.labels import LABEL_RULE, is_valid_label
from orchestrator.managed.mailbox import NAMESPACE, mailbox_dir_name

__all__ = [
    "ALLOWED_DEFINITIONS_ENV",
    "CHILD_ENV_NAMES",
    "CONTEXT_RETIREMENT_ENV",
    "DEFINITION_ENV",
    "LABEL_ENV",
    "MAILBOX_ENV",
    "OWNER_HERDR_VARS",
    "OWNER_SESSION_ENV",
    "PANE_ENV",
    "PYTHON_ENV",
    "RUN_ID_ENV",
    "SUBAGENT_ENV",
    "WORKSPACE_ENV",
    "ChildEnvError",
    "ChildIdentity",
    "child_env",
    "without_owner_identity",
]

MAILBOX_ENV = "PI_HERDSMAN_MAILBOX"
RUN_ID_ENV = "PI_HERDSMAN_RUN_ID"
OWNER_SESSION_ENV = "PI_HERDSMAN_OWNER_SESSION_ID"
LABEL_ENV = "PI_HERDSMAN_LABEL"
WORKSPACE_ENV = "PI_HERDSMAN_WORKSPACE_ID"
DEFINITION_ENV = "PI_HERDSMAN_AGENT_DEFINITION"
ALLOWED_DEFINITIONS_ENV = "PI_HERDSMAN_ALLOWED_AGENT_DEFINITIONS"
#: the interpreter the pi extension starts the bridge (``orchestrator.managed.child_cli``) with
PYTHON_ENV = "PI_HERDSMAN_PYTHON"
SUBAGENT_ENV = "PI_SUBAGENT_CHILD"
#: the controller's ``contextRetirement`` (``1``/``0``; absent: on, the setting's default):
#: whether a compaction under context pressure retires the child's session
CONTEXT_RETIREMENT_ENV = "PI_HERDSMAN_CONTEXT_RETIREMENT"
#: Herdr's pane id of the child (set by Herdr in the child's pane, not by the controller)
PANE_ENV = "HERDR_PANE_ID"

#: every name the controller sets (in this order)
CHILD_ENV_NAMES = (
    MAILBOX_ENV,
    RUN_ID_ENV,
    OWNER_SESSION_ENV,
    LABEL_ENV,
    WORKSPACE_ENV,
    DEFINITION_ENV,
    ALLOWED_DEFINITIONS_ENV,
    PYTHON_ENV,
    SUBAGENT_ENV,
    CONTEXT_RETIREMENT_ENV,
)
#: the owner's Herdr identity: never passed on (Herdr sets the child's own)
OWNER_HERDR_VARS = ("HERDR_PANE_ID", "HERDR_TAB_ID", "HERDR_WORKSPACE_ID")

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_MAILBOX_NAME = re.compile(r"[0-9a-f]{32}")
#: an id or name: printable, no whitespace, bounded (ids travel into paths, JSON and screens)
_TOKEN = re.compile(r"[^\s\x00-\x1f\x7f]{1,200}")
_OPERATION = "managed child environment"


class ChildEnvError(ManagedAgentError):
    """The child's environment is missing or breaks a rule (``invalid_request``)."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(
            "invalid_request",
            f"{name} {problem}",
            operation=_OPERATION,
            next_action=(
                "Start managed children only through the controller (agent_delegate / "
                "agent_continue), which sets the PI_HERDSMAN_* environment."
            ),
            details={"variable": name},
        )
        self.variable = name


def _shown(value: str) -> str:
    return repr(value if len(value) <= 60 else value[:57] + "...")


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name)
    if value is None or value == "":
        raise ChildEnvError(name, "is not set")
    return value


def _token(env: Mapping[str, str], name: str, what: str) -> str:
    value = _required(env, name)
    if not _TOKEN.fullmatch(value):
        raise ChildEnvError(
            name, f"is not a valid {what} (1-200 printable characters, no whitespace)"
        )
    return value


def _definitions(raw: str) -> tuple[str, ...]:
    name = ALLOWED_DEFINITIONS_ENV
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        raise ChildEnvError(name, "is not JSON (expected an array of definition names)") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ChildEnvError(name, "is not a JSON array of strings")
    for item in value:
        if not _TOKEN.fullmatch(item):
            raise ChildEnvError(name, f"holds an invalid definition name {_shown(item)}")
    if len(set(value)) != len(value):
        raise ChildEnvError(name, "repeats a definition name")
    return tuple(value)


def _mailbox_dir(raw: str, workspace_id: str, label: str) -> Path:
    path = Path(raw)
    if not path.is_absolute():
        raise ChildEnvError(MAILBOX_ENV, "is not an absolute path")
    if ".." in path.parts or str(path) != raw.rstrip("/") or raw.endswith("/"):
        raise ChildEnvError(MAILBOX_ENV, "is not a canonical path")
    if path.parent.name != NAMESPACE or not _MAILBOX_NAME.fullmatch(path.name):
        raise ChildEnvError(MAILBOX_ENV, f"is not a {NAMESPACE}/<32 hex> mailbox directory")
    if path.name != mailbox_dir_name(workspace_id, label):
        raise ChildEnvError(
            MAILBOX_ENV,
            f"is not the mailbox of label {label!r} in workspace {_shown(workspace_id)}",
        )
    return path


@dataclass(frozen=True)
class ChildIdentity:
    """Who a managed child is, as its environment says (checked)."""

    mailbox_dir: Path
    run_id: str
    owner_session_id: str
    label: str
    workspace_id: str
    definition: str
    allowed_definitions: tuple[str, ...]
    pane_id: str
    #: the controller's ``contextRetirement`` (:data:`CONTEXT_RETIREMENT_ENV`)
    context_retirement: bool = True

    @property
    def delegating(self) -> bool:
        """Whether this child may delegate (its definition allowlists others)."""
        return bool(self.allowed_definitions)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ChildIdentity:
        """The identity in ``env``; :class:`ChildEnvError` naming the first bad variable."""
        if env.get(SUBAGENT_ENV) != "1":
            raise ChildEnvError(SUBAGENT_ENV, "is not 1: this process is not a managed child")
        raw_mailbox = _required(env, MAILBOX_ENV)
        run_id = _required(env, RUN_ID_ENV)
        if not _UUID.fullmatch(run_id):
            raise ChildEnvError(RUN_ID_ENV, "is not a lowercase UUID")
        owner = _token(env, OWNER_SESSION_ENV, "session id")
        label = _required(env, LABEL_ENV)
        if not is_valid_label(label):
            raise ChildEnvError(LABEL_ENV, f"is not a valid label: {LABEL_RULE}")
        workspace = _token(env, WORKSPACE_ENV, "workspace id")
        definition = _token(env, DEFINITION_ENV, "definition name")
        allowed = _definitions(_required(env, ALLOWED_DEFINITIONS_ENV))
        pane = env.get(PANE_ENV) or ""
        if not pane:
            raise ChildEnvError(PANE_ENV, "is not set: a managed child runs in a Herdr pane")
        if not _TOKEN.fullmatch(pane):
            raise ChildEnvError(PANE_ENV, "is not a valid pane id")
        mailbox_dir = _mailbox_dir(raw_mailbox, workspace, label)
        retirement = env.get(CONTEXT_RETIREMENT_ENV) or "1"
        if retirement not in ("0", "1"):
            raise ChildEnvError(CONTEXT_RETIREMENT_ENV, "is not 0 or 1")
        return cls(
            mailbox_dir,
            run_id,
            owner,
            label,
            workspace,
            definition,
            allowed,
            pane,
            context_retirement=retirement == "1",
        )


def child_env(
    *,
    mailbox_dir: Path | str,
    run_id: str,
    owner_session_id: str,
    label: str,
    workspace_id: str,
    definition: str,
    allowed_definitions: Sequence[str] = (),
    python: str | None = None,
    context_retirement: bool = True,
) -> dict[str, str]:
    """The ``PI_HERDSMAN_*`` variables (plus ``PI_SUBAGENT_CHILD=1``) for one child
    generation, checked by the same rules the child applies; ``python`` defaults to this
    interpreter (``sys.executable``), which the pi extension runs the bridge with."""
    env = {
        MAILBOX_ENV: str(mailbox_dir),
        RUN_ID_ENV: run_id,
        OWNER_SESSION_ENV: owner_session_id,
        LABEL_ENV: label,
        WORKSPACE_ENV: workspace_id,
        DEFINITION_ENV: definition,
        ALLOWED_DEFINITIONS_ENV: json.dumps(list(allowed_definitions)),
        PYTHON_ENV: python if python is not None else sys.executable,
        SUBAGENT_ENV: "1",
        CONTEXT_RETIREMENT_ENV: "1" if context_retirement else "0",
    }
    # the child's own check, with a placeholder for the pane id Herdr sets later
    ChildIdentity.from_env({**env, PANE_ENV: "pending"})
    if not env[PYTHON_ENV] or not Path(env[PYTHON_ENV]).is_absolute():
        raise ChildEnvError(PYTHON_ENV, "is not an absolute interpreter path")
    return env


def without_owner_identity(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` minus the owner's Herdr pane/tab/workspace ids and any managed-child
    variables of its own (a delegating owner is itself a child)."""
    drop = set(OWNER_HERDR_VARS) | set(CHILD_ENV_NAMES)
    return {k: v for k, v in env.items() if k not in drop and not k.startswith("PI_HERDSMAN_")}
