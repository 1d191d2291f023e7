"""``herdr_doctor``'s per-kind checks: can each configured agent kind run from here?

Why: a spawn of a kind whose binary is missing, or whose default model its CLI does not know,
costs a whole agent start before it fails, and the failure reads like a crash (pi 1.6 exits
``Model "deepseek/deepseek-v4-flash" is ambiguous across providers`` for the old default).
The doctor finds both before any spawn, and says the fix.

Configured kinds: ``pi`` (the default kind of ``herdr_spawn_agent``) and every kind with an
``[aliases.<kind>]`` table in the configuration. For each: ``agent.<kind>`` checks the
executable is on the ``PATH`` a Herdr pane started with, which is what a spawn searches
(:mod:`.pane_path` reads it from the pane's shell); when no pane can be read, on the ``PATH``
of this process, saying the panes' was not checked and why (an MCP host often starts the
server with a shorter ``PATH`` than a login shell: the fix says so). For pi, ``agent.pi.model`` runs
``pi --list-models <id>`` (bounded by :data:`LIST_TIMEOUT_S`) and looks for the default model
in the table it prints; pi lists only the models of providers that are logged in, so a model
missing there is one a spawn cannot use either. Other kinds have no offline model list, so
their model is not checked (their default, if any, is in model-aliases.md).

Both are warnings, not failures, with the fix in ``next``: a pane's shell may add to its
``PATH`` at startup, and when no pane could be read the panes' environment (the Herdr
server's, not this process's) may hold a ``PATH`` or an API key missing here. The check
tells the likely cause of a failing spawn before it happens; it cannot prove the spawn will
fail, and ``ok`` says only that.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from typing import Any, Literal

from orchestrator.agent_tools.pane_path import PanePath
from orchestrator.client.child_env import child_env
from orchestrator.core.aliases import AliasError, resolve
from orchestrator.core.config import Config

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


def _binary(kind: str, path: str, panes: PanePath) -> tuple[dict[str, Any], str | None]:
    """``agent.<kind>``: on the PATH a pane started with when the doctor could read one (what
    a spawn searches), else on this process's PATH, saying that the panes' was not checked."""
    name = KIND_BINARIES.get(kind, kind)
    here = shutil.which(name, path=path)
    install = " (npm install -g @earendil-works/pi-coding-agent)" if kind == DEFAULT_KIND else ""
    if panes.path is not None:
        where = f"the PATH pane {panes.pane_id} started with"
        there = shutil.which(name, path=panes.path)
        if there is not None:
            return _check(
                f"agent.{kind}",
                "ok",
                f"{kind} executable: {there} (on {where}, which spawned agents search)",
            ), there
        also = f"; this server's PATH has {here}" if here else ""
        return _check(
            f"agent.{kind}",
            "warn",
            f"no {name} executable on {where} ({panes.path or 'empty'}): spawns of kind {kind} "
            f"will not find it unless the pane shell's startup files add it{also}",
            f"install {kind}{install}, or add the directory holding {name} to the PATH of the "
            "environment Herdr runs in (its panes inherit it)",
        ), None
    unchecked = f"the panes' PATH, which spawns search, was not checked: {panes.reason}"
    if here is not None:
        return _check(
            f"agent.{kind}",
            "ok",
            f"{kind} executable: {here} on this server's PATH ({unchecked})",
        ), here
    return _check(
        f"agent.{kind}",
        "warn",
        f"no {name} executable on this server's PATH ({path or 'empty'}); {unchecked}, so a "
        f"spawn of kind {kind} may still find it there",
        f"install {kind}{install}, or add the directory holding {name} to the PATH the MCP "
        "host gives herdr-orchestrator (its env setting); if spawns of this kind already "
        "work, only this server's PATH lacks it",
    ), None


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
    config: Config,
    env: Mapping[str, str],
    *,
    panes: PanePath | None = None,
    run: Runner = subprocess.run,
) -> list[dict[str, Any]]:
    """``agent.<kind>`` for every configured kind, and ``agent.pi.model`` when pi is found.
    ``panes`` is what :func:`~orchestrator.agent_tools.pane_path.pane_path` read (None: no
    pane was looked at)."""
    path = env.get("PATH", os.defpath)
    panes = panes or PanePath(None, None, "no pane was looked at")
    checks: list[dict[str, Any]] = []
    for kind in configured_kinds(config):
        check, found = _binary(kind, path, panes)
        checks.append(check)
        if kind == DEFAULT_KIND and found is not None:
            checks.append(_pi_model(config, found, env, run))
    return checks
