"""Delegating-agent identity and the "waiting on its agents" rule, without a simulator.

The end-to-end flows (a fake pi child running the tools) are in ``test_delegating.py``;
here: who a managed child is as a controller (its pi session id, the lead's state dir, its
allowlist; a leaf or an unproven child refused), :func:`outstanding`, and a delegating
child's turn end posting no result while one of its agents owes it one.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

from orchestrator.managed.child import ManagedChild
from orchestrator.managed.delegation import (
    delegating_controller,
    is_managed_child,
    outstanding,
    state_dir_of,
)
from orchestrator.managed.env import PANE_ENV, ChildIdentity, child_env
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.mailbox import Box, Kind, Mailbox
from orchestrator.managed.store import Generation, ManagedStore
from tests.orchestrator.managed.test_service_store import generation

SESSION = "7d0c6c3e-8a43-4d7e-9a55-0c1b0f0e9a11"


def child_environment(state_dir: Path, allowed: list[str]) -> dict[str, str]:
    root = ManagedStore(state_dir).root
    env = child_env(
        mailbox_dir=Mailbox(root, "w1", "boss").path,
        run_id=str(uuid.uuid4()),
        owner_session_id="lead-id",
        label="boss",
        workspace_id="w1",
        definition="helper",
        allowed_definitions=allowed,
        python="/usr/bin/python3",
    )
    env[PANE_ENV] = "w1:p2"
    return env


def said_hello(env: dict[str, str]) -> ManagedChild:
    child = ManagedChild(ChildIdentity.from_env(env))
    child.hello(pi_session_id=SESSION, pi_session_file=None, cwd="/work", pid=os.getpid())
    return child


def test_a_delegating_child_is_a_controller_over_the_leads_state(tmp_path: Path) -> None:
    env = child_environment(tmp_path, ["scout"])
    assert is_managed_child(env) and not is_managed_child({"HOME": "/root"})
    assert not is_managed_child({"PI_SUBAGENT_CHILD": "1"})  # another tool's subagent
    said_hello(env)
    controller = delegating_controller(env)
    assert controller.state_dir == tmp_path
    assert controller.controller_id == SESSION  # its pi session, proven by its state.json
    assert controller.label == "boss" and controller.pane_id == "w1:p2"
    assert controller.allowed_definitions == ("scout",)


def test_a_leaf_or_an_unproven_child_is_refused(tmp_path: Path) -> None:
    leaf = child_environment(tmp_path, [])
    said_hello(leaf)
    with pytest.raises(ManagedAgentError, match="leaf agent") as caught:
        delegating_controller(leaf)
    assert caught.value.category == "invalid_request"
    unproven = child_environment(tmp_path / "other", ["scout"])  # no state.json yet
    with pytest.raises(ManagedAgentError, match="not proven"):
        delegating_controller(unproven)
    with pytest.raises(ManagedAgentError, match="mailboxes-v4"):
        state_dir_of(tmp_path / "elsewhere" / ("0" * 32))


def test_outstanding_until_the_result_is_delivered_or_being_delivered() -> None:
    assert outstanding(generation())
    persisted = generation(result_ref="result:scout#1", result_request_id="r1")
    assert outstanding(persisted)
    assert not outstanding(replace_extra(persisted, delivering="r1"))
    assert not outstanding(generation(result_delivered=True))
    assert not outstanding(generation(status="delivered"))
    assert not outstanding(generation(status="closed"))


def replace_extra(g: Generation, **extra: object) -> Generation:
    from dataclasses import replace

    return replace(g, extra={**g.extra, **extra})


def test_a_delegating_child_posts_no_result_while_its_agent_owes_one(tmp_path: Path) -> None:
    env = child_environment(tmp_path, ["scout"])
    child = said_hello(env)
    box = Mailbox.at(child.identity.mailbox_dir)
    box.post(Kind.TASK, "coordinate")
    [start] = child.poll()
    child.turn_start()
    store = ManagedStore(tmp_path)
    now = time.time()
    agent = store.save(
        generation(owner_session_id=SESSION, created_at=now, updated_at=now, label="leaf")
    )
    assert child.turn_end("waiting for leaf") is None
    assert box.pending(Box.TO_OWNER) == []
    assert child.state.operation == "idle" and child.state.active_request_id == start.request_id
    store.update(agent, result_delivered=True)  # the leaf's result reached boss
    child.turn_start()  # the delivered result starts boss's next turn
    assert child.turn_end("boss final") == "completed"
    [result] = box.pending(Box.TO_OWNER)
    assert result.kind is Kind.RESULT and result.text == "boss final"
