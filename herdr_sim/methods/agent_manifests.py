"""Screen-detection methods: ``agent.explain``, ``server.agent_manifests`` and
``server.reload_agent_manifests`` (reference §3.1, §4; Herdr's ``src/app/api/agents.rs``).

They read the manifests of the runtime's :class:`~herdr_sim.services.detection_loop.DetectionLoop`
(loaded from ``SimulatorConfig.agent_manifests_dir``). ``agent.explain`` resolves its target
like every ``agent.*`` method; while a full-lifecycle integration holds the pane it answers
Herdr's fixed "screen detection skipped" object, otherwise it evaluates the agent's manifest
on the pane's detection snapshot and title, exactly what the detection loop sees.
"""

from __future__ import annotations

from typing import Any

from herdr_sim.detection import (
    ManifestSet,
    explain_to_json,
    hook_authority_explain,
    load_manifests,
    parse_agent_label,
)
from herdr_sim.registry import method
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import Obj

from ..model.agents import effective
from .agents import resolve
from .specs import EMPTY, REQ_STR

AGENT_EXPLAIN_UNAVAILABLE = "agent_explain_unavailable"


def _manifests(rt: Runtime) -> ManifestSet:
    if rt.detection is not None:
        return rt.detection.manifests
    return load_manifests(rt.config.agent_manifests_dir)


@method("agent.explain", Obj(fields={"target": REQ_STR}), result="agent_explain", mutates=False)
async def explain(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """How screen detection classifies an agent pane right now, rule by rule."""
    target = p["target"]
    ref = resolve(rt, target)
    rec = ref.pane.agent_rec
    label = effective(rec)[0]
    if rec.screen_detection_skipped():
        return {"type": "agent_explain", "explain": hook_authority_explain(label, ref.pane.state)}
    agent = (parse_agent_label(label) if label is not None else None) or rec.detected
    if agent is None:
        raise HerdrError(
            AGENT_EXPLAIN_UNAVAILABLE,
            f"agent target {target} does not have a detected agent label",
        )
    proc = rt.processes.get(ref.pane.key)
    screen, title = "", ""
    if proc is not None:
        screen = proc.terminal.read("detection")[0]
        title = proc.terminal.title or ""
    explained = _manifests(rt).explain(agent, screen, osc_title=title)
    return {"type": "agent_explain", "explain": explain_to_json(explained)}


@method("server.agent_manifests", EMPTY, result="agent_manifest_status", mutates=False)
async def agent_manifests(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """The detection manifests in use (the simulator has no remote update channel)."""
    return {
        "type": "agent_manifest_status",
        "last_check_unix": None,
        "last_result": None,
        "manifests": _manifests(rt).summaries(),
    }


@method("server.reload_agent_manifests", EMPTY, result="agent_manifest_reload", mutates=False)
async def reload_agent_manifests(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Re-read the manifest directory; every pane's screen is evaluated again."""
    loop = rt.detection
    current = _manifests(rt)
    try:
        fresh = current.reload()
    except OSError:
        fresh = current  # the directory went away: keep what is loaded
    if loop is not None:
        loop.manifests = fresh
        loop.reset()
    return {"type": "agent_manifest_reload", "manifests": fresh.summaries()}
