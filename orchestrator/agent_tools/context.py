"""What every agent-tool handler stands on: configuration, task records, slots and a client.

Why a :class:`~orchestrator.core.tool.ToolContext` subclass: the registry's ``run_tool``
hands every handler a ``ToolContext``, and servers build one per process. An
:class:`AgentToolsContext` *is* one, so a server that wants the agent tools passes it to
``run_tool`` unchanged; a handler given a plain ``ToolContext`` (a one-shot CLI call, a test)
gets an :class:`AgentToolsContext` built from that context's environment and client by
:func:`agent_context`. Everything is built on first use, so listing tools never reads the
configuration or touches Herdr.

The client follows the configuration's ``transport`` (``auto``/``socket``/``cli``, itself
overridable by ``HERDR_ORCHESTRATOR_TRANSPORT``) and Herdr's own variables in ``env``
(``HERDR_SOCKET_PATH``, ``HERDR_BIN_PATH``, …).

What is kept across calls, and when it is dropped (decided in issue 12c): a server holds one
context per process, and every call used to rebuild the configuration, the records, the
slots and the client — and so ping Herdr again. Now :func:`agent_context` keeps the
:class:`AgentToolsContext` it derives in the given context (``ToolContext.derived``) and
calls :meth:`AgentToolsContext.refresh` at the start of every call, which compares two cheap
keys with the last call's:

* the **configuration key** — the whole ``env`` and the configuration file's identity
  (path, inode, size, mtime): when it changed, the configuration, records, slots *and*
  client are dropped and rebuilt on first use (the transport is configured there);
* the **server key** — the identity of the socket file (inode, ctime): a restarted Herdr
  makes a new socket, so the client is dropped and the new server is pinged again.

A configuration or client given by the caller (:meth:`AgentToolsContext.create`, a client
already built on the given ``ToolContext``) is never dropped. The liveness cache of the
concurrency cap is kept across calls on purpose: it is time-bounded per task.

Remote machines (issue 16): a call works on one machine at a time, the local one unless it
chose another (:meth:`AgentToolsContext.select_machine`: a ``machine`` argument, or the
machine an owned task's record names). The choice lives in a context variable, so each worker
thread of a server has its own, and the tool wrapper (:func:`on_local_machine`) resets it
around every call. :attr:`AgentToolsContext.client` answers the chosen machine's client: for
a remote machine always Herdr's CLI with ``--machine <label>`` (seed 000: the CLI is the only
transport for remote machines), built once per label.

Concurrent calls (an MCP server's worker threads) share the kept context: the records and
the slots lock their files per operation (``flock`` on a fresh descriptor), so they hold no
state of their own to race on, and two threads refreshing at once at worst build the same
thing twice.
"""

from __future__ import annotations

import contextvars
import functools
import os
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.agent_tools.completion import holds_slot
from orchestrator.agent_tools.records import TaskStore
from orchestrator.agent_tools.remote_files import task_files
from orchestrator.agent_tools.slots import Slots
from orchestrator.core.config import (
    CONFIG_ENV,
    LOCAL_MACHINE,
    Config,
    default_config_path,
    load_config,
)
from orchestrator.core.tool import ToolContext
from orchestrator.logs import task_logger

if TYPE_CHECKING:
    from orchestrator.client.sync import HerdrClient

logger = task_logger(__name__)

#: The variable Herdr sets in every pane: the caller itself runs inside Herdr.
HERDR_PANE_ENV = "HERDR_PANE_ID"
#: the key of :attr:`ToolContext.derived` the agent tools keep their context under
DERIVED_KEY = "agent_tools"
#: the machine the current call works on (see the module docstring)
_MACHINE: contextvars.ContextVar[str] = contextvars.ContextVar(
    "herdr_orchestrator_machine", default=LOCAL_MACHINE
)
#: a key before the first :meth:`AgentToolsContext.refresh` (its first look is the baseline)
_UNSEEN: Hashable = object()


def _identity(path: Path) -> tuple[str, int, int, int, int] | None:
    """A file's identity for change detection (None: it does not exist or cannot be read)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (str(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def config_key(env: Mapping[str, str]) -> Hashable:
    """What the configuration is built from: the environment and the file's identity."""
    named = env.get(CONFIG_ENV) or None
    file = Path(named).expanduser() if named is not None else default_config_path(env)
    return (tuple(sorted(env.items())), _identity(file))


def server_key(env: Mapping[str, str]) -> Hashable:
    """The identity of the socket Herdr listens on (a restarted server makes a new one)."""
    from orchestrator.client.transports import default_socket_path

    return _identity(default_socket_path(dict(env)))


@dataclass
class AgentToolsContext(ToolContext):
    """A :class:`ToolContext` with the agent tools' configuration, records and slots.

    ``config`` defaults to :func:`~orchestrator.core.config.load_config` of ``env``
    (raising :class:`~orchestrator.core.config.ConfigError` on first use when the
    configuration is invalid).
    """

    _config: Config | None = field(default=None, repr=False)
    _store: TaskStore | None = field(default=None, repr=False)
    _slots: Slots | None = field(default=None, repr=False)
    #: task id → (monotonic time, holds its slot): the cap's last look at a detached task
    liveness: dict[str, tuple[float, bool]] = field(default_factory=dict, repr=False)
    #: a configuration / client given by the caller: never dropped by :meth:`refresh`
    _config_given: bool = field(default=False, repr=False)
    _client_given: bool = field(default=False, repr=False)
    _config_key: Hashable = field(default=_UNSEEN, repr=False)
    _server_key: Hashable = field(default=_UNSEEN, repr=False)
    #: label → the CLI client of that remote machine (``--machine <label>``)
    _remote_clients: dict[str, HerdrClient] = field(default_factory=dict, repr=False)

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
        ctx._config_given = config is not None
        ctx._client_given = client is not None
        return ctx

    def refresh(self) -> None:
        """Drop what a changed configuration or a restarted server made stale (see the
        module docstring); called by :func:`agent_context` at the start of every call."""
        key = config_key(self.env)
        if key != self._config_key:
            # the first look only takes the baseline: what the creator set is kept
            if self._config_key is not _UNSEEN:
                logger.info("configuration changed: rebuilding the agent tools' context")
                if not self._config_given:
                    self._config = None
                    self._store = None
                    self._slots = None
                if not self._client_given:
                    self._client = None
                self._remote_clients.clear()
            self._config_key = key
        if self._client_given:
            return
        server = server_key(self.env)
        if server != self._server_key:
            if self._server_key is not _UNSEEN and self._client is not None:
                logger.info("Herdr's socket changed: a new client (and a new protocol check)")
                self._client = None
            self._server_key = server

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
        from orchestrator.agent_tools.records import TaskNotFound

        try:
            machine = self.store.get(task_id).machine
        except (TaskNotFound, ValueError):
            machine = LOCAL_MACHINE
        return holds_slot(
            self.store,
            lambda: self.client_for(machine),
            self.config.artifact_dir,
            self.liveness,
            task_id,
            functools.partial(task_files, self.config),
        )

    @property
    def machine(self) -> str:
        """The machine the current call works on (``"local"`` unless it chose another)."""
        return _MACHINE.get()

    def select_machine(self, machine: str) -> None:
        """Work on ``machine`` (``"local"`` or a label the configuration enables) for the
        rest of this call: :attr:`client` becomes that machine's."""
        _MACHINE.set(machine)

    @property
    def client(self) -> HerdrClient:
        """The Herdr client of the current call's machine (:attr:`machine`)."""
        return self.client_for(self.machine)

    def client_for(self, machine: str) -> HerdrClient:
        """The client of ``machine``: the local one (the configured transport over ``env``,
        built on first use), or a remote machine's ``herdr --machine <label>`` CLI client."""
        if machine != LOCAL_MACHINE:
            remote = self._remote_clients.get(machine)
            if remote is None:
                from orchestrator.client.sync import HerdrClient
                from orchestrator.client.transports import CliTransport

                remote = HerdrClient(CliTransport(env=self.env, machine=machine))
                self._remote_clients[machine] = remote
            return remote
        if self._client is None:
            if self.client_factory is not None:
                self._client = self.client_factory(self.env)
            else:
                from orchestrator.client.sync import HerdrClient

                self._client = HerdrClient.build(self.config.transport, env=self.env)
        return self._client

    @property
    def caller_pane(self) -> str | None:
        """The caller's own pane when it runs inside Herdr (``HERDR_PANE_ID``) and the call
        works on the local machine, else None (a local pane id means nothing elsewhere)."""
        if self.machine != LOCAL_MACHINE:
            return None
        pane = self.env.get(HERDR_PANE_ENV, "").strip()
        return pane or None


def agent_context(ctx: ToolContext) -> AgentToolsContext:
    """``ctx`` itself when it is an :class:`AgentToolsContext`, else the one derived from its
    environment, client factory and (already built) client, kept in ``ctx`` across calls;
    either way refreshed (:meth:`AgentToolsContext.refresh`)."""
    if isinstance(ctx, AgentToolsContext):
        ctx.refresh()
        return ctx
    kept = ctx.derived.get(DERIVED_KEY)
    if not isinstance(kept, AgentToolsContext) or kept.env != ctx.env:
        kept = AgentToolsContext(env=dict(ctx.env), client_factory=ctx.client_factory)
        ctx.derived[DERIVED_KEY] = kept
        logger.debug("agent tools context built")
    if ctx._client is not None and kept._client is not ctx._client:
        kept._client = ctx._client
        kept._client_given = True
    kept.refresh()
    return kept


def on_local_machine(
    handler: Callable[[Mapping[str, Any], ToolContext], dict[str, Any]],
) -> Callable[[Mapping[str, Any], ToolContext], dict[str, Any]]:
    """``handler`` starting on the local machine, whatever an earlier call in this thread
    chose, and leaving no choice behind."""

    @functools.wraps(handler)
    def wrapped(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
        token = _MACHINE.set(LOCAL_MACHINE)
        try:
            return handler(args, ctx)
        finally:
            _MACHINE.reset(token)

    return wrapped


__all__ = [
    "DERIVED_KEY",
    "HERDR_PANE_ENV",
    "AgentToolsContext",
    "agent_context",
    "config_key",
    "on_local_machine",
    "server_key",
]
