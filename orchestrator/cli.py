"""The ``herdr-orchestrator`` command: serve the tools over MCP, list them, or call one.

``mcp`` serves every tool on stdio for an MCP client (``--log-level``: its decisions logged to
stderr, never stdout, which carries MCP). ``tools`` prints the tools the policy offers as JSON
(name, risk, description, input schema) for anyone wiring the tools into something else. ``call TOOL
JSON`` runs one tool from a shell or a script and prints its result object; the exit status says
how it went without parsing, by the same rule as MCP's ``isError``
(:func:`orchestrator.pipeline.outcome.call_failed`): 0 a success or a result to read (``ok: true``;
an agent tool's ``completed``, ``running``, ``blocked``, list/inbox/read/doctor page), 1 a
failure (``ok: false``: Herdr's error, a timeout, arguments the schema rejects; an agent tool's
refusal or ``status: failed``), 2 a usage error that never reached a tool (unknown command or
tool, arguments that are not a JSON object).

With ``--http HOST:PORT``, ``mcp`` serves over Streamable HTTP instead
(:mod:`orchestrator.mcp_http`: token, TLS, request limits). ``check`` is what a user runs after
setting up a host: it connects like a host and reports what works (:mod:`orchestrator.check`).
``audit`` prints the audit log's last lines (``--follow``: then tails it); ``plugin-manifest
DIR`` writes the Herdr plugin manifest (:mod:`orchestrator.plugin_manifest`). ``doctor`` runs
``herdr_doctor`` and prints its report like ``call``, but its exit status says what the doctor
found (0 no check failed, 1 a check failed or the call did): what the plugin's read-only
``check`` action runs, so Herdr's action log shows a failing setup as a failed run.

The MCP SDK is imported only by the ``mcp`` and ``check`` subcommands, so ``tools`` and
``call`` start fast, and it is an extra (``pytest-herdr[mcp]``): without it those two
subcommands exit 2 naming the extra, and everything else works.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn, TextIO

EXIT_OK = 0
EXIT_NOT_OK = 1
EXIT_USAGE = 2
#: what ``mcp`` and ``check`` need beyond the package's own dependencies
MCP_EXTRA = "pytest-herdr[mcp]"
#: ``herdr-orchestrator mcp --log-level`` values
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def _parsers() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The command's parser and its ``call`` subparser (which reports bad arguments)."""
    parser = argparse.ArgumentParser(
        prog="herdr-orchestrator",
        description="Herdr orchestrator tools: an MCP server, the tool list, one-off calls.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    mcp = sub.add_parser(
        "mcp", help="serve the tools over MCP on stdin/stdout (or over HTTP with --http)"
    )
    mcp.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=LOG_LEVELS,
        help="log the orchestrator's decisions at this level and above to stderr (stdout "
        "carries MCP); default WARNING",
    )
    from orchestrator.mcp_http.settings import add_arguments as add_http_arguments

    add_http_arguments(mcp)
    from orchestrator.check import add_arguments as add_check_arguments

    add_check_arguments(
        sub.add_parser(
            "check",
            help="check a served MCP endpoint (HTTP) or a spawned stdio server: reachable, "
            "protocol, tools, one read-only call (exit 0 ok, 1 a check failed)",
        )
    )
    sub.add_parser(
        "tools", help="print the tools the policy offers (name, risk, description, schema) as JSON"
    )
    sub.add_parser(
        "doctor",
        help="run herdr_doctor (read-only) and print its report as JSON (exit 0 no check "
        "failed, 1 a check failed)",
    )
    sub.add_parser("demo", help="drive the embedded simulator with the tools, end to end")
    audit = sub.add_parser("audit", help="print the audit log (one JSON line per non-R0 call)")
    audit.add_argument("--lines", type=int, default=20, help="how many last lines (default 20)")
    audit.add_argument("--follow", action="store_true", help="then print new lines as written")
    manifest = sub.add_parser(
        "plugin-manifest", help="write herdr-plugin.toml (a read-only check action) into DIR"
    )
    manifest.add_argument("dir", help="the plugin directory (created if missing)")
    call = sub.add_parser(
        "call",
        help="run one tool and print its result as JSON (exit 0 ok, 1 failed, 2 usage)",
    )
    call.add_argument("tool", help="the tool's name, e.g. _dsh_herdr_workspace_list")
    call.add_argument(
        "arguments",
        nargs="?",
        default="{}",
        help="the arguments as one JSON object ('-' reads it from stdin; default {})",
    )
    return parser, call


def tool_listing() -> dict[str, Any]:
    """Every tool the policy offers (:mod:`orchestrator.core.policy`, as MCP's ``tools/list``)
    as ``tools`` prints it, in the registry's order."""
    from orchestrator.core.policy import listed
    from orchestrator.core.tool import ToolContext
    from orchestrator.pipeline.call_guard import policy_of
    from orchestrator.pipeline.registry import ALL_TOOLS

    rules = policy_of(ToolContext.from_env(), ALL_TOOLS)
    if rules.config_error is not None:
        sys.stderr.write(f"herdr-orchestrator: {rules.config_error} (only the doctors run)\n")
    return {
        "tools": [
            {
                "name": tool.name,
                "risk": tool.risk,
                "description": tool.description,
                "inputSchema": _jsonable(tool.input_schema),
            }
            for tool in ALL_TOOLS.values()
            if listed(rules, tool)
        ]
    }


def _jsonable(value: object) -> Any:
    """A plain JSON copy of ``value`` (registry schemas may hold read-only mappings)."""
    return json.loads(json.dumps(value, default=dict))


def _usage_error(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    parser.error(message)  # prints usage and the message on stderr, exits 2


def _call(
    parser: argparse.ArgumentParser, name: str, raw: str, stdin: TextIO, stdout: TextIO
) -> int:
    from orchestrator.pipeline.outcome import call_failed
    from orchestrator.pipeline.registry import ALL_TOOLS, run_tool

    if name not in ALL_TOOLS:
        _usage_error(parser, f"unknown tool {name!r} (see: herdr-orchestrator tools)")
    text = stdin.read() if raw == "-" else raw
    try:
        arguments = json.loads(text)
    except json.JSONDecodeError as exc:
        _usage_error(parser, f"arguments are not valid JSON: {exc}")
    if not isinstance(arguments, Mapping):
        _usage_error(parser, 'arguments must be one JSON object, e.g. \'{"pane": "p_1"}\'')
    result = run_tool(name, arguments)
    stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    return EXIT_NOT_OK if call_failed(name, result) else EXIT_OK


DOCTOR_TOOL = "herdr_doctor"


def doctor_failed(result: Mapping[str, Any]) -> bool:
    """Whether a ``herdr_doctor`` result shows a failing check, or no report at all (a
    refusal, a malformed answer): only a report whose every check is ``ok`` or ``warn``
    passes."""
    checks = result.get("checks")
    if not isinstance(checks, list) or not checks:
        return True
    return any(not isinstance(c, Mapping) or c.get("status") not in ("ok", "warn") for c in checks)


def _doctor(stdout: TextIO) -> int:
    """``doctor``: ``herdr_doctor``'s report on stdout; exit 1 when :func:`doctor_failed`."""
    from orchestrator.pipeline.outcome import call_failed
    from orchestrator.pipeline.registry import run_tool

    result = run_tool(DOCTOR_TOOL, {})
    stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    failed = call_failed(DOCTOR_TOOL, result) or doctor_failed(result)
    return EXIT_NOT_OK if failed else EXIT_OK


def _serve_http(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``mcp --http``: options refused before anything listens exit 2 with the reason."""
    from orchestrator.logs import configure
    from orchestrator.mcp_http.settings import SettingsError, settings_from_args

    try:
        settings = settings_from_args(args)  # takes a token out of the environment first
    except SettingsError as exc:
        _usage_error(parser, str(exc))
    from orchestrator.mcp_http.serve import bind, run_http
    from orchestrator.mcp_server import build_server

    try:
        listener = bind(settings)
    except OSError as exc:
        sys.stderr.write(f"herdr-orchestrator: cannot listen on {args.http}: {exc.strerror}\n")
        return EXIT_NOT_OK
    configure(args.log_level)
    run_http(build_server(), settings, sock=listener)
    return EXIT_OK


def _missing_mcp_extra(command: str) -> str | None:
    """Why ``command`` cannot run without the MCP extra, or None when it is installed."""
    try:
        import anyio  # noqa: F401
        import mcp  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        return (
            f"herdr-orchestrator {command}: the MCP server needs the {MCP_EXTRA} extra "
            f"({exc.name or 'the MCP SDK'} is not installed): pip install '{MCP_EXTRA}'\n"
        )
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status."""
    parser, call_parser = _parsers()
    args = parser.parse_args(argv)
    if args.command in ("mcp", "check") and (missing := _missing_mcp_extra(args.command)):
        sys.stderr.write(missing)
        return EXIT_USAGE
    if args.command == "mcp" and args.http is not None:
        return _serve_http(parser, args)
    if args.command == "mcp":
        from orchestrator.logs import configure
        from orchestrator.mcp_server import run_stdio

        configure(args.log_level)  # stderr: stdout is the MCP stdio channel

        run_stdio()
        return EXIT_OK
    if args.command == "check":
        from orchestrator.check import run_check

        return run_check(args)
    if args.command == "demo":
        from orchestrator.demo import run_demo

        return run_demo()
    if args.command == "audit":
        from orchestrator.audit_cli import print_audit

        return print_audit(args.lines, follow=args.follow)
    if args.command == "plugin-manifest":
        from orchestrator.plugin_manifest import write_manifest

        sys.stdout.write(f"{write_manifest(args.dir)}\n")
        return EXIT_OK
    if args.command == "doctor":
        return _doctor(sys.stdout)
    if args.command == "tools":
        sys.stdout.write(json.dumps(tool_listing(), ensure_ascii=False, indent=2) + "\n")
        return EXIT_OK
    return _call(call_parser, args.tool, args.arguments, sys.stdin, sys.stdout)


if __name__ == "__main__":
    raise SystemExit(main())
