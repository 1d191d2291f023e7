"""The project's SessionStart hook for Claude Code and Codex, run as the agents run it
(``bash <hook> session`` with the hook event as JSON on stdin) against a recording socket:
what it reports for each agent, and when it reports nothing. Needs no real agent."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.real_agents.home import hook_command, install_session_hook
from tests.real_agents.test_pi_extension import Recorder

SESSION = "5b0c2f7e-1111-4222-8333-444455556666"


@pytest.fixture
def recorder(tmp_path: Path) -> Iterator[Recorder]:
    found = Recorder(tmp_path / "herdr.sock")
    yield found
    found.close()


def run_hook(
    tmp_path: Path, agent: str, event: dict[str, Any], recorder: Recorder, **env: str
) -> list[dict[str, Any]]:
    """Run the installed hook once, as the agent does; the requests the socket received."""
    hook = install_session_hook(tmp_path / agent, agent)
    full_env = {
        "PATH": os.environ.get("PATH", ""), "HERDR_ENV": "1",
        "HERDR_SOCKET_PATH": str(recorder.path), "HERDR_PANE_ID": "w1:p2", **env,
    }  # fmt: skip
    done = subprocess.run(
        ["bash", "-c", hook_command(hook)], input=json.dumps(event), env=full_env,
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return recorder.lines


def start_event(**extra: Any) -> dict[str, Any]:
    event = {"hook_event_name": "SessionStart", "session_id": SESSION, "source": "startup"}
    event.update(extra)
    return event


def test_claude_reports_its_session_id_transcript_and_start_source(
    tmp_path: Path, recorder: Recorder
) -> None:
    event = start_event(transcript_path="/c/projects/-w/s.jsonl")
    (request,) = run_hook(tmp_path, "claude", event, recorder)
    assert request["method"] == "pane.report_agent_session"
    assert request["id"].startswith("herdr:claude:")
    params = request["params"]
    seq = params.pop("seq")
    assert params == {
        "pane_id": "w1:p2", "source": "herdr:claude", "agent": "claude",
        "agent_session_id": SESSION, "agent_session_path": "/c/projects/-w/s.jsonl",
        "session_start_source": "startup",
    }  # fmt: skip
    assert seq > 10**18  # nanoseconds, as Herdr's own hooks send


def test_codex_reports_its_session_id_only_and_needs_a_rollout(
    tmp_path: Path, recorder: Recorder
) -> None:
    assert run_hook(tmp_path, "codex", start_event(), recorder) == []  # no rollout yet
    event = start_event(transcript_path="/x/sessions/rollout.jsonl", source="resume")
    (request,) = run_hook(tmp_path, "codex", event, recorder)
    params = request["params"]
    assert (params["source"], params["agent"], params["agent_session_id"]) == (
        "herdr:codex", "codex", SESSION)  # fmt: skip
    assert params["session_start_source"] == "resume"
    assert "agent_session_path" not in params  # Codex is resumed by id


def test_nothing_is_reported_for_a_subagent_or_outside_herdr(
    tmp_path: Path, recorder: Recorder
) -> None:
    rollout = {"transcript_path": "/x/r.jsonl"}
    assert run_hook(tmp_path, "claude", start_event(agent_id="sub-1"), recorder) == []
    assert run_hook(tmp_path, "codex", start_event(**rollout), recorder,
                    CODEX_THREAD_ID="another-thread") == []  # fmt: skip
    assert run_hook(tmp_path, "claude", start_event(), recorder, HERDR_ENV="0") == []
    assert run_hook(tmp_path, "claude", {"session_id": 7}, recorder) == []
    hook = install_session_hook(tmp_path / "x", "claude")
    other = subprocess.run(["bash", str(hook), "other"], input="{}", capture_output=True,
                           text=True, timeout=30, check=False)  # fmt: skip
    assert other.returncode == 0 and recorder.lines == []
