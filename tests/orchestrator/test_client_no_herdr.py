"""No Herdr server and no ``herdr`` executable: the ``auto`` transport says the server is not
running at the socket path (the true cause), not that the CLI fallback has no executable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orchestrator.agent_tools.fleet import list_agents
from orchestrator.cli import main
from orchestrator.client.errors import HerdrError
from orchestrator.client.sync import HerdrClient
from orchestrator.core.tool import ToolContext
from orchestrator.pipeline.registry import run_tool
from tests.results import assert_refused, field


@pytest.fixture
def bare_env(tmp_path: Path) -> dict[str, str]:
    """An environment whose socket is missing and whose PATH holds no ``herdr``."""
    empty = tmp_path / "bin"
    empty.mkdir()
    return {
        "HOME": str(tmp_path),
        "PATH": str(empty),
        "HERDR_SOCKET_PATH": str(tmp_path / "gone.sock"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }


def test_the_python_api_names_the_missing_server(bare_env: dict[str, str]) -> None:
    client = HerdrClient.from_env(bare_env)
    with pytest.raises(HerdrError) as caught:
        client.workspace_list()
    assert caught.value.code == "server_not_running"
    assert bare_env["HERDR_SOCKET_PATH"] in caught.value.message
    assert "executable" not in caught.value.message
    ctx = ToolContext.with_client(client, bare_env)
    low = run_tool("_dsh_herdr_workspace_list", {}, ctx)
    assert_refused(low, "server_not_running")
    assert bare_env["HERDR_SOCKET_PATH"] in field(low, "data", "error", "message")
    value = list_agents({}, ctx)
    assert value["error"]["herdrCode"] == "server_not_running"
    assert bare_env["HERDR_SOCKET_PATH"] in value["error"]["message"]


def test_herdr_orchestrator_call_names_the_missing_server(
    bare_env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HERDR_BIN_PATH", raising=False)
    monkeypatch.delenv("HERDR_ORCHESTRATOR_TRANSPORT", raising=False)
    for key, value in bare_env.items():
        monkeypatch.setenv(key, value)
    main(["call", "_dsh_herdr_workspace_list"])
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert field(result, "errorCode") == "server_not_running", result
    assert bare_env["HERDR_SOCKET_PATH"] in field(result, "data", "error", "message")
    main(["call", "herdr_list_agents"])
    agents: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert agents["error"]["herdrCode"] == "server_not_running", agents
    assert "executable" not in agents["error"]["message"]
