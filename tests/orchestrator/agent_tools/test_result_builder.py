"""Every AgentResult starts in one builder (issue 12c): ``AgentResult.for_record`` for our
tasks, ``for_agent`` for Herdr agents that are not ours, ``refused`` before any task exists.

Harvest, control, spawn's failures, observations and the transcript tool each used to copy
the record's identity into an AgentResult by hand; one of them forgetting a field (the
model, the machine) would have been a silent difference between tools.
"""

from __future__ import annotations

import ast
from pathlib import Path

import jsonschema

import orchestrator.agent_tools
from orchestrator.agent_tools.contract import (
    AGENT_RESULT_SCHEMA,
    AgentResult,
    Artifacts,
    ResultError,
    refusal,
)
from orchestrator.agent_tools.records import TaskStore
from orchestrator.client.types import AgentInfo

PACKAGE = Path(orchestrator.agent_tools.__file__).parent
#: the builders' home, and the preview (a result about no task and no agent)
ALLOWED = {"contract.py", "preview.py"}
RESULT = jsonschema.Draft202012Validator(AGENT_RESULT_SCHEMA)


def test_no_tool_module_assembles_an_agent_result_by_hand() -> None:
    offenders = []
    for path in sorted(PACKAGE.glob("*.py")):
        if path.name in ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name == "AgentResult":
                    offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


def test_for_record_names_the_task_its_summary_and_artifacts(tmp_path: Path) -> None:
    store = TaskStore(tmp_path / "state")
    record, _ = store.create(kind="pi", cwd=str(tmp_path), name="pi-x", model="m1")
    record = store.update(record.task_id, pane_id="w1:p2", session_path="/s.jsonl")
    (tmp_path / "artifacts" / record.task_id).mkdir(parents=True)
    (tmp_path / "artifacts" / record.task_id / "result.md").write_text("done")
    result = AgentResult.for_record(
        "herdr_get_result", record, "completed", artifact_root=tmp_path / "artifacts"
    )
    value = result.to_dict()
    RESULT.validate(value)
    assert (value["taskId"], value["name"], value["paneId"]) == (record.task_id, "pi-x", "w1:p2")
    assert (value["kind"], value["model"], value["machine"]) == ("pi", "m1", "local")
    assert value["task"]["taskId"] == record.task_id
    assert value["artifacts"]["resultMdExists"] is True
    assert value["artifacts"]["sessionFile"] == "/s.jsonl"
    given = Artifacts(artifact_dir="/a")
    assert AgentResult.for_record("t", record, "failed", artifacts=given).artifacts is given


def test_for_agent_and_refused() -> None:
    info = AgentInfo.from_wire(
        {"pane_id": "w1:p3", "name": "other", "agent": "claude", "agent_status": "idle"}
    )
    observed = AgentResult.for_agent("herdr_get_result", info, "idle", observation=True)
    assert (observed.name, observed.pane_id, observed.kind) == ("other", "w1:p3", "claude")
    assert observed.task_id is None
    unknown = AgentResult.for_agent("herdr_read_agent", None, "failed")
    assert (unknown.name, unknown.pane_id, unknown.kind) == (None, None, None)
    error = ResultError("DISABLED", "off")
    assert refusal("herdr_spawn_agent", error) == (
        AgentResult.refused("herdr_spawn_agent", error).to_dict()
    )
    RESULT.validate(refusal("herdr_spawn_agent", error))
