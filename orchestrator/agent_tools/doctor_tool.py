"""``herdr_doctor``: the agent tools' environment self-check.

Returns ``{ok, checks[], next[], aliases[], runtime}`` (``contract.DOCTOR_RESULT_SCHEMA``).
Each check is ``{id, status: ok|warn|fail, detail, fix}``; ``next`` lists the fixes of the
checks that are not ``ok``, most serious first. ``ok`` is true when no check failed (warnings
do not make the environment unusable).

Why every check runs on its own: a doctor must work precisely when things are broken. An
invalid configuration falls back to the defaults for the remaining checks (and says so), a
Herdr server that is down is one failed check (the binary, the directories, git and the
aliases are still checked), and no check raises.

Checks, in order: ``config`` (the file and environment parse), ``herdr.binary`` (the
``herdr`` executable; a failure only when the transport is ``cli``), ``herdr.server`` (ping:
reachable, version, protocol 22), ``state_dir`` and ``artifact_dir`` (exist or can be created,
writable: a probe file is created and removed; a directory owned by another user or writable
by group or others fails), ``records`` (every task record in the state directory is readable:
an unreadable one is skipped by the tools and listed here by path, a warning), ``git``
(needed for diffs and isolated worktrees: a warning when absent), ``aliases`` (the configured
aliases resolve), then per configured agent kind ``agent.<kind>`` (its binary on the PATH a
Herdr pane started with, read from the pane's shell; else on this process's PATH, saying the
panes' was not checked and why) and
``agent.pi.model`` (pi's default model is in ``pi --list-models``): :mod:`.agent_check`, and
last ``policy``: the effective policy (:mod:`orchestrator.core.policy`, the one the call was
checked against; field by field in ``runtime.policy``), a failure when none can be applied.
"""

from __future__ import annotations

import os
import platform
import secrets
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from orchestrator.agent_tools.agent_check import agent_checks
from orchestrator.agent_tools.context import agent_context
from orchestrator.agent_tools.pane_path import PanePath, pane_path
from orchestrator.agent_tools.records import TaskStore, ensure_private_dir
from orchestrator.client.child_env import child_env
from orchestrator.client.errors import ClientError
from orchestrator.client.protocol import PROTOCOL
from orchestrator.client.sync import HerdrClient, pong_refusal
from orchestrator.client.transports import (
    AutoTransport,
    CliTransport,
    default_socket_path,
    find_herdr,
    not_running_message,
)
from orchestrator.client.types import Pong
from orchestrator.core.aliases import AliasError, alias_rows, validate_aliases
from orchestrator.core.config import CONFIG_ENV, Config, ConfigError, load_config
from orchestrator.core.policy import Policy, effective_policy
from orchestrator.core.tool import ToolContext

TOOL = "herdr_doctor"
CheckStatus = Literal["ok", "warn", "fail"]
_ORDER: dict[str, int] = {"fail": 0, "warn": 1, "ok": 2}

DOCTOR_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": {}}
DOCTOR_DESCRIPTION = (
    "Environment self-check of the agent tools: Herdr reachable and its protocol, the herdr "
    "binary, the configuration, the state and artifact directories, git, the model aliases, "
    "and per configured agent kind its binary on PATH and (pi) its default model. "
    "Returns {ok, checks[], next[], aliases[], runtime}; each check is ok, warn or fail with "
    "a fix when known."
)


def _check(id_: str, status: CheckStatus, detail: str, fix: str | None = None) -> dict[str, Any]:
    return {"id": id_, "status": status, "detail": detail, "fix": fix}


def _config(env: Mapping[str, str], given: Config | None) -> tuple[Config, dict[str, Any]]:
    if given is not None:
        return given, _check("config", "ok", _config_detail(given))
    try:
        config = load_config(env)
    except (ConfigError, AliasError) as exc:
        plain = {k: v for k, v in env.items() if k in ("HOME", "XDG_STATE_HOME")}
        fallback = replace(load_config({**plain, CONFIG_ENV: os.devnull}), file=None)
        return fallback, _check(
            "config",
            "fail",
            f"the configuration is invalid: {exc}; the other checks use the defaults",
            "fix the named key in the configuration file or environment variable",
        )
    return config, _check("config", "ok", _config_detail(config))


def _config_detail(config: Config) -> str:
    source = f"file {config.file}" if config.file else "no configuration file (defaults)"
    env = f"; environment overrides: {', '.join(config.env_keys)}" if config.env_keys else ""
    return f"configuration valid: {source}{env}; transport {config.transport}"


def _client_herdr(client: HerdrClient | None) -> Path | None:
    """The ``herdr`` a CLI-capable client was built with (it may not be on PATH)."""
    transport = client.transport if client is not None else None
    cli = transport.cli if isinstance(transport, AutoTransport) else transport
    return cli.herdr if isinstance(cli, CliTransport) else None


def _binary(
    env: Mapping[str, str], config: Config, client: HerdrClient | None
) -> tuple[dict[str, Any], str | None]:
    path = _client_herdr(client) or find_herdr(env)
    if path is None:
        status: CheckStatus = "fail" if config.transport == "cli" else "warn"
        return _check(
            "herdr.binary",
            status,
            "no herdr executable on PATH or in HERDR_BIN_PATH"
            + ("" if status == "fail" else " (the socket transport does not need it)"),
            "install Herdr or set HERDR_BIN_PATH to the herdr executable",
        ), None
    if not os.access(path, os.X_OK):
        return _check(
            "herdr.binary",
            "fail",
            f"{path} is not an executable file",
            "set HERDR_BIN_PATH to the herdr executable",
        ), str(path)
    return _check("herdr.binary", "ok", f"herdr executable: {path}"), str(path)


def _server(
    client: HerdrClient | None, env: Mapping[str, str]
) -> tuple[dict[str, Any], Pong | None]:
    socket_path = env.get("HERDR_SOCKET_PATH") or str(default_socket_path(env))
    start = "start Herdr (run `herdr`), or point HERDR_SOCKET_PATH at its socket"
    if client is None:
        return _check("herdr.server", "fail", "no Herdr client could be built", start), None
    try:
        exchange = client.execute("ping", {})
    except ClientError as exc:
        detail = str(exc) or not_running_message(socket_path)
        return _check("herdr.server", "fail", f"Herdr is not reachable: {detail}", start), None
    if exchange.error is not None:
        code = str(exchange.error.get("code"))
        message = str(exchange.error.get("message") or code)
        if code == "protocol_mismatch":
            fix = f"use a Herdr release that speaks protocol {PROTOCOL}"
            return _check("herdr.server", "fail", message, fix), None
        return _check("herdr.server", "fail", f"Herdr is not reachable: {message}", start), None
    pong = Pong.from_wire(dict(exchange.result or {}))
    refusal = pong_refusal(pong, socket_path)
    if refusal is not None and refusal[0] == "server_not_running":
        return _check("herdr.server", "fail", f"Herdr is not reachable: {refusal[1]}", start), None
    if refusal is not None:
        fix = (
            f"use a Herdr release that speaks protocol {PROTOCOL}"
            if pong.protocol != PROTOCOL
            else "use the herdr executable of the server's release (HERDR_BIN_PATH or PATH)"
        )
        return _check("herdr.server", "fail", refusal[1], fix), None
    return _check(
        "herdr.server",
        "ok",
        f"Herdr {pong.version} reachable, protocol {pong.protocol}",
    ), pong


def _writable(id_: str, path: Path) -> dict[str, Any]:
    what = "state directory" if id_ == "state_dir" else "artifact directory"
    try:
        ensure_private_dir(path)
        probe = path / f".doctor-{secrets.token_hex(4)}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        return _check(
            id_,
            "fail",
            f"the {what} {path} is not usable: {exc.strerror or exc}",
            f"make {path} writable, or set a writable stateDir/artifactDir in the configuration",
        )
    return _check(id_, "ok", f"{what} {path} is writable")


def _records(config: Config) -> dict[str, Any]:
    store = TaskStore(config.state_dir)
    try:
        count = len(store.list_records())
    except OSError as exc:
        return _check("records", "warn", f"the task records could not be listed: {exc}")
    if store.unreadable:
        listed = "; ".join(
            f"{path} ({reason})" for path, reason in sorted(store.unreadable.items())
        )
        return _check(
            "records",
            "warn",
            f"{len(store.unreadable)} unreadable task record(s), skipped by every tool: {listed}",
            "move the listed record files out of the tasks directory (or delete them)",
        )
    return _check("records", "ok", f"{count} task record(s), all readable")


def _git() -> dict[str, Any]:
    git = shutil.which("git")
    fix = "install git (diffs and isolated worktrees need it)"
    if git is None:
        return _check("git", "warn", "git is not on PATH: no diffs, no isolated worktrees", fix)
    try:
        done = subprocess.run(
            [git, "--version"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
            env=child_env(os.environ),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _check("git", "warn", f"git did not run: {exc}", fix)
    if done.returncode != 0:
        return _check("git", "warn", f"git --version exited {done.returncode}", fix)
    return _check("git", "ok", f"{done.stdout.strip()} ({git})")


def _aliases(config: Config) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        validate_aliases(config.aliases)
        rows: list[dict[str, Any]] = [dict(row) for row in alias_rows(config.aliases)]
    except AliasError as exc:
        return _check(
            "aliases",
            "fail",
            f"a configured alias cannot resolve: {exc}",
            "fix the alias in the configuration (provider/model targets, known kinds)",
        ), [dict(row) for row in alias_rows()]
    return _check("aliases", "ok", f"{len(rows)} model aliases"), rows


def _policy(rules: Policy) -> dict[str, Any]:
    """The effective policy in one line (runtime.policy has it field by field)."""
    if rules.config_error is not None:
        return _check(
            "policy",
            "fail",
            f"no policy can be applied: {rules.config_error}; every tool but the doctors "
            "is refused",
            "fix the configuration (herdr_doctor's config check names the key)",
        )
    parts = ["read-only (R0 tools only)" if rules.read_only else "every risk level"]
    if rules.disable_tools:
        parts.append(f"disabled: {', '.join(rules.disable_tools)}")
    if rules.agent_kinds is not None:
        parts.append(f"agent kinds: {', '.join(rules.agent_kinds)}")
    if rules.agent_names is not None:
        parts.append(f"agent names: {', '.join(rules.agent_names)}")
    parts.append(f"agent args {'allowed' if rules.allow_agent_args else 'refused'}")
    return _check("policy", "ok", "policy: " + "; ".join(parts))


def doctor(params: Mapping[str, Any], tool_ctx: ToolContext) -> dict[str, Any]:
    """Run every check; never raises, never needs Herdr to be up."""
    ctx = agent_context(tool_ctx)
    env = dict(ctx.env)
    config, config_check = _config(env, ctx._config)
    checks = [config_check]
    client: HerdrClient | None
    try:
        client = ctx._client or HerdrClient.build(config.transport, env=env)
    except (ClientError, ValueError):
        client = None
    binary_check, binary = _binary(env, config, client)
    checks.append(binary_check)
    server_check, pong = _server(client, env)
    checks.append(server_check)
    checks.append(_writable("state_dir", config.state_dir))
    checks.append(_writable("artifact_dir", config.artifact_dir))
    checks.append(_records(config))
    checks.append(_git())
    alias_check, aliases = _aliases(config)
    checks.append(alias_check)
    panes = (
        pane_path(client, env, env.get("HERDR_SOCKET_PATH") or str(default_socket_path(env)))
        if pong is not None
        else PanePath(None, None, "Herdr is not reachable")
    )
    checks.extend(agent_checks(config, env, panes=panes))
    rules = effective_policy(config if config_check["status"] == "ok" else None)
    checks.append(_policy(rules))
    ranked = sorted(checks, key=lambda c: _ORDER[c["status"]])
    fixes = [c["fix"] for c in ranked if c["status"] != "ok" and c["fix"]]
    runtime = {
        "python": platform.python_version(),
        "platform": sys.platform,
        "pid": os.getpid(),
        "transport": config.transport,
        "configFile": str(config.file) if config.file else None,
        "stateDir": str(config.state_dir),
        "artifactDir": str(config.artifact_dir),
        "maxConcurrent": config.max_concurrent,
        "herdrBinary": binary,
        "socketPath": env.get("HERDR_SOCKET_PATH") or str(default_socket_path(env)),
        "herdrVersion": pong.version if pong else None,
        "protocol": pong.protocol if pong else None,
        "expectedProtocol": PROTOCOL,
        "policy": rules.describe(),
    }
    return {
        "ok": all(c["status"] != "fail" for c in checks),
        "checks": checks,
        "next": list(dict.fromkeys(fixes)),
        "aliases": aliases,
        "runtime": runtime,
    }


__all__ = ["DOCTOR_DESCRIPTION", "DOCTOR_SCHEMA", "doctor"]
