"""Per-target locking (issue 18 §4): calls that type into one target take turns, across
threads and processes, so concurrent prompts become separate submissions, never one merged
input; the lock is per target, bounded, and never taken by a read or a preview."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from orchestrator.agent_tools.transcript import load_messages
from orchestrator.pipeline.registry import ALL_TOOLS, run_tool
from orchestrator.pipeline.target_lock import TargetBusy, lock_key, target_lock
from pytest_herdr.backends import HerdrServer
from pytest_herdr.waits import SCALE
from tests.orchestrator.support import FAST_AGENTS, client, context, received
from tests.results import assert_refused
from tests.waits import wait_until

pytestmark = FAST_AGENTS

PROMPTS = 20


def test_twenty_concurrent_prompts_to_one_agent_are_twenty_turns_in_order(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    """About 5 s on an idle machine: twenty agent turns run one after the other (that is the
    point: each prompt waits for the agent to finish the previous one)."""
    assert herdr_server.sim is not None
    pane = herdr_server.sim.call("workspace.create", {"cwd": str(tmp_path)})["result"]["root_pane"][
        "pane_id"
    ]
    scenario = tmp_path / "turns.json"
    turns = [{"steps": [{"reply": f"answer-{i}"}]} for i in range(PROMPTS)]
    scenario.write_text(json.dumps({"turns": turns}))
    herdr = client(herdr_server, "socket")
    herdr.agent_start("worker", "pi", pane, args=["--scenario", str(scenario)], timeout_ms=20_000)
    # interactive_ready comes from the (shortened) settle delay: under load the fake pi may
    # still be starting, and its late startup report would count as a state change
    wait_until(
        lambda: "agent_session" in herdr.agent_get("worker").raw,
        20,
        0.02,
        "the fake pi's startup report",
    )
    rec = received(herdr_server)
    ctx = context(herdr_server, "socket")
    results: dict[int, dict[str, Any]] = {}

    def prompt(i: int) -> None:
        arguments = {"agent": "worker", "prompt": f"prompt-{i:02d}", "timeout": 20_000}
        results[i] = run_tool("_dsh_herdr_agent_prompt", arguments, ctx)

    threads = [threading.Thread(target=prompt, args=(i,)) for i in range(PROMPTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120 * SCALE)
    assert not any(thread.is_alive() for thread in threads)
    assert all(result["ok"] for result in results.values()), [
        r for r in results.values() if not r["ok"]
    ]
    sent = [call["text"] for call in rec.calls("agent.prompt")]
    assert sorted(sent) == [f"prompt-{i:02d}" for i in range(PROMPTS)]
    session = herdr.agent_get("worker").raw["agent_session"]["value"]
    inputs = [m["text"] for m in load_messages(session) if m["role"] == "user"]
    # every prompt is its own turn, whole, in the order Herdr received them
    assert inputs == sent


def test_only_typing_calls_that_are_not_previews_take_a_lock() -> None:
    prompt = ALL_TOOLS["_dsh_herdr_agent_prompt"]
    assert lock_key(prompt, {"agent": "w", "prompt": "p"}) == "w"
    assert lock_key(prompt, {"agent": "w", "prompt": "p", "preview": True}) is None
    send = ALL_TOOLS["_dsh_herdr_pane_send_text"]
    assert lock_key(send, {"pane": "w1:p1", "text": "x"}) == "w1:p1"
    assert lock_key(ALL_TOOLS["herdr_message_agent"], {"target": "w", "message": "m"}) == "w"
    assert lock_key(ALL_TOOLS["_dsh_herdr_pane_read"], {"pane": "w1:p1"}) is None
    assert lock_key(ALL_TOOLS["_dsh_herdr_workspace_create"], {"cwd": "/"}) is None


HOLDER = """
import sys, time
from pathlib import Path
from orchestrator.pipeline.target_lock import target_lock
with target_lock(Path(sys.argv[1]), "worker", 5):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_the_lock_holds_across_processes_and_its_wait_is_bounded(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(TargetBusy), target_lock(tmp_path, "worker", 0.2):
            pass
        with target_lock(tmp_path, "other", 0.2):  # another target is not blocked
            pass
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=10 * SCALE)
        if holder.stdout is not None:
            holder.stdout.close()
    with target_lock(tmp_path, "worker", 5 * SCALE):  # released when the holder is done
        pass
    mode = (tmp_path / "locks").stat().st_mode & 0o777
    assert mode == 0o700


def test_a_busy_target_is_refused_before_herdr_is_reached(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    ctx = context(
        herdr_server,
        "socket",
        {
            "HERDR_ORCHESTRATOR_STATE_DIR": str(state),
            "HERDR_ORCHESTRATOR_TARGET_LOCK_TIMEOUT_MS": "50",
        },
    )
    rec = received(herdr_server)
    with target_lock(state, "worker", 1):
        result = run_tool(
            "_dsh_herdr_agent_prompt", {"agent": "worker", "prompt": "p", "wait": False}, ctx
        )
    assert_refused(result, "target_busy")
    assert [m for m in rec.methods() if m != "events.subscribe"] == []
