"""Owner channels end to end on the simulator: a fake pi agent in a pane is the owner.

PaneOwner types into the owner's prompt through Herdr's ``agent.prompt`` only while Herdr calls
the owner idle (or done); a working, blocked or absent agent gets nothing and ``deliver``
returns False, so the caller keeps the item. PullOwner never pushes.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from orchestrator.client.sync import HerdrClient
from orchestrator.managed.owner import PaneOwner, PullOwner, owner_channel
from pytest_herdr.agents import FakeAgents
from pytest_herdr.backends import HerdrServer
from pytest_herdr.client import HerdrClient as PytestHerdrClient
from pytest_herdr.handles import Pane
from tests.orchestrator.support import FAST_AGENTS, client, received, user_texts
from tests.waits import wait_until

pytestmark = FAST_AGENTS


@pytest.fixture
def herdr(herdr_server: HerdrServer) -> HerdrClient:
    return client(herdr_server, "socket")


def test_an_idle_owner_receives_a_one_line_text_in_its_prompt(
    herdr: HerdrClient, herdr_fake_agent: FakeAgents, tmp_path: Path
) -> None:
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("noted"), name="lead")
    owner = PaneOwner(herdr, agent.pane.pane_id, tmp_path / "spool")
    assert owner.kind == "pane" and owner.is_idle()
    text = "Agent result · agent=scout · definition=scout · session=s1 · status=completed"
    assert owner.deliver(text)
    wait_until(lambda: text in user_texts(agent), what="the text in the owner's session")
    assert not (tmp_path / "spool").exists()  # one line: typed as is, nothing spooled


def test_a_multi_line_text_arrives_as_one_line_pointing_at_a_private_file(
    herdr: HerdrClient, herdr_fake_agent: FakeAgents, tmp_path: Path
) -> None:
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("noted"), name="lead")
    owner = PaneOwner(herdr, agent.pane.pane_id, tmp_path / "spool")
    text = "Agent result · agent=scout · status=completed\nResult ref: result:scout#1\n$(rm -rf ~)"
    assert owner.deliver(text)
    prompts = wait_until(lambda: user_texts(agent), what="a prompt in the owner's session")
    [prompt] = prompts
    assert "\n" not in prompt
    assert prompt.startswith("Agent result · agent=scout · status=completed [full message: ")
    [spooled] = list((tmp_path / "spool").iterdir())
    assert str(spooled) in prompt
    assert spooled.read_text(encoding="utf-8") == text + "\n"
    assert stat.S_IMODE(spooled.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "spool").stat().st_mode) == 0o700


def test_a_working_owner_gets_nothing_until_it_is_idle(
    herdr: HerdrClient, herdr_server: HerdrServer, herdr_fake_agent: FakeAgents, tmp_path: Path
) -> None:
    scenario = herdr_fake_agent.scenario().hang().then().reply("noted")
    agent = herdr_fake_agent.start("pi", scenario, name="lead")
    agent.prompt("long job", wait=False)
    agent.wait("working")
    wire = received(herdr_server)
    owner = PaneOwner(herdr, agent.pane.pane_id, tmp_path / "spool")
    assert not owner.is_idle()
    assert owner.deliver("Agent attention · agent=scout · reason=blocked") is False
    assert wire.calls("agent.prompt") == []  # nothing was typed into the busy owner
    assert user_texts(agent) == ["long job"]
    agent.send_keys("Escape")  # the owner's turn ends
    agent.wait("idle", "done")
    assert owner.deliver("Agent attention · agent=scout · reason=blocked")
    assert len(wire.calls("agent.prompt")) == 1  # the recorder does see a prompt
    wait_until(
        lambda: user_texts(agent) == ["long job", "Agent attention · agent=scout · reason=blocked"],
        what="the text after the owner went idle",
    )


def test_a_blocked_owner_is_not_idle(
    herdr: HerdrClient, herdr_server: HerdrServer, herdr_fake_agent: FakeAgents, tmp_path: Path
) -> None:
    # typing into an agent waiting for interactive input would answer its question
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().ask("Proceed?"), name="lead")
    agent.prompt("start", wait=False)
    agent.wait("blocked")
    owner = PaneOwner(herdr, agent.pane.pane_id, tmp_path / "spool")
    assert owner.status() == "blocked" and not owner.is_idle()
    wire = received(herdr_server)
    assert owner.deliver("Agent attention · agent=scout") is False
    assert wire.calls("agent.prompt") == [] and wire.calls("pane.send_input") == []
    assert agent.status == "blocked"


def test_a_pane_without_an_agent_is_never_pushed_to(
    herdr: HerdrClient, herdr_pane: Pane, herdr_client: PytestHerdrClient, tmp_path: Path
) -> None:
    owner = PaneOwner(herdr, herdr_pane.pane_id, tmp_path / "spool")
    assert owner.status() is None and not owner.is_idle()
    assert owner.deliver("Agent attention · agent=scout") is False
    gone = PaneOwner(herdr, "w999:p999", tmp_path / "spool")
    assert gone.deliver("Agent attention · agent=scout") is False


def test_owner_channel_follows_herdr_pane_id(herdr: HerdrClient, tmp_path: Path) -> None:
    pull = owner_channel({"HOME": str(tmp_path)}, herdr)
    assert isinstance(pull, PullOwner) and pull.kind == "pull"
    assert pull.is_idle() and pull.deliver("anything") is False
    assert isinstance(owner_channel({"HERDR_PANE_ID": "  "}, herdr), PullOwner)
    pane = owner_channel({"HERDR_PANE_ID": "w1:p1"}, herdr, spool_dir=tmp_path / "s")
    assert isinstance(pane, PaneOwner) and pane.pane_id == "w1:p1"
    assert pane.spool_dir == tmp_path / "s"
    default = owner_channel({"HERDR_PANE_ID": "w1:p1", "XDG_STATE_HOME": str(tmp_path)}, herdr)
    assert isinstance(default, PaneOwner)
    assert default.spool_dir == tmp_path / "herdr-orchestrator" / "managed" / "owner-messages"


def test_an_empty_text_is_refused(herdr: HerdrClient, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="empty"):
        PaneOwner(herdr, "w1:p1", tmp_path).deliver("  \n")
