"""Fake agents driven through Herdr's agent methods (docs/pytest-plugin/fixtures.md)."""

from __future__ import annotations


def test_blocked_then_answered(herdr_fake_agent):
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().ask("Proceed?").reply("ok"))
    agent.prompt("go", until=("blocked",))
    assert agent.status == "blocked"
    agent.pane.send("yes", "Enter")  # Herdr refuses agent.prompt while blocked: type the answer
    assert agent.wait("idle")["agent_status"] == "idle"
    assert "ok" in agent.read()
