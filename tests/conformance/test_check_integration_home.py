"""The agent under ``check-integration`` is a real one: it runs with the HOME it was given,
as Herdr's panes inherit the server's environment, not in the fake agents' sandbox HOME
(herdr_sim/services/agent_home.py)."""

from __future__ import annotations

from pathlib import Path

from herdr_sim.conformance import check_integration
from tests.waits import SCALE


def test_the_checked_agent_sees_the_home_it_was_given(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    agent = tmp_path / "agent.sh"
    agent.write_text('#!/bin/sh\necho "$HOME" >> "$HOME/seen"\n')
    agent.chmod(0o755)
    check_integration(
        [str(agent)],
        agent_env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        rules=["states"],
        timeout=2.0 * SCALE,
    )
    assert (home / "seen").read_text() == f"{home}\n"
