"""The managed child's environment: the controller's builder and the child's strict check."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest

from orchestrator.managed.env import (
    ALLOWED_DEFINITIONS_ENV,
    CHILD_ENV_NAMES,
    CONTEXT_RETIREMENT_ENV,
    PANE_ENV,
    PYTHON_ENV,
    SUBAGENT_ENV,
    ChildEnvError,
    ChildIdentity,
    child_env,
    without_owner_identity,
)
from orchestrator.managed.mailbox import Mailbox, MailboxError
from tests.orchestrator.managed.test_child import LABEL, WORKSPACE, identity_env


def test_the_builder_round_trips_through_the_check(tmp_path: Path) -> None:
    box = Mailbox(tmp_path, WORKSPACE, LABEL)
    run_id = str(uuid.uuid4())
    env = child_env(
        mailbox_dir=box.path,
        run_id=run_id,
        owner_session_id="0190-abc",
        label=LABEL,
        workspace_id=WORKSPACE,
        definition="scout",
        allowed_definitions=["reviewer", "tester"],
    )
    assert list(env) == list(CHILD_ENV_NAMES)
    assert env[PYTHON_ENV] == sys.executable
    assert json.loads(env[ALLOWED_DEFINITIONS_ENV]) == ["reviewer", "tester"]
    identity = ChildIdentity.from_env({**env, PANE_ENV: "w1:p3"})
    assert identity.mailbox_dir == box.path and identity.run_id == run_id
    assert identity.allowed_definitions == ("reviewer", "tester") and identity.delegating
    assert identity.pane_id == "w1:p3"


BAD = [
    ("PI_SUBAGENT_CHILD", "0", "PI_SUBAGENT_CHILD is not 1"),
    ("PI_HERDSMAN_MAILBOX", "", "PI_HERDSMAN_MAILBOX is not set"),
    ("PI_HERDSMAN_MAILBOX", "relative/x", "is not an absolute path"),
    ("PI_HERDSMAN_MAILBOX", "/tmp/mailboxes-v4/../x", "is not a canonical path"),
    ("PI_HERDSMAN_MAILBOX", "/tmp/other/" + "a" * 32, "mailbox directory"),
    ("PI_HERDSMAN_MAILBOX", "/tmp/mailboxes-v4/" + "a" * 32, "is not the mailbox of label"),
    ("PI_HERDSMAN_RUN_ID", "not-a-uuid", "PI_HERDSMAN_RUN_ID is not a lowercase UUID"),
    ("PI_HERDSMAN_OWNER_SESSION_ID", "two words", "PI_HERDSMAN_OWNER_SESSION_ID is not a valid"),
    ("PI_HERDSMAN_LABEL", "Scout", "PI_HERDSMAN_LABEL is not a valid label"),
    ("PI_HERDSMAN_LABEL", "scout\n", "PI_HERDSMAN_LABEL is not a valid label"),
    ("PI_HERDSMAN_WORKSPACE_ID", "w\x01", "PI_HERDSMAN_WORKSPACE_ID is not a valid"),
    ("PI_HERDSMAN_AGENT_DEFINITION", "", "PI_HERDSMAN_AGENT_DEFINITION is not set"),
    ("PI_HERDSMAN_ALLOWED_AGENT_DEFINITIONS", "reviewer", "is not JSON"),
    ("PI_HERDSMAN_ALLOWED_AGENT_DEFINITIONS", '{"a": 1}', "is not a JSON array of strings"),
    ("PI_HERDSMAN_ALLOWED_AGENT_DEFINITIONS", "[1]", "is not a JSON array of strings"),
    ("PI_HERDSMAN_ALLOWED_AGENT_DEFINITIONS", '["a b"]', "invalid definition name"),
    ("PI_HERDSMAN_ALLOWED_AGENT_DEFINITIONS", '["a", "a"]', "repeats a definition name"),
    ("HERDR_PANE_ID", "", "HERDR_PANE_ID is not set"),
]


@pytest.mark.parametrize(("name", "value", "needle"), BAD)
def test_a_bad_variable_is_named_in_a_fixed_message(
    tmp_path: Path, name: str, value: str, needle: str
) -> None:
    env = identity_env(tmp_path, **{name: value})
    with pytest.raises(ChildEnvError) as caught:
        ChildIdentity.from_env(env)
    assert caught.value.category == "invalid_request"
    assert caught.value.variable == name
    assert needle in caught.value.message
    assert "\n" not in caught.value.message and "\x01" not in caught.value.message


def test_a_missing_variable_is_named(tmp_path: Path) -> None:
    optional = {PYTHON_ENV, SUBAGENT_ENV, CONTEXT_RETIREMENT_ENV}  # checked on their own
    for name in (*(n for n in CHILD_ENV_NAMES if n not in optional), PANE_ENV):
        env = identity_env(tmp_path)
        del env[name]
        with pytest.raises(ChildEnvError) as caught:
            ChildIdentity.from_env(env)
        assert caught.value.variable == name


def test_the_builder_refuses_what_the_child_would(tmp_path: Path) -> None:
    box = Mailbox(tmp_path, WORKSPACE, LABEL)
    with pytest.raises(ChildEnvError, match="PI_HERDSMAN_LABEL"):
        child_env(
            mailbox_dir=box.path, run_id=str(uuid.uuid4()), owner_session_id="o",
            label="Bad", workspace_id=WORKSPACE, definition="d",
        )  # fmt: skip
    with pytest.raises(ChildEnvError, match="PI_HERDSMAN_PYTHON"):
        child_env(
            mailbox_dir=box.path, run_id=str(uuid.uuid4()), owner_session_id="o",
            label=LABEL, workspace_id=WORKSPACE, definition="d", python="python3",
        )  # fmt: skip


def test_the_owner_identity_is_not_passed_on() -> None:
    owner = {
        "PATH": "/bin",
        "HERDR_PANE_ID": "w1:p1",
        "HERDR_TAB_ID": "w1:t1",
        "HERDR_WORKSPACE_ID": "w1",
        "HERDR_SOCKET_PATH": "/s",
        "PI_HERDSMAN_LABEL": "parent",
        "PI_HERDSMAN_FUTURE": "x",
        "PI_SUBAGENT_CHILD": "1",
    }
    assert without_owner_identity(owner) == {"PATH": "/bin", "HERDR_SOCKET_PATH": "/s"}


def test_mailbox_at_takes_only_a_mailbox_directory(tmp_path: Path) -> None:
    box = Mailbox(tmp_path, WORKSPACE, LABEL)
    same = Mailbox.at(box.path)
    assert (same.path, same.namespace) == (box.path, box.namespace)
    for bad in ("relative/mailboxes-v4/" + "a" * 32, str(tmp_path / "x" / ("a" * 32)),
                str(tmp_path / "mailboxes-v4" / "short"), str(box.path) + "/.."):  # fmt: skip
        with pytest.raises(MailboxError) as caught:
            Mailbox.at(bad)
        assert caught.value.category == "invalid_request"
    # it is the same mailbox: what the owner posts, the child's view reads
    from orchestrator.managed.mailbox import Box, Kind

    task = box.post(Kind.TASK, "t")
    assert same.pending(Box.TO_CHILD) == [task]
