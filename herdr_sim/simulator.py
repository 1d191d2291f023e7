"""`Simulator`: a Herdr simulator running in its own thread and event loop.

Tests and tools embed it in-process (``with Simulator() as sim: …``) and talk to it over its
real Unix socket from any thread or loop; ``herdr-sim serve`` runs the same thing in the
foreground. The thread owns the model; other threads reach it only through the socket,
:meth:`Simulator.call` (a socket-free request) or thread-safe handles such as ``faults``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import shutil
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Coroutine
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

from herdr_sim.services.agent_home import prepare_agent_home
from herdr_sim.services.agents import ReleaseTap
from herdr_sim.services.events import Envelope
from herdr_sim.services.runtime import Notification, Runtime

from .config import SimulatorConfig
from .faults import FaultPlan
from .methods import load_all
from .methods.plugin_hooks import attach as attach_plugin_hooks
from .server import Server

T = TypeVar("T")

logging.getLogger("herdr_sim").addHandler(logging.NullHandler())


def _finish_tasks(loop: asyncio.AbstractEventLoop, server: Server | None) -> None:
    """Finish everything left on a stopped loop so each connection closes its transport.

    Queued callbacks run first: a connection accepted during shutdown may still be waiting
    for its ``connection_made``, which creates its handler task. Tasks then get a moment
    to run (a handler that has not started would skip the ``finally`` that closes its
    transport if it were cancelled first; the server is closing, so it closes at once).
    What still runs after that is cancelled, the server closes any transport left, and
    extra turns let closed transports run their queued ``connection_lost``.
    """
    if server is not None:
        server.stop_listening()  # a shutdown cut short may have left the socket accepting
    for _ in range(5):
        for _turn in range(3):
            loop.run_until_complete(asyncio.sleep(0))
        if server is not None:
            server.close_transports()
        pending = asyncio.all_tasks(loop)
        if not pending:
            break
        loop.run_until_complete(asyncio.wait(pending, timeout=0.05))
        still = [task for task in pending if not task.done()]
        for task in still:
            task.cancel()
        if still:
            loop.run_until_complete(asyncio.gather(*still, return_exceptions=True))
    # Last, every transport the loop still knows (CPython's selector loops keep them by fd):
    # whatever path created one that nothing closed, the loop closes with it.
    # A transport with unsent data (a client that stopped reading) stays open after close()
    # until its buffer drains, which never happens once the loop is gone: abort drops the
    # data. Repeat until none is left, as the turns that finish one may start another.
    for _ in range(5):
        leftovers = list(getattr(loop, "_transports", {}).values())
        if not leftovers:
            break
        for transport in leftovers:
            if isinstance(transport, asyncio.WriteTransport):
                transport.abort()
            else:
                transport.close()
        for _turn in range(3):
            loop.run_until_complete(asyncio.sleep(0))


class SimulatorError(RuntimeError):
    """The simulator could not start, or a handler failed unexpectedly."""


def resolve_socket_path(config: SimulatorConfig) -> Path:
    """The socket the server binds: explicit path, else the CLI's resolution rules."""
    if config.socket_path is not None:
        return config.socket_path
    import os

    from orchestrator.client.socket_paths import config_dir, session_socket_path

    if config.session_name is not None:
        return session_socket_path(config.session_name, os.environ)
    if os.environ.get("HERDR_SOCKET_PATH"):
        return Path(os.environ["HERDR_SOCKET_PATH"])
    if os.environ.get("HERDR_SESSION"):
        return session_socket_path(os.environ["HERDR_SESSION"], os.environ)
    return config_dir(os.environ) / "herdr.sock"


class Simulator:
    """A running (after :meth:`start`) Herdr simulator."""

    #: how many lifecycle events :attr:`events` keeps (the most recent): a simulator that
    #: serves for hours must not grow with its traffic
    EVENTS_KEPT = 10_000

    def __init__(self, config: SimulatorConfig | None = None, **overrides: Any) -> None:
        # a copy: overrides and path coercion never change the caller's config, which may
        # be shared by several simulators
        self.config = dataclasses.replace(config) if config is not None else SimulatorConfig()
        for key, value in overrides.items():
            if not hasattr(self.config, key):
                raise TypeError(f"unknown simulator setting {key!r}")
            setattr(self.config, key, value)
        self.config.coerce_paths()
        self.config.timers()  # a bad time_scale fails here, not at its first timer
        self.socket_path = resolve_socket_path(self.config)
        self._own_runtime_dir = self.config.runtime_dir is None
        self.runtime_dir = self.config.runtime_dir or Path(tempfile.mkdtemp(prefix="herdr-sim-rt-"))
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runtime: Runtime | None = None
        self._server: Server | None = None
        self._events: deque[Envelope] = deque(maxlen=self.EVENTS_KEPT)
        self._events_lock = threading.Lock()
        #: ``tap(kind, line)`` callables that see this simulator's wire lines only (requests,
        #: responses, events); append before or after :meth:`start`
        self.wire_taps: list[Callable[[str, dict[str, Any]], None]] = []
        #: ``tap(first_line, answer)`` callables that see each request connection of this
        #: simulator once: the first line as read (bytes) and the answer written for it, or
        #: None (:attr:`Server.exchange_taps`); append before or after :meth:`start`
        self.exchange_taps: list[Callable[[bytes, dict[str, Any] | None], None]] = []
        #: ``tap(pane_id, agent, cause, request_id)`` callables told of every release of a
        #: pane's agent and its cause, which Herdr's events do not carry
        #: (:data:`herdr_sim.services.agents.ReleaseTap`); append before or after :meth:`start`
        self.release_taps: list[ReleaseTap] = []

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> Simulator:
        """Bind the socket and start serving; returns once clients can connect."""
        if self._thread is not None:
            raise SimulatorError("simulator already started")
        from herdr_sim.host.cli_install import install_cli

        self.runtime_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        install_cli(self.runtime_dir / "bin")
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._boot())
            except BaseException as exc:
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                _finish_tasks(loop, self._server)
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=run, name="herdr-sim", daemon=True)
        self._thread.start()
        if not ready.wait(30):
            raise SimulatorError("simulator did not start within 30 s")
        if failure:
            self._thread.join(5)
            self._thread = None
            self._cleanup_runtime_dir()
            raise SimulatorError(str(failure[0])) from failure[0]
        return self

    async def _boot(self) -> None:
        runtime = Runtime(self.config, self.socket_path, self.runtime_dir)
        if runtime.agent_home is not None:
            prepare_agent_home(runtime.agent_home)
        if runtime.fake_bin is not None:
            from .fake_agent import install_fake_agents

            install_fake_agents(runtime.fake_bin)
        if self.config.agent_detection:
            runtime.start_detection()
        runtime.hub.add_listener(self._record)
        server = Server(runtime, load_all())
        server.taps = self.wire_taps
        server.exchange_taps = self.exchange_taps
        runtime.agents.release_taps = self.release_taps
        await server.start()
        try:
            runtime.marks.register()  # ends what a SIGKILLed server on this socket left
            runtime.restore()
        except Exception:
            await server.close()
            await runtime.shutdown()
            raise
        attach_plugin_hooks(runtime)  # startup hooks, then event hooks (Herdr's plugin runtime)
        self._runtime, self._server = runtime, server

    def _record(self, envelope: Envelope) -> None:
        with self._events_lock:
            self._events.append(envelope)

    def stop(self, timeout: float = 15.0) -> None:
        """Stop serving, end every pane's process tree, remove the socket. Idempotent."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                fut = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
                with contextlib.suppress(Exception):
                    fut.result(timeout)
                loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        self._thread = None
        self._loop = None
        self._cleanup_runtime_dir()

    async def _shutdown(self) -> None:
        runtime, server = self._runtime, self._server
        if runtime is None or server is None:
            return
        runtime.stopping = True
        if runtime.detection is not None:
            await runtime.detection.stop()
        await server.close()
        await runtime.shutdown()
        server.close_transports()  # anything accepted while the panes were being reaped
        runtime.stopped.set()

    def _cleanup_runtime_dir(self) -> None:
        if self._own_runtime_dir:
            shutil.rmtree(self.runtime_dir, ignore_errors=True)

    def wait_stopped(self, timeout: float | None = None) -> bool:
        """Block until the server stopped (e.g. after a client sent ``server.stop``)."""
        runtime, loop = self._runtime, self._loop
        if runtime is None or loop is None:
            return True
        fut = asyncio.run_coroutine_threadsafe(runtime.stopped.wait(), loop)
        try:
            fut.result(timeout)
        except TimeoutError:
            fut.cancel()
            return False
        return True

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- access from other threads ----------------------------------------------------------------

    @property
    def runtime(self) -> Runtime:
        """The live runtime (touch it only through :meth:`run_in_loop`)."""
        if self._runtime is None:
            raise SimulatorError("simulator is not running")
        return self._runtime

    @property
    def faults(self) -> FaultPlan:
        """Fault injection, safe to arm from any thread."""
        return self.runtime.faults

    @property
    def agent_home(self) -> Path | None:
        """The panes' sandbox HOME while the fake agents are on (None: the server's HOME,
        as in Herdr); see herdr_sim/services/agent_home.py."""
        return self.runtime.agent_home

    @property
    def cli_path(self) -> Path:
        """The simulator's ``herdr`` executable (also first on every pane's PATH)."""
        return self.runtime_dir / "bin" / "herdr"

    @property
    def cli_refusals(self) -> list[dict[str, Any]]:
        """Every command line the simulator's ``herdr`` refused in one of its panes before
        anything reached the socket (``herdr pane report-agent --state busy``), oldest
        first: ``argv``, ``exit``, ``error``, ``pane_id`` and the CLI's ``monotonic`` clock
        (:mod:`herdr_sim.persist.cli_refusals`). Gone once the simulator stops."""
        from herdr_sim.persist.cli_refusals import FILE_NAME, read

        return read(self.runtime_dir / FILE_NAME)

    @property
    def notifications(self) -> list[Notification]:
        """Every ``notification.show`` accepted so far."""
        return self.run_in_loop(lambda rt: list(rt.notifications))

    @property
    def socket_server(self) -> Server | None:
        """The socket server while the simulator runs (read through :mod:`herdr_sim.testing`)."""
        return self._server

    @property
    def events(self) -> list[Envelope]:
        """The lifecycle events emitted so far, the last :attr:`EVENTS_KEPT` of them (a copy)."""
        with self._events_lock:
            return list(self._events)

    def run_in_loop(self, fn: Callable[[Runtime], T], timeout: float = 10.0) -> T:
        """Run ``fn(runtime)`` on the simulator's thread and return its result."""

        async def call() -> T:
            return fn(self.runtime)

        return self._submit(call(), timeout)

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        request_id: str = "sim:call",
        timeout: float = 30.0,
    ) -> dict[str, Any]:
        """Send one request without a socket; returns the full response envelope.

        Params go through the same checks as socket requests; a request that would not parse
        returns the ``invalid_request`` envelope with an empty id.
        """
        import json

        from .server import RequestError, error_line, parse_request

        line = json.dumps({"id": request_id, "method": method, "params": params or {}})
        try:
            rid, name, checked, _ = parse_request(line, load_all())
        except RequestError as exc:
            from herdr_sim.wire import errors

            return error_line("", errors.invalid_request(str(exc)))
        server = self._server
        if server is None:
            raise SimulatorError("simulator is not running")

        async def run() -> dict[str, Any]:
            assert server is not None
            response = await server.dispatch(rid, name, checked)
            if name == "server.stop" and "result" in response:
                server.schedule_stop()
            return response

        return self._submit(run(), timeout)

    def _submit(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        loop = self._loop
        if loop is None:
            coro.close()
            raise SimulatorError("simulator is not running")
        return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout)

    def check(self) -> None:
        """Raise the first unexpected handler exception (a simulator bug), if any."""
        server = self._server
        if server is not None and server.handler_errors:
            raise SimulatorError("a simulator handler failed") from server.handler_errors[0]
