"""orchestrator.client.wire: the project's one wire client (issue 12).

Every socket client of the project is this module's: ``herdr_sim.client`` and
``pytest_herdr.client`` re-export it, the typed client's socket transport reads lines with
it. Its event hooks are httpx-style, and an in-memory transport drives a Simulator without
a socket.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import herdr_sim.client
import pytest_herdr.client
from herdr_sim import Simulator
from orchestrator.client import errors, wire
from orchestrator.client.wire import InMemoryWire, WireClient
from pytest_herdr.backends import HerdrServer
from tests.fresh_python import fresh_python

ROOT = Path(__file__).resolve().parents[2]


def test_the_packages_share_one_client() -> None:
    assert herdr_sim.client.request is wire.request
    assert herdr_sim.client.call is wire.call
    assert herdr_sim.client.Subscription is wire.Subscription
    assert herdr_sim.client.RequestFailed is errors.HerdrError
    assert herdr_sim.client.ProtocolError is errors.ProtocolError
    assert pytest_herdr.client.HerdrClient is WireClient
    assert pytest_herdr.client.AsyncHerdrClient is wire.AsyncWireClient
    assert pytest_herdr.client.RequestFailed is errors.HerdrError


def test_a_refusal_raises_its_family_which_is_request_failed(herdr_server: HerdrServer) -> None:
    client = WireClient(herdr_server.socket_path)
    with pytest.raises(errors.NotFound) as caught:
        client.call("pane.get", pane_id="w9-9")
    assert isinstance(caught.value, herdr_sim.client.RequestFailed)
    assert caught.value.code == "pane_not_found"


def test_event_hooks_see_every_request_response_and_event(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    seen: list[tuple[str, str]] = []

    def hook(kind: str) -> Any:
        return lambda line: seen.append((kind, str(line.get("id") or line.get("event"))))

    def broken(line: dict[str, Any]) -> None:
        raise RuntimeError("a hook that fails")

    client = WireClient(
        herdr_server.socket_path,
        event_hooks={"request": [hook("request"), broken], "response": [hook("response")]},
        id_prefix="hooked",
    )
    client.event_hooks["event"].append(hook("event"))
    with client.subscribe("workspace.created") as stream:
        client.call("workspace.create", cwd=str(tmp_path))
        event = stream.next(timeout=10)
    assert event["event"] == "workspace_created"
    kinds = [kind for kind, _ in seen]
    assert kinds == ["request", "response", "request", "response", "event"]
    assert all(ident.startswith("hooked:") for kind, ident in seen if kind != "event")


def test_an_unknown_hook_kind_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown event hook 'reply'"):
        WireClient(tmp_path / "s.sock", event_hooks={"reply": []})


def test_observers_are_hooks_of_every_kind(herdr_server: HerdrServer) -> None:
    lines: list[tuple[str, str]] = []
    client = WireClient(
        herdr_server.socket_path, observers=[lambda kind, line: lines.append((kind, line["id"]))]
    )
    client.request("ping", request_id="p1")
    assert lines == [("request", "p1"), ("response", "p1")]


def test_the_in_memory_transport_drives_a_simulator_without_its_socket(
    sim: Simulator, tmp_path: Path
) -> None:
    lines: list[str] = []
    client = WireClient.in_memory(sim, observers=[lambda kind, line: lines.append(kind)])
    created = client.call("workspace.create", cwd=str(tmp_path))
    workspace_id = created["workspace"]["workspace_id"]
    # the socket sees the same state: one server behind both
    listed = herdr_sim.client.call(sim.socket_path, "workspace.list")["workspaces"]
    assert [w["workspace_id"] for w in listed] == [workspace_id]
    assert lines == ["request", "response"]
    # the simulator's own parsing and refusals, as over the socket
    with pytest.raises(errors.InvalidRequest):
        client.call("pane.read", pane_id=created["root_pane"]["pane_id"], source="nowhere")
    assert isinstance(client.transport, InMemoryWire)
    with pytest.raises(ValueError, match="no socket path"):
        client.subscribe("workspace.created")


def test_a_dropped_connection_is_a_protocol_error_that_may_have_applied(sim: Simulator) -> None:
    sim.faults.add("workspace.list", drop="before")
    with pytest.raises(errors.ProtocolError) as caught:
        WireClient(sim.socket_path).call("workspace.list")
    assert isinstance(caught.value, errors.TransportError)
    assert caught.value.maybe_applied is True


def test_importing_herdr_sim_client_stays_light() -> None:
    """Benchmarks and tests import it everywhere: names resolve on first use (the simulator's
    root loads the base layer's protocol facts, so ``orchestrator`` itself is loaded, light)."""
    code = (
        "import sys, herdr_sim.client as c\n"
        "heavy = ('socket', 'json', 'logging', 'orchestrator.client.wire', 'typing')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "c.request\n"
        "print('orchestrator.client.wire' in sys.modules)\n"
    )
    assert fresh_python(code) == ["[]", "True"]


def test_cli_shaped_stdout_is_rendered_only_where_a_tool_reads_it(
    herdr_server: HerdrServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over the socket the transport returns the envelope; the CLI's stdout is rendered
    from it only when a low-level tool reports text."""
    from orchestrator.client import cli_map
    from orchestrator.client.sync import HerdrClient

    rendered: list[str] = []
    real = cli_map.render_stdout

    def counting(op: Any, params: Any, result: Any) -> str:
        rendered.append(op.name)
        return real(op, params, result)

    monkeypatch.setattr(cli_map, "render_stdout", counting)
    herdr = HerdrClient.build("socket", socket_path=herdr_server.socket_path)
    created = herdr.workspace_create(str(tmp_path))
    assert [pane.pane_id for pane in herdr.pane_list()] == [created.root_pane.pane_id]
    exchange = herdr.execute("pane.list", {})
    assert rendered == []
    assert created.root_pane.pane_id in exchange.stdout
    assert rendered == ["pane.list"]


def test_the_typed_client_drives_a_simulator_in_memory_with_hooks(
    sim: Simulator, tmp_path: Path
) -> None:
    from orchestrator.client.sync import HerdrClient

    methods: list[str] = []
    herdr = HerdrClient.in_memory(
        sim, event_hooks={"request": [lambda line: methods.append(line["method"])]}
    )
    created = herdr.workspace_create(str(tmp_path))
    assert [pane.pane_id for pane in herdr.pane_list()] == [created.root_pane.pane_id]
    # the protocol check ran first, through the same wire
    assert methods == ["ping", "workspace.create", "pane.list"]
    exchange = herdr.execute("pane.get", {"pane_id": "w9-9"})
    assert exchange.error is not None and exchange.error["code"] == "pane_not_found"
    assert exchange.argv[:3] == ("herdr", "pane", "get")


def test_the_typed_clients_socket_hooks_see_every_line(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    from orchestrator.client.sync import HerdrClient

    lines: list[tuple[str, str]] = []
    herdr = HerdrClient.build(
        "socket",
        socket_path=herdr_server.socket_path,
        event_hooks={
            "request": [lambda line: lines.append(("request", line["method"]))],
            "response": [lambda line: lines.append(("response", str(line["id"])))],
        },
    )
    herdr.workspace_list()
    assert lines == [
        ("request", "ping"),
        ("response", "api-client:status"),
        ("request", "workspace.list"),
        ("response", "cli:workspace:list"),
    ]


#: Modules that open Unix sockets themselves, each for a reason the wire client cannot serve.
SOCKET_OWNERS = {
    "orchestrator/client/wire.py": "the wire client",
    "herdr_sim/herdr_cli/transport.py": "the herdr CLI's minimal transport (start-up speed)",
    "herdr_sim/server.py": "the simulator's server (listens)",
    "herdr_sim/conformance/recorder.py": "a recording server (listens)",
    "herdr_sim/fake_agent/reporter.py": "a fake agent's fire-and-forget hook, as agents do",
    "pytest_herdr/events.py": "non-blocking subscriptions multiplexed on one selector",
}


_SPEAKS = re.compile(r"socket\.AF_UNIX|open_unix_connection")


def test_no_other_module_speaks_the_socket_itself() -> None:
    speakers = {
        path.relative_to(ROOT).as_posix()
        for package in ("herdr_sim", "orchestrator", "pytest_herdr")
        for path in (ROOT / package).rglob("*.py")
        if _SPEAKS.search(path.read_text(encoding="utf-8"))
    }
    assert speakers == set(SOCKET_OWNERS)


def test_the_async_typed_client_drives_a_simulator_in_memory(
    sim: Simulator, tmp_path: Path
) -> None:
    import asyncio

    from orchestrator.client.aio import AsyncHerdrClient

    async def scenario() -> list[str]:
        herdr = AsyncHerdrClient.in_memory(sim)
        created = await herdr.workspace_create(str(tmp_path))
        return [pane.pane_id for pane in await herdr.pane_list()] + [created.root_pane.pane_id]

    listed, root = asyncio.run(scenario())
    assert listed == root
