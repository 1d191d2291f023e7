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
from typing import Any

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
from orchestrator.managed.lineage import Lineage
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


def recorded(env: dict[str, str], allowed: list[str] | None, **kw: object) -> Lineage:
    """The generation record its controller wrote at launch for the child of ``env`` (its
    roster ``allowed``), and the lineage of a process launched in that child's pane."""
    mailbox = env["PI_HERDSMAN_MAILBOX"]
    store = ManagedStore(state_dir_of(Path(mailbox)))
    fields: dict[str, Any] = {
        "run_id": env["PI_HERDSMAN_RUN_ID"],
        "label": "boss",
        "definition": "helper",
        "owner_session_id": "lead-id",
        "mailbox": mailbox,
        "pane_id": "w1:p2",
        "pi_session_id": SESSION,
        "allowed_definitions": None if allowed is None else tuple(allowed),
    }
    fields.update(kw)
    store.save(generation(**fields))
    return Lineage(readable=True, run_id=env["PI_HERDSMAN_RUN_ID"], mailbox=mailbox)


def test_a_delegating_child_is_a_controller_over_the_leads_state(tmp_path: Path) -> None:
    env = child_environment(tmp_path, ["scout"])
    assert is_managed_child(env) and not is_managed_child({"HOME": "/root"})
    assert not is_managed_child({"PI_SUBAGENT_CHILD": "1"})  # another tool's subagent
    said_hello(env)
    lineage = recorded(env, ["scout"])
    controller = delegating_controller(env, lineage)
    assert controller.state_dir == tmp_path
    assert controller.controller_id == SESSION  # its pi session, recorded at its launch
    assert controller.label == "boss" and controller.pane_id == "w1:p2"
    assert controller.allowed_definitions == ("scout",)
    # the same child with its PI_HERDSMAN_* variables dropped is still that child
    assert delegating_controller({}, lineage) == controller


def test_a_leaf_or_an_unproven_child_is_refused(tmp_path: Path) -> None:
    leaf = child_environment(tmp_path, [])
    said_hello(leaf)
    lineage = recorded(leaf, [])
    with pytest.raises(ManagedAgentError, match="leaf agent") as caught:
        delegating_controller(leaf, lineage)
    assert caught.value.category == "invalid_request"
    unproven = child_environment(tmp_path / "other", ["scout"])  # no state.json yet
    with pytest.raises(ManagedAgentError, match="not proven"):
        delegating_controller(unproven, recorded(unproven, ["scout"]))
    with pytest.raises(ManagedAgentError, match="mailboxes-v4"):
        state_dir_of(tmp_path / "elsewhere" / ("0" * 32))


def test_a_leaf_cannot_widen_its_roster_through_its_environment(tmp_path: Path) -> None:
    """The roster, leaf status and parent are the launch record's: a leaf that sets
    PI_HERDSMAN_ALLOWED_AGENT_DEFINITIONS (or drops every PI_HERDSMAN_* variable) stays a
    leaf; one that names another generation, or cannot show the pane it was launched in,
    is refused."""
    leaf = child_environment(tmp_path, [])
    said_hello(leaf)
    lineage = recorded(leaf, [])
    widened = {**leaf, "PI_HERDSMAN_ALLOWED_AGENT_DEFINITIONS": '["scout","helper"]'}
    for env in (widened, {}):
        with pytest.raises(ManagedAgentError, match="leaf agent"):
            delegating_controller(env, lineage)
    other = {**widened, "PI_HERDSMAN_RUN_ID": str(uuid.uuid4())}
    with pytest.raises(ManagedAgentError, match="another generation"):
        delegating_controller(other, lineage)
    with pytest.raises(ManagedAgentError, match="cannot be proved"):
        delegating_controller(widened, Lineage(readable=True))
    with pytest.raises(ManagedAgentError, match="no process ancestry"):
        delegating_controller(widened, Lineage(readable=False))


def test_a_child_recorded_without_a_roster_or_not_active_is_refused(tmp_path: Path) -> None:
    env = child_environment(tmp_path, ["scout"])
    said_hello(env)
    with pytest.raises(ManagedAgentError, match="without a recorded roster"):
        delegating_controller(env, recorded(env, None))
    with pytest.raises(ManagedAgentError, match="not active"):
        delegating_controller(env, recorded(env, ["scout"], status="delivered"))
    with pytest.raises(ManagedAgentError, match="owner's"):
        delegating_controller(env, recorded(env, ["scout"], owner_session_id=SESSION))


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
