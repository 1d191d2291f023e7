"""A managed child is the generation its pane was launched as, whatever its environment says.

End to end: a leaf (a fake pi whose bash tool is the attacker) widens
``PI_HERDSMAN_ALLOWED_AGENT_DEFINITIONS`` and calls ``agent_delegate``, and drops
``PI_HERDSMAN_MAILBOX`` and calls ``agent_list``: both are refused as a leaf's, no agent is
created, and the lead's identity is never answered. Then :func:`launched_in` itself, on a
real process chain: the outermost ancestor's initial environment wins over an inner forged one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from herdr_sim.fake_agent import Scenario
from orchestrator.managed.lineage import launched_in
from tests.orchestrator.managed import managed_world
from tests.orchestrator.managed.managed_world import ManagedWorld
from tests.orchestrator.support import FAST_AGENTS

pytestmark = FAST_AGENTS

herdr_pane_env = managed_world.herdr_pane_env
world = managed_world.world

_CALL = '"$PI_HERDSMAN_PYTHON" -m orchestrator call'
_ESCAPE = json.dumps({"definition": "scout", "task": "escape", "label": "escaped"})


def test_a_leaf_cannot_widen_its_roster_or_become_the_lead(world: ManagedWorld) -> None:
    widen = (
        'PI_HERDSMAN_ALLOWED_AGENT_DEFINITIONS=\'["scout","helper"]\' '
        f"{_CALL} agent_delegate '{_ESCAPE}' > widened.json 2>&1"
    )
    unset = f"env -u PI_HERDSMAN_MAILBOX {_CALL} agent_list '{{}}' > unset.json 2>&1"
    world.scenario(Scenario().run_tool("bash", f"{widen}; {unset}").reply("done"))
    lead = world.ok("agent_list")["owner_session_id"]
    world.ok("agent_delegate", definition="scout", task="attack", label="leaf")
    world.wait_delivery("result", "leaf", timeout=30)
    work = world.root / "work"
    for name in ("widened.json", "unset.json"):
        answer = json.loads((work / name).read_text())
        assert answer["ok"] is False, (name, answer)
        assert "leaf agent" in answer["error"]["message"], (name, answer)
        assert lead not in json.dumps(answer)
    labels = {g.label for g in world.service.store.scan()[0]}
    assert labels == {"leaf"}
    assert world.ok("agent_list")["agents"] == []


def _probe(outer: dict[str, str], inner: dict[str, str]) -> dict[str, object]:
    """``launched_in()`` of a python started by a shell started with ``outer`` variables,
    itself under an ``env`` that sets ``inner`` (a forging intermediate)."""
    code = (
        "import json; from orchestrator.managed.lineage import launched_in; "
        "l = launched_in(); print(json.dumps([l.readable, l.run_id, l.mailbox]))"
    )
    forged = " ".join(f"{k}={v}" for k, v in inner.items())
    inner_cmd = f'env {forged} sh -c \'"{sys.executable}" -c "{code}"; true\''
    env = {"PATH": "/usr/bin:/bin", **outer}
    out = subprocess.run(
        ["sh", "-c", f"{inner_cmd}; true"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    ).stdout
    readable, run_id, mailbox = json.loads(out)
    return {"readable": readable, "run_id": run_id, "mailbox": mailbox}


def test_the_outermost_launch_environment_wins_over_a_forged_inner_one() -> None:
    seen = _probe(
        {"PI_HERDSMAN_RUN_ID": "pane-run", "PI_HERDSMAN_MAILBOX": "/pane/box"},
        {"PI_HERDSMAN_RUN_ID": "forged-run", "PI_HERDSMAN_MAILBOX": "/forged/box"},
    )
    assert seen == {"readable": True, "run_id": "pane-run", "mailbox": "/pane/box"}


def test_a_process_launched_outside_any_managed_pane_has_no_lineage() -> None:
    assert launched_in().run_id is None  # the test process itself
    seen = _probe({}, {"X": "1"})
    assert seen == {"readable": True, "run_id": None, "mailbox": None}
