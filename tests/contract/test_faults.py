"""Fault injection (``sim.faults``): slow, failing and vanishing requests.

Each test checks what a client sees on the wire, whether the request took effect, and that
the server keeps serving afterwards.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from herdr_sim import Simulator
from herdr_sim.client import ProtocolError, request
from pytest_herdr.cli_runner import HerdrCli
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import Raw, cli_error, failure, invalid_request, wait_line
from tests.waits import SCALE

#: the simulator's own seams or settings (herdr_sim.testing): not a real Herdr's
pytestmark = pytest.mark.herdr_sim_only


def listed_in_process(sim: Simulator) -> list[str]:
    """Workspace ids, asked without the socket (faults never apply to ``sim.call``)."""
    result = sim.call("workspace.list")["result"]
    return [ws["workspace_id"] for ws in result["workspaces"]]


def still_serving(herdr_client: HerdrClient) -> None:
    """The server answers ordinary requests."""
    assert herdr_client.call("ping")["type"] == "pong"
    assert herdr_client.call("workspace.list")["type"] == "workspace_list"


# -- delay -------------------------------------------------------------------------------------


def test_delay_slows_the_answer_but_not_its_content(sim: Simulator, raw: Raw) -> None:
    sim.faults.add("workspace.list", delay=0.3)
    started = time.monotonic()
    reply = raw("workspace.list")
    assert time.monotonic() - started >= 0.3
    assert reply == {"id": "t", "result": {"type": "workspace_list", "workspaces": []}}


def test_a_delayed_request_does_not_hold_up_others(
    sim: Simulator, herdr_client: HerdrClient
) -> None:
    sim.faults.add("workspace.list", delay=0.6, times=1)
    with ThreadPoolExecutor(max_workers=1) as pool:
        slow = pool.submit(herdr_client.call, "workspace.list")
        started = time.monotonic()
        assert herdr_client.call("ping")["type"] == "pong"
        assert (
            herdr_client.call("workspace.create", cwd="/tmp")["workspace"]["workspace_id"] == "w1"
        )
        assert time.monotonic() - started < 0.4 * SCALE
        assert slow.result(timeout=10)["type"] == "workspace_list"


# -- error -------------------------------------------------------------------------------------


def test_error_answers_that_error_and_does_nothing(
    sim: Simulator, raw: Raw, herdr_client: HerdrClient
) -> None:
    sim.faults.add("workspace.create", error=("workspace_create_failed", "disk on fire"))
    assert raw("workspace.create", cwd="/tmp") == {
        "id": "t",
        "error": {"code": "workspace_create_failed", "message": "disk on fire"},
    }
    assert listed_in_process(sim) == []
    still_serving(herdr_client)


def test_error_reaches_the_cli_as_the_server_error(sim: Simulator, herdr_cli: HerdrCli) -> None:
    sim.faults.add("workspace.list", error=("server_unavailable", "try later"))
    assert cli_error(herdr_cli("workspace", "list")) == {
        "error": {"code": "server_unavailable", "message": "try later"},
        "id": "cli:workspace:list",
    }


# -- drop --------------------------------------------------------------------------------------


def test_drop_before_closes_without_answer_and_does_nothing(
    sim: Simulator, raw: Raw, herdr_client: HerdrClient
) -> None:
    sim.faults.add("workspace.create", drop="before")
    with pytest.raises(ProtocolError):
        raw("workspace.create", cwd="/tmp")
    assert listed_in_process(sim) == []
    still_serving(herdr_client)


def test_drop_after_acts_but_never_answers(
    sim: Simulator, raw: Raw, herdr_client: HerdrClient
) -> None:
    sim.faults.add("workspace.create", drop="after")
    with pytest.raises(ProtocolError):
        raw("workspace.create", cwd="/tmp")
    assert listed_in_process(sim) == ["w1"]
    still_serving(herdr_client)


def test_drop_after_send_text_still_writes_the_text(
    sim: Simulator, raw: Raw, herdr_client: HerdrClient
) -> None:
    pane = herdr_client.call("workspace.create", cwd="/tmp")["root_pane"]["pane_id"]
    sim.faults.add("pane.send_text", drop="after", times=1)
    with pytest.raises(ProtocolError):
        raw("pane.send_text", pane_id=pane, text="echo DROP$((1+1))\r")
    assert wait_line(herdr_client, pane, "^DROP2$", timeout_ms=5000) == "DROP2"


def test_drop_reaches_the_cli_as_an_empty_response(sim: Simulator, herdr_cli: HerdrCli) -> None:
    sim.faults.add("workspace.list", drop="before")
    result = herdr_cli("workspace", "list")
    assert (result.code, result.stdout) == (1, "")
    assert "EmptyResponse" in result.stderr


# -- scope: times, "*", newest wins, remove, clear ---------------------------------------------


def test_times_bounds_how_many_requests_are_hit(sim: Simulator, herdr_client: HerdrClient) -> None:
    fault = sim.faults.add("workspace.list", error=("internal_error", "flaky"), times=2)
    for _ in range(2):
        assert failure(herdr_client.call, "workspace.list")[0] == "internal_error"
    assert herdr_client.call("workspace.list")["type"] == "workspace_list"
    assert fault.hits == 2


def test_star_matches_every_method_except_ping(sim: Simulator, herdr_client: HerdrClient) -> None:
    sim.faults.add("*", error=("server_unavailable", "maintenance"))
    for method, params in [
        ("workspace.list", {}),
        ("session.snapshot", {}),
        ("pane.read", {"pane_id": "w1:p1", "source": "visible"}),
    ]:
        assert failure(herdr_client.call, method, **params) == ("server_unavailable", "maintenance")
    assert herdr_client.call("ping")["type"] == "pong"


def test_a_fault_only_hits_its_method(sim: Simulator, herdr_client: HerdrClient) -> None:
    sim.faults.add("tab.list", error=("internal_error", "boom"))
    assert herdr_client.call("workspace.list")["type"] == "workspace_list"


def test_the_newest_matching_fault_wins(sim: Simulator, herdr_client: HerdrClient) -> None:
    sim.faults.add("*", error=("internal_error", "old"))
    sim.faults.add("workspace.list", error=("internal_error", "new"))
    assert failure(herdr_client.call, "workspace.list")[1] == "new"


def test_remove_disarms_one_fault(sim: Simulator, herdr_client: HerdrClient) -> None:
    keep = sim.faults.add("tab.list", error=("internal_error", "kept"))
    gone = sim.faults.add("workspace.list", error=("internal_error", "gone"))
    sim.faults.remove(gone)
    assert herdr_client.call("workspace.list")["type"] == "workspace_list"
    failure(herdr_client.call, "tab.list")
    assert keep.hits == 1


def test_clear_disarms_everything(sim: Simulator, herdr_client: HerdrClient) -> None:
    sim.faults.add("*", error=("internal_error", "x"))
    sim.faults.add("workspace.create", drop="before")
    sim.faults.clear()
    assert herdr_client.call("workspace.create", cwd="/tmp")["workspace"]["workspace_id"] == "w1"
    still_serving(herdr_client)


def test_faults_apply_to_socket_requests_only(sim: Simulator) -> None:
    sim.faults.add("*", error=("internal_error", "x"))
    assert sim.call("workspace.list")["result"]["type"] == "workspace_list"


def test_unparseable_requests_are_answered_before_faults(sim: Simulator, raw: Raw) -> None:
    fault = sim.faults.add("*", drop="before")
    invalid_request(raw("pane.send_text", pane_id="w1:p1"))  # missing `text`
    assert fault.hits == 0


def test_faults_hit_streaming_subscriptions_too(sim: Simulator) -> None:
    sim.faults.add("events.subscribe", error=("server_unavailable", "no streams"))
    reply = request(
        sim.socket_path,
        "events.subscribe",
        {"subscriptions": [{"type": "pane.created"}]},
        request_id="s",
    )
    assert reply == {"id": "s", "error": {"code": "server_unavailable", "message": "no streams"}}


def test_fault_plan_rejects_contradictions(sim: Simulator) -> None:
    with pytest.raises(ValueError, match="either"):
        sim.faults.add("ping", error=("x", "y"), drop="before")
    with pytest.raises(ValueError, match="negative"):
        sim.faults.add("ping", delay=-1)
