"""The simulator judged by Herdr clients published on PyPI that nobody here wrote.

``herdr-python-sdk`` parses every result with pydantic models of protocol 22 and refuses a
server that is not protocol 22; ``herdr-client`` (sync and async) checks envelopes and streams
subscriptions. Every protocol-22 method is called through each, against a fresh simulator,
and the answer must be the one headless Herdr gives (``cases.py``). A model that fails to
parse our answer, or a field the models do not know, is a fidelity bug.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from herdr_sim import Simulator, testing
from herdr_sim.registry import PROTOCOL_22_METHODS
from tests.published_clients.cases import CASES, World
from tests.published_clients.drive import Driver
from tests.waits import wait_until

pytestmark = [pytest.mark.herdr_sim_only, pytest.mark.timeout(120)]

#: what herdr-client wraps with a named method (the rest go through its ``request()``)
CLIENT_WRAPPED = (
    "ping",
    "workspace.list",
    "tab.list",
    "pane.list",
    "pane.send_text",
    "pane.send_keys",
    "pane.send_input",
    "pane.read",
    "pane.wait_for_output",
)


def world(sim: Simulator) -> World:
    return World(socket=sim.socket_path, repo=sim.socket_path.parent / "repo").setup()


def outcome(answer: dict[str, Any]) -> str:
    """``type`` of a parsed result or ``error:<code>``; anything else fails the test."""
    if "api_error" in answer:
        return f"error:{answer['api_error']['code']}"
    assert answer.get("ok"), "the client could not take our answer:\n" + json.dumps(answer)[:3000]
    return str(answer["type"])


def test_every_method_has_a_case(driver: Driver) -> None:
    """Both clients declare protocol 22's methods; each has a case here, so a method the
    simulator adds or drops cannot go unjudged."""
    declared = driver.ask({"op": "methods"})
    assert set(declared["sdk"]) == set(PROTOCOL_22_METHODS)
    assert set(CASES) | {"events.subscribe"} == set(PROTOCOL_22_METHODS)
    # herdr-client also names two methods newer than the published schema; they are not ours
    assert set(PROTOCOL_22_METHODS) <= set(declared["client"]) | {"pane.graphics.stream"}
    assert set(declared["client_wrapped"]) == set(CLIENT_WRAPPED)


@pytest.mark.parametrize("method", sorted(CASES))
def test_sdk(method: str, driver: Driver, repo_sim: Simulator) -> None:
    """herdr-python-sdk's named method parses our answer into its protocol-22 models, with no
    field its models do not know, and the answer is Herdr's."""
    case = CASES[method]
    answer = driver.call("sdk", repo_sim.socket_path, method, case.params(world(repo_sim)))
    assert outcome(answer) == case.answer, answer
    assert answer.get("extra", []) == [], f"fields protocol 22 does not have: {answer['extra']}"


@pytest.mark.parametrize("method", sorted(set(CASES) - {"server.stop"}))
def test_herdr_client(method: str, driver: Driver, repo_sim: Simulator) -> None:
    """herdr-client (its wrapper where it has one, ``request()`` otherwise) takes our answer."""
    case = CASES[method]
    answer = driver.call("client", repo_sim.socket_path, method, case.params(world(repo_sim)))
    assert outcome(answer) == case.answer, answer


@pytest.mark.parametrize("lib", ["sdk_async", "client_async"])
@pytest.mark.parametrize("method", CLIENT_WRAPPED)
def test_async_clients(method: str, lib: str, driver: Driver, repo_sim: Simulator) -> None:
    """The async clients take the same answers (each has its own transport code)."""
    case = CASES[method]
    answer = driver.call(lib, repo_sim.socket_path, method, case.params(world(repo_sim)))
    assert outcome(answer) == case.answer, answer


def test_sdk_refuses_another_protocol(driver: Driver, shared_root: Any) -> None:
    """The SDK checks ``ping``'s protocol before each call: a simulator configured for
    protocol 20 is refused, which shows the check reads our pong."""
    from tests.published_clients.conftest import new_simulator

    sim = new_simulator(shared_root)
    sim.config.protocol = 20
    sim.start()
    try:
        answer = driver.call("sdk", sim.socket_path, "workspace.list")
    finally:
        sim.stop()
    assert "Expected Herdr protocol 22, received 20" in answer.get("protocol_error", ""), answer


@pytest.mark.parametrize("lib", ["sdk", "client"])
def test_subscriptions(lib: str, driver: Driver, repo_sim: Simulator) -> None:
    """A lifecycle event and a dotted subscription event, streamed to each client and parsed
    (the SDK into its typed envelopes)."""
    w = world(repo_sim)
    subscriptions = [
        {"type": "workspace.renamed"},
        {
            "type": "pane.output_matched",
            "pane_id": w.pane,
            "source": "recent",
            "match": {"type": "substring", "value": "marker-42"},
        },
    ]
    request = {"op": "subscribe", "lib": lib, "socket": str(repo_sim.socket_path), "count": 2}
    ack = driver.ask({**request, "subscriptions": subscriptions})
    assert "ack" in ack, ack
    w.api("workspace.rename", workspace_id=w.ws, label="renamed")
    w.api("pane.send_text", pane_id=w.pane, text="echo marker-$((40+2))\n")
    driver.send({"go": True})
    got = driver.receive(timeout=30)
    assert "events" in got, got
    names = sorted(event["event"] for event in got["events"])
    assert names == ["pane.output_matched", "workspace_renamed"], got
    if lib == "sdk":
        assert all(event["extra"] == [] for event in got["events"]), got


def test_sdk_wait_for_output_across_a_write(driver: Driver, repo_sim: Simulator) -> None:
    """``pane.wait_for_output`` through the SDK returns when the text appears later (the
    SDK reads with no client deadline for waiting methods)."""
    w = world(repo_sim)
    params = {
        "pane_id": w.pane,
        "source": "recent",
        "match": {"type": "substring", "value": "late-7"},
        "timeout_ms": 20000,
    }
    request = {"op": "call", "lib": "sdk", "socket": str(repo_sim.socket_path)}
    driver.send({**request, "method": "pane.wait_for_output", "params": params})
    # the wait is registered (the SDK pings first, then sends it) before the text is typed
    wait_until(lambda: testing.requests_in_flight(repo_sim) > 0, 30, what="the wait request")
    w.api("pane.send_text", pane_id=w.pane, text="echo late-$((3+4))\n")
    answer = driver.receive(timeout=30)
    assert outcome(answer) == "output_matched", answer
    assert "late-7" in answer["data"]["matched_line"]
