"""The built-in definitions: managed agents work on a fresh setup, with no definition of the
user's own, and an empty or broken roster says where definitions go.

The builtin layer ships ``explorer`` (reads only), ``worker`` (edits) and ``reviewer``
(reads and runs, edits nothing); each is a definition worth delegating to (a real set of
instructions, the tools its role needs and no more), listed by ``agent_list`` on an empty
agent dir and launched by ``agent_delegate`` on the simulator with its tools and body.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from herdr_sim.fake_agent import Scenario
from orchestrator.managed.definitions import (
    BUILTIN_DIR,
    LayerSources,
    load_roster,
    parse_definition,
)
from orchestrator.pipeline.registry import run_tool
from tests.orchestrator.managed import managed_world
from tests.orchestrator.managed.managed_world import ManagedWorld
from tests.orchestrator.managed.test_faults import mailbox_of
from tests.orchestrator.managed.test_tools import offline_ctx
from tests.orchestrator.support import FAST_AGENTS

pytestmark = FAST_AGENTS

herdr_pane_env = managed_world.herdr_pane_env
world = managed_world.world

BUILTIN = ("explorer", "reviewer", "worker")
READ = {"read", "grep", "find", "ls"}
#: the tools that change files: pi's edit and write, and bash (a shell can change anything)
CHANGES = {"edit", "write", "bash"}


def empty_agent_dir(world: ManagedWorld) -> None:
    """The world as a fresh setup: nothing in ``$PI_CODING_AGENT_DIR/agents``."""
    for path in (world.root / "pi" / "agents").iterdir():
        path.unlink()


def test_the_builtin_layer_holds_three_roles_worth_delegating_to() -> None:
    roster = load_roster(LayerSources(BUILTIN_DIR, None, None, BUILTIN_DIR / "no-state"))
    assert roster.refusals == ()
    assert sorted(roster.definitions) == list(BUILTIN)
    tools = {}
    for name, definition in roster.definitions.items():
        assert definition.layer == "builtin"
        assert definition.description and definition.enabled
        assert definition.thinking in {"medium", "high"}
        # a real system prompt: the role, how to work, what the result holds
        assert len(definition.body.splitlines()) >= 12, name
        assert "ask_owner" in definition.body and "final message" in definition.body
        tools[name] = set(definition.front_matter["tools"])  # type: ignore[call-overload]
        assert tools[name] >= READ, name
    assert not tools["explorer"] & CHANGES  # reads only
    assert {"edit", "write", "bash"} <= tools["worker"]  # makes the change and runs tests
    assert "bash" in tools["reviewer"] and not {"edit", "write"} & tools["reviewer"]


def test_the_builtin_definitions_ship_in_the_wheel() -> None:
    """The wheel carries the package directories whole (hatch's ``packages``), so the
    definitions are package data where :data:`BUILTIN_DIR` looks."""
    pyproject = (Path(__file__).resolve().parents[3] / "pyproject.toml").read_text()
    assert 'packages = ["herdr_sim", "orchestrator", "pytest_herdr"]' in pyproject
    assert BUILTIN_DIR.is_relative_to(Path(__file__).resolve().parents[3] / "orchestrator")
    for name in BUILTIN:
        assert parse_definition(BUILTIN_DIR / f"{name}.md", "builtin").name == name


def test_a_fresh_setup_lists_the_builtin_definitions(tmp_path: Path) -> None:
    result = run_tool("agent_list", {}, offline_ctx(tmp_path))  # no agent dir at all
    assert result["ok"] is True, result
    assert [d["name"] for d in result["agent_definitions"]] == list(BUILTIN)
    assert result["refused_definitions"] == []
    assert "explorer — Reads the code" in result["text"]


def test_a_user_definition_of_the_same_name_overlays_a_builtin(tmp_path: Path) -> None:
    agents = tmp_path / "pi" / "agents"
    agents.mkdir(parents=True)
    (agents / "explorer.md").write_text("---\nname: explorer\nmodel: my/model\n---\nMine.\n")
    [row] = [
        d
        for d in run_tool("agent_list", {}, offline_ctx(tmp_path))["agent_definitions"]
        if d["name"] == "explorer"
    ]
    assert row["model"] == "my/model" and row["description"].startswith("Reads the code")


def test_a_fresh_setup_delegates_to_a_builtin_definition(world: ManagedWorld) -> None:
    empty_agent_dir(world)
    assert [d["name"] for d in world.ok("agent_list")["agent_definitions"]] == list(BUILTIN)
    world.scenario(Scenario().reply("the entry point is main.py:12"))
    started = world.ok("agent_delegate", definition="explorer", task="Where does it start?")
    assert started["agent"] == "explorer"
    # launched with the role's tools (and ask_owner) and its body as the instructions
    commands = json.dumps(world.client.pane_process_info(str(started["pane_id"])))
    assert "read,grep,find,ls,ask_owner" in commands, commands
    instructions = Path(mailbox_of(world, started).path) / "instructions.md"
    assert instructions.read_text().startswith("You are an explorer")
    delivery = world.wait_delivery("result", "explorer")
    assert "the entry point is main.py:12" in delivery["text"]


def test_an_empty_roster_says_where_definitions_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("orchestrator.managed.footing.BUILTIN_DIR", tmp_path / "none")
    ctx = offline_ctx(tmp_path)
    listed = run_tool("agent_list", {}, ctx)
    assert listed["agent_definitions"] == []
    text = listed["text"]
    assert "Agent definitions: none." in text
    assert f"{tmp_path / 'pi' / 'agents'}/<name>.md" in text
    assert "YAML front matter" in text and ".pi/agents/<name>.md" in text
    refused = run_tool("agent_delegate", {"definition": "scout", "task": "t"}, ctx)
    error = refused["error"]
    assert error["category"] == "invalid_request"
    assert "scout was not found (the roster has: none)" in error["message"]
    assert f"{tmp_path / 'pi' / 'agents'}/<name>.md" in json.dumps(error)


def test_a_broken_roster_says_why_and_where_definitions_go(tmp_path: Path) -> None:
    agents = tmp_path / "pi" / "agents"
    agents.mkdir(parents=True)
    (agents / "scout.md").write_text("name: scout\nno front matter\n")
    listed = run_tool("agent_list", {}, offline_ctx(tmp_path))
    text = listed["text"]
    assert "Refused definitions (left out of the roster):" in text
    assert f"{agents / 'scout.md'} has no YAML front matter" in text
    assert f"{agents}/<name>.md" in text
    assert [r["path"] for r in listed["refused_definitions"]] == [str(agents / "scout.md")]
