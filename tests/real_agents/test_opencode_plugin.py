"""The project's opencode plugin on its own: loaded by the pinned Node (opencode itself runs
it under Bun), driven with opencode's hook calls and bus events, reporting to a recording
socket. Shows the wire requests exactly; ``test_opencode.py`` (opt-in) runs it in opencode."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.real_agents.opencode import PLUGIN_ASSET
from pytest_herdr.real_agents import require_pi
from tests.real_agents.test_pi_extension import Recorder

pytestmark = pytest.mark.real_agent

#: imports the plugin, then calls its hooks in order: ["chat", sessionID] or ["event", event]
HARNESS = """
import { HerdrAgentState } from "./plugin.mjs";
const hooks = await HerdrAgentState({});
for (const [kind, arg] of JSON.parse(process.argv[2])) {
  if (kind === "chat") await hooks["chat.message"]?.({ sessionID: arg });
  else await hooks.event?.({ event: arg });
}
"""

Drive = Callable[..., list[dict[str, Any]]]


@pytest.fixture
def run(tmp_path: Path) -> Any:
    node = require_pi().bin_dir / "node"  # the pinned Node of the pi install
    shutil.copyfile(PLUGIN_ASSET, tmp_path / "plugin.mjs")
    (tmp_path / "harness.mjs").write_text(HARNESS)
    recorders: list[Recorder] = []

    def drive(calls: list[Any], **env: str) -> list[dict[str, Any]]:
        recorder = Recorder(tmp_path / f"herdr-{len(recorders)}.sock")
        recorders.append(recorder)
        full_env = {
            "PATH": os.environ.get("PATH", ""), "HERDR_ENV": "1",
            "HERDR_SOCKET_PATH": str(recorder.path), "HERDR_PANE_ID": "w1:p3", **env,
        }  # fmt: skip
        done = subprocess.run(
            [str(node), str(tmp_path / "harness.mjs"), json.dumps(calls)], env=full_env,
            cwd=tmp_path, capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return recorder.lines

    yield drive
    for recorder in recorders:
        recorder.close()


def created(session: str, parent: str | None = None) -> dict[str, Any]:
    info: dict[str, Any] = {"id": session}
    if parent:
        info["parentID"] = parent
    return {"type": "session.created", "properties": {"info": info}}


def status(session: str, kind: str) -> dict[str, Any]:
    return {
        "type": "session.status",
        "properties": {"sessionID": session, "status": {"type": kind}},
    }


def test_a_turn_reports_the_new_session_then_working_blocked_working_idle(run: Drive) -> None:
    lines = run([
        ["event", created("ses_1")], ["chat", "ses_1"], ["event", status("ses_1", "busy")],
        ["event", {"type": "permission.asked", "properties": {"sessionID": "ses_1"}}],
        ["event", {"type": "permission.replied", "properties": {"sessionID": "ses_1"}}],
        ["event", status("ses_1", "idle")], ["event", {"type": "session.idle",
                                                       "properties": {"sessionID": "ses_1"}}],
    ])  # fmt: skip
    assert [(r["method"], r["params"].get("state")) for r in lines] == [
        ("pane.report_agent_session", None),
        ("pane.report_agent", "working"),
        ("pane.report_agent", "blocked"),
        ("pane.report_agent", "working"),
        ("pane.report_agent", "idle"),
    ]  # a state equal to the last one sent is not sent again
    session = lines[0]["params"]
    assert (session["source"], session["agent"], session["pane_id"]) == (
        "herdr:opencode", "opencode", "w1:p3")  # fmt: skip
    assert (session["agent_session_id"], session["session_start_source"]) == ("ses_1", "new")
    assert all(r["params"]["agent_session_id"] == "ses_1" for r in lines)
    seqs = [r["params"]["seq"] for r in lines]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_a_sub_agents_session_never_replaces_the_panes(run: Drive) -> None:
    lines = run([
        ["event", created("ses_root")], ["chat", "ses_root"],
        ["event", created("ses_child", parent="ses_root")], ["chat", "ses_child"],
        ["event", status("ses_child", "idle")],
    ])  # fmt: skip
    assert [r["params"].get("agent_session_id") for r in lines] == ["ses_root", "ses_root"]
    assert [r["params"].get("state") for r in lines] == [None, "working"]


def test_outside_herdr_nothing_is_sent(run: Drive) -> None:
    assert run([["event", created("ses_1")], ["chat", "ses_1"]], HERDR_ENV="0") == []
