"""The ``agent.explain`` result object and ``herdr agent explain`` text output.

:func:`explain_to_json` builds the ``explain`` object Herdr returns from
``agent.explain`` and prints with ``herdr agent explain --json`` (also for
``--file PATH --agent LABEL``, evaluated locally).  When a full-lifecycle
integration holds the pane, Herdr skips screen detection and answers with
:func:`hook_authority_explain` instead.  :func:`render_explain_text` produces
the plain-text form (``--verbose`` adds visibility flags, remote-manifest
fields and every evaluated rule with its evidence), quoting strings the way
Rust's ``{:?}`` does.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from herdr_sim.detect.engine import DetectionExplain

__all__ = [
    "HOOK_AUTHORITY_SKIP_REASON",
    "explain_to_json",
    "hook_authority_explain",
    "render_explain_text",
    "rust_debug_str",
]

HOOK_AUTHORITY_SKIP_REASON = "full_lifecycle_hook_authority"

_NON_PRINTABLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Cn", "Co", "Zl", "Zp"})


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


def rust_debug_str(text: str) -> str:
    """Quote a string like Rust's ``{:?}`` (approximating Rust's printable table)."""
    out = ['"']
    for index, char in enumerate(text):
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif char == "\0":
            out.append("\\0")
        elif unicodedata.category(char) in _NON_PRINTABLE_CATEGORIES or (
            index == 0 and unicodedata.category(char) in ("Mn", "Me")
        ):
            out.append(f"\\u{{{ord(char):x}}}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _debug_json(value: Any) -> str:
    """``serde_json::Value``'s ``{:?}`` form (``Array [String("x")]``)."""
    if value is None:
        return "Null"
    if isinstance(value, bool):
        return f"Bool({'true' if value else 'false'})"
    if isinstance(value, (int, float)):
        return f"Number({value})"
    if isinstance(value, str):
        return f"String({rust_debug_str(value)})"
    if isinstance(value, list):
        return "Array [" + ", ".join(_debug_json(item) for item in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{rust_debug_str(k)}: {_debug_json(v)}" for k, v in value.items())
        return "Object {" + inner + "}"
    return repr(value)


def _str(value: Any, default: str) -> str:
    return value if isinstance(value, str) else default


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _flag(value: Any) -> str:
    return "true" if value is True else "false"


def render_explain_text(explain: dict[str, Any], *, verbose: bool = False) -> str:
    """The text ``herdr agent explain`` prints (each line ends with a newline)."""
    lines = [
        f"agent: {_str(explain.get('agent'), 'unknown')}",
        f"state: {_str(explain.get('state'), 'unknown')}",
        (
            "manifest: "
            f"{_str(explain.get('manifest_source'), 'none')} "
            f"{_str(explain.get('manifest_version'), 'unknown')}"
        ),
    ]
    rule = explain.get("matched_rule")
    evaluated = explain.get("evaluated_rules")
    evaluated_rules = evaluated if isinstance(evaluated, list) else []
    if isinstance(rule, dict):
        rule_id = _str(rule.get("id"), "-")
        lines.append(
            f"rule: {rule_id} (region={_str(rule.get('region'), '-')} "
            f"priority={_int(rule.get('priority'))})"
        )
        for candidate in evaluated_rules:
            if isinstance(candidate, dict) and candidate.get("id") == rule_id:
                preview = candidate.get("evidence", {}).get("region_preview")
                if isinstance(preview, str) and preview:
                    lines.append(f"evidence: {rust_debug_str(preview)}")
                break
    else:
        lines.append("rule: none")
    for key in (
        "fallback_reason",
        "screen_detection_skip_reason",
        "skipped_update_reason",
        "warning",
    ):
        value = explain.get(key)
        if isinstance(value, str):
            lines.append(f"{key}: {value}")
    if verbose:
        lines.append(
            f"visible: idle={_flag(explain.get('visible_idle'))} "
            f"blocker={_flag(explain.get('visible_blocker'))} "
            f"working={_flag(explain.get('visible_working'))}"
        )
        lines.append(f"cached_remote_version: {_str(explain.get('cached_remote_version'), 'none')}")
        lines.append(
            "local_override_shadowing_remote: "
            f"{_flag(explain.get('local_override_shadowing_remote'))}"
        )
        for key in ("remote_update_status", "remote_update_error"):
            value = explain.get(key)
            if isinstance(value, str):
                lines.append(f"{key}: {value}")
        if evaluated_rules:
            lines.append("evaluated_rules:")
            for item in evaluated_rules:
                if not isinstance(item, dict):
                    continue
                evidence = item.get("evidence", {})
                lines.append(
                    f"  {'✓' if item.get('matched') is True else '✗'} "
                    f"{_str(item.get('id'), '-')} priority={_int(item.get('priority'))} "
                    f"region={_str(item.get('region'), '-')} "
                    f"state={_str(item.get('state'), 'unknown')}"
                )
                lines.append(
                    f"    matchers: contains={_debug_json(evidence.get('contains'))} "
                    f"regex={_debug_json(evidence.get('regex'))} "
                    f"line_regex={_debug_json(evidence.get('line_regex'))} "
                    f"all={_int(evidence.get('all_count'))} "
                    f"any={_int(evidence.get('any_count'))} "
                    f"not={_int(evidence.get('not_count'))}"
                )
                lines.append(
                    f"    region: bytes={_int(evidence.get('region_bytes'))} "
                    f"preview={rust_debug_str(_str(evidence.get('region_preview'), ''))}"
                )
    return "".join(line + "\n" for line in lines)
