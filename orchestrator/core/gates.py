"""The configuration gates (``enabled``, ``allowCwd``): the checks the runner applies.

Why here, below the tool families: a gate that binds ``herdr_spawn_agent`` but not
``_dsh_herdr_agent_start`` or ``agent_delegate`` is a gate another path walks around. So the
runner (:mod:`orchestrator.pipeline.call_guard`) applies these to every tool from its
declaration (:class:`~orchestrator.core.tool.Traits`), before the handler runs:

* **``enabled = false``** (the kill switch): nothing new is started. Refused: every call whose
  effect creates a pane, runs a command (``pane_run``, a ``pane_send_text`` with a line
  break), starts or prompts an agent (the low-level, agent and managed tools alike). Still
  allowed: reads, waits, and what only stops things (``herdr_interrupt_agent``,
  ``herdr_close_agent``, ``agent_close``), so the switch never keeps a user from stopping a
  runaway agent.
* **``allowCwd``** (when configured): every directory we make a shell or agent work in lies
  inside an allowed root, after resolving symlinks. A create or split with ``cwd`` gets the
  resolved path (the one checked) rather than the caller's spelling; a split without ``cwd``
  inherits its target pane's directory, so that directory is read and checked, and passed
  explicitly; a managed launch is checked on the directory its child will get. Calls that act
  in an existing pane (``agent_start``, ``agent_prompt``, ``pane_run``, ``pane_send_text``
  with a line break) check the pane's shell directory and its foreground process's directory
  as Herdr reports them; a pane whose directory Herdr does not report is refused (fail
  closed).

``allowCwd`` bounds where we *start* work; it is not a filesystem sandbox: a shell or agent can
``cd`` anywhere afterwards (docs/orchestrator/security.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from orchestrator.core.config import (
    Config,
    GateError,
    check_cwd,
    check_enabled,
)

if TYPE_CHECKING:
    from orchestrator.client.sync import HerdrClient
    from orchestrator.client.types import PaneInfo


@dataclass(frozen=True)
class Refusal:
    """A gate's refusal: ``code`` in the low-level spelling (lower_snake), the message."""

    code: str
    message: str
    field: str | None = None

    @property
    def agent_code(self) -> str:
        """The same code in the agent tools' spelling (UPPER_SNAKE)."""
        return self.code.upper()


class Refused(Exception):
    """Raised by the checks below; ``refusal`` says why."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


def _gate(exc: GateError) -> Refused:
    return Refused(Refusal(exc.code.lower(), str(exc), exc.field or None))


def require_enabled(config: Config) -> None:
    """:class:`Refused` (``disabled``) when the kill switch is off."""
    try:
        check_enabled(config)
    except GateError as exc:
        raise _gate(exc) from None


def allowed_cwd(config: Config, cwd: str) -> str:
    """The directory to pass to Herdr for ``cwd``: the resolved, checked path when
    ``allowCwd`` is configured, else ``cwd`` unchanged (:class:`Refused` when outside)."""
    if not config.allow_cwd:
        return cwd
    try:
        return str(check_cwd(config, cwd))
    except GateError as exc:
        raise _gate(exc) from None


def _pane_for_cwd(client: HerdrClient, pane_id: str) -> PaneInfo:
    """The pane whose directory an ``allowCwd`` check reads; :class:`Refused` when Herdr
    cannot say."""
    from orchestrator.client.errors import ClientError

    try:
        return client.pane_get(pane_id)
    except ClientError as exc:
        raise Refused(
            Refusal("cwd_unknown", f"cannot read pane {pane_id}'s directory: {exc}", "pane")
        ) from None


def pane_cwd_allowed(config: Config, client: HerdrClient, pane_id: str) -> None:
    """:class:`Refused` unless the pane's shell and foreground directories lie inside
    ``allowCwd`` (nothing to check when it is not configured)."""
    if not config.allow_cwd:
        return
    pane = _pane_for_cwd(client, pane_id)
    dirs = [d for d in (pane.cwd, pane.raw.get("foreground_cwd")) if isinstance(d, str) and d]
    if not dirs:
        raise Refused(
            Refusal(
                "cwd_unknown",
                f"Herdr does not report pane {pane_id}'s directory, so allowCwd cannot be checked",
                "pane",
            )
        )
    for directory in dirs:
        try:
            check_cwd(config, directory)
        except GateError as exc:
            raise Refused(Refusal(exc.code.lower(), f"pane {pane_id}: {exc}", "pane")) from None


def agent_pane_cwd_allowed(config: Config, client: HerdrClient, agent: str) -> None:
    """:class:`Refused` unless the pane hosting ``agent`` (a name or a pane id) works inside
    ``allowCwd``; an agent Herdr cannot find is refused (fail closed)."""
    if not config.allow_cwd:
        return
    from orchestrator.client.errors import ClientError

    try:
        pane = client.agent_get(agent).pane_id
    except ClientError as exc:  # an unknown directory is not an allowed one
        raise Refused(
            Refusal("cwd_unknown", f"cannot find agent {agent}'s pane: {exc}", "agent")
        ) from None
    pane_cwd_allowed(config, client, pane)


def inherited_cwd(config: Config, client: HerdrClient, pane_id: str) -> str | None:
    """For a split without ``cwd``: the checked directory of the target pane when
    ``allowCwd`` is configured (passed explicitly), else None (Herdr follows the pane)."""
    if not config.allow_cwd:
        return None
    pane = _pane_for_cwd(client, pane_id)
    if not pane.cwd:
        raise Refused(
            Refusal(
                "cwd_unknown",
                f"Herdr does not report pane {pane_id}'s directory: pass cwd explicitly",
                "cwd",
            )
        )
    return allowed_cwd(config, pane.cwd)


__all__ = [
    "Refusal",
    "Refused",
    "agent_pane_cwd_allowed",
    "allowed_cwd",
    "inherited_cwd",
    "pane_cwd_allowed",
    "require_enabled",
]
