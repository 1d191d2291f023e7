"""``agent_list``: the owned agents, the roster, and what the reconcile delivered.

Why here: the list is the pull path too (a host with no pane that Herdr can push to reads
its results, questions and kept attention here), so its reconcile delivers unless the
configuration is read-only (:meth:`orchestrator.managed.footing.ServiceFooting.reconciled`).
"""

from __future__ import annotations

from typing import Any

from orchestrator.managed.definitions import AgentDefinition, Roster
from orchestrator.managed.footing import ServiceFooting
from orchestrator.managed.projection import project
from orchestrator.managed.supervisor import ReconcileReport, public_record

__all__ = ["READ_ONLY_NOTE", "list_agents"]

#: what ``agent_list`` says under ``readOnly`` (docs/orchestrator/managed-agents.md)
READ_ONLY_NOTE = (
    "Read-only configuration: results and questions are not delivered and finished agents "
    "are not cleaned up here; they stay durable in their mailboxes until a controller "
    "without readOnly reconciles them (once)."
)


def list_agents(footing: ServiceFooting) -> dict[str, Any]:
    """``agent_list``: reconcile (delivering unless read-only), then the owned agents with
    their projected tools, the roster, what was delivered and the kept attention."""
    pull = footing.pull
    report = footing.reconciled(pull=pull)
    agents = _agent_rows(footing, report)
    roster = footing.roster()
    definitions = [_definition_row(d) for _, d in sorted(roster.definitions.items())]
    deliveries = _delivery_rows(report)
    attention = footing.attention_source() if footing.attention_source is not None else []
    lines = _list_text(footing, agents, roster, definitions, deliveries, attention)
    return {
        "ok": True,
        "action": "list",
        "owner_session_id": footing.controller_id,
        "delivery": "none" if footing.read_only else "pull" if pull else "pane",
        "agents": agents,
        "agent_definitions": definitions,
        "deliveries": deliveries,
        "attention": attention,
        "refused_definitions": [
            {
                "layer": r.layer,
                "name": r.name,
                "path": str(r.path) if r.path else None,
                "reason": r.reason,
            }
            for r in roster.refusals
        ],
        "text": "\n".join(lines),
    }


def _agent_rows(footing: ServiceFooting, report: ReconcileReport) -> list[dict[str, Any]]:
    """The owned agents (direct, then descendants) as public records, then one
    recovery-only row per unreadable record."""
    agents = []
    for observation, direct in [
        *((o, True) for o in report.observations),
        *((o, False) for o in report.descendants),
    ]:
        projection = project(observation.generation, observation.evidence, direct=direct)
        agents.append(
            public_record(
                observation,
                projection.state,
                projection.available_tools,
                projection.diagnostic,
            )
        )
    _, problems = footing.store.scan()
    agents.extend(
        {
            "agent": None,
            "managed": True,
            "state": "unknown",
            "available_tools": [],
            "recovery_only": True,
            "diagnostic": problem.message,
        }
        for problem in problems
    )
    return agents


def _delivery_rows(report: ReconcileReport) -> list[dict[str, Any]]:
    """What the reconcile delivered (results and questions), each with its ids."""
    return [
        {
            "kind": d.kind,
            "agent": d.agent,
            "text": d.text,
            **({"result_ref": d.ref} if d.ref else {}),
            **({"ask_id": d.ask_id} if d.ask_id else {}),
            **({"request_id": d.request_id} if d.request_id else {}),
            **({"truncated": d.truncated} if d.kind == "result" else {}),
            **({"elapsed_ms": d.elapsed_ms} if d.elapsed_ms is not None else {}),
            **({"tokens": d.tokens} if d.tokens is not None else {}),
        }
        for d in report.delivered
    ]


def _list_text(
    footing: ServiceFooting,
    agents: list[dict[str, Any]],
    roster: Roster,
    definitions: list[dict[str, Any]],
    deliveries: list[dict[str, Any]],
    attention: list[dict[str, Any]],
) -> list[str]:
    """The model-facing lines of the list."""
    lines = [f"Agents: {len(agents)}", ""]
    for agent in agents:
        tools = ", ".join(agent.get("available_tools") or []) or "nothing"
        lines.append(
            f"{agent.get('agent')} · definition {agent.get('agent_definition')} · "
            f"{agent['state']} · available_tools: {tools}"
        )
    lines.append("Agent definitions:" if definitions else "Agent definitions: none.")
    lines += [
        f"  {row['name']}" + (f" — {row['description']}" if row.get("description") else "")
        for row in definitions
    ]
    if roster.refusals:
        lines.append("Refused definitions (left out of the roster):")
        lines += [
            f"  {r.reason}"
            if r.path is None or str(r.path) in r.reason
            else f"  {r.path} {r.reason}"
            for r in roster.refusals
        ]
    if not definitions or roster.refusals:
        lines.append(footing.where_definitions_go())
    for delivery in deliveries:
        lines += ["", delivery["text"]]
    if footing.read_only:
        lines += ["", READ_ONLY_NOTE]
    for item in attention:
        lines += ["", str(item["text"])]
    return lines


def _definition_row(definition: AgentDefinition) -> dict[str, Any]:
    front = definition.front_matter
    row: dict[str, Any] = {"name": definition.name, "source": definition.layer}
    if not definition.enabled:
        row["enabled"] = False
    for key in ("description", "model", "thinking", "tools", "excludeTools", "agents"):
        if key in front:
            row[key] = front[key]
    return row
