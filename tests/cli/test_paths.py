"""Socket resolution: the simulator's config dir and Herdr's precedence rules."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.client.socket_paths import (
    SessionNameError,
    child_path,
    client_socket_str_for,
    config_dir,
    config_dir_str,
    normalize_path,
    resolve_socket,
    session_dir,
    session_dir_str,
    session_socket_path,
    session_socket_str,
    validate_session_name,
)


def test_config_dir_precedence() -> None:
    assert config_dir({"HERDR_SIM_CONFIG_DIR": "/a", "XDG_CONFIG_HOME": "/x"}) == Path("/a")
    assert config_dir({"XDG_CONFIG_HOME": "/x", "HOME": "/h"}) == Path("/x/herdr-sim")
    assert config_dir({"HOME": "/h"}) == Path("/h/.config/herdr-sim")


def test_session_socket_paths() -> None:
    env = {"HERDR_SIM_CONFIG_DIR": "/c"}
    assert session_socket_path(None, env) == Path("/c/herdr.sock")
    assert session_socket_path("default", env) == Path("/c/herdr.sock")
    assert session_socket_path("work", env) == Path("/c/sessions/work/herdr.sock")


def test_explicit_session_beats_socket_override_and_env_session() -> None:
    env = {"HERDR_SIM_CONFIG_DIR": "/c", "HERDR_SOCKET_PATH": "/o.sock", "HERDR_SESSION": "e"}
    resolved = resolve_socket("work", env)
    assert resolved.path == Path("/c/sessions/work/herdr.sock")
    assert (resolved.session, resolved.explicit, resolved.override) == ("work", True, None)
    assert resolved.startup_command() == "herdr session attach work"
    assert resolve_socket("default", env).path == Path("/c/herdr.sock")
    assert resolve_socket("default", env).session is None


def test_socket_override_beats_env_session() -> None:
    env = {"HERDR_SIM_CONFIG_DIR": "/c", "HERDR_SOCKET_PATH": "/o.sock", "HERDR_SESSION": "e"}
    resolved = resolve_socket(None, env)
    assert resolved.path == Path("/o.sock")
    assert resolved.session == "e"
    assert resolved.startup_command() == "herdr"
    assert resolved.client_socket_path() == Path("/o-client.sock")
    assert "HERDR_SOCKET_PATH=/o.sock herdr server stop" in resolved.restart_guidance()


def test_env_session_then_default() -> None:
    env = {"HERDR_SIM_CONFIG_DIR": "/c", "HERDR_SESSION": "e"}
    assert resolve_socket(None, env).path == Path("/c/sessions/e/herdr.sock")
    assert resolve_socket(None, env).startup_command() == "herdr session attach e"
    assert resolve_socket(None, {"HERDR_SIM_CONFIG_DIR": "/c"}).path == Path("/c/herdr.sock")
    default = resolve_socket(None, {"HERDR_SIM_CONFIG_DIR": "/c", "HERDR_SESSION": "default"})
    assert default.path == Path("/c/herdr.sock")
    assert default.client_socket_path() == Path("/c/herdr-client.sock")


def test_invalid_env_session_is_ignored_under_an_override_only() -> None:
    env = {"HERDR_SOCKET_PATH": "/o.sock", "HERDR_SESSION": "bad/name"}
    assert resolve_socket(None, env).session is None
    with pytest.raises(SessionNameError):
        resolve_socket(None, {"HERDR_SESSION": "bad/name", "HOME": "/h"})


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "session name cannot be empty"),
        ("x" * 65, "session name cannot be longer than 64 bytes"),
        ("..", "session name cannot be . or .."),
        ("a b", "session name may only contain ASCII letters, numbers, '.', '_' and '-'"),
        ("é", "session name may only contain ASCII letters, numbers, '.', '_' and '-'"),
    ],
)
def test_session_name_rules(name: str, message: str) -> None:
    with pytest.raises(SessionNameError, match=f"^{message}$"):
        validate_session_name(name)
    validate_session_name("Work_1.2-x")


# -- the string forms the CLI uses: exactly what pathlib would render ---------------------------

_PATH_TEXT = st.text(alphabet="/.a~ -", max_size=12)


@settings(max_examples=500, deadline=None)
@given(_PATH_TEXT)
def test_normalize_path_renders_as_pathlib_does(text: str) -> None:
    assert normalize_path(text) == str(PurePosixPath(text))


@settings(max_examples=300, deadline=None)
@given(_PATH_TEXT, st.sampled_from(["herdr-sim", "sessions", "herdr.sock", ".config", "a.b"]))
def test_child_path_joins_as_pathlib_does(base: str, name: str) -> None:
    assert child_path(normalize_path(base), name) == str(PurePosixPath(base) / name)


@settings(max_examples=500, deadline=None)
@given(_PATH_TEXT)
def test_override_client_socket_is_the_api_sockets_sibling(override: str) -> None:
    api = PurePosixPath(override)
    stem = api.stem if api.name else "herdr"
    expected = api.parent / f"{stem}-client.sock"
    resolved = resolve_socket(None, {"HERDR_SOCKET_PATH": override, "HOME": "/h"})
    assert resolved.client_socket() == str(expected)
    assert resolved.client_socket_path() == Path(expected)
    assert resolved.socket_path == str(api)
    assert resolved.path == Path(override)


def test_string_and_path_forms_agree() -> None:
    env = {"HERDR_SIM_CONFIG_DIR": "/c//x/./", "HERDR_SESSION": "e"}
    assert config_dir_str(env) == "/c/x" and config_dir(env) == Path("/c/x")
    assert session_dir_str("w", env) == "/c/x/sessions/w"
    assert session_dir("w", env) == Path("/c/x/sessions/w")
    assert session_socket_str("w", env) == "/c/x/sessions/w/herdr.sock"
    assert client_socket_str_for(None, env) == "/c/x/herdr-client.sock"
    resolved = resolve_socket(None, env)
    assert isinstance(resolved.socket_path, str)
    assert resolved.socket_path == "/c/x/sessions/e/herdr.sock"
    assert resolved.path == Path("/c/x/sessions/e/herdr.sock")
    assert resolved.client_socket() == "/c/x/sessions/e/herdr-client.sock"


def test_empty_xdg_config_home_and_missing_home_behave_like_pathlib(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert config_dir({"XDG_CONFIG_HOME": ""}) == Path("herdr-sim")
    monkeypatch.setenv("HOME", "/home//someone/")
    assert config_dir({}) == Path.home() / ".config" / "herdr-sim"
    assert config_dir_str({"HOME": ""}) == "/home/someone/.config/herdr-sim"


def test_a_client_of_real_herdr_resolves_by_the_same_rules_under_herdrs_directory() -> None:
    """One rule set: the typed client's default socket is the simulator CLI's resolution with
    Herdr's directory, whatever simulator-only variable is set."""
    from orchestrator.client.transports import default_socket_path

    home = {"HOME": "/h", "HERDR_SIM_CONFIG_DIR": "/sim-only"}
    assert default_socket_path(home) == Path("/h/.config/herdr/herdr.sock")
    assert default_socket_path({**home, "XDG_CONFIG_HOME": "/x", "HERDR_SESSION": "work"}) == (
        Path("/x/herdr/sessions/work/herdr.sock")
    )
    assert default_socket_path({**home, "HERDR_SESSION": "default"}) == (
        Path("/h/.config/herdr/herdr.sock")
    )
    assert default_socket_path({**home, "HERDR_SOCKET_PATH": "/run//a.sock"}) == Path("/run/a.sock")
    with pytest.raises(SessionNameError):
        default_socket_path({**home, "HERDR_SESSION": "a/b"})
