"""Live agent detection with real panes and the fake agents: process detection from the
pane's foreground job, screen detection under Herdr's own manifests, agent exit, the fake
agents on the pane PATH, ``agent.explain`` and the manifest methods (reference §5.2–§5.4,
§12 item 14; Herdr's ``src/pane.rs`` detection task and ``src/app/api/agents.rs``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator, testing
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import (
    enter,
    events_since,
    failure,
    foreground_names,
    wait_line,
)
from tests.contract_check import contracts_dir
from tests.waits import wait_until

MANIFESTS = contracts_dir() / "agent-detection"
#: short detection intervals so the suite stays fast (Herdr: 500 ms, 100 ms holds)
FAST = {"detection_interval": 0.1, "detection_debounce": 0.02, "detection_idle_hold": 0.1}

#: the simulator's detection, with Herdr's shared manifests and fast detection
pytestmark = [pytest.mark.herdr_sim_only, pytest.mark.herdr(agent_manifests_dir=MANIFESTS, **FAST)]


def _simulator(short_dir: Path, tag: str, **settings: Any) -> Simulator:
    home = short_dir / f"home{tag}"
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": settings.pop("path", os.environ.get("PATH", "/usr/bin:/bin")),
        "HERDR_SIM_CONFIG_DIR": str(short_dir / f"cfg{tag}"),
    }
    return Simulator(
        socket_path=short_dir / f"h{tag}.sock",
        base_env=env,
        runtime_dir=short_dir / f"rt{tag}",
        **{**FAST, **settings},
    )


@pytest.fixture
def scenario(short_dir: Path) -> Path:
    """A fake-agent scenario: the first prompt works 300 ms, asks a question, then replies."""
    path = short_dir / "scenario.json"
    steps = [{"wait": 300}, {"ask": "Proceed?"}, {"reply": "done"}]
    path.write_text(json.dumps({"turns": [{"steps": steps}]}))
    return path


def pane_info(herdr_client: HerdrClient, pane: str) -> dict[str, Any]:
    """PaneInfo."""
    info: dict[str, Any] = herdr_client.call("pane.get", pane_id=pane)["pane"]
    return info


def wait_status(
    herdr_client: HerdrClient, pane: str, agent: str | None, status: str
) -> dict[str, Any]:
    """Wait until the pane shows ``agent`` (None: no agent) with ``status``; its PaneInfo."""

    def seen() -> dict[str, Any] | None:
        info = pane_info(herdr_client, pane)
        return info if (info.get("agent"), info["agent_status"]) == (agent, status) else None

    return wait_until(seen, 5, what=f"{pane} showing {agent} {status}")


def statuses(sim: Simulator, mark: int, pane: str) -> list[str]:
    """The ``pane_agent_status_changed`` statuses of a pane since ``mark``."""
    return [
        data["agent_status"]
        for kind, data in events_since(sim, mark)
        if kind == "pane_agent_status_changed" and data["pane_id"] == pane
    ]


def start_agent(herdr_client: HerdrClient, pane: str, command: str, agent: str) -> dict[str, Any]:
    """Run a fake agent in the pane's shell; wait until it is detected, idle and drawn."""
    enter(herdr_client, pane, command)
    wait_line(herdr_client, pane, r"herdr-sim fake agent", source="visible")
    return wait_status(herdr_client, pane, agent, "idle")


def wait_rule(herdr_client: HerdrClient, pane: str, rule: str) -> dict[str, Any]:
    """Wait until ``agent.explain`` names ``rule`` as the matched rule; the explain object."""

    def matched() -> dict[str, Any] | None:
        explain: dict[str, Any] = herdr_client.call("agent.explain", target=pane)["explain"]
        return explain if (explain["matched_rule"] or {}).get("id") == rule else None

    return wait_until(matched, 5, what=f"rule {rule} on {pane}")


# -- fake agents on the pane PATH -----------------------------------------------------------------


def test_fake_agents_come_right_after_the_herdr_cli_on_the_pane_path(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    enter(herdr_client, pane, 'echo "$PATH" | tr : "\\n" | head -n 2 | tr "\\n" ,; echo')
    line = wait_line(herdr_client, pane, r"^/.*,$")
    assert line == f"{sim.runtime_dir / 'bin'},{sim.runtime_dir / 'fake-bin'},"
    for kind in ("pi", "claude", "codex", "opencode"):
        assert os.access(sim.runtime_dir / "fake-bin" / kind, os.X_OK)


def test_without_fake_agents_the_users_own_agent_runs(short_dir: Path) -> None:
    own = short_dir / "own-bin"
    own.mkdir()
    (own / "pi").write_text("#!/bin/sh\necho the-users-pi\n")
    (own / "pi").chmod(0o755)
    path = f"{own}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    with _simulator(short_dir, "b", path=path, fake_agents=False) as other:
        herdr_client = HerdrClient(other.socket_path)

        root = herdr_client.call("workspace.create", cwd="/tmp")["root_pane"]["pane_id"]
        wait_line(herdr_client, root, r"^\$")
        enter(herdr_client, root, "command -v pi")
        assert wait_line(herdr_client, root, r"/pi$") == str(own / "pi")
        assert not (other.runtime_dir / "fake-bin").exists()


# -- process detection -----------------------------------------------------------------------------


def test_running_pi_makes_the_pane_a_pi_agent(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    mark = len(sim.events)
    info = start_agent(herdr_client, pane, "pi", "pi")
    assert info["agent"] == "pi"
    detected = [data for kind, data in events_since(sim, mark) if kind == "pane_agent_detected"]
    assert detected[0] == {
        "type": "pane_agent_detected",
        "pane_id": pane,
        "workspace_id": "w1",
        "agent": "pi",
    }
    assert [agent["pane_id"] for agent in herdr_client.call("agent.list")["agents"]] == [pane]


def test_fake_pi_startup_reports_anchor_its_full_lifecycle_authority(
    herdr_client: HerdrClient, pane: str
) -> None:
    start_agent(herdr_client, pane, "pi", "pi")

    def session() -> dict[str, Any] | None:
        # pi's session report may land just after its screen reads idle
        info: dict[str, Any] = herdr_client.call("pane.get", pane_id=pane)["pane"]
        ref: dict[str, Any] | None = info.get("agent_session")
        return ref

    assert wait_until(session, 5, what="pi's session report")["source"] == "herdr:pi"

    def skipped() -> bool:
        explain: dict[str, Any] = herdr_client.call("agent.explain", target=pane)["explain"]
        return explain["screen_detection_skipped"] is True

    wait_until(skipped, 5, what="herdr:pi holding the pane before any prompt")


def test_fake_pi_reports_are_accepted_and_status_follows_its_turns(
    sim: Simulator, herdr_client: HerdrClient, pane: str, scenario: Path
) -> None:
    start_agent(herdr_client, pane, f"pi --scenario {scenario}", "pi")
    mark = len(sim.events)
    herdr_client.call("pane.send_input", pane_id=pane, text="go", keys=["Enter"])
    wait_status(herdr_client, pane, "pi", "working")
    wait_status(
        herdr_client, pane, "pi", "blocked"
    )  # pi's blocked state comes from its report only
    herdr_client.call("pane.send_input", pane_id=pane, text="yes", keys=["Enter"])
    info = wait_status(herdr_client, pane, "pi", "idle")
    assert statuses(sim, mark, pane)[:2] == ["working", "blocked"]
    session = info["agent_session"]
    assert (session["source"], session["agent"], session["kind"]) == ("herdr:pi", "pi", "path")
    explain = herdr_client.call("agent.explain", target=pane)["explain"]
    assert explain["screen_detection_skipped"] is True
    assert explain["screen_detection_skip_reason"] == "full_lifecycle_hook_authority"


def test_quitting_the_agent_releases_the_pane(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    start_agent(herdr_client, pane, "claude", "claude")
    mark = len(sim.events)
    enter(herdr_client, pane, "/exit")
    info = wait_status(herdr_client, pane, None, "unknown")
    assert "agent" not in info and "agent_session" not in info
    released = [data for kind, data in events_since(sim, mark) if kind == "pane_agent_detected"]
    assert released == [
        {
            "type": "pane_agent_detected",
            "pane_id": pane,
            "workspace_id": "w1",
            "agent": "claude",
            "released": True,
            "final_status": "unknown",
        }
    ]
    assert herdr_client.call("agent.list")["agents"] == []


def test_shell_returned_listeners_hear_the_pane_come_back_to_its_prompt(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    heard: list[str] = []
    testing.on_shell_returned(sim, heard.append)
    enter(herdr_client, pane, "sleep 0.2")
    wait_until(lambda: heard == [pane], 5, what="the shell_returned listener")


def test_a_plain_program_is_not_an_agent(herdr_client: HerdrClient, pane: str) -> None:
    enter(herdr_client, pane, "cat")
    wait_until(
        lambda: foreground_names(herdr_client, pane) == ["cat"], what="cat in the foreground"
    )
    assert failure(herdr_client.call, "agent.explain", target=pane) == (
        "agent_not_found",
        f"agent target {pane} not found",
    )
    assert pane_info(herdr_client, pane)["agent_status"] == "unknown"


# -- screen detection ------------------------------------------------------------------------------


def test_fake_claude_screens_drive_idle_working_blocked(
    sim: Simulator, herdr_client: HerdrClient, pane: str, scenario: Path
) -> None:
    start_agent(herdr_client, pane, f"claude --scenario {scenario}", "claude")
    wait_rule(herdr_client, pane, "live_prompt_box")
    mark = len(sim.events)
    herdr_client.call("pane.send_input", pane_id=pane, text="go", keys=["Enter"])
    wait_status(herdr_client, pane, "claude", "working")
    wait_status(herdr_client, pane, "claude", "blocked")
    explain = herdr_client.call("agent.explain", target=pane)["explain"]
    assert (explain["state"], explain["visible_blocker"]) == ("blocked", True)
    herdr_client.call("pane.send_input", pane_id=pane, text="yes", keys=["Enter"])
    wait_status(herdr_client, pane, "claude", "idle")
    assert statuses(sim, mark, pane)[:2] == ["working", "blocked"]


def test_clear_agent_authority_restores_the_screen_detected_status(
    herdr_client: HerdrClient, pane: str
) -> None:  # reference §12 item 14
    start_agent(herdr_client, pane, "claude", "claude")
    herdr_client.call(
        "pane.report_agent", pane_id=pane, source="custom:x", agent="claude", state="working"
    )
    assert pane_info(herdr_client, pane)["agent_status"] == "working"
    herdr_client.call("pane.clear_agent_authority", pane_id=pane, source="custom:x")
    info = pane_info(herdr_client, pane)
    assert (info["agent"], info["agent_status"]) == ("claude", "idle")


# -- agent.explain and the manifest methods --------------------------------------------------------


def test_agent_explain_evaluates_the_agents_manifest_on_the_pane(
    herdr_client: HerdrClient, pane: str
) -> None:
    start_agent(herdr_client, pane, "claude", "claude")
    explain = wait_rule(herdr_client, pane, "live_prompt_box")
    assert (explain["agent"], explain["state"]) == ("claude", "idle")
    assert explain["manifest_source"] == "bundled"
    assert explain["screen_detection_skipped"] is False
    matched = [rule["id"] for rule in explain["evaluated_rules"] if rule["matched"]]
    assert "live_prompt_box" in matched


def test_agent_explain_without_a_detected_label_is_unavailable(
    herdr_client: HerdrClient, pane: str
) -> None:
    herdr_client.call(
        "pane.report_agent", pane_id=pane, source="custom:docs", agent="docs-bot", state="idle"
    )
    assert failure(herdr_client.call, "agent.explain", target=pane) == (
        "agent_explain_unavailable",
        f"agent target {pane} does not have a detected agent label",
    )


def test_server_agent_manifests_lists_the_loaded_manifests(herdr_client: HerdrClient) -> None:
    status = herdr_client.call("server.agent_manifests")
    assert status["type"] == "agent_manifest_status"
    by_agent = {item["agent"]: item for item in status["manifests"]}
    assert {"pi", "claude", "codex", "opencode"} <= set(by_agent)
    assert (by_agent["claude"]["source"], by_agent["claude"]["source_kind"]) == (
        "bundled",
        "bundled",
    )
    assert "omp" not in by_agent  # hook-only agents have no screen manifest


def test_reload_agent_manifests_answers_the_reloaded_set(herdr_client: HerdrClient) -> None:
    reloaded = herdr_client.call("server.reload_agent_manifests")
    assert reloaded["type"] == "agent_manifest_reload"
    assert reloaded["manifests"] == herdr_client.call("server.agent_manifests")["manifests"]


def test_without_manifests_a_detected_agent_is_idle_by_the_known_agent_fallback(
    short_dir: Path,
) -> None:
    with _simulator(short_dir, "c") as other:
        herdr_client = HerdrClient(other.socket_path)

        assert herdr_client.call("server.agent_manifests")["manifests"] == []
        root = herdr_client.call("workspace.create", cwd="/tmp")["root_pane"]["pane_id"]
        wait_line(herdr_client, root, r"^\$")
        start_agent(herdr_client, root, "claude", "claude")
        explain = herdr_client.call("agent.explain", target=root)["explain"]
        assert explain["fallback_reason"] == "default_known_agent_idle_fallback"
