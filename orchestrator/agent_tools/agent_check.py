"""``herdr_doctor``'s per-kind checks: can each configured agent kind run from here?

Why: a spawn of a kind whose binary is missing, or whose default model its CLI does not know,
costs a whole agent start before it fails, and the failure reads like a crash (pi 1.6 exits
``Model "deepseek/deepseek-v4-flash" is ambiguous across providers`` for the old default).
The doctor finds both before any spawn, and says the fix.

Configured kinds: ``pi`` (the default kind of ``herdr_spawn_agent``) and every kind with an
``[aliases.<kind>]`` table in the configuration. For each: ``agent.<kind>`` checks the
executable is on the ``PATH`` of this process (an MCP host often starts the server with a
shorter ``PATH`` than a login shell: the fix says so). For pi, ``agent.pi.model`` runs
``pi --list-models <id>`` (bounded by :data:`LIST_TIMEOUT_S`) and looks for the default model
in the table it prints; pi lists only the models of providers that are logged in, so a model
missing there is one a spawn cannot use either. Other kinds have no offline model list, so
their model is not checked (their default, if any, is in model-aliases.md).

Both are warnings, not failures, with the fix in ``next``: Herdr starts an agent in a pane
whose environment is the Herdr server's, not this process's, so a ``PATH`` or an API key
missing here may be present there. The check tells the likely cause of a failing spawn
before it happens; it cannot prove the spawn will fail, and ``ok`` says only that.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from typing import Any, Literal

from orchestrator.agent_tools.aliases import AliasError, resolve
from orchestrator.agent_tools.config import Config
from orchestrator.client.child_env import child_env

__all__ = ["KIND_BINARIES", "LIST_TIMEOUT_S", "agent_checks", "configured_kinds", "listed_models"]

#: Executables whose name differs from their Herdr kind.
KIND_BINARIES: dict[str, str] = {"cursor": "cursor-agent"}
#: Bound of one ``pi --list-models`` run (it starts in about a second).
LIST_TIMEOUT_S = 15.0
#: The kind ``herdr_spawn_agent`` runs when ``kind`` is omitted.
DEFAULT_KIND = "pi"

Status = Literal["ok", "warn", "fail"]
Runner = Callable[..., "subprocess.CompletedProcess[str]"]


def _check(id_: str, status: Status, detail: str, fix: str | None = None) -> dict[str, Any]:
    return {"id": id_, "status": status, "detail": detail, "fix": fix}


def configured_kinds(config: Config) -> tuple[str, ...]:
    """``pi`` first, then every kind with an alias table in the configuration."""
    return (DEFAULT_KIND, *sorted(kind for kind in config.aliases if kind != DEFAULT_KIND))


def listed_models(output: str) -> set[str]:
    """The ``provider/model`` ids of a ``pi --list-models`` table (header and notices skipped)."""
    found: set[str] = set()
    for line in output.splitlines():
        cells = line.split()
        if len(cells) < 2 or cells[:2] == ["provider", "model"]:
            continue
        provider, model = cells[0], cells[1].removeprefix("~")
        if provider.replace("-", "").replace("_", "").isalnum():
            found.add(f"{provider}/{model}")
    return found


def _binary(kind: str, path: str) -> tuple[dict[str, Any], str | None]:
    name = KIND_BINARIES.get(kind, kind)
    found = shutil.which(name, path=path)
    if found is None:
        install = (
            " (npm install -g @earendil-works/pi-coding-agent)" if kind == DEFAULT_KIND else ""
        )
        return _check(
            f"agent.{kind}",
            "warn",
            f"no {name} executable on this server's PATH ({path or 'empty'}): "
            f"spawns of kind {kind} cannot start",
            f"install {kind}{install}, or add the directory holding {name} to the PATH the "
            "MCP host gives herdr-orchestrator (its env setting)",
        ), None
    return _check(f"agent.{kind}", "ok", f"{kind} executable: {found}"), found


def _pi_model(config: Config, pi: str, env: Mapping[str, str], run: Runner) -> dict[str, Any]:
    try:
        resolved = resolve(DEFAULT_KIND, None, overrides=config.aliases).model
    except AliasError as exc:  # the aliases check reports it
        return _check("agent.pi.model", "warn", f"the default model does not resolve: {exc}")
    if resolved is None:
        return _check("agent.pi.model", "ok", "no default model: pi uses its own")
    search = resolved.partition("/")[2] or resolved
    fix = (
        f"log in to provider {resolved.partition('/')[0]} for pi (run pi, then /login, or set "
        "its API key variable and name it in passEnv), or set [aliases.pi] default to a "
        "model `pi --list-models` shows"
    )
    try:
        done = run(
            [pi, "--list-models", search],
            capture_output=True,
            text=True,
            errors="replace",
            env=child_env(env, config.pass_env),
            stdin=subprocess.DEVNULL,
            timeout=LIST_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return _check(
            "agent.pi.model",
            "warn",
            f"pi --list-models did not answer within {LIST_TIMEOUT_S:.0f} s; "
            f"default model {resolved} not checked",
            "run `pi --list-models` by hand to see what blocks it",
        )
    except OSError as exc:
        return _check("agent.pi.model", "warn", f"pi --list-models did not run: {exc}")
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
        return _check(
            "agent.pi.model",
            "warn",
            f"pi --list-models exited {done.returncode} ({tail[0][:200]}); "
            f"default model {resolved} not checked",
            "run `pi --list-models` by hand and fix what it reports",
        )
    if resolved in listed_models(done.stdout):
        return _check("agent.pi.model", "ok", f"default model {resolved} is listed by pi")
    return _check(
        "agent.pi.model",
        "warn",
        f"pi --list-models does not list the default model {resolved}: a spawn without model "
        "would fail (pi lists only models of providers that are logged in)",
        fix,
    )


def agent_checks(
    config: Config, env: Mapping[str, str], *, run: Runner = subprocess.run
) -> list[dict[str, Any]]:
    """``agent.<kind>`` for every configured kind, and ``agent.pi.model`` when pi is found."""
    path = env.get("PATH", os.defpath)
    checks: list[dict[str, Any]] = []
    for kind in configured_kinds(config):
        check, found = _binary(kind, path)
        checks.append(check)
        if kind == DEFAULT_KIND and found is not None:
            checks.append(_pi_model(config, found, env, run))
    return checks
