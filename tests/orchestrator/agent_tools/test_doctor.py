"""``herdr_doctor``: every check, with Herdr up, Herdr down and a broken configuration."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from herdr_sim.fake_agent import install_fake_agents
from orchestrator.agent_tools.agent_check import listed_models
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.contract import DOCTOR_RESULT_SCHEMA
from orchestrator.agent_tools.doctor_tool import doctor
from orchestrator.client.sync import HerdrClient
from orchestrator.core.aliases import alias_rows
from orchestrator.core.config import Config
from orchestrator.core.tool import ToolContext
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.agent_tools.test_fleet import make_ctx

DOCTOR = jsonschema.Draft202012Validator(DOCTOR_RESULT_SCHEMA)


def run(ctx: ToolContext) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The report (schema-checked) and its checks by id."""
    report = doctor({}, ctx)
    DOCTOR.validate(report)
    return report, {check["id"]: check for check in report["checks"]}


def down_ctx(tmp_path: Path, env: dict[str, str] | None = None, **config: Any) -> AgentToolsContext:
    """A context whose Herdr socket does not exist."""
    state = tmp_path / "state"
    environ = {
        "HOME": str(tmp_path),
        "HERDR_SOCKET_PATH": str(tmp_path / "none.sock"),
        **(env or {}),
    }
    client = HerdrClient.build("socket", env=environ)
    cfg = Config(state_dir=state, artifact_dir=state / "artifacts", **config)
    return AgentToolsContext.create(environ, config=cfg, client=client)


def with_fake_pi(env: dict[str, str], bin_dir: Path, **extra: str) -> dict[str, str]:
    """``env`` with the simulator's fake agents (``pi`` among them) first on PATH."""
    install_fake_agents(bin_dir)
    return {**env, "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', os.defpath)}", **extra}


def test_healthy_environment(herdr_server: HerdrServer, tmp_path: Path) -> None:
    env = with_fake_pi(
        {**herdr_server.env, "HERDR_BIN_PATH": str(herdr_server.cli_path)}, tmp_path / "bin"
    )
    state = tmp_path / "state"
    client = HerdrClient.build("auto", env=env)
    config = Config(state_dir=state, artifact_dir=state / "artifacts")
    report, checks = run(AgentToolsContext.create(env, config=config, client=client))
    assert report["ok"] is True
    assert list(checks) == [
        "config",
        "herdr.binary",
        "herdr.server",
        "state_dir",
        "artifact_dir",
        "records",
        "git",
        "aliases",
        "agent.pi",
        "agent.pi.model",
        "policy",
    ]
    assert all(c["status"] == "ok" for c in checks.values()), checks
    assert "deepseek/deepseek-flash is listed" in checks["agent.pi.model"]["detail"]
    assert "protocol 22" in checks["herdr.server"]["detail"]
    assert report["next"] == []
    assert report["runtime"]["protocol"] == 22
    assert report["runtime"]["herdrVersion"]
    assert (tmp_path / "state").is_dir()


def test_aliases_are_listed(herdr_server: HerdrServer, tmp_path: Path) -> None:
    report, _ = run(make_ctx(herdr_server, tmp_path))
    pi_default = [a for a in report["aliases"] if a["kind"] == "pi" and a["default"]]
    assert [a["alias"] for a in pi_default] == ["flash"]


def test_works_with_the_server_down(tmp_path: Path) -> None:
    report, checks = run(down_ctx(tmp_path))
    assert report["ok"] is False
    assert checks["herdr.server"]["status"] == "fail"
    assert "no herdr server is running" in checks["herdr.server"]["detail"]
    assert report["next"][0] == checks["herdr.server"]["fix"]
    assert checks["state_dir"]["status"] == checks["aliases"]["status"] == "ok"
    assert report["runtime"]["protocol"] is None


def test_server_down_over_the_cli_transport(herdr_server: HerdrServer, tmp_path: Path) -> None:
    env = {**herdr_server.env, "HERDR_SOCKET_PATH": str(tmp_path / "none.sock")}
    client = HerdrClient.build("cli", herdr=herdr_server.cli_path, env=env)
    state = tmp_path / "state"
    ctx = AgentToolsContext.create(
        env, config=Config(state_dir=state, artifact_dir=state / "a"), client=client
    )
    report, checks = run(ctx)
    assert report["ok"] is False
    assert checks["herdr.server"]["status"] == "fail"


def test_invalid_configuration_fails_but_the_rest_is_checked(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path),
        "HERDR_SOCKET_PATH": str(tmp_path / "none.sock"),
        "HERDR_ORCHESTRATOR_MAX_CONCURENT": "2",
    }
    report, checks = run(ToolContext.from_env(env))
    assert checks["config"]["status"] == "fail"
    assert "HERDR_ORCHESTRATOR_MAX_CONCURENT" in checks["config"]["detail"]
    assert checks["state_dir"]["status"] == "ok"
    assert report["runtime"]["stateDir"].startswith(str(tmp_path))


def test_unwritable_state_dir_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    ctx = down_ctx(tmp_path)
    ctx._config = Config(state_dir=blocker / "state", artifact_dir=blocker / "a")
    report, checks = run(ctx)
    assert checks["state_dir"]["status"] == checks["artifact_dir"]["status"] == "fail"
    assert checks["state_dir"]["fix"] in report["next"]


def test_unreadable_task_records_are_flagged_by_path(tmp_path: Path) -> None:
    ctx = down_ctx(tmp_path)
    good, _ = ctx.store.create(kind="pi", cwd="/")
    bad = ctx.store.tasks_dir / "t-0000000000aa.json"
    bad.write_bytes(b"\xff not a record")
    report, checks = run(ctx)
    assert checks["records"]["status"] == "warn"
    assert str(bad) in checks["records"]["detail"] and "not UTF-8" in checks["records"]["detail"]
    assert good.task_id not in checks["records"]["detail"]
    assert checks["records"]["fix"] in report["next"]


def test_a_state_dir_owned_by_another_user_fails_and_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o1777)  # like /tmp: everyone may create files there
    ctx = down_ctx(tmp_path)
    ctx._config = Config(state_dir=shared, artifact_dir=tmp_path / "a")
    _report, checks = run(ctx)
    assert checks["state_dir"]["status"] == "fail"
    assert "writable by group or others" in checks["state_dir"]["detail"]
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777  # never chmodded
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)
    _report, checks = run(ctx)
    assert checks["state_dir"]["status"] == "fail"
    assert "owned by uid" in checks["state_dir"]["detail"]


def test_missing_binary_is_a_warning_for_the_socket_and_a_failure_for_the_cli(
    tmp_path: Path,
) -> None:
    _, socket_checks = run(down_ctx(tmp_path, {"PATH": str(tmp_path)}))
    assert socket_checks["herdr.binary"]["status"] == "warn"
    _, cli_checks = run(down_ctx(tmp_path, {"PATH": str(tmp_path)}, transport="cli"))
    assert cli_checks["herdr.binary"]["status"] == "fail"


def test_a_missing_agent_binary_warns_with_the_fix_in_next(tmp_path: Path) -> None:
    report, checks = run(down_ctx(tmp_path, {"PATH": str(tmp_path / "empty")}))
    assert checks["agent.pi"]["status"] == "warn"
    assert "no pi executable on this server's PATH" in checks["agent.pi"]["detail"]
    assert checks["agent.pi"]["fix"] in report["next"]
    assert "agent.pi.model" not in checks  # nothing to ask without a pi


def test_each_configured_kind_is_checked(tmp_path: Path) -> None:
    env = with_fake_pi({}, tmp_path / "bin")
    ctx = down_ctx(tmp_path, env, aliases={"claude": {"big": "anthropic/claude-opus-4-5"}})
    _, checks = run(ctx)
    assert checks["agent.pi"]["status"] == checks["agent.claude"]["status"] == "ok"
    assert "agent.codex" not in checks  # not configured


def test_a_default_model_pi_does_not_list_warns_with_the_fix_in_next(tmp_path: Path) -> None:
    # pi 1.6 lists only the models of logged-in providers; here: only openrouter's
    env = with_fake_pi(
        {}, tmp_path / "bin", HERDR_SIM_FAKE_MODELS="openrouter/deepseek/deepseek-v4-flash"
    )
    report, checks = run(down_ctx(tmp_path, env))
    model = checks["agent.pi.model"]
    assert model["status"] == "warn", model
    assert "deepseek/deepseek-flash" in model["detail"]
    assert "log in to provider deepseek" in model["fix"]
    assert model["fix"] in report["next"]


def test_the_old_default_is_refused_by_pi_1_6s_catalog() -> None:
    """The regression: ``flash`` was ``deepseek/deepseek-v4-flash``, which pi 1.6's deepseek
    provider does not have (rows as pi 1.6.0 prints them with DeepSeek and OpenRouter keys)."""
    table = (
        "provider    model                                    context  max-out  thinking\n"
        "deepseek    deepseek-flash                           1M       384K     yes\n"
        "deepseek    deepseek-v4-pro                          1M       384K     yes\n"
        "openrouter  ~deepseek/deepseek-v4-flash-latest       1.0M     943.7K   yes\n"
        "openrouter  deepseek/deepseek-v4-flash               1.0M     393.2K   yes\n"
    )
    listed = listed_models(table)
    assert "deepseek/deepseek-flash" in listed
    assert "deepseek/deepseek-v4-flash" not in listed  # only openrouter's id of that spelling
    assert "openrouter/deepseek/deepseek-v4-flash" in listed
    pi_default = next(r for r in alias_rows() if r["kind"] == "pi" and r["default"])
    assert pi_default["model"] in listed


def sim_ctx(herdr_server: HerdrServer, tmp_path: Path, **extra: str) -> AgentToolsContext:
    """The doctor as an MCP host starts it: on the simulator, with a PATH holding no agent
    (the simulator's fake agents are on its panes' PATH only)."""
    env = {k: v for k, v in herdr_server.env.items() if k != "HERDR_PANE_ID"}
    env.update(PATH="/usr/bin:/bin", **extra)
    state = tmp_path / "state"
    client = HerdrClient.build("socket", env=env)
    config = Config(state_dir=state, artifact_dir=state / "artifacts")
    return AgentToolsContext.create(env, config=config, client=client)


def test_pi_is_looked_for_on_the_path_a_pane_started_with(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    """No pi on this process's PATH, but on the panes' (as a spawn of kind pi finds it): no
    warning, and the detail says which PATH was searched."""
    client = HerdrClient.build("socket", env=herdr_server.env)
    pane = client.workspace_create(str(tmp_path), focus=False).root_pane.pane_id
    report, checks = run(sim_ctx(herdr_server, tmp_path))
    agent = checks["agent.pi"]
    assert agent["status"] == "ok", agent
    assert f"on the PATH pane {pane} started with, which spawned agents search" in agent["detail"]
    assert checks["agent.pi.model"]["status"] == "ok"  # the panes' pi answered --list-models
    assert not any("agent" in fix for fix in report["next"])


def test_the_doctors_own_pane_is_the_one_read_inside_herdr(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    client = HerdrClient.build("socket", env=herdr_server.env)
    first = client.workspace_create(str(tmp_path), focus=False).root_pane.pane_id
    own = client.pane_split(first, "right").pane_id
    _, checks = run(sim_ctx(herdr_server, tmp_path, HERDR_PANE_ID=own))
    assert f"pane {own} started with" in checks["agent.pi"]["detail"]


def test_a_pane_without_the_agent_warns_with_the_panes_path(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    client = HerdrClient.build("socket", env=herdr_server.env)
    pane = client.workspace_create(str(tmp_path), focus=False).root_pane.pane_id
    config = Config(
        state_dir=tmp_path / "s",
        artifact_dir=tmp_path / "s" / "a",
        aliases={"cursor": {"fast": "cursor/auto"}},
    )
    ctx = sim_ctx(herdr_server, tmp_path)
    ctx._config = config
    _, checks = run(ctx)
    cursor = checks["agent.cursor"]
    assert cursor["status"] == "warn"
    assert f"no cursor-agent executable on the PATH pane {pane} started with" in cursor["detail"]
    assert "environment Herdr runs in" in cursor["fix"]


def test_with_no_pane_to_read_the_doctor_says_what_it_did_not_check(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    assert HerdrClient.build("socket", env=herdr_server.env).pane_list() == []
    _, checks = run(sim_ctx(herdr_server, tmp_path))
    agent = checks["agent.pi"]
    assert agent["status"] == "warn"
    assert "no pi executable on this server's PATH (/usr/bin:/bin)" in agent["detail"]
    assert (
        "the panes' PATH, which spawns search, was not checked: Herdr has no pane to look at"
        in (agent["detail"])
    )
    assert "may still find it" in agent["detail"]
