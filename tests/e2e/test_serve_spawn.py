"""Every fake kind completes ``herdr_spawn_agent`` on a plain ``herdr-sim serve``.

A new user starts the simulator with no options and asks the orchestrator, as a separate
process, to spawn an agent. That only works if Herdr's screen detection sees the fake
work: the fake claude and codex report no state (their official integrations report only
their session), so a turn that answered instantly, or a simulator with no screen rules,
left ``agent.prompt`` to answer ``agent_prompt_stalled`` (``PROMPT_NOT_SUBMITTED``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from herdr_sim.fake_agent import LAUNCHER_KINDS
from tests.contract.test_processes import serve, stop

BIN = Path(sys.executable).parent


@pytest.mark.parametrize("kind", LAUNCHER_KINDS)
def test_spawn_completes_on_a_plain_serve(short_dir: Path, kind: str) -> None:
    socket = short_dir / "herdr.sock"
    proc = serve(short_dir, "--socket", str(socket))
    work = short_dir / "work"
    work.mkdir()
    env = dict(
        os.environ,
        HOME=str(short_dir),
        XDG_STATE_HOME=str(short_dir / "state"),
        HERDR_SOCKET_PATH=str(socket),
    )
    try:
        done = subprocess.run(
            [
                str(BIN / "herdr-orchestrator"),
                "call",
                "herdr_spawn_agent",
                json.dumps({"prompt": "say ok", "kind": kind, "cwd": str(work)}),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        stop(proc)
    result = json.loads(done.stdout)
    assert result["status"] == "completed", result.get("error") or result["header"]
    assert result["finalMessage"] == "ok"
