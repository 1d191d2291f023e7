"""AsyncHerdrClient: the same client for asyncio code.

Each call runs the synchronous :class:`~orchestrator.client.sync.HerdrClient` in a worker
thread. That keeps ONE implementation of the rules that matter — the protocol check, the
transports' deadlines and the never-resend-a-mutation policy — instead of two that could
drift; every blocking step below already has a deadline, so a worker thread never hangs. The
event loop stays free while Herdr waits (``agent_prompt`` with ``wait``, ``pane_wait_output``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from orchestrator.client.sync import HerdrClient, Source, TransportKind
from orchestrator.client.transports import Exchange
from orchestrator.client.types import (
    AgentInfo,
    AgentStarted,
    OutputMatch,
    PaneInfo,
    PaneRead,
    Pong,
    TabCreated,
    TabInfo,
    WorkspaceCreated,
    WorkspaceInfo,
)
from orchestrator.client.wire import EventHooks, InMemoryServer

T = TypeVar("T")


class AsyncHerdrClient:
    """Async twin of :class:`HerdrClient` (same methods, awaitable)."""

    def __init__(self, client: HerdrClient) -> None:
        self.sync = client

    @classmethod
    def build(
        cls,
        kind: TransportKind = "auto",
        *,
        socket_path: Path | str | None = None,
        herdr: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        event_hooks: EventHooks | None = None,
    ) -> AsyncHerdrClient:
        """Like :meth:`HerdrClient.build`."""
        return cls(
            HerdrClient.build(
                kind,
                socket_path=socket_path,
                herdr=herdr,
                env=env,
                timeout=timeout,
                event_hooks=event_hooks,
            )
        )

    @classmethod
    def in_memory(
        cls,
        simulator: InMemoryServer,
        *,
        timeout: float = 30.0,
        event_hooks: EventHooks | None = None,
    ) -> AsyncHerdrClient:
        """Like :meth:`HerdrClient.in_memory`: a simulator driven without its socket."""
        return cls(HerdrClient.in_memory(simulator, timeout=timeout, event_hooks=event_hooks))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AsyncHerdrClient:
        """Like :meth:`HerdrClient.from_env`."""
        return cls(HerdrClient.from_env(env))

    async def _run(self, fn: Callable[..., T], *args: Any, **kw: Any) -> T:
        return await asyncio.to_thread(fn, *args, **kw)

    async def connect(self) -> Pong:
        """Ping and check the protocol (IncompatibleServer on a mismatch)."""
        return await self._run(self.sync.connect)

    async def ping(self) -> Pong:
        """The server's version and protocol."""
        return await self._run(self.sync.ping)

    async def execute(
        self, operation: str, params: Mapping[str, Any], *, timeout: float | None = None
    ) -> Exchange:
        """Run one operation; see :meth:`HerdrClient.execute`."""
        return await self._run(self.sync.execute, operation, params, timeout=timeout)

    async def call(self, operation: str, params: Mapping[str, Any] | None = None) -> Any:
        """The result of one operation, raising the error family of a refusal."""
        return await self._run(self.sync.call, operation, params)

    async def workspace_list(self) -> list[WorkspaceInfo]:
        """Every workspace."""
        return await self._run(self.sync.workspace_list)

    async def workspace_get(self, workspace_id: str) -> WorkspaceInfo:
        """One workspace."""
        return await self._run(self.sync.workspace_get, workspace_id)

    async def workspace_create(self, cwd: str | None = None, **kw: Any) -> WorkspaceCreated:
        """A new workspace (no focus change unless ``focus=True``)."""
        return await self._run(self.sync.workspace_create, cwd, **kw)

    async def tab_list(self, workspace_id: str | None = None) -> list[TabInfo]:
        """Tabs of one workspace, or of all."""
        return await self._run(self.sync.tab_list, workspace_id)

    async def tab_get(self, tab_id: str) -> TabInfo:
        """One tab."""
        return await self._run(self.sync.tab_get, tab_id)

    async def tab_create(self, workspace_id: str, cwd: str | None = None, **kw: Any) -> TabCreated:
        """A new tab."""
        return await self._run(self.sync.tab_create, workspace_id, cwd, **kw)

    async def pane_list(self, workspace_id: str | None = None) -> list[PaneInfo]:
        """Panes of one workspace, or of all."""
        return await self._run(self.sync.pane_list, workspace_id)

    async def pane_get(self, pane_id: str) -> PaneInfo:
        """One pane."""
        return await self._run(self.sync.pane_get, pane_id)

    async def pane_split(
        self, pane_id: str, direction: Literal["right", "down"], **kw: Any
    ) -> PaneInfo:
        """The new pane split off ``pane_id``."""
        return await self._run(self.sync.pane_split, pane_id, direction, **kw)

    async def pane_read(
        self, pane_id: str, source: Source = "recent", lines: int | None = None
    ) -> PaneRead:
        """The pane's text."""
        return await self._run(self.sync.pane_read, pane_id, source, lines)

    async def pane_run(self, pane_id: str, command: str) -> None:
        """Type ``command`` and Enter."""
        await self._run(self.sync.pane_run, pane_id, command)

    async def pane_close(self, pane_id: str) -> None:
        """Close the pane."""
        await self._run(self.sync.pane_close, pane_id)

    async def agent_send_keys(self, target: str, *keys: str) -> None:
        """Press ``keys`` in the agent's pane."""
        await self._run(self.sync.agent_send_keys, target, *keys)

    async def pane_send_text(self, pane_id: str, text: str) -> None:
        """Type ``text`` (no Enter)."""
        await self._run(self.sync.pane_send_text, pane_id, text)

    async def pane_wait_output(self, pane_id: str, pattern: str, **kw: Any) -> OutputMatch:
        """Wait for a matching line."""
        return await self._run(self.sync.pane_wait_output, pane_id, pattern, **kw)

    async def agent_list(self) -> list[AgentInfo]:
        """Every agent."""
        return await self._run(self.sync.agent_list)

    async def agent_get(self, target: str) -> AgentInfo:
        """One agent."""
        return await self._run(self.sync.agent_get, target)

    async def agent_read(
        self, target: str, source: Source = "recent", lines: int | None = None
    ) -> PaneRead:
        """The agent pane's text."""
        return await self._run(self.sync.agent_read, target, source, lines)

    async def agent_start(
        self,
        name: str,
        kind: str,
        pane_id: str,
        *,
        args: Sequence[str] = (),
        timeout_ms: int | None = None,
    ) -> AgentStarted:
        """Start an agent and wait until it is interactive."""
        return await self._run(
            self.sync.agent_start, name, kind, pane_id, args=args, timeout_ms=timeout_ms
        )

    async def agent_wait(self, target: str, **kw: Any) -> AgentInfo:
        """Wait for a status."""
        return await self._run(self.sync.agent_wait, target, **kw)

    async def agent_prompt(self, target: str, text: str, **kw: Any) -> AgentInfo:
        """Send a prompt (optionally waiting)."""
        return await self._run(self.sync.agent_prompt, target, text, **kw)

    async def agent_explain(self, target: str) -> dict[str, Any]:
        """Herdr's detection explanation."""
        return await self._run(self.sync.agent_explain, target)
