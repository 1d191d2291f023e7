"""`herdr agent ...`: agent.* socket methods, including ``agent start``'s polling loop.

``agent start`` is the one command that is more than a single request. Real Herdr pins
the pane's terminal id, sends ``agent.start``, retries a fresh shell that is still
initializing (``agent_pane_busy``) for up to two seconds, and then polls ``agent.get``
every 100 ms until the agent is interactive, turned out to be another kind, got blocked,
exited, or the startup deadline passed. Orchestrators depend on those outcomes and their
error codes, so :func:`_start` reproduces the loop step by step.
"""

from __future__ import annotations

from orchestrator.client.protocol import AGENT_LABELS, parse_agent_label
from orchestrator.client.protocol.startup import (
    DEFAULT_TIMEOUT_MS,
    START_ID,
    as_u64,
    json_get,
    request_start,
    wait_until_interactive,
)

from ..client import Context
from ..errors import FatalError, ProtocolMismatchReported, ServerNotRunningError, UsageError
from ..options import (
    U32_FATAL,
    U64,
    Append,
    Flag,
    Help,
    Lead,
    Positional,
    Spec,
    Tail,
    Value,
    choice,
    pick,
)
from ..output import (
    dumps,
    print_read_response,
    print_response,
    rust_debug_str,
    rust_value_debug,
    write_err,
    write_out,
)
from ._common import READ_SOURCES, STATUSES, subcommand, unknown_subcommand

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["run"]

_PROMPT_USAGE = (
    "usage: herdr agent prompt <target> <text> [--wait] [--until STATUS]... [--timeout MS]"
)
_WAIT_USAGE = "usage: herdr agent wait <target> [--until STATUS]... [--timeout MS]"
_START_USAGE = (
    "usage: herdr agent start <name> --kind KIND --pane ID [--timeout MS] [-- <agent-args...>]"
)
_READ_USAGE = (
    "usage: herdr agent read <target> [--source visible|recent|recent-unwrapped] [--lines N] "
    "[--format text|ansi] [--ansi]"
)
_EXPLAIN_USAGE = "usage: herdr agent explain <target> [--json]"
_EXPLAIN_FILE_USAGE = "usage: herdr agent explain --file PATH --agent LABEL [--json]"
_ATTACH_USAGE = "usage: herdr agent attach <target> [--takeover]"

_UNTIL = Append(
    "--until",
    convert=choice(
        STATUSES,
        "invalid agent status: {value} (expected idle, working, blocked, done, or unknown)",
    ),
    missing="--until requires at least one status",
)
_TIMEOUT = Value("--timeout", "timeout_ms", U64)
_READ = Spec(
    Lead("target"),
    Value("--source", convert=choice(READ_SOURCES, "invalid read source: {value}", fatal=True)),
    Value("--lines", convert=U32_FATAL),
    Value("--format", convert=choice(("text", "ansi"), "invalid read format: {value}", fatal=True)),
    Flag("--ansi", format="ansi"),
    defaults={"source": "recent", "format": "text"},
    usage=_READ_USAGE,
)
_PROMPT = Spec(
    Lead("target"),
    Lead("text", missing="agent prompt requires text"),
    Flag("--wait"),
    _UNTIL,
    _TIMEOUT,
    usage=_PROMPT_USAGE,
)
_WAIT = Spec(Lead("target"), _UNTIL, _TIMEOUT, Help(_WAIT_USAGE), usage=_WAIT_USAGE)
_ATTACH = Spec(Lead("target"), Flag("--takeover"), Help(_ATTACH_USAGE), usage=_ATTACH_USAGE)
_START = Spec(
    Lead("name"),
    Value("--kind", required=True),
    Value("--pane", "pane_id", required=True),
    Tail("args"),
    _TIMEOUT,
    usage=_START_USAGE,
)
_EXPLAIN = Spec(
    Positional("target", if_set=_EXPLAIN_USAGE),
    Value("--file"),
    Value("--agent"),
    Value(
        "--format",
        "json",
        choice({"json": True, "text": False}, "invalid --format: {value} (expected text or json)"),
    ),
    Flag("--json"),
    Flag("--verbose", "-v", verbose=True),
    Help(
        "usage: herdr agent explain <target> [--json|--verbose]",
        "usage: herdr agent explain --file PATH --agent LABEL [--json|--verbose]",
    ),
)


_HELP = (
    "herdr agent commands:",
    "  herdr agent list",
    "  herdr agent get <target>",
    (
        "  herdr agent read <target> [--source visible|recent|recent-unwrapped|detection] "
        "[--lines N] [--format text|ansi] [--ansi]"
    ),
    "  herdr agent send-keys <target> <key> [key ...]",
    "  " + _PROMPT_USAGE.removeprefix("usage: "),
    "  herdr agent rename <target> <name>|--clear",
    "  herdr agent focus <target>",
    "  " + _WAIT_USAGE.removeprefix("usage: "),
    "  herdr agent attach <target> [--takeover]",
    "  " + _START_USAGE.removeprefix("usage: "),
    "  herdr agent explain <target> [--json|--format text|json] [--verbose]",
    "  herdr agent explain --file PATH --agent LABEL [--json|--format text|json] [--verbose]",
    "  targets accept unique agent names and pane ids that currently host agents",
    "  kinds: " + "|".join(AGENT_LABELS),
)


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr agent <subcommand>``."""
    sub, rest = subcommand(args, _HELP)
    if sub == "list":
        if rest:
            raise UsageError("usage: herdr agent list")
        return ctx.print_method("cli:agent:list", "agent.list", {})
    if sub in ("get", "focus"):
        if len(rest) != 1:
            raise UsageError(f"usage: herdr agent {sub} <target>")
        return ctx.print_method(f"cli:agent:{sub}", f"agent.{sub}", {"target": rest[0]})
    if sub == "read":
        return print_read_response(ctx.send("cli:agent:read", "agent.read", _read_params(rest)))
    if sub == "send-keys":
        if len(rest) < 2:
            raise UsageError("usage: herdr agent send-keys <target> <key> [key ...]")
        params = {"target": rest[0], "keys": rest[1:]}
        return ctx.print_method("cli:agent:send-keys", "agent.send_keys", params)
    if sub == "prompt":
        return ctx.print_method("cli:agent:prompt", "agent.prompt", _prompt_params(rest))
    if sub == "rename":
        if len(rest) != 2:
            raise UsageError("usage: herdr agent rename <target> <name>|--clear")
        params = {"target": rest[0]}
        if rest[1] != "--clear":
            params["name"] = rest[1]
        return ctx.print_method("cli:agent:rename", "agent.rename", params)
    if sub == "wait":
        return _wait(ctx, rest)
    if sub == "attach":
        return _attach(rest)
    if sub == "start":
        return _start(ctx, rest)
    if sub == "explain":
        return _explain(ctx, rest)
    return unknown_subcommand(sub, _HELP)


# -- simple commands -------------------------------------------------------------------------


def _read_params(args: list[str]) -> dict[str, Any]:
    values = _READ.parse(args)
    # Unlike `pane read`, `agent read` keeps the escapes whenever the format is ansi.
    return {**_READ.params(values), "strip_ansi": values["format"] != "ansi"}


def _prompt_params(args: list[str]) -> dict[str, Any]:
    values = _PROMPT.parse(args)
    if values["until"] and not values["wait"]:
        raise UsageError("--until requires --wait")
    if values["timeout_ms"] is not None and not values["wait"]:
        raise UsageError("--timeout requires --wait")
    params = pick(values, "target", "text")
    if values["wait"]:
        params["wait"] = pick(values, "until", "timeout_ms")
    return params


def _wait(ctx: Context, args: list[str]) -> int:
    return ctx.print_method("cli:agent:wait", "agent.wait", _WAIT.request(args))


def _attach(args: list[str]) -> int:
    _ATTACH.parse(args)
    from .unsupported import unsupported

    return unsupported("agent attach", "it attaches a terminal client to the agent's pane")


# -- agent start -----------------------------------------------------------------------------


def _start(ctx: Context, args: list[str]) -> int:
    """Herdr's ``agent start`` loop (:mod:`orchestrator.client.protocol.startup`) through
    ``ctx``."""
    values = _START.parse(args)
    expected_kind = parse_agent_label(values["kind"])
    if expected_kind is None:
        raise UsageError(f"unsupported interactive agent kind: {values['kind']}")
    name, pane_id, timeout_ms = values["name"], values["pane_id"], values["timeout_ms"]
    timeout_total = timeout_ms if timeout_ms is not None else DEFAULT_TIMEOUT_MS

    def send(request_id: str, method: str, params: dict[str, Any], checked: bool) -> Any:
        if checked:
            return ctx.send(request_id, method, params)
        return ctx.send_unchecked(request_id, method, params)

    response, terminal_id = request_start(send, _START.params(values))
    if terminal_id is None:
        return print_response(response)
    try:
        outcome, value = wait_until_interactive(
            send, name, pane_id, timeout_total / 1000, expected_kind, terminal_id
        )
    except ProtocolMismatchReported:
        return 1
    except ServerNotRunningError as err:
        return print_response(err.response)
    except FatalError as err:
        return print_response(
            {
                "id": START_ID,
                "error": {"code": "agent_start_transport_failed", "message": err.display},
            }
        )
    if not outcome:
        return print_response(value)
    response["result"]["agent"] = value
    return print_response(response)


# -- agent explain ---------------------------------------------------------------------------


def _explain(ctx: Context, args: list[str]) -> int:
    values = _EXPLAIN.parse(args)
    file, agent, target = values["file"], values["agent"], values["target"]
    if file is not None:
        if target is not None:
            raise UsageError(_EXPLAIN_FILE_USAGE)
        if agent is None:
            raise UsageError("herdr agent explain --file requires --agent LABEL")
        from .unsupported import unsupported

        return unsupported(
            "agent explain --file", "it needs Herdr's built-in agent-detection manifests"
        )
    if target is None:
        raise UsageError(_EXPLAIN_USAGE + "\n" + _EXPLAIN_FILE_USAGE)
    if agent is not None:
        raise UsageError("--agent is only valid with --file")
    response = ctx.send("cli:agent:explain", "agent.explain", {"target": target})
    if isinstance(response, dict) and "error" in response:
        write_err(dumps(response))
        return 1
    explain = json_get(response, "result", "explain")
    if values["json"]:
        write_out(dumps(explain) + "\n")
    else:
        write_out(explain_text(explain, values["verbose"] is True))
    return 0


def _text(value: Any, default: str) -> str:
    return value if isinstance(value, str) else default


def _i64(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return 0


def _flag(value: Any) -> str:
    return "true" if value is True else "false"


def explain_text(explain: Any, verbose: bool = False) -> str:
    """The human rendering of an ``agent.explain`` result, line for line as Herdr's."""
    lines = [
        f"agent: {_text(json_get(explain, 'agent'), 'unknown')}",
        f"state: {_text(json_get(explain, 'state'), 'unknown')}",
        (
            f"manifest: {_text(json_get(explain, 'manifest_source'), 'none')} "
            f"{_text(json_get(explain, 'manifest_version'), 'unknown')}"
        ),
    ]
    rule = json_get(explain, "matched_rule")
    if isinstance(rule, dict):
        rule_id = _text(rule.get("id"), "-")
        lines.append(
            f"rule: {rule_id} (region={_text(rule.get('region'), '-')} "
            f"priority={_i64(rule.get('priority'))})"
        )
        rules = json_get(explain, "evaluated_rules")
        for candidate in rules if isinstance(rules, list) else []:
            if json_get(candidate, "id") == rule_id:
                preview = json_get(candidate, "evidence", "region_preview")
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
        value = json_get(explain, key)
        if isinstance(value, str):
            lines.append(f"{key}: {value}")
    if verbose:
        lines.append(
            f"visible: idle={_flag(json_get(explain, 'visible_idle'))} "
            f"blocker={_flag(json_get(explain, 'visible_blocker'))} "
            f"working={_flag(json_get(explain, 'visible_working'))}"
        )
        lines.append(
            f"cached_remote_version: {_text(json_get(explain, 'cached_remote_version'), 'none')}"
        )
        lines.append(
            "local_override_shadowing_remote: "
            + _flag(json_get(explain, "local_override_shadowing_remote"))
        )
        for key in ("remote_update_status", "remote_update_error"):
            value = json_get(explain, key)
            if isinstance(value, str):
                lines.append(f"{key}: {value}")
        rules = json_get(explain, "evaluated_rules")
        if isinstance(rules, list) and rules:
            lines.append("evaluated_rules:")
            for candidate in rules:
                evidence = json_get(candidate, "evidence")
                mark = "✓" if json_get(candidate, "matched") is True else "✗"
                lines.append(
                    f"  {mark} {_text(json_get(candidate, 'id'), '-')} "
                    f"priority={_i64(json_get(candidate, 'priority'))} "
                    f"region={_text(json_get(candidate, 'region'), '-')} "
                    f"state={_text(json_get(candidate, 'state'), 'unknown')}"
                )
                counts = " ".join(
                    f"{label}={as_u64(json_get(evidence, key)) or 0}"
                    for label, key in (
                        ("all", "all_count"),
                        ("any", "any_count"),
                        ("not", "not_count"),
                    )
                )
                lines.append(
                    f"    matchers: contains={rust_value_debug(json_get(evidence, 'contains'))} "
                    f"regex={rust_value_debug(json_get(evidence, 'regex'))} "
                    f"line_regex={rust_value_debug(json_get(evidence, 'line_regex'))} {counts}"
                )
                lines.append(
                    f"    region: bytes={as_u64(json_get(evidence, 'region_bytes')) or 0} "
                    f"preview={rust_debug_str(_text(json_get(evidence, 'region_preview'), ''))}"
                )
    return "".join(line + "\n" for line in lines)
