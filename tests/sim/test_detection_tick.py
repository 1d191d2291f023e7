"""The agent-detection tick scales with the panes that changed, not with every pane (issue
17): panes sitting quietly at their shell prompt cost no check per tick, and output or input
puts a pane back on the tick's list. Counted with the loop's own ``checks``/``ticks``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.services.detection_loop import DetectionLoop
from tests.waits import wait_until

PROMPT = {"type": "regex", "value": r"^\$ ?$"}
#: a fast tick: a pane leaves the active set after 10 quiet ticks (0.3 s)
FAST = {"detection_interval": 0.03, "detection_debounce": 0.01}
PANES = 24


def _loop(sim: Simulator) -> DetectionLoop:
    loop = sim.runtime.detection
    assert loop is not None
    return loop


def _idle_panes(api: Callable[..., dict[str, Any]], count: int) -> list[str]:
    """``count`` panes at their prompt, over a few tabs of one workspace."""
    created = api("workspace.create")
    workspace = created["workspace"]["workspace_id"]
    panes = [created["root_pane"]["pane_id"]]
    target = panes[0]
    while len(panes) < count:
        if len(panes) % 6 == 0:
            target = api("tab.create", workspace_id=workspace)["root_pane"]["pane_id"]
            panes.append(target)
            continue
        split = api("pane.split", target_pane_id=target, direction="right")
        panes.append(split["pane"]["pane_id"])
    for pane in panes:
        api("pane.wait_for_output", pane_id=pane, source="visible", match=PROMPT)
    return panes


@pytest.mark.sim_settings(**FAST)
def test_idle_panes_at_their_prompt_cost_no_check_per_tick(
    sim: Simulator, api: Callable[..., dict[str, Any]]
) -> None:
    loop = _loop(sim)
    panes = _idle_panes(api, PANES)
    wait_until(lambda: not loop.watching, 10, what="every idle pane leaving the tick's list")
    checks, ticks = loop.checks, loop.ticks
    wait_until(lambda: loop.ticks >= ticks + 20, 10, what="20 more ticks")
    assert loop.checks == checks  # 20 ticks over 24 idle panes: not one check

    # input to one pane puts that pane (and only it) back on the tick's list
    api("pane.send_text", pane_id=panes[5], text="true\r")
    wait_until(lambda: loop.checks > checks, 10, what="the typed-into pane being checked")
    # (frozenset copies the loop thread's set in one step under the GIL)
    assert frozenset(loop._active) <= {sim.runtime.pane(panes[5]).pane.key}
    wait_until(lambda: not loop.watching, 10, what="the pane going quiet again")


@pytest.mark.sim_settings(**FAST)
def test_a_quiet_pane_is_still_checked_for_a_while_after_its_output(
    sim: Simulator, api: Callable[..., dict[str, Any]]
) -> None:
    """The old safety net (a full scan every 10 ticks) is now per pane: a pane that printed
    is checked on each tick until it was quiet for 10 ticks, so a job that forks after the
    debounced check ran is still seen."""
    loop = _loop(sim)
    (pane,) = _idle_panes(api, 1)
    wait_until(lambda: not loop.watching, 10, what="the pane going quiet")
    api("pane.send_text", pane_id=pane, text="echo hi\r")
    api(
        "pane.wait_for_output",
        pane_id=pane,
        source="visible",
        match={"type": "substring", "value": "hi"},
    )
    checks, ticks = loop.checks, loop.ticks
    wait_until(lambda: loop.ticks >= ticks + 3, 10, what="3 more ticks")
    assert loop.checks >= checks + 2  # checked by the ticks, not only by the output's poke
