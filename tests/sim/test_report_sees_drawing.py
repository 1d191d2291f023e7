"""An agent draws its answer, then reports ``idle``: whoever sees the new state sees that
screen too. The report and the drawing reach the simulator on two channels (the socket and
the pane's pty); under load its loop could take the report first, and a test that read the
screen right after ``agent.prompt`` returned ``idle`` saw the agent still working. A report
now takes in what the pane wrote before it."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from herdr_sim import Simulator
from herdr_sim.services.runtime import Runtime
from tests.sim.test_output_subscription_reads import PROMPT


def test_a_report_finds_on_the_screen_what_its_pane_wrote_before_it(
    sim: Simulator, api: Callable[..., dict[str, Any]]
) -> None:
    pane = api("workspace.create")["root_pane"]["pane_id"]
    api("pane.wait_for_output", pane_id=pane, source="visible", match=PROMPT)
    key = sim.runtime.pane(pane).pane.key

    def pause_reading(rt: Runtime) -> int:  # the loop stops reading the pane's pty
        pty = rt.processes[key].pty
        asyncio_loop = pty._loop
        assert asyncio_loop is not None
        asyncio_loop.remove_reader(pty.master_fd)
        return pty.pid

    def resume_reading(rt: Runtime) -> None:
        pty = rt.processes[key].pty
        assert pty._loop is not None
        pty._loop.add_reader(pty.master_fd, pty._read_ready)

    shell = sim.run_in_loop(pause_reading)
    try:
        # what the pane's program writes reaches the pty: the shell's stdout is its terminal
        fd = os.open(f"/proc/{shell}/fd/1", os.O_WRONLY | os.O_NOCTTY)
        try:
            os.write(fd, b"\r\nDRAWN-BEFORE-THE-REPORT\r\n")
        finally:
            os.close(fd)
        seen = api("pane.read", pane_id=pane, source="visible")["read"]["text"]
        assert "DRAWN-BEFORE-THE-REPORT" not in seen  # nobody has read it yet
        api("pane.report_agent", pane_id=pane, source="custom:x", agent="pi", state="idle")
        seen = api("pane.read", pane_id=pane, source="visible")["read"]["text"]
        assert "DRAWN-BEFORE-THE-REPORT" in seen
    finally:
        sim.run_in_loop(resume_reading)
