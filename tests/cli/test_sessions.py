"""`herdr server stop` and `herdr session list|stop|delete`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.cli.fake_herdr import FakeHerdr

if TYPE_CHECKING:
    from tests.cli.conftest import Run


def test_server_stop_sends_raw_stop_and_waits_for_the_socket(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    fake.stop_on_server_stop()
    run = cli("server", "stop")
    assert (run.code, run.out, run.err) == (0, "", "")
    assert fake.lines == [b'{"id":"cli:session:stop","method":"server.stop","params":{}}\n']
    assert not fake.path.exists()


def test_server_stop_without_a_server_is_a_plain_error(
    clean_env: Path, cli: Callable[..., Run], monkeypatch: pytest.MonkeyPatch, sock_dir: Path
) -> None:
    missing = sock_dir / "none.sock"
    monkeypatch.setenv("HERDR_SOCKET_PATH", str(missing))
    run = cli("server", "stop")
    assert run.code == 1
    assert run.err == (
        f"server is not running or cannot be reached at {missing}: "
        "No such file or directory (os error 2)\n"
    )


def test_server_stop_error_reply_is_printed_as_the_error_object(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    fake.error("server.stop", "server_unavailable", "server is shutting down")
    run = cli("server", "stop")
    assert run.code == 1
    assert run.err == '{"code":"server_unavailable","message":"server is shutting down"}\n'


def _session_server(config: Path, name: str) -> FakeHerdr:
    path = config / "sessions" / name / "herdr.sock"
    path.parent.mkdir(parents=True)
    return FakeHerdr(path).start()


def test_session_list_stop_and_delete(clean_env: Path, cli: Callable[..., Run]) -> None:
    alpha = _session_server(clean_env, "alpha")
    (clean_env / "sessions" / "beta").mkdir()
    (clean_env / "sessions" / "bad name").mkdir()
    try:
        listed = json.loads(cli("session", "list", "--json").out)["sessions"]
        assert [s["name"] for s in listed] == ["default", "alpha", "beta"]
        assert listed[0] == {
            "default": True,
            "name": "default",
            "running": False,
            "session_dir": str(clean_env),
            "socket_path": str(clean_env / "herdr.sock"),
        }
        assert listed[1]["running"] is True
        table = cli("session", "list").out.splitlines()
        assert table[0].split() == ["name", "status", "directory", "socket"]
        assert table[2].split()[:2] == ["alpha", "running"]

        refused = cli("session", "delete", "alpha")
        assert refused.code == 1
        assert json.loads(refused.err) == {
            "error": {
                "code": "session_delete_failed",
                "message": "session alpha is running; stop it before deleting",
            }
        }

        alpha.stop_on_server_stop()
        stopped = cli("session", "stop", "alpha", "--json")
        assert stopped.code == 0
        body = json.loads(stopped.out)
        assert body["stopped"] is True
        assert body["session"]["running"] is False
        assert list(body) == ["session", "stopped"]

        deleted = cli("session", "delete", "alpha")
        assert (deleted.code, deleted.out) == (0, "deleted session alpha\n")
        assert not (clean_env / "sessions" / "alpha").exists()
    finally:
        alpha.close()


def test_session_stop_errors_have_no_id(clean_env: Path, cli: Callable[..., Run]) -> None:
    invalid = cli("session", "stop", "../x")
    assert invalid.code == 1
    assert json.loads(invalid.err) == {
        "error": {
            "code": "invalid_session_name",
            "message": "session name may only contain ASCII letters, numbers, '.', '_' and '-'",
        }
    }
    missing = cli("session", "stop", "ghost")
    error = json.loads(missing.err)["error"]
    assert error["code"] == "session_stop_failed"
    assert error["message"].startswith("session ghost is not running or cannot be reached at ")
    default = cli("session", "delete", "default")
    assert json.loads(default.err)["error"]["message"] == (
        "deleting the default session is not supported"
    )
