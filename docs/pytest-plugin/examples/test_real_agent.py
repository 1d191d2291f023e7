"""The real pi, offline against a scripted fake LLM (docs/pytest-plugin/fixtures.md)."""

from __future__ import annotations

from herdr_sim.fake_llm import Match, Script


def test_real_pi_runs_a_tool(herdr_real_agent):
    script = (
        Script()
        .call_tool("bash", {"command": "echo hi"}, when=Match(tool_result=False))
        .reply("It printed hi.", when=Match(tool_result=True))
    )
    pi = herdr_real_agent.start("pi", script)
    assert pi.prompt("run echo")["agent_status"] == "idle"
    pi.pane.wait_for("It printed hi.")  # pi draws its last frame just after it reports idle
    assert pi.requests()[-1].tool_results == ("hi\n",)
    assert pi.agent.info["agent_session"]["value"] == str(pi.session_files()[0])
