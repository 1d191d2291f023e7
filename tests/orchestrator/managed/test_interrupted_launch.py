"""A controller killed (SIGKILL) in the middle of ``agent_delegate``, then a new one over the
same state dir: the interrupted launch is resolved on its first pass, with evidence —
adopted when its task was posted and its pane runs the child, else closed (its pane, which
provably runs our alias, closed and its mailbox removed) — and its label is free again.

The kill is a real ``SIGKILL`` of a separate controller process at an exact step of the
launch (a patched method kills the process), so no rollback or ``finally`` runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from herdr_sim.fake_agent import Scenario
from orchestrator.managed.mailbox import Mailbox
from tests.orchestrator.managed import managed_world
from tests.orchestrator.managed.managed_world import ManagedWorld
from tests.orchestrator.support import FAST_AGENTS

pytestmark = FAST_AGENTS

herdr_pane_env = managed_world.herdr_pane_env
world = managed_world.world

#: a controller process that delegates and kills itself at ``KILL_AT``
_CONTROLLER = """
import json, os, signal, sys
from pathlib import Path
from orchestrator.core.config import Config
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.client.sync import HerdrClient
from orchestrator.managed import launch, mailbox, store
from orchestrator.pipeline.registry import run_tool

spec = json.loads(sys.argv[1])

def die(*_a, **_k):
    os.kill(os.getpid(), signal.SIGKILL)

if spec["kill_at"] == "task":  # the child said hello; its task is never posted
    real_post = mailbox.Mailbox.post
    def post(self, kind, *a, **k):
        if kind is mailbox.Kind.TASK:
            die()
        return real_post(self, kind, *a, **k)
    mailbox.Mailbox.post = post
else:  # the task was posted; the record never says so
    real_update = store.ManagedStore.update
    def update(self, generation, **changes):
        if changes.get("status") == "live":
            die()
        return real_update(self, generation, **changes)
    store.ManagedStore.update = update

state = Path(spec["state"])
config = Config(state_dir=state, artifact_dir=state / "artifacts")
client = HerdrClient.build(
    "socket", socket_path=spec["socket"], herdr=spec["cli"], env=spec["env"]
)
ctx = AgentToolsContext.create(spec["env"], config=config, client=client)
print(run_tool("agent_delegate", spec["arguments"], ctx))
"""


def _killed_mid_launch(world: ManagedWorld, kill_at: str, label: str) -> None:
    spec = {
        "kill_at": kill_at,
        "state": str(world.root / "state"),
        "socket": str(world.server.socket_path),
        "cli": str(world.server.cli_path),
        "env": world.ctx.env,
        "arguments": {"definition": "scout", "task": "interrupted", "label": label},
    }
    done = subprocess.run(
        [sys.executable, "-c", _CONTROLLER, json.dumps(spec)],
        cwd=world.root / "work",
        env={**os.environ, **world.ctx.env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == -9, (done.returncode, done.stdout, done.stderr)


def _record(world: ManagedWorld, label: str) -> dict[str, object]:
    generations = [g for g in world.service.store.scan()[0] if g.label == label]
    assert len(generations) == 1, generations
    g = generations[0]
    return {"status": g.status, "pane": g.pane_id, "diagnostic": g.diagnostic, "ws": g.workspace_id}


def test_a_launch_killed_before_its_task_is_closed_and_its_label_freed(
    world: ManagedWorld,
) -> None:
    world.scenario(Scenario().hang())
    _killed_mid_launch(world, "task", "k")
    before = _record(world, "k")
    assert before["status"] == "starting" and before["pane"] is not None
    panes = {p.pane_id for p in world.client.pane_list()}
    assert before["pane"] in panes  # an idle pi under our alias is left behind
    world.restart()
    assert world.agent("k") is None  # resolved on the first pass, never `unknown`
    after = _record(world, "k")
    assert after["status"] == "failed"
    evidence = str(after["diagnostic"])
    assert "task was never posted" in evidence and f"pane {before['pane']} closed" in evidence
    assert before["pane"] not in {p.pane_id for p in world.client.pane_list()}
    assert not Mailbox(world.service.store.root, str(before["ws"]), "k").path.exists()
    world.scenario(Scenario().reply("again"))
    world.ok("agent_delegate", definition="scout", task="again", label="k")  # label free
    world.wait_delivery("result", "k")


def test_a_launch_killed_after_its_task_was_posted_is_adopted(world: ManagedWorld) -> None:
    world.scenario(Scenario().hang())
    _killed_mid_launch(world, "live", "adopt")
    assert _record(world, "adopt")["status"] == "starting"
    world.restart()
    record = world.wait_state("adopt", "working")
    assert "agent_close" in record["available_tools"]
    assert "adopted after an interrupted launch" in str(_record(world, "adopt")["diagnostic"])
    world.ok("agent_close", agent="adopt")
    assert world.agent("adopt") is None
