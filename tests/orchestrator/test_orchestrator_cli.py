"""The ``herdr-orchestrator`` command: ``tools`` lists the registry as JSON, ``call`` runs one
tool and answers through its exit status (0 ok, 1 ok:false, 2 usage) against a simulator."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orchestrator.cli import main
from orchestrator.pipeline.registry import ALL_TOOLS
from pytest_herdr.backends import HerdrServer
from tests.results import field

BIN = Path(sys.executable).parent


@pytest.fixture
def pointed(herdr_server: HerdrServer, monkeypatch: pytest.MonkeyPatch) -> HerdrServer:
    """This process's environment pointed at ``herdr_server`` (what ``call`` reads)."""
    for key, value in herdr_server.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HERDR_BIN_PATH", str(herdr_server.cli_path))
    monkeypatch.delenv("DSH_HERDR_PREVIEW_REQUIRED", raising=False)
    return herdr_server


def call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any] | None, str]:
    """Run ``herdr-orchestrator call ARGV`` in process: (exit status, stdout JSON, stderr)."""
    try:
        code = main(["call", *argv])
    except SystemExit as exc:  # argparse's usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def test_tools_prints_every_tool_with_risk_and_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools"]) == 0
    listed = json.loads(capsys.readouterr().out)["tools"]
    assert [tool["name"] for tool in listed] == list(ALL_TOOLS)
    for tool in listed:
        own = ALL_TOOLS[tool["name"]]
        assert tool["risk"] == own.risk
        assert tool["description"] == own.description
        assert tool["inputSchema"]["additionalProperties"] is False


def test_call_prints_the_result_and_exits_0_when_ok(
    pointed: HerdrServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert pointed.sim is not None
    pointed.sim.call("workspace.create", {"label": "from-cli"})
    code, result, _ = call(capsys, "_dsh_herdr_workspace_list")
    assert code == 0
    assert result is not None and result["ok"] is True
    assert "from-cli" in json.dumps(result)


def test_call_exits_1_with_herdrs_error_in_the_result(
    pointed: HerdrServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, result, _ = call(capsys, "_dsh_herdr_pane_get", '{"pane": "p_missing"}')
    assert code == 1
    assert result is not None and result["ok"] is False
    assert field(result, "data", "error", "code") == "pane_not_found"


def test_call_exits_1_when_no_server_is_running(
    pointed: HerdrServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERDR_SOCKET_PATH", str(pointed.directory / "gone.sock"))
    code, result, _ = call(capsys, "_dsh_herdr_workspace_list")
    assert code == 1
    assert result is not None and field(result, "errorCode") == "server_not_running"
    assert field(result, "data", "error", "code") == "server_not_running"


def test_call_exits_1_when_the_schema_rejects_the_arguments(
    pointed: HerdrServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, result, _ = call(capsys, "_dsh_herdr_pane_read", '{"pane": "p_1", "source": "all"}')
    assert code == 1
    assert result is not None and field(result, "errorCode") == "invalid_arguments"


def test_call_reads_arguments_from_stdin(
    pointed: HerdrServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"pane": "p_missing"}'))
    code, result, _ = call(capsys, "_dsh_herdr_pane_get", "-")
    assert code == 1
    assert result is not None and field(result, "data", "error", "code") == "pane_not_found"


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["_dsh_herdr_nope"], "unknown tool '_dsh_herdr_nope'"),
        (["_dsh_herdr_pane_get", "{pane"], "arguments are not valid JSON"),
        (["_dsh_herdr_pane_get", '["p_1"]'], "arguments must be one JSON object"),
    ],
)
def test_call_usage_errors_exit_2_and_print_no_result(
    capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    code, result, err = call(capsys, *argv)
    assert code == 2
    assert result is None
    assert says in err


def test_a_missing_subcommand_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([])
    assert exited.value.code == 2
    assert "herdr-orchestrator" in capsys.readouterr().err


def test_the_installed_command_calls_a_tool(herdr_server: HerdrServer) -> None:
    assert herdr_server.sim is not None
    herdr_server.sim.call("workspace.create", {"label": "installed"})
    env = {**herdr_server.env, "HERDR_BIN_PATH": str(herdr_server.cli_path)}
    done = subprocess.run(
        [str(BIN / "herdr-orchestrator"), "call", "_dsh_herdr_workspace_list", "{}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"] is True
    assert "installed" in done.stdout


def test_python_dash_m_orchestrator_is_the_same_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator", "tools"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["tools"]) == 42
