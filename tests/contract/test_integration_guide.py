"""Behaviours of the agent-integration guide (seeds 003/004, Herdr 0.9.2) that no other test
pins; the audit that maps every guide sentence to its tests is
``docs/simulator/integration-guide.md`` (rows G1… cite the tests below).

Each test drives the simulator the way a third-party agent would: the ``herdr`` CLI found
through the pane's environment, or the equivalent socket request.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator, testing
from herdr_sim.client import call
from pytest_herdr.cli_runner import HerdrCli
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import (
    cli_json,
    cli_quiet,
    enter,
    failure,
    get,
    wait_line,
)
from tests.waits import SCALE, wait_until

SOURCE = "my-agent"


def report(herdr_client: HerdrClient, pane: str, state: str = "working", **params: Any) -> None:
    """A third-party ``pane.report_agent`` (source and agent ``my-agent``)."""
    herdr_client.call(
        "pane.report_agent", pane_id=pane, source=SOURCE, agent=SOURCE, state=state, **params
    )


def stored_resume(sim: Simulator, pane: str) -> list[str] | None:
    """The resume command the simulator keeps for the pane (protocol 22 does not expose it)."""
    return testing.agent_record(sim, pane).resume()


def listeners(sim: Simulator) -> int:
    """How many hub listeners there are (a waiting ``agent.wait`` adds one)."""
    return testing.event_listeners(sim)


# -- the pane environment (G5–G8) -------------------------------------------------------------


# sim only: a stand-in for Herdr (CI's real backend) gives its panes the simulator's own CLI
@pytest.mark.herdr_sim_only
def test_pane_env_names_herdr_its_pane_binary_and_socket(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    enter(
        herdr_client,
        pane,
        'echo "env=$HERDR_ENV|$HERDR_PANE_ID|$HERDR_BIN_PATH|$HERDR_SOCKET_PATH"',
    )
    line = wait_line(herdr_client, pane, r"^env=")
    assert line == f"env=1|{pane}|{sim.cli_path}|{sim.socket_path}"


def test_guide_commands_work_through_herdr_bin_path_inside_the_pane(
    herdr_client: HerdrClient, pane: str
) -> None:
    enter(
        herdr_client,
        pane,
        '"$HERDR_BIN_PATH" pane report-agent "$HERDR_PANE_ID" --source my-agent '
        "--agent my-agent --state working --seq 1 && "
        '"$HERDR_BIN_PATH" pane get "$HERDR_PANE_ID" | grep -o \'"agent_status": *"[a-z]*"\' && '
        '"$HERDR_BIN_PATH" agent list | grep -o \'"agent": *"my-agent"\' && echo CHECKED',
    )
    wait_line(herdr_client, pane, "^CHECKED$")
    screen = herdr_client.call("pane.read", pane_id=pane, source="recent")["read"]["text"]
    assert '"agent_status":"working"' in screen.replace(" ", "")
    assert '"agent":"my-agent"' in screen.replace(" ", "")
    assert (get(herdr_client, pane)["agent"], get(herdr_client, pane)["agent_status"]) == (
        "my-agent",
        "working",
    )


# -- status reports (G1, G3, G9) -----------------------------------------------------------------


@pytest.mark.parametrize("state", ["idle", "working", "blocked"])
def test_agent_list_shows_the_reported_name_and_state(
    herdr_cli: HerdrCli, root: str, state: str
) -> None:
    cli_quiet(herdr_cli("pane", "report-agent", root, "--source", SOURCE, "--agent", SOURCE,
                    "--state", state, "--seq", "1"))  # fmt: skip
    [listed] = cli_json(herdr_cli("agent", "list"), "cli:agent:list")["agents"]
    assert (listed["pane_id"], listed["agent"], listed["agent_status"]) == (root, SOURCE, state)


def test_blocked_report_with_a_message_is_accepted(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, root: str
) -> None:
    cli_quiet(herdr_cli("pane", "report-agent", root, "--source", SOURCE, "--agent", SOURCE,
                    "--state", "blocked", "--message", "approve rm -rf build?"))  # fmt: skip
    assert get(herdr_client, root)["agent_status"] == "blocked"


@pytest.mark.herdr_sim_only
def test_cli_agent_wait_follows_a_reported_agent_to_idle(
    sim: Simulator, herdr_client: HerdrClient, herdr_cli: HerdrCli, root: str
) -> None:
    report(herdr_client, root, "working", seq=1)
    before = listeners(sim)
    with ThreadPoolExecutor(max_workers=1) as pool:
        running = pool.submit(
            herdr_cli, "agent", "wait", root, "--until", "idle", "--timeout", "10000"
        )
        wait_until(lambda: listeners(sim) > before, what="the wait to be registered")
        report(herdr_client, root, "idle", seq=2)
        result = running.result(timeout=15 * SCALE)
    waited = cli_json(result, "cli:agent:wait")
    assert (waited["agent"]["agent"], waited["agent"]["agent_status"]) == (SOURCE, "idle")


# -- seq (G13, G14) -----------------------------------------------------------------------------


def test_millisecond_timestamps_work_as_seq(herdr_client: HerdrClient, root: str) -> None:
    stamp = int(time.time() * 1000)
    report(herdr_client, root, "working", seq=stamp)
    report(herdr_client, root, "idle", seq=stamp + 1)
    assert get(herdr_client, root)["agent_status"] == "idle"


def test_seq_memory_outlives_a_release(herdr_client: HerdrClient, root: str) -> None:
    # a restarted agent that counts from a low number again is ignored: seq must keep growing
    report(herdr_client, root, "working", seq=5)
    herdr_client.call("pane.release_agent", pane_id=root, source=SOURCE, agent=SOURCE, seq=6)
    report(herdr_client, root, "idle", seq=3)
    assert "agent" not in get(herdr_client, root)
    report(herdr_client, root, "idle", seq=7)
    assert get(herdr_client, root)["agent"] == SOURCE


# -- resume commands (G17–G24) ----------------------------------------------------------------


@pytest.mark.herdr_sim_only
def test_guides_resume_example_through_the_cli_stores_the_command(
    sim: Simulator, herdr_client: HerdrClient, herdr_cli: HerdrCli, root: str
) -> None:
    cli_quiet(herdr_cli("pane", "report-agent", root, "--source", SOURCE, "--agent", SOURCE,
                    "--state", "idle", "--seq", "2", "--agent-session-id", "S1",
                    "--", SOURCE, "--resume", "S1", "--model", "my-model"))  # fmt: skip
    assert get(herdr_client, root)["agent_status"] == "idle"
    assert stored_resume(sim, root) == [SOURCE, "--resume", "S1", "--model", "my-model"]


@pytest.mark.herdr_sim_only
def test_any_state_report_can_replace_the_command(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    report(herdr_client, root, "working", seq=1, resume_argv=[SOURCE, "--resume", "s1"])
    report(herdr_client, root, "blocked", seq=2, resume_argv=[SOURCE, "--resume", "s2"])
    assert stored_resume(sim, root) == [SOURCE, "--resume", "s2"]


@pytest.mark.herdr_sim_only
def test_state_report_without_a_command_keeps_the_stored_one(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    report(herdr_client, root, "working", seq=1, resume_argv=[SOURCE, "--resume", "s1"])
    report(herdr_client, root, "idle", seq=2)
    assert stored_resume(sim, root) == [SOURCE, "--resume", "s1"]


@pytest.mark.herdr_sim_only
def test_resume_size_limit_is_8_kib_inclusive(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    fits = [SOURCE, "x" * (8192 - len(SOURCE))]
    report(herdr_client, root, "idle", seq=1, resume_argv=fits)
    assert stored_resume(sim, root) == fits
    code, _ = failure(
        herdr_client.call,
        "pane.report_agent",
        pane_id=root,
        source=SOURCE,
        agent=SOURCE,
        state="idle",
        seq=2,
        resume_argv=[*fits[:1], fits[1] + "x"],
    )
    assert code == "invalid_resume_argv"


@pytest.mark.herdr_sim_only
def test_invalid_session_report_keeps_the_stored_command(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    report(herdr_client, root, "idle", seq=1, resume_argv=[SOURCE, "--resume", "s1"])
    code, _ = failure(
        herdr_client.call,
        "pane.report_agent_session",
        pane_id=root,
        source=SOURCE,
        agent=SOURCE,
        seq=2,
        resume_argv=[SOURCE, "--resume", "it's"],
    )
    assert code == "invalid_resume_argv"
    assert stored_resume(sim, root) == [SOURCE, "--resume", "s1"]


@pytest.mark.herdr_sim_only
def test_restored_pane_runs_the_resume_command_in_its_directory(short_dir: Path) -> None:
    work = short_dir / "work"
    work.mkdir()
    home = short_dir / "home"
    home.mkdir()

    def start() -> Simulator:
        sim = Simulator(
            socket_path=short_dir / "herdr.sock",
            base_env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
            runtime_dir=short_dir / "rt",
        )
        sim.start()
        return sim

    first = start()
    try:
        pane = call(first.socket_path, "workspace.create", {"cwd": str(work)})["root_pane"]
        params = {"pane_id": pane["pane_id"], "source": SOURCE, "agent": SOURCE, "state": "idle"}
        call(first.socket_path, "pane.report_agent", {**params, "seq": 1, "resume_argv": ["pwd"]})
    finally:
        first.stop()
    again = start()
    try:
        line = call(
            again.socket_path,
            "pane.wait_for_output",
            {
                "pane_id": pane["pane_id"],
                "source": "recent",
                "match": {"type": "regex", "value": f"^{work}$"},
                "timeout_ms": 10_000,
            },
        )["matched_line"]
    finally:
        again.stop()
    assert line == str(work)


# -- the exit safety net (G28) ---------------------------------------------------------------------


@pytest.mark.herdr_sim_only
def test_safety_net_also_drops_the_resume_command(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    enter(
        herdr_client,
        pane,
        'sh -c "herdr pane report-agent $HERDR_PANE_ID --source acme:bot --agent acme '
        '--state idle --seq 1 -- acme --resume s1 && echo REPORTED && read line"',
    )
    wait_line(herdr_client, pane, "^REPORTED$")
    assert stored_resume(sim, pane) == ["acme", "--resume", "s1"]
    enter(herdr_client, pane, "")  # the job exits without releasing
    wait_until(lambda: "agent" not in get(herdr_client, pane), timeout=2, what="the safety net")
    assert stored_resume(sim, pane) is None
