"""The simulator's `herdr` CLI end to end against real simulators: status, guard, lifecycle."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from herdr_sim import Simulator
from pytest_herdr.cli_runner import CliResult, HerdrCli

Herdr = Callable[..., CliResult]


def run_cli(cli: Path, *args: str, env: dict[str, str]) -> CliResult:
    """Run an installed `herdr` script with exactly ``env``."""
    return HerdrCli(cli, env, timeout=30)(*args)


def base_env(short_dir: Path) -> dict[str, str]:
    """A minimal environment with the simulator's config dir under ``short_dir``."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(short_dir / "home"),
        "HERDR_SIM_CONFIG_DIR": str(short_dir / "cfg"),
    }


def test_version_names_the_emulated_herdr(herdr: Herdr) -> None:
    result = herdr("--version")
    assert result.code == 0
    assert "0.9.2" in result.stdout


def test_status_reports_a_running_compatible_server(sim: Simulator, herdr: Herdr) -> None:
    result = herdr("status")
    assert result.code == 0
    assert "status: running" in result.stdout
    assert "protocol: 22" in result.stdout
    assert "compatible: yes" in result.stdout
    assert str(sim.socket_path) in result.stdout


def test_status_server_json(sim: Simulator, herdr: Herdr) -> None:
    result = herdr("status", "server", "--json")
    assert result.code == 0
    status = result.json
    assert status["running"] is True
    assert status["protocol"] == 22
    assert status["compatible"] is True
    assert status["socket"] == str(sim.socket_path)


def test_status_without_a_server_is_not_an_error(short_dir: Path, sim: Simulator) -> None:
    env = base_env(short_dir) | {"HERDR_SOCKET_PATH": str(short_dir / "nobody.sock")}
    result = run_cli(sim.cli_path, "status", env=env)
    assert result.code == 0
    assert "status: not running" in result.stdout


def test_server_not_running_is_one_json_line(short_dir: Path, sim: Simulator) -> None:
    missing = short_dir / "nobody.sock"
    env = base_env(short_dir) | {"HERDR_SOCKET_PATH": str(missing)}
    result = run_cli(sim.cli_path, "workspace", "list", env=env)
    assert result.code == 1
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.error == {
        "id": "cli:workspace:list",
        "error": {
            "code": "server_not_running",
            "message": f"no herdr server is running at {missing}; run `herdr` to start or "
            "attach it",
        },
    }


@pytest.mark.parametrize("protocol", [14, 23])
def test_protocol_mismatch_refuses_before_sending(short_dir: Path, protocol: int) -> None:
    with Simulator(socket_path=short_dir / "old.sock", protocol=protocol) as old:
        env = base_env(short_dir) | {"HERDR_SOCKET_PATH": str(old.socket_path)}
        result = run_cli(old.cli_path, "workspace", "create", env=env)
        created = old.call("workspace.list")["result"]["workspaces"]
    assert result.code == 1
    assert result.stdout == ""
    error = result.error
    assert error["id"] == "cli:workspace:create"
    assert error["error"]["code"] == "protocol_mismatch"
    word = "newer" if protocol < 22 else "older"
    assert (
        f"client protocol 22 is {word} than server protocol {protocol}"
        in (error["error"]["message"])
    )
    assert created == [], "the operation must not have been sent"


def test_same_protocol_other_version_proceeds(short_dir: Path) -> None:
    with Simulator(socket_path=short_dir / "v.sock", version="0.9.9-other") as other:
        env = base_env(short_dir) | {"HERDR_SOCKET_PATH": str(other.socket_path)}
        ok = run_cli(other.cli_path, "workspace", "list", env=env)
        missing = run_cli(other.cli_path, "workspace", "get", "w9", env=env)
    assert ok.code == 0
    assert ok.json["result"]["workspaces"] == []
    assert missing.code == 1
    assert missing.error == {
        "id": "cli:workspace:get",
        "error": {"code": "workspace_not_found", "message": "workspace w9 not found"},
    }


def test_api_schema_prints_the_simulators_schema(herdr: Herdr, short_dir: Path) -> None:
    result = herdr("api", "schema", "--json")
    assert result.code == 0
    schema = result.json
    assert schema["protocol"] == 22
    methods = {variant["title"] for variant in schema["schemas"]["request"]["oneOf"]}
    assert {"ping", "pane.split", "events.subscribe"} <= methods
    target = short_dir / "schema.json"
    written = herdr("api", "schema", "--output", str(target))
    assert written.code == 0
    assert json.loads(target.read_text()) == schema


def test_api_snapshot_is_the_session_snapshot(sim: Simulator, herdr: Herdr) -> None:
    sim.call("workspace.create", {"cwd": "/tmp"})
    result = herdr("api", "snapshot")
    assert result.code == 0
    snapshot = result.json["result"]["snapshot"]
    assert snapshot["protocol"] == 22
    assert [ws["workspace_id"] for ws in snapshot["workspaces"]] == ["w1"]


def test_pane_env_points_the_cli_at_its_simulator(sim: Simulator, herdr: Herdr) -> None:
    pane = sim.call("workspace.create", {"cwd": "/tmp"})["result"]["root_pane"]["pane_id"]
    command = "herdr pane get $HERDR_PANE_ID >/tmp/.hs-$$ && echo OK-$(command -v herdr)"
    herdr("pane", "run", pane, command)
    matched = sim.call(
        "pane.wait_for_output",
        {
            "pane_id": pane,
            "source": "recent",
            "timeout_ms": 10000,
            "match": {"type": "regex", "value": "^OK-"},
        },
    )["result"]["matched_line"]
    assert matched == f"OK-{sim.cli_path}"


def test_session_list_and_stop(short_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = base_env(short_dir)
    config = short_dir / "cfg"
    # An embedded simulator resolves its socket from the process environment, as the CLI does.
    monkeypatch.setenv("HERDR_SIM_CONFIG_DIR", str(config))
    with Simulator(session_name="work", base_env=env) as named:
        assert named.socket_path == config / "sessions" / "work" / "herdr.sock"
        listed = run_cli(named.cli_path, "session", "list", "--json", env=env)
        assert listed.code == 0
        sessions = {s["name"]: s for s in listed.json["sessions"]}
        assert sessions["work"]["running"] is True
        assert sessions["default"]["running"] is False
        stopped = run_cli(named.cli_path, "session", "stop", "work", env=env)
        assert stopped.code == 0
        assert "stopped session work" in stopped.stdout
        assert named.wait_stopped(15)
        assert not named.socket_path.exists()


def test_server_stop_stops_and_removes_the_socket(sim: Simulator, herdr: Herdr) -> None:
    sim.call("workspace.create", {"cwd": "/tmp"})
    result = herdr("server", "stop")
    assert result.code == 0, result.stderr
    assert result.stdout == ""
    assert sim.wait_stopped(15)
    assert not sim.socket_path.exists()
