"""What every agent-tool handler stands on: configuration, task records, slots and a client.

Why a :class:`~orchestrator.tools.tool.ToolContext` subclass: the registry's ``run_tool``
hands every handler a ``ToolContext``, and servers build one per process. An
:class:`AgentToolsContext` *is* one, so a server that wants the agent tools passes it to
``run_tool`` unchanged; a handler given a plain ``ToolContext`` (a one-shot CLI call, a test)
gets an :class:`AgentToolsContext` built from that context's environment and client by
:func:`agent_context`. Everything is built on first use, so listing tools never reads the
configuration or touches Herdr.

The client follows the configuration's ``transport`` (``auto``/``socket``/``cli``, itself
overridable by ``HERDR_ORCHESTRATOR_TRANSPORT``) and Herdr's own variables in ``env``
(``HERDR_SOCKET_PATH``, ``HERDR_BIN_PATH``, …).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from orchestrator.agent_tools.completion import holds_slot
from orchestrator.agent_tools.config import Config, load_config
from orchestrator.agent_tools.records import TaskStore
from orchestrator.agent_tools.slots import Slots
from orchestrator.tools.tool import ToolContext

if TYPE_CHECKING:
    from orchestrator.client.sync import HerdrClient

#: The variable Herdr sets in every pane: the caller itself runs inside Herdr.
HERDR_PANE_ENV = "HERDR_PANE_ID"


@dataclass
class AgentToolsContext(ToolContext):
    """A :class:`ToolContext` with the agent tools' configuration, records and slots.

    ``config`` defaults to :func:`~orchestrator.agent_tools.config.load_config` of ``env``
    (raising :class:`~orchestrator.agent_tools.config.ConfigError` on first use when the
    configuration is invalid).
    """

    _config: Config | None = field(default=None, repr=False)
    _store: TaskStore | None = field(default=None, repr=False)
    _slots: Slots | None = field(default=None, repr=False)
    #: task id → (monotonic time, holds its slot): the cap's last look at a detached task
    liveness: dict[str, tuple[float, bool]] = field(default_factory=dict, repr=False)

    @classmethod
    def create(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        config: Config | None = None,
        client: HerdrClient | None = None,
    ) -> AgentToolsContext:
        """A context for ``env`` (default: this process's), optionally with a given
        configuration and client (tests, embedding)."""
        ctx = cls(env=dict(os.environ if env is None else env))
        ctx._config = config
        ctx._client = client
        return ctx

    @property
    def config(self) -> Config:
        """The effective configuration, loaded on first use."""
        if self._config is None:
            self._config = load_config(self.env)
        return self._config

    @property
    def store(self) -> TaskStore:
        """The task records of the configured state directory."""
        if self._store is None:
            self._store = TaskStore(self.config.state_dir)
        return self._store

    @property
    def slots(self) -> Slots:
        """The concurrency cap (``maxConcurrent``); a task holds its slot while its agent may
        still work (:func:`~orchestrator.agent_tools.completion.holds_slot`: the record is
        active and Herdr shows the agent alive and not finished)."""
        if self._slots is None:
            self._slots = Slots(
                self.config.slots_dir,
                self.config.max_concurrent,
                task_active=self._holds_slot,
            )
        return self._slots

    def _holds_slot(self, task_id: str) -> bool:
        return holds_slot(
            self.store, lambda: self.client, self.config.artifact_dir, self.liveness, task_id
        )

    @property
    def client(self) -> HerdrClient:
        """The Herdr client: the configured transport over ``env``, built on first use."""
        if self._client is None:
            if self.client_factory is not None:
                self._client = self.client_factory(self.env)
            else:
                from orchestrator.client.sync import HerdrClient

                self._client = HerdrClient.build(self.config.transport, env=self.env)
        return self._client

    @property
    def caller_pane(self) -> str | None:
        """The caller's own pane when it runs inside Herdr (``HERDR_PANE_ID``), else None."""
        pane = self.env.get(HERDR_PANE_ENV, "").strip()
        return pane or None


def agent_context(ctx: ToolContext) -> AgentToolsContext:
    """``ctx`` itself when it is an :class:`AgentToolsContext`, else one built from its
    environment, client factory and (already built) client."""
    if isinstance(ctx, AgentToolsContext):
        return ctx
    built = AgentToolsContext(env=dict(ctx.env), client_factory=ctx.client_factory)
    built._client = ctx._client
    return built


__all__ = ["HERDR_PANE_ENV", "AgentToolsContext", "agent_context"]
