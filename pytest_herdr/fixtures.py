"""The ``herdr_*`` fixtures. Every one is function-scoped unless it says otherwise, and each
is an override point: define a fixture of the same name in a conftest to replace it.

The layering follows pytest-httpserver: configuration fixtures (``herdr_settings``,
``herdr_sim_config``) feed a factory (``herdr_server_factory``) that tracks and reaps every
server it starts; ``herdr_server`` is one server from it, and the clients, handles and
recorders build on that.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from herdr_sim.config import SimulatorConfig

from . import backends
from .agents import FakeAgents
from .backends import HerdrServer, request_log_of
from .cli_runner import HerdrCli
from .client import AsyncWireClient, Observer, WireClient
from .differences import skip_for
from .events import OWN_ID, EventRecorder
from .forensics import ID_PREFIX
from .handles import Pane, Workspace
from .request_log import RequestLog
from .settings import Backend, Settings, settings_of
from .waits import DEFAULT_WAIT, HerdrWait

if TYPE_CHECKING:  # jsonschema is imported only when --herdr-schema asks for checks
    from herdr_sim.conformance.report import IntegrationReport
    from herdr_sim.faults import FaultPlan

    from .contracts import ContractChecker
    from .integration import IntegrationRule

#: the servers a test started, in order (read by the failure report)
SERVERS_KEY = pytest.StashKey[list[HerdrServer]]()
#: cleanup problems of a test's servers, reported in its teardown section
CLEANUP_KEY = pytest.StashKey[list[str]]()
#: the session's contract checker, when ``--herdr-schema`` asked for one (set by the plugin)
CONTRACTS_KEY: pytest.StashKey[ContractChecker] = pytest.StashKey()


class ServerFactory(Protocol):
    """``herdr_server_factory(**settings)`` → a new running server."""

    def __call__(
        self,
        *,
        record_events: bool = True,
        pane_env: Mapping[str, str] | None = None,
        pane_path: Sequence[Path | str] = (),
        **settings: Any,
    ) -> HerdrServer: ...


#: settings the plugin chooses for every server it starts (each gets its own directory);
#: asking for them is an error rather than silently ignored, with what to do instead
OWN_SETTINGS = {
    "socket_path": "each server gets its own socket; to stop and start the same session "
    "(its state restored), call server.restart()",
    "runtime_dir": "each server gets its own runtime directory",
    "session_name": "each server gets its own socket; to stop and start the same session, "
    "call server.restart()",
}


@pytest.fixture(scope="session")
def herdr_settings(pytestconfig: pytest.Config) -> Settings:
    """Session: the plugin's resolved options (backend, binary, artifacts, settle delay)."""
    return settings_of(pytestconfig)


@pytest.fixture(scope="session")
def herdr_backend_name(herdr_settings: Settings) -> Backend:
    """Session: ``"sim"`` or ``"real"`` — which Herdr the fixtures start."""
    return herdr_settings.backend


@pytest.fixture
def herdr_pane_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """Variables every pane process and CLI run of this test's servers gets (an API key, an
    offline flag): the test's ``@pytest.mark.herdr_pane_env(NAME="value")`` markers, closest
    last. The test process's own environment (``monkeypatch.setenv`` too) reaches panes only
    through this: the servers are hermetic. Override it in a conftest for a directory, or
    add to it in a test before calling ``herdr_server_factory``."""
    env: dict[str, str] = {}
    for marker in reversed(list(request.node.iter_markers("herdr_pane_env"))):
        for key, value in marker.kwargs.items():
            if not isinstance(value, str):
                raise pytest.UsageError(
                    f"@pytest.mark.herdr_pane_env on {request.node.nodeid}: {key} must be a "
                    f"str, got {value!r}"
                )
            env[key] = value
    return env


@pytest.fixture
def herdr_pane_path(request: pytest.FixtureRequest, herdr_settings: Settings) -> list[Path]:
    """Directories first on PATH in every pane and CLI run of this test's servers, so a
    pane finds your own agent: ``--herdr-pane-path`` (ini ``herdr_pane_path``), then the
    test's ``@pytest.mark.herdr_pane_path("bin")`` markers (relative to the rootdir), closest
    first. The simulator's ``herdr`` and fake agents still come before them (set the
    ``fake_agents=False`` simulator setting if your agent is named like one)."""
    path: list[Path] = []
    for marker in request.node.iter_markers("herdr_pane_path"):
        for entry in marker.args:
            directory = (request.config.rootpath / entry).resolve()
            if not directory.is_dir():
                raise pytest.UsageError(
                    f"@pytest.mark.herdr_pane_path on {request.node.nodeid}: no such "
                    f"directory: {directory}"
                )
            path.append(directory)
    path.extend(herdr_settings.pane_path)
    return path


@pytest.fixture
def herdr_sim_config(request: pytest.FixtureRequest, herdr_settings: Settings) -> SimulatorConfig:
    """The settings of the simulators this test starts: Herdr's defaults, the settle delay
    of ``--herdr-settle-ms``, the time scale of ``--herdr-time-scale`` and the simulator's
    built-in detection rules for its fake agents (point ``agent_manifests_dir`` at Herdr's
    own manifests to classify real agents' screens), then the test's closest
    ``@pytest.mark.herdr_time_scale(factor)``, its ``@pytest.mark.herdr(**settings)``, then the
    ``pytest_herdr_sim_config`` hook. Override it to change every test of a directory.

    ``base_env`` starts empty here: what a test puts in it is added to the panes' hermetic
    environment, like ``herdr_pane_env`` (which wins)."""
    from herdr_sim.detection import BUILTIN_MANIFESTS_DIR  # only once a test starts a server

    config = SimulatorConfig(
        agent_start_settle=herdr_settings.settle_ms / 1000,
        agent_manifests_dir=BUILTIN_MANIFESTS_DIR,  # so the fake agents' screens are read
        base_env={},
        time_scale=herdr_settings.time_scale,
    )
    time_scale = request.node.get_closest_marker("herdr_time_scale")
    if time_scale is not None:
        config.time_scale = _marker_scale(time_scale.args, request.node.nodeid)
    for marker in reversed(list(request.node.iter_markers("herdr"))):
        _apply(config, marker.kwargs, where=f"@pytest.mark.herdr on {request.node.nodeid}")
    request.config.hook.pytest_herdr_sim_config(
        config=request.config, sim_config=config, node=request.node
    )
    return config


def _marker_scale(args: tuple[Any, ...], nodeid: str) -> float:
    """``@pytest.mark.herdr_time_scale(factor)``'s factor, checked."""
    from herdr_sim.timers import check_time_scale

    try:
        (factor,) = args
        return check_time_scale(factor)
    except (TypeError, ValueError) as exc:
        raise pytest.UsageError(
            f"@pytest.mark.herdr_time_scale on {nodeid}: expected one number > 0, got {args!r}"
        ) from exc


def _apply(config: SimulatorConfig, settings: dict[str, Any], where: str) -> None:
    names = {f.name for f in dataclasses.fields(SimulatorConfig)}
    for key, value in settings.items():
        if key not in names:
            raise pytest.UsageError(f"{where}: unknown simulator setting {key!r}")
        if key in OWN_SETTINGS:
            raise pytest.UsageError(f"{where}: {key} is the plugin's: {OWN_SETTINGS[key]}")
        setattr(config, key, value)
    config.coerce_paths()


@pytest.fixture
def herdr_server_factory(
    request: pytest.FixtureRequest,
    herdr_settings: Settings,
    herdr_sim_config: SimulatorConfig,
    herdr_pane_env: dict[str, str],
    herdr_pane_path: list[Path],
) -> Iterator[ServerFactory]:
    """A factory of servers for tests that need several; reaps them all after the test.

    ``herdr_server_factory(cols=80, persist=False)`` starts a simulator with
    ``herdr_sim_config`` plus those settings (ignored by a real Herdr, which starts on its own
    named session). ``pane_env={...}`` and ``pane_path=[...]`` add to ``herdr_pane_env``
    and ``herdr_pane_path`` for this server. The socket is always the plugin's (asking for
    one is an error): ``server.restart()`` stops and starts the same session. Each server
    records its events for the failure report and ``herdr_events``, over one subscription
    of its own; ``record_events=False`` leaves it out, for a test that counts the server's
    connections.
    """
    started: list[HerdrServer] = []
    request.node.stash[SERVERS_KEY] = started

    def start(
        *,
        record_events: bool = True,
        pane_env: Mapping[str, str] | None = None,
        pane_path: Sequence[Path | str] = (),
        **settings: Any,
    ) -> HerdrServer:
        config = dataclasses.replace(herdr_sim_config)
        _apply(config, settings, where="herdr_server_factory")
        env = {**config.base_env, **herdr_pane_env, **(pane_env or {})}
        path = [*pane_path, *herdr_pane_path]
        if herdr_settings.backend == "real":
            binary = backends.require_real_bin(herdr_settings.herdr_bin)
            server = backends.start_real(
                binary, f"pytest-{secrets.token_hex(4)}", pane_env=env, pane_path=path
            )
        else:
            server = backends.start_sim(config, pane_env=env, pane_path=path)
        started.append(server)
        server.requests = request_log_of(server)
        recording = herdr_settings.record if herdr_settings.backend == "real" else None
        checker = request.config.stash.get(CONTRACTS_KEY, None)
        if checker is not None:
            # a simulator shows the checker every line, the CLI's and the agents' too; the
            # plugin's own recorder is left out of what the suite exercised
            server.tap(without_own_lines(checker))
        try:
            server.events = EventRecorder(server.socket_path).start() if record_events else None
        except OSError as exc:
            server.events = None
            request.node.stash.setdefault(CLEANUP_KEY, []).append(f"event recorder: {exc!r}")
        if recording is not None:  # after the event recorder: its lines stay out
            from .cassettes import record_server

            record_server(server, recording, request.node.nodeid, len(started))
        request.config.hook.pytest_herdr_server_started(config=request.config, server=server)
        return server

    yield start
    _reap(request, started)


def without_own_lines(observer: Observer) -> Observer:
    """``observer``, shown every line but the plugin's own requests and their answers."""
    own = (OWN_ID, ID_PREFIX)

    def observe(kind: str, line: dict[str, Any]) -> None:
        if not str(line.get("id", "")).startswith(own):
            observer(kind, line)

    return observe


def _reap(request: pytest.FixtureRequest, servers: list[HerdrServer]) -> None:
    """Stop every server (each one, whatever the others do); then surface what went wrong
    inside a simulator — unless the test already failed, whose own error must stay the
    headline: then the problems go into a report section instead."""
    problems = request.node.stash.setdefault(CLEANUP_KEY, [])
    errors: list[BaseException] = []
    for server in reversed(servers):
        if server.events is not None:
            server.events.stop()
        try:
            server.stop()
            server.check()
        except Exception as exc:
            errors.append(exc)
            problems.append(f"{server.backend} server at {server.socket_path}: {exc!r}")
    if problems:
        request.node.add_report_section("teardown", "herdr cleanup", "\n".join(problems))
    failed = getattr(request.node, "herdr_call_failed", False)
    if errors and not failed:
        raise errors[0]


@pytest.fixture
def herdr_server(herdr_server_factory: ServerFactory) -> HerdrServer:
    """A fresh server for this test: a simulator (default) or a real Herdr
    (``--herdr-backend real``), on its own short socket path under /tmp with its own HOME
    and config directory; stopped with every process it started after the test."""
    return herdr_server_factory()


def _observers(request: pytest.FixtureRequest, server: HerdrServer) -> list[Any]:
    """The observers of a client of ``server``: the protocol tail (real Herdr) and the
    session's contract checker, unless the simulator's tap already shows it every line."""
    observers: list[Any] = server.client_observers()
    checker = request.config.stash.get(CONTRACTS_KEY, None)
    if checker is not None and server.sim is None:
        observers.append(checker)
    return observers


#: The request-id prefix of the fixtures' clients (``pytest-herdr:1`` …), seen in protocol tails.
CLIENT_ID_PREFIX = "pytest-herdr"


@pytest.fixture
def herdr_client(request: pytest.FixtureRequest, herdr_server: HerdrServer) -> WireClient:
    """A synchronous client for ``herdr_server``: ``herdr_client.call("pane.list")``."""
    return WireClient(
        herdr_server.socket_path,
        observers=_observers(request, herdr_server),
        id_prefix=CLIENT_ID_PREFIX,
    )


@pytest.fixture
def herdr_async_client(
    request: pytest.FixtureRequest, herdr_server: HerdrServer
) -> AsyncWireClient:
    """The asyncio client for ``herdr_server``: ``await herdr_async_client.call("ping")``."""
    return AsyncWireClient(
        herdr_server.socket_path,
        observers=_observers(request, herdr_server),
        id_prefix=CLIENT_ID_PREFIX,
    )


@pytest.fixture
def herdr_cli(herdr_server: HerdrServer) -> HerdrCli:
    """Runs the ``herdr`` CLI against ``herdr_server``: ``herdr_cli("pane", "list")`` →
    exit code, stdout, stderr and the parsed JSON."""
    return HerdrCli(herdr_server.cli_path, herdr_server.env)


@pytest.fixture
def herdr_workspace(
    herdr_client: WireClient, herdr_server: HerdrServer, tmp_path: Path
) -> Workspace:
    """A new workspace named ``test_<8 hex>`` in the test's ``tmp_path``; its root pane is
    ``herdr_workspace.root``, whose agent status changes ``herdr_events`` records from the
    start."""
    label = f"test_{secrets.token_hex(4)}"
    workspace = Workspace.create(herdr_client, str(tmp_path), label=label)
    if herdr_server.events is not None:
        herdr_server.events.watch(workspace.root.pane_id)
    return workspace


@pytest.fixture
def herdr_pane(herdr_workspace: Workspace) -> Pane:
    """The root pane of ``herdr_workspace``: a real shell in a pty."""
    return herdr_workspace.root


@pytest.fixture
def herdr_fake_agent(
    herdr_client: WireClient, herdr_server: HerdrServer, herdr_pane: Pane
) -> FakeAgents:
    """Builds fake-agent scenarios and starts fake agents (``pi``, ``claude``, ``codex``,
    ``opencode``) in ``herdr_pane`` or any pane:
    ``herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("done"))``."""
    return FakeAgents(
        herdr_client,
        herdr_server.directory / "scenarios",
        herdr_pane,
        herdr_server.events,
        time_scale=herdr_server.time_scale,
    )


@pytest.fixture
def herdr_events(herdr_server: HerdrServer) -> EventRecorder:
    """Every event of ``herdr_server`` since it started, lifecycle and agent status:
    ``herdr_events.wait_for("pane_agent_detected")``, ``herdr_events.timeline()``."""
    if herdr_server.events is None:
        pytest.fail("the event recorder could not subscribe to the server")
    return herdr_server.events


@pytest.fixture
def herdr_requests(herdr_server: HerdrServer) -> RequestLog:
    """Every request ``herdr_server`` was sent since it started — which pane's processes sent
    it, its answer — and every release of a pane's agent with its cause:
    ``herdr_requests.assert_reported(pane, state="idle", seq_increasing=True)``,
    ``herdr_requests.assert_released(pane, source="custom:my-agent")``. On a real Herdr it
    holds no requests (its socket cannot be tapped) and the assertions skip."""
    assert herdr_server.requests is not None
    return herdr_server.requests


@pytest.fixture
def herdr_faults(herdr_server: HerdrServer, herdr_backend_name: Backend) -> FaultPlan:
    """Fault injection into ``herdr_server`` (simulator only; skipped on a real Herdr):
    slow or refused connections, dropped or delayed replies."""
    skip_for("fault-injection", herdr_backend_name)
    assert herdr_server.sim is not None
    return herdr_server.sim.faults


@pytest.fixture
def herdr_wait(herdr_client: WireClient, herdr_server: HerdrServer) -> HerdrWait:
    """Bounded waits through Herdr's server-side waits: ``herdr_wait.for_output(pane, "$")``,
    ``herdr_wait.for_agent(name, "idle")``, ``herdr_wait.until(predicate)``. A status wait
    returns once ``herdr_events`` has recorded the status too. Its default bound (10 s) runs
    at the server's time scale (``--herdr-time-scale``; 1 s at 0.1)."""
    return HerdrWait(
        herdr_client,
        DEFAULT_WAIT * herdr_server.time_scale,
        events=herdr_server.events,
        tail=herdr_server.tail,
    )


class IntegrationCheck(Protocol):
    """``herdr_integration_check(argv, **options)`` → an ``IntegrationReport``."""

    def __call__(self, argv: list[str], **options: Any) -> IntegrationReport: ...


@pytest.fixture
def herdr_integration_check(
    request: pytest.FixtureRequest,
    herdr_backend_name: Backend,
    herdr_sim_config: SimulatorConfig,
    herdr_pane_env: dict[str, str],
    herdr_pane_path: list[Path],
) -> IntegrationCheck:
    """Checks an agent's Herdr integration against the integration guide, rule by rule
    (``herdr_sim.conformance``; docs/pytest-plugin/integration-checks.md):
    ``report = herdr_integration_check(["my-agent", "--flag"]); assert report.passed``.

    The check runs the agent in simulators of its own (it stops and restarts them, and makes
    their socket slow), so it is skipped under ``--herdr-backend real``. The agent gets
    ``herdr_pane_env`` and ``herdr_pane_path`` (under an ``agent_env=`` of the call). Each
    report is added to the test's report, readable, so a failing assertion shows which rule
    failed and why; for one pytest item per rule use ``herdr_integration_rule``
    (:mod:`pytest_herdr.integration`).
    """
    from .integration import PaneSetup, run_check, skip_on_real

    skip_on_real(herdr_backend_name)
    panes = PaneSetup(herdr_pane_env, herdr_pane_path)

    def check(argv: list[str], **options: Any) -> IntegrationReport:
        return run_check(
            request, herdr_sim_config, argv, options, _integration_taps(request), panes
        )

    return check


def _integration_taps(request: pytest.FixtureRequest) -> list[Observer]:
    """The session's contract checker, for the wire of the integration check's simulators."""
    checker = request.config.stash.get(CONTRACTS_KEY, None)
    return [without_own_lines(checker)] if checker is not None else []


@pytest.fixture
def herdr_integration_rule(
    request: pytest.FixtureRequest,
    herdr_backend_name: Backend,
    herdr_sim_config: SimulatorConfig,
    herdr_pane_env: dict[str, str],
    herdr_pane_path: list[Path],
) -> IntegrationRule:
    """One rule of the integration check of ``@pytest.mark.herdr_integration(argv,
    **options)`` (the options of ``herdr_integration_check``); the test is parametrised over
    the rules (``options["rules"]`` or all), so CI shows which rule failed:
    ``herdr_integration_rule.check()``. The check runs once per test function."""
    from .integration import PaneSetup, rule_of

    panes = PaneSetup(herdr_pane_env, herdr_pane_path)
    taps = _integration_taps(request)
    return rule_of(request, herdr_backend_name, herdr_sim_config, taps, panes)


@pytest.fixture
def herdr_agent_kind(request: pytest.FixtureRequest) -> str:
    """Parametrised over the fake agent kinds (and what ``pytest_herdr_agent_kinds`` adds):
    a test taking it runs once per kind."""
    kind: str = request.param
    return kind
