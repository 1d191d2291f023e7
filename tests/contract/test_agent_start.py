"""``agent.start`` and Herdr's managed launch phases, through the API and the ``herdr agent
start`` CLI, with the fake agents and Herdr's own detection manifests (reference §5.6,
§5.7, §17.6; Herdr's ``src/app/agents.rs``, ``src/terminal/state.rs``, ``src/cli/agent.rs``).

Issue 3's acceptance is here: for every fake kind, ``herdr agent start`` returns an agent
with ``interactive_ready: true`` and ``herdr agent prompt … --wait`` returns after the fake
agent's turn. The settle delay is shortened (``agent_start_settle``); Herdr's 3 s is only
checked as the default.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator, testing
from herdr_sim.config import SimulatorConfig
from herdr_sim.methods.agent_start import command_line, quote_posix, quote_powershell
from herdr_sim.model.agents import AgentState
from herdr_sim.services.launches import ManagedLaunch, reconcile
from pytest_herdr.cli_runner import HerdrCli
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import (
    cli_error,
    cli_json,
    enter,
    events_since,
    failure,
    foreground_names,
    split,
    wait_line,
    wait_output,
)
from tests.contract_check import contracts_dir
from tests.waits import SCALE, wait_until

SETTLE = 0.1
pytestmark = [
    pytest.mark.herdr_sim_only,
    pytest.mark.herdr(
        agent_manifests_dir=contracts_dir() / "agent-detection",
        agent_start_settle=SETTLE,
        agent_prompt_submit_delay=0.05,
        detection_interval=0.1,
        detection_debounce=0.02,
        detection_idle_hold=0.1,
    ),
]

FAKE_KINDS = ("pi", "claude", "codex", "opencode")
REPLY = "reply-from-the-fake"


@pytest.fixture
def scenario(short_dir: Path) -> Path:
    """One turn that works 300 ms (long enough to be seen on screen), then replies."""
    path = short_dir / "turn.json"
    path.write_text(json.dumps({"turns": [{"steps": [{"wait": 300}, {"reply": REPLY}]}]}))
    return path


def agent(herdr_client: HerdrClient, target: str) -> dict[str, Any]:
    """``agent.get``'s AgentInfo."""
    info: dict[str, Any] = herdr_client.call("agent.get", target=target)["agent"]
    return info


def start(
    herdr_client: HerdrClient, pane: str, name: str = "worker", kind: str = "pi", **params: Any
) -> Any:
    """``agent.start``'s result."""
    return herdr_client.call("agent.start", name=name, kind=kind, pane_id=pane, **params)


def detected(herdr_client: HerdrClient, name: str, kind: str) -> dict[str, Any]:
    """Wait until the named agent is detected as ``kind`` and idle; its AgentInfo."""

    def seen() -> dict[str, Any] | None:
        info = agent(herdr_client, name)
        return info if (info.get("agent"), info["agent_status"]) == (kind, "idle") else None

    return wait_until(seen, 5, what=f"{name} detected as {kind}")


def slow_settle(sim: Simulator) -> None:
    """Keep launches pending for the rest of the test (read when a launch begins)."""
    sim.config.agent_start_settle = 60.0


# -- acceptance: every fake kind through the CLI --------------------------------------------------


@pytest.mark.parametrize("kind", FAKE_KINDS)
def test_cli_start_is_interactive_ready_and_prompt_wait_sees_the_turn(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, pane: str, scenario: Path, kind: str
) -> None:
    started = cli_json(
        herdr_cli(
            "agent",
            "start",
            "a1",
            "--kind",
            kind,
            "--pane",
            pane,
            "--",
            "--scenario",
            str(scenario),
        ),
        "cli:agent:start",
    )
    assert started["type"] == "agent_started"
    assert started["argv"] == [kind, "--scenario", str(scenario)]
    ready = started["agent"]
    assert (ready["name"], ready["agent"], ready["pane_id"]) == ("a1", kind, pane)
    assert ready["interactive_ready"] is True
    assert "launch_pending" not in ready
    assert ready["agent_status"] in ("idle", "done")

    prompted = cli_json(herdr_cli("agent", "prompt", "a1", "hello", "--wait"), "cli:agent:prompt")
    assert prompted["type"] == "agent_prompted"
    assert prompted["agent"]["agent_status"] in ("idle", "done")
    assert REPLY in herdr_client.call("pane.read", pane_id=pane, source="recent")["read"]["text"]


# -- the server side: one request, answered at once ------------------------------------------------


def test_start_answers_at_once_with_launch_pending(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    slow_settle(sim)
    result = start(herdr_client, pane)
    assert result["type"] == "agent_started"
    assert result["argv"] == ["pi"]
    info = result["agent"]
    assert (info["name"], info["pane_id"], info["launch_pending"]) == ("worker", pane, True)
    assert "interactive_ready" not in info
    keys = list(info)
    assert keys.index("focused") < keys.index("launch_pending") < keys.index("state_change_seq")


def test_a_pending_launch_is_an_agent_by_name(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    slow_settle(sim)
    start(herdr_client, pane)
    assert [a["name"] for a in herdr_client.call("agent.list")["agents"]] == ["worker"]
    assert agent(herdr_client, "worker")["launch_pending"] is True
    snapshot_agents = herdr_client.call("session.snapshot")["snapshot"]["agents"]
    assert [(a["name"], a.get("launch_pending")) for a in snapshot_agents] == [("worker", True)]


def test_the_command_line_is_typed_into_the_shell(herdr_client: HerdrClient, pane: str) -> None:
    start(herdr_client, pane, kind="gemini", args=["--model", "a b", "it's", "x=1,y@2%"])
    wait_output(herdr_client.call, pane, text="gemini --model 'a b' 'it'\\''s' x=1,y@2%")


def test_settle_delay_comes_before_interactive_ready(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    sim.config.agent_start_settle = 0.6
    began = time.monotonic()
    start(herdr_client, pane)
    info = detected(herdr_client, "worker", "pi")
    assert info.get("launch_pending") is True, "detected idle, but the settle delay is not over"
    ready = wait_until(
        lambda: agent(herdr_client, "worker").get("interactive_ready"), 5, what="ready"
    )
    assert ready is True
    assert time.monotonic() - began >= 0.6
    assert "launch_pending" not in agent(herdr_client, "worker")


def test_becoming_ready_emits_pane_updated(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    sim.config.agent_start_settle = 0.5
    start(herdr_client, pane)
    detected(herdr_client, "worker", "pi")
    mark = len(sim.events)
    wait_until(lambda: agent(herdr_client, "worker").get("interactive_ready"), 5, what="ready")
    updated = [data for kind, data in events_since(sim, mark) if kind == "pane_updated"]
    assert updated and updated[0]["pane"]["pane_id"] == pane


def test_herdrs_settle_delay_is_the_default() -> None:
    assert SimulatorConfig().agent_start_settle == 3.0


# -- while the launch is pending -------------------------------------------------------------------


def test_prompt_while_pending_is_not_ready(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    slow_settle(sim)
    start(herdr_client, pane)
    detected(herdr_client, "worker", "pi")
    assert failure(herdr_client.call, "agent.prompt", target="worker", text="hi") == (
        "agent_not_ready",
        "agent worker is not an active named agent",
    )


def test_rename_while_pending(sim: Simulator, herdr_client: HerdrClient, pane: str) -> None:
    slow_settle(sim)
    start(herdr_client, pane)
    assert failure(herdr_client.call, "agent.rename", target="worker", name="other") == (
        "agent_launch_pending",
        "agent name cannot change while startup is pending",
    )


def test_rename_checks_the_name_before_the_pending_launch(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    slow_settle(sim)
    start(herdr_client, pane)
    code, _ = failure(herdr_client.call, "agent.rename", target="worker", name="Bad")
    assert code == "invalid_agent_name"


def test_send_keys_while_pending_is_not_checked_like_herdr(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    # Herdr's agent.send_keys checks the label and the foreground process, not the launch
    slow_settle(sim)
    start(herdr_client, pane)
    detected(herdr_client, "worker", "pi")
    assert herdr_client.call("agent.send_keys", target="worker", keys=["a"]) == {"type": "ok"}


def test_rename_after_ready_keeps_interactive_ready(herdr_client: HerdrClient, pane: str) -> None:
    start(herdr_client, pane)
    wait_until(lambda: agent(herdr_client, "worker").get("interactive_ready"), 5, what="ready")
    renamed = herdr_client.call("agent.rename", target="worker", name="renamed")["agent"]
    assert (renamed["name"], renamed["interactive_ready"]) == ("renamed", True)


def test_clearing_the_name_ends_the_managed_launch(herdr_client: HerdrClient, pane: str) -> None:
    start(herdr_client, pane)
    wait_until(lambda: agent(herdr_client, "worker").get("interactive_ready"), 5, what="ready")
    cleared = herdr_client.call("agent.rename", target=pane)["agent"]
    assert "name" not in cleared
    assert "interactive_ready" not in cleared


# -- the launch fails: names cleared ---------------------------------------------------------------


def test_agent_exit_while_pending_clears_the_name(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    slow_settle(sim)
    start(herdr_client, pane)
    detected(herdr_client, "worker", "pi")
    enter(herdr_client, pane, "/exit")
    wait_until(
        lambda: "worker" not in {a.get("name") for a in herdr_client.call("agent.list")["agents"]},
        5,
    )
    assert failure(herdr_client.call, "agent.get", target="worker")[0] == "agent_not_found"
    assert start(herdr_client, pane, name="again")["agent"]["name"] == "again"


def test_another_kind_detected_clears_the_name(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    slow_settle(sim)
    # the agent process carries Herdr's HERDR_AGENT hint for another kind
    enter(herdr_client, pane, "export HERDR_AGENT=claude")
    wait_line(herdr_client, pane, r"^\$ export")
    start(herdr_client, pane)

    def claude_without_name() -> bool:
        info = agent(herdr_client, pane)
        return info.get("agent") == "claude" and "name" not in info

    wait_until(claude_without_name, 5, what="the launch cleared")


def test_cli_kind_mismatch(herdr_client: HerdrClient, herdr_cli: HerdrCli, pane: str) -> None:
    enter(herdr_client, pane, "export HERDR_AGENT=claude")
    wait_line(herdr_client, pane, r"^\$ export")
    error = cli_error(herdr_cli("agent", "start", "w", "--kind", "pi", "--pane", pane))
    assert error == {
        "id": "cli:agent:start",
        "error": {"code": "agent_kind_mismatch", "message": "expected pi, detected claude"},
    }


def test_cli_deadline_is_a_timeout_and_the_name_is_cleared(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, pane: str
) -> None:
    # no `gemini` on the pane PATH: nothing ever becomes interactive (Herdr #3381)
    began = time.monotonic()
    error = cli_error(
        herdr_cli("agent", "start", "w", "--kind", "gemini", "--pane", pane, "--timeout", "3001")
    )
    assert time.monotonic() - began >= 3.0
    assert error == {
        "id": "cli:agent:start",
        "error": {"code": "timeout", "message": "timed out waiting for agent startup"},
    }
    wait_until(lambda: not herdr_client.call("agent.list")["agents"], 2, what="the name cleared")
    assert start(herdr_client, pane, name="w", kind="gemini")["agent"]["launch_pending"] is True


# -- blocked during startup (detection driven through the seam) ---------------------------------

#: detection off: the test says what Herdr would detect (the launched `gemini` does not exist)
SEAM = pytest.mark.herdr(agent_detection=False, agent_start_settle=SETTLE)


def detect(sim: Simulator, pane: str, agent: str | None, screen: AgentState) -> None:
    """What process and screen detection would set."""
    testing.set_detection(sim, pane, (agent, screen))


@SEAM
def test_blocked_during_startup_stays_pending_then_becomes_ready(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    start(herdr_client, pane, kind="gemini")
    detect(sim, pane, "gemini", "blocked")
    blocked = wait_until(
        lambda: (info := agent(herdr_client, "worker"))["agent_status"] == "blocked" and info, 5
    )
    assert blocked["launch_pending"] is True
    assert "interactive_ready" not in blocked
    detect(sim, pane, "gemini", "idle")
    ready = wait_until(
        lambda: agent(herdr_client, "worker").get("interactive_ready"), 5, what="ready"
    )
    assert ready is True


@SEAM
def test_idle_while_the_launch_is_pending_is_not_done(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    # a launch in a background tab: its turns before readiness are startup, not work done
    slow_settle(sim)
    workspace = herdr_client.call("pane.get", pane_id=pane)["pane"]["workspace_id"]
    background = herdr_client.call("tab.create", workspace_id=workspace, focus=False)["root_pane"][
        "pane_id"
    ]
    start(herdr_client, background, kind="gemini")
    detect(sim, background, "gemini", "idle")
    detect(sim, background, "gemini", "working")
    detect(sim, background, "gemini", "idle")
    info = agent(herdr_client, "worker")
    assert (info["launch_pending"], info["agent_status"]) == (True, "idle")


@SEAM
def test_cli_blocked_during_startup_is_not_ready(
    sim: Simulator, herdr_client: HerdrClient, herdr_cli: HerdrCli, pane: str
) -> None:
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(herdr_cli, "agent", "start", "w", "--kind", "gemini", "--pane", pane)
        wait_until(lambda: herdr_client.call("agent.list")["agents"], 5, what="the launch")
        detect(sim, pane, "gemini", "blocked")
        error = cli_error(running.result(timeout=10))
    assert error == {
        "id": "cli:agent:start",
        "error": {
            "code": "agent_not_ready",
            "message": "agent w is blocked during startup and is not ready for prompts",
        },
    }


# -- validation order (reference §5.6 steps 1–8) ---------------------------------------------------


@pytest.fixture
def taken(sim: Simulator, herdr_client: HerdrClient, pane: str) -> str:
    """A second pane whose pending launch holds the name ``taken``; the free pane's id."""
    slow_settle(sim)
    other = split(herdr_client, pane)
    wait_line(herdr_client, other, r"^\$")
    start(herdr_client, other, name="taken", kind="gemini")
    return pane


@pytest.mark.parametrize(
    ("params", "code", "message"),
    [
        (
            {"name": "Bad", "kind": "nope"},
            "invalid_agent_name",
            (
                "agent name must start with a lowercase letter and contain only lowercase "
                "letters, digits, '-' or '_' (1-32 characters)"
            ),
        ),
        ({"name": "a" * 33}, "invalid_agent_name", None),
        (
            {"kind": "nope", "args": ["\x01"]},
            "unsupported_agent_kind",
            "unsupported interactive agent kind nope",
        ),
        (
            {"name": "taken", "args": ["a\tb"]},
            "invalid_agent_argument",
            "agent arguments cannot be encoded safely for the target shell",
        ),
        ({"args": ["\x85"]}, "invalid_agent_argument", None),
        ({"name": "taken", "pane_id": "w9:p9"}, "agent_name_taken", None),
        (
            {"pane_id": "w1-1", "timeout_ms": 1},
            "agent_pane_not_found",
            "agent target pane w1-1 not found",
        ),
        (
            {"pane_id": "w1:p2", "timeout_ms": 1},
            "agent_pane_busy",
            "agent target pane w1:p2 is not an available shell",
        ),
        (
            {"timeout_ms": 3000},
            "invalid_agent_timeout",
            "agent start timeout must be greater than 3000ms and at most 300000ms",
        ),
        ({"timeout_ms": 300_001}, "invalid_agent_timeout", None),
    ],
)
def test_validation_order(
    herdr_client: HerdrClient, taken: str, params: dict[str, Any], code: str, message: str | None
) -> None:
    request = {"name": "fresh", "kind": "pi", "pane_id": taken, **params}
    found_code, found_message = failure(herdr_client.call, "agent.start", **request)
    assert found_code == code
    if message is not None:
        assert found_message == message


def test_name_taken_lists_the_candidates(herdr_client: HerdrClient, taken: str) -> None:
    code, message = failure(
        herdr_client.call, "agent.start", name="taken", kind="pi", pane_id=taken
    )
    assert code == "agent_name_taken"
    owner = agent(herdr_client, "taken")
    assert message == (
        f"agent name taken is already used; candidates: terminal_id={owner['terminal_id']} "
        f"pane_id=w1:p2 workspace_id=w1 tab_id=w1:t1 cwd=/tmp status=Unknown"
    )


@pytest.mark.parametrize("timeout_ms", [3001, 300_000])
def test_timeout_bounds_are_inclusive_above(
    herdr_client: HerdrClient, pane: str, timeout_ms: int
) -> None:
    started = start(herdr_client, pane, kind="gemini", timeout_ms=timeout_ms)
    assert started["agent"]["launch_pending"] is True


def test_a_pane_hosting_an_agent_is_busy(herdr_client: HerdrClient, pane: str) -> None:
    enter(herdr_client, pane, "claude")
    wait_until(lambda: herdr_client.call("agent.list")["agents"], 5, what="claude detected")
    assert failure(herdr_client.call, "agent.start", name="w", kind="claude", pane_id=pane) == (
        "agent_pane_busy",
        f"agent target pane {pane} is not an available shell",
    )


def test_a_running_program_makes_the_pane_busy(herdr_client: HerdrClient, pane: str) -> None:
    enter(herdr_client, pane, "sleep 30")
    wait_until(
        lambda: "sleep" in foreground_names(herdr_client, pane), 5, what="sleep in the foreground"
    )
    assert (
        failure(herdr_client.call, "agent.start", name="w", kind="pi", pane_id=pane)[0]
        == "agent_pane_busy"
    )


def test_cli_busy_pane_fails_at_once(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, pane: str
) -> None:
    enter(herdr_client, pane, "sleep 30")
    wait_until(
        lambda: "sleep" in foreground_names(herdr_client, pane), 5, what="sleep in the foreground"
    )
    began = time.monotonic()
    error = cli_error(herdr_cli("agent", "start", "w", "--kind", "pi", "--pane", pane))
    assert error["error"]["code"] == "agent_pane_busy"
    assert time.monotonic() - began < 1.5 * SCALE, "a running program is not a shell still starting"


def test_cli_unsupported_kind_is_a_usage_error(herdr_cli: HerdrCli, pane: str) -> None:
    result = herdr_cli("agent", "start", "w", "--kind", "nope", "--pane", pane)
    assert result.code == 2
    assert "unsupported interactive agent kind: nope" in result.stderr


# -- kinds and executables -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "executable"),
    [("claude-code", "claude"), ("Cursor", "cursor-agent"), ("kiro", "kiro-cli"), ("agy", "agy")],
)
def test_kinds_map_to_herdrs_executables(
    herdr_client: HerdrClient, pane: str, kind: str, executable: str
) -> None:
    assert start(herdr_client, pane, kind=kind)["argv"] == [executable]


# -- quoting (pure) --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arg", "quoted"),
    [
        ("plain-arg_1.2/x:y,z@%+=", "plain-arg_1.2/x:y,z@%+="),
        ("", "''"),
        ("a b", "'a b'"),
        ("it's", "'it'\\''s'"),
        ("$HOME", "'$HOME'"),
        ("é", "'é'"),
    ],
)
def test_posix_quoting(arg: str, quoted: str) -> None:
    assert quote_posix(arg) == quoted


def test_powershell_quoting() -> None:
    assert command_line(["pi", "a b", "it's", "x@y"], "pwsh") == "pi 'a b' 'it''s' 'x@y'"
    assert quote_powershell("a-b_c.d/e:f+g=h") == "a-b_c.d/e:f+g=h"


# -- the phase machine (pure; Herdr's reconcile_managed_agent_at) ----------------------------------


def _launch(**fields: Any) -> ManagedLaunch:
    return ManagedLaunch(
        **{"name": "w", "kind": "pi", "deadline": 10.0, "ready_after": 3.0, **fields}
    )


def test_pending_becomes_active_only_after_the_settle_delay() -> None:
    launch = _launch()
    assert reconcile(launch, "pi", "idle", 1.0) == "changed"  # first sight of the agent
    assert (launch.phase, launch.observed) == ("pending", True)
    assert reconcile(launch, "pi", "idle", 3.0) == "changed"
    assert (launch.phase, launch.interactive_ready, launch.launch_pending) == (
        "active",
        True,
        False,
    )


def test_blocked_during_startup_stays_pending_until_idle() -> None:
    launch = _launch()
    assert reconcile(launch, "pi", "blocked", 1.0) == "changed"
    assert (launch.phase, launch.launch_pending) == ("blocked", True)
    assert reconcile(launch, "pi", "blocked", 50.0) == "same", "no deadline once blocked"
    assert reconcile(launch, "pi", "idle", 51.0) == "changed"
    assert launch.phase == "active"


def test_the_deadline_clears_a_pending_launch() -> None:
    launch = _launch()
    assert reconcile(launch, None, "unknown", 9.9) == "changed"  # settle passed, not idle
    assert launch.ready_after is None
    assert reconcile(launch, "pi", "working", 9.9) == "changed"
    assert reconcile(launch, "pi", "working", 10.0) == "clear"


def test_the_expected_agent_disappearing_clears_a_pending_launch() -> None:
    launch = _launch()
    reconcile(launch, "pi", "working", 1.0)
    assert reconcile(launch, None, "unknown", 1.5) == "clear"


def test_another_kind_clears_even_an_active_launch() -> None:
    launch = _launch(phase="active")
    assert reconcile(launch, "claude", "idle", 1.0) == "clear"
    assert reconcile(_launch(phase="active"), "pi", "working", 1.0) == "same"
