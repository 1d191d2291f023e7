"""The ``agent.explain`` result object and ``herdr agent explain`` text output.

:func:`explain_to_json` builds the ``explain`` object Herdr returns from
``agent.explain`` and prints with ``herdr agent explain --json`` (also for
``--file PATH --agent LABEL``, evaluated locally).  When a full-lifecycle
integration holds the pane, Herdr skips screen detection and answers with
:func:`hook_authority_explain` instead.  The plain-text form of ``herdr agent
explain`` is rendered by the CLI from this object
(:func:`herdr_sim.herdr_cli.commands.agent.explain_text`), the one place it lives.
"""

from __future__ import annotations

from typing import Any

from herdr_sim.detection.engine import DetectionExplain

__all__ = [
    "HOOK_AUTHORITY_SKIP_REASON",
    "explain_to_json",
    "hook_authority_explain",
]

HOOK_AUTHORITY_SKIP_REASON = "full_lifecycle_hook_authority"


def explain_to_json(explain: DetectionExplain) -> dict[str, Any]:
    """The ``explain`` object, keys in Herdr's order."""
    matched = explain.matched_rule
    return {
        "agent": explain.agent,
        "state": explain.state,
        "manifest_source": explain.source.label if explain.source else None,
        "manifest_version": explain.manifest_version,
        "cached_remote_version": explain.cached_remote_version,
        "local_override_shadowing_remote": explain.local_override_shadowing_remote,
        "remote_update_status": explain.remote_update_status,
        "remote_update_error": explain.remote_update_error,
        "matched_rule": (
            {
                "id": matched.id,
                "priority": matched.priority,
                "region": matched.region,
                "state": matched.state,
            }
            if matched
            else None
        ),
        "visible_idle": explain.visible_idle,
        "visible_blocker": explain.visible_blocker,
        "visible_working": explain.visible_working,
        "screen_detection_skipped": explain.screen_detection_skipped,
        "skip_state_update": explain.skip_state_update,
        "skipped_update_reason": explain.skipped_update_reason,
        "fallback_reason": explain.fallback_reason,
        "warning": explain.warning,
        "evaluated_rules": [
            {
                "id": rule.id,
                "priority": rule.priority,
                "region": rule.region,
                "state": rule.state,
                "matched": rule.matched,
                "evidence": {
                    "contains": list(rule.contains),
                    "regex": list(rule.regex),
                    "line_regex": list(rule.line_regex),
                    "all_count": rule.all_count,
                    "any_count": rule.any_count,
                    "not_count": rule.not_count,
                    "region_bytes": rule.region_bytes,
                    "region_preview": rule.region_preview,
                },
            }
            for rule in explain.evaluated_rules
        ],
    }


def hook_authority_explain(agent_label: str | None, state: str) -> dict[str, Any]:
    """The explain object when a full-lifecycle integration owns the pane's state."""
    return {
        "agent": agent_label or "unknown",
        "state": state,
        "manifest_source": None,
        "manifest_version": None,
        "cached_remote_version": None,
        "local_override_shadowing_remote": False,
        "remote_update_status": None,
        "remote_update_error": None,
        "matched_rule": None,
        "visible_idle": False,
        "visible_blocker": False,
        "visible_working": False,
        "screen_detection_skipped": True,
        "screen_detection_skip_reason": HOOK_AUTHORITY_SKIP_REASON,
        "skip_state_update": False,
        "skipped_update_reason": None,
        "fallback_reason": None,
        "warning": None,
        "evaluated_rules": [],
    }
