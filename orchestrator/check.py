"""``herdr-orchestrator check``: what a user runs after wiring the server into a host.

It connects the way a host does — over Streamable HTTP with ``--http URL`` (the token from
``--token-file`` or ``$HERDR_ORCHESTRATOR_HTTP_TOKEN``, the server's CA from ``--ca`` when it is
not a public one), or by spawning ``herdr-orchestrator mcp`` on stdio with this environment —
and reports one line per step:

1. **reachable** — the connection, TLS and token are accepted and ``initialize`` answers
   (the server's name and version);
2. **protocol** — the MCP protocol version the two sides agreed on;
3. **tools** — how many tools are listed (low-level and agent tools);
4. **read-only call** — one R0 tool that reaches Herdr (``_dsh_herdr_workspace_list``, or
   another read-only tool without required arguments if a policy hides that one) and whether
   it succeeded;
5. **policy** — when the server's ``herdr_doctor`` (R0) reports the effective policy (a check
   with id ``policy``), that line; a server whose doctor reports none gets no line.

Why a command of its own: a host that cannot start or reach a server usually says little
(Claude Desktop shows "failed"); this says which step failed and why, and exits 1, so each step
of docs/orchestrator/setup.md can be verified before the next. The token is never printed.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

__all__ = ["PREFERRED_READ", "Report", "add_arguments", "check", "policy_check", "run_check"]

#: The read-only call, in order of preference: one Herdr round trip, nothing else.
PREFERRED_READ = ("_dsh_herdr_workspace_list", "_dsh_herdr_agent_list", "herdr_list_agents")
#: The agent tools' self-check; the effective policy is one of its checks.
DOCTOR = "herdr_doctor"
#: Default bound of the whole check, in seconds.
DEFAULT_TIMEOUT = 30.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--http",
        metavar="URL",
        help="the endpoint to check, e.g. https://127.0.0.1:8765/mcp; without it a stdio "
        "server (herdr-orchestrator mcp) is spawned with this environment",
    )
    parser.add_argument(
        "--token-file", type=Path, help="the bearer token (else $HERDR_ORCHESTRATOR_HTTP_TOKEN)"
    )
    parser.add_argument(
        "--ca", type=Path, help="a CA certificate (PEM) to trust for the server's certificate"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds the whole check may take (default {DEFAULT_TIMEOUT:g})",
    )


@dataclass
class Report:
    """The steps done so far: ``(name, ok, detail)``; printed as they come."""

    out: TextIO
    steps: list[tuple[str, bool, str]] = field(default_factory=list)

    def step(self, name: str, ok: bool, detail: str) -> None:
        self.steps.append((name, ok, detail))
        self.out.write(f"{'ok  ' if ok else 'FAIL'}  {name}: {detail}\n")
        self.out.flush()

    @property
    def ok(self) -> bool:
        return bool(self.steps) and all(ok for _, ok, _ in self.steps)


def run_check(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run the check ``args`` describe; 0 when every step passed, 1 otherwise."""
    import anyio

    report = Report(out if out is not None else sys.stdout)
    try:
        connect = _connector(args)
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        report.step("setup", False, str(exc))
        return 1
    try:
        anyio.run(lambda: check(connect, report, args.timeout))
    except Exception as exc:  # a failure the steps did not catch still gets its line
        report.step("check", False, _reason(exc))
    return 0 if report.ok else 1


Connector = Callable[[], Any]


def _connector(args: argparse.Namespace) -> Connector:
    """A factory of the ``(read, write)`` streams to the server ``args`` name."""
    if args.http is None:
        return _stdio
    import ssl

    from orchestrator.mcp_http.settings import ENV_TOKEN, read_token_file, token_from_env

    token = (
        read_token_file(args.token_file)
        if args.token_file is not None
        else token_from_env(os.environ)
    )
    if token == "":
        raise ValueError(f"${ENV_TOKEN} is empty")
    context = ssl.create_default_context(cafile=str(args.ca) if args.ca is not None else None)
    url: str = args.http
    timeout: float = args.timeout

    @asynccontextmanager
    async def connect() -> AsyncIterator[Any]:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with (
            httpx2.AsyncClient(
                # the whole check is bounded by fail_after(timeout), which names the bound
                headers=headers,
                verify=context,
                timeout=httpx2.Timeout(2 * timeout),
            ) as client,
            streamable_http_client(url, http_client=client) as streams,
        ):
            yield streams

    return connect


@asynccontextmanager
async def _stdio() -> AsyncIterator[Any]:
    """A spawned ``herdr-orchestrator mcp``; what it wrote to stderr is shown on a failure."""
    import tempfile

    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "orchestrator", "mcp"], env=dict(os.environ)
    )
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            async with stdio_client(params, errlog=errlog) as streams:
                yield streams
        except BaseException:
            errlog.seek(0)
            tail = errlog.read()[-2000:].strip()
            if tail:
                sys.stderr.write(f"herdr-orchestrator mcp wrote on stderr:\n{tail}\n")
            raise


async def check(connect: Connector, report: Report, timeout: float) -> None:
    """The steps of the module docstring, each reported; stops at the first that fails."""
    import anyio
    from mcp import ClientSession

    def failed(reason: str) -> None:
        if report.ok or not report.steps:  # the first failure only: later ones follow from it
            report.step("reachable" if not report.steps else "session", False, reason)

    try:
        with anyio.fail_after(timeout):
            async with connect() as (read, write), ClientSession(read, write) as session:
                await _steps(session, report)
    except* TimeoutError:
        failed(f"no answer within {timeout:g} s (--timeout)")
    except* Exception as group:
        failed(_reason(group.exceptions[0]))


async def _steps(session: Any, report: Report) -> None:
    init = await session.initialize()
    info = init.server_info
    report.step("reachable", True, f"{info.name} {info.version}")
    report.step("protocol", True, str(init.protocol_version))
    tools: list[Any] = []
    cursor: str | None = None
    while True:
        page = await session.list_tools(cursor=cursor) if cursor else await session.list_tools()
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    low = sum(1 for t in tools if t.name.startswith("_dsh_herdr_"))
    report.step("tools", bool(tools), f"{len(tools)} listed ({low} low-level)")
    name = _read_only_tool(tools)
    if name is None:
        report.step("read-only call", False, "no read-only tool without arguments is listed")
        return
    result = await session.call_tool(name, {})
    body = result.structured_content or {}
    if result.is_error:
        report.step("read-only call", False, f"{name}: {_error_text(body)}")
        return
    report.step("read-only call", True, f"{name}: ok")
    if any(tool.name == DOCTOR for tool in tools):
        doctor = await session.call_tool(DOCTOR, {})
        policy = policy_check(doctor.structured_content or {})
        if policy is not None:
            # the doctor's detail names its subject ("policy: read-only …"), as the step does
            detail = str(policy.get("detail", "")).removeprefix("policy: ")
            report.step("policy", policy["status"] != "fail", detail)


def policy_check(doctor: dict[str, Any]) -> dict[str, Any] | None:
    """The ``policy`` check of a ``herdr_doctor`` result, if it has one."""
    checks = doctor.get("checks")
    for check in checks if isinstance(checks, list) else []:
        if isinstance(check, dict) and check.get("id") == "policy":
            return check
    return None


def _read_only_tool(tools: list[Any]) -> str | None:
    by_name = {t.name: t for t in tools}
    for name in PREFERRED_READ:
        if name in by_name:
            return name
    for tool in tools:
        hints = tool.annotations
        if hints is not None and hints.read_only_hint and not tool.input_schema.get("required"):
            return str(tool.name)
    return None


def _error_text(body: dict[str, Any]) -> str:
    """A failed result's code and message: an agent tool's ``error``, or a low-level tool's
    ``errorCode`` with Herdr's own message (``data.error``) or its stderr."""
    error = body.get("error")
    if isinstance(error, dict):
        return f"{error.get('code')}: {error.get('message')}"
    data = body.get("data")
    herdr = data.get("error") if isinstance(data, dict) else None
    if isinstance(herdr, dict):
        return f"{body.get('errorCode') or herdr.get('code')}: {herdr.get('message')}"
    return f"{body.get('errorCode')}: {str(body.get('stderr') or '').strip()[:300]}"


def _reason(exc: BaseException) -> str:
    """``exc`` in one line, unwrapped from exception groups and ``raise from`` chains."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    cause = exc.__cause__ or exc.__context__
    if cause is not None and str(cause) and str(cause) not in text:
        text = f"{text} ({cause})"
    return f"{type(exc).__name__}: {text}"
