"""The quick start of docs/pytest-plugin/usage.md: no conftest, just the fixtures."""

from __future__ import annotations


def test_a_shell_in_a_pane(herdr_pane):
    herdr_pane.run("echo hello from $HERDR_PANE_ID")
    # anchored: the typed command line "$ echo hello from …" contains the text too
    assert herdr_pane.wait_for(regex="^hello from") == f"hello from {herdr_pane.pane_id}"


def test_the_herdr_cli(herdr_cli, herdr_workspace):
    listed = herdr_cli("workspace", "list")
    assert listed.code == 0
    [workspace] = listed.json["result"]["workspaces"]
    assert workspace["workspace_id"] == herdr_workspace.workspace_id


def test_a_fake_agent_takes_a_prompt(herdr_fake_agent):
    scenario = herdr_fake_agent.scenario().run_tool("bash", "echo 42 > answer.txt").reply("done")
    agent = herdr_fake_agent.start("pi", scenario)
    finished = agent.prompt("write the answer")
    assert finished["agent_status"] == "idle"
    assert "done" in agent.read()
