"""What a Herdr 0.9 client shell sends, answered as Herdr answers a plain socket client.

Herdr 0.8.2 (the newest full source we can read) has the announcement and release-notes
stores and their dismissal rules but no socket handlers for these protocol-22 methods; the
answers follow Herdr's later source and tests found in herdrdev/herdr's public history and a
published capture of Herdr 0.9.1's socket answers (details and the guesses in
``docs/simulator/fidelity.md``). Every request and answer is also checked against the
protocol-22 schema by the suite's wire tap (``tests/conftest.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim._version import HERDR_VERSION
from herdr_sim.client import RequestFailed
from herdr_sim.methods.client_shell import announcements_path, release_notes_path
from herdr_sim.registry import UNSUPPORTED

Api = Callable[..., dict[str, Any]]

CLIENT_SHELL = (
    "product_announcement.dismiss",
    "release_notes.dismiss",
    "command.invoke",
    "client_shell.surface.set",
)
STALE_ANNOUNCEMENT = ("stale_announcement", "the product announcement is no longer current")
STALE_NOTES = ("stale_release_notes", "the release notes are no longer current")


def failure(api: Api, method: str, **params: Any) -> tuple[str, str]:
    """(code, message) of a call that must fail."""
    try:
        api(method, **params)
    except RequestFailed as failed:
        return failed.code, failed.message
    raise AssertionError(f"{method} did not fail")


@pytest.fixture
def config_dir(sim: Simulator) -> Path:
    """The simulator's own config directory (the ``sim`` fixture's HERDR_SIM_CONFIG_DIR)."""
    return Path(sim.config.base_env["HERDR_SIM_CONFIG_DIR"])


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text(json.dumps(data))
    path.chmod(0o600)


def announcement(version: str = HERDR_VERSION, id_: str = "keymap-v2") -> dict[str, Any]:
    return {"version": version, "id": id_, "title": "Keymap changed", "body": "- One"}


def test_client_shell_methods_are_implemented() -> None:
    assert not set(CLIENT_SHELL) & set(UNSUPPORTED)


# -- product_announcement.dismiss -----------------------------------------------------------


def test_announcement_dismiss_on_a_fresh_server_is_stale(api: Api, config_dir: Path) -> None:
    """No store: 0.8.2's ``load_unseen_for_current_version`` finds no announcement
    (``src/product_announcements.rs``), and Herdr 0.9.1 answers such a dismissal
    ``stale_announcement`` "the product announcement is no longer current" (the code Herdr's
    client-shell tests expect for a failed dismissal). Nothing is written."""
    assert failure(api, "product_announcement.dismiss", version=HERDR_VERSION, id="x") == (
        STALE_ANNOUNCEMENT
    )
    assert not announcements_path(config_dir).exists()


def test_dismissing_the_current_announcement_marks_it_seen(api: Api, config_dir: Path) -> None:
    """``load_unseen_returns_current_unseen_announcement`` / ``mark_seen`` and
    ``load_unseen_ignores_seen_announcement`` (``src/product_announcements.rs``): the
    current announcement is ``latest`` for this version, not in ``seen``; dismissing it adds
    ``"<version>/<id>"`` to ``seen`` in the state dir's ``product-announcements.json``, so it
    is no longer current and a second dismissal is stale."""
    path = announcements_path(config_dir)
    assert path == config_dir / "state" / "product-announcements.json"
    write_json(path, {"latest": announcement(), "seen": ["0.1.0/old"]})
    assert api("product_announcement.dismiss", version=HERDR_VERSION, id="keymap-v2") == {
        "type": "ok"
    }
    stored = json.loads(path.read_text())
    assert stored["seen"] == ["0.1.0/old", f"{HERDR_VERSION}/keymap-v2"]
    assert stored["latest"] == announcement()
    assert path.stat().st_mode & 0o077 == 0
    assert failure(api, "product_announcement.dismiss", version=HERDR_VERSION, id="keymap-v2") == (
        STALE_ANNOUNCEMENT
    )


@pytest.mark.parametrize(
    ("stored", "version", "id_"),
    [
        (announcement(), HERDR_VERSION, "other-id"),
        (announcement(), "0.1.0", "keymap-v2"),
        (announcement(version="0.1.0"), "0.1.0", "keymap-v2"),
    ],
    ids=["other-id", "other-version", "announcement-of-another-server-version"],
)
def test_an_announcement_that_is_not_the_current_one_is_stale(
    api: Api, config_dir: Path, stored: dict[str, Any], version: str, id_: str
) -> None:
    """Only the current announcement can be dismissed: another id or version, or an
    announcement saved for another Herdr version (``load_unseen_from_path`` compares
    ``version`` with the running build's), is ``stale_announcement`` and nothing changes."""
    path = announcements_path(config_dir)
    write_json(path, {"latest": stored, "seen": []})
    before = path.read_text()
    assert failure(api, "product_announcement.dismiss", version=version, id=id_) == (
        STALE_ANNOUNCEMENT
    )
    assert path.read_text() == before


def test_an_announcement_store_of_another_user_is_never_trusted(api: Api, config_dir: Path) -> None:
    """A store others can write is read as absent (stale) and never rewritten: the
    simulator trusts only its own state (issue 13, "Trust only our own state")."""
    path = announcements_path(config_dir)
    write_json(path, {"latest": announcement(), "seen": []})
    path.chmod(0o666)
    before = path.read_text()
    assert failure(api, "product_announcement.dismiss", version=HERDR_VERSION, id="keymap-v2") == (
        STALE_ANNOUNCEMENT
    )
    assert path.read_text() == before


# -- release_notes.dismiss ------------------------------------------------------------------


def test_release_notes_dismiss_on_a_fresh_server_is_stale(api: Api, config_dir: Path) -> None:
    """No ``release-notes.json``: 0.8.2's ``load_latest`` has no notes (``src/release_notes.rs``)
    and Herdr 0.9.1 answers ``stale_release_notes`` "the release notes are no longer
    current". Nothing is written."""
    assert failure(api, "release_notes.dismiss", version=HERDR_VERSION) == STALE_NOTES
    assert not release_notes_path(config_dir).exists()


def test_dismissing_this_versions_notes_marks_them_seen_but_a_preview_stays_unseen(
    api: Api, config_dir: Path
) -> None:
    """Herdr's test ``release_notes_dismiss_api_marks_current_seen_but_keeps_preview_unseen``:
    dismissing the saved notes answers ``ok``; for the running version ``show_on_startup``
    becomes false (``mark_current_version_seen``), for a newer (preview) version it stays
    true. The notes stay the latest ones (``CHANGELOG.md``: "Release notes are now retained as
    the latest available notes after you dismiss"), so a second dismissal is ``ok`` too. The
    file is ``release-notes.json`` beside ``config.toml`` (``pending_path``)."""
    path = release_notes_path(config_dir)
    assert path == config_dir / "release-notes.json"
    write_json(path, {"version": HERDR_VERSION, "body": "### Changed\n- Current"})
    assert api("release_notes.dismiss", version=HERDR_VERSION) == {"type": "ok"}
    assert json.loads(path.read_text())["show_on_startup"] is False
    assert api("release_notes.dismiss", version=HERDR_VERSION) == {"type": "ok"}

    write_json(
        path, {"version": "99.99.99", "body": "### Changed\n- Preview", "show_on_startup": True}
    )
    assert api("release_notes.dismiss", version="99.99.99") == {"type": "ok"}
    assert json.loads(path.read_text())["show_on_startup"] is True


@pytest.mark.parametrize(
    ("stored", "version"),
    [
        ({"version": HERDR_VERSION, "body": "- One"}, "0.1.0"),
        ({"version": HERDR_VERSION, "body": " \n\t "}, HERDR_VERSION),
        ({"version": HERDR_VERSION}, HERDR_VERSION),
    ],
    ids=["other-version", "blank-body", "no-body"],
)
def test_notes_that_are_not_the_current_ones_are_stale(
    api: Api, config_dir: Path, stored: dict[str, Any], version: str
) -> None:
    """Another version than the saved notes', or notes ``load_latest`` does not return (a
    blank body after ``normalize_body``, a file that does not parse), is
    ``stale_release_notes``; the file is left alone."""
    path = release_notes_path(config_dir)
    write_json(path, stored)
    before = path.read_text()
    assert failure(api, "release_notes.dismiss", version=version) == STALE_NOTES
    assert path.read_text() == before


def test_release_notes_in_a_directory_others_can_write_are_never_trusted(
    api: Api, config_dir: Path
) -> None:
    """Our own file in a directory others may write to (a planted replacement could be
    renamed in) is read as absent and left alone, like an untrusted file."""
    path = release_notes_path(config_dir)
    write_json(path, {"version": HERDR_VERSION, "body": "- One"})
    config_dir.chmod(0o777)
    try:
        assert failure(api, "release_notes.dismiss", version=HERDR_VERSION) == STALE_NOTES
    finally:
        config_dir.chmod(0o700)
    assert "show_on_startup" not in json.loads(path.read_text())


# -- command.invoke, client_shell.surface.set, ping -----------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {"command_id": "cmd_0123456789abcdef0123456789abcdef"},
        {
            "command_id": "cmd_deploy",
            "workspace_id": "w1",
            "tab_id": None,
            "pane_id": "w1-1",
            "selection": {
                "pane_id": "w1-1",
                "anchor": {"row": 0, "col": 0},
                "cursor": {"row": 1, "col": 4},
                "content_revision": 3,
            },
        },
    ],
    ids=["bare", "scoped-with-selection"],
)
def test_command_invoke_knows_no_command_id(api: Api, params: dict[str, Any]) -> None:
    """A ``command_id`` is issued by a client shell's projection (schema:
    ``CommandInvokeParams``); with none, Herdr 0.9.1 answers a synthetic id
    ``command_not_found`` "custom command manifest is stale; reload configuration"."""
    assert failure(api, "command.invoke", **params) == (
        "command_not_found",
        "custom command manifest is stale; reload configuration",
    )


def test_command_invoke_checks_its_params_first(api: Api) -> None:
    """serde reads ``CommandInvokeParams`` before anything runs: a bad selection point is
    ``invalid_request``, not ``command_not_found``."""
    code, _ = failure(
        api,
        "command.invoke",
        command_id="x",
        selection={"pane_id": "p", "anchor": {"row": -1, "col": 0}, "cursor": {"row": 0, "col": 0}},
    )
    assert code == "invalid_request"


@pytest.mark.parametrize("active", [True, False])
def test_surface_lease_is_refused_to_a_socket_connection(api: Api, active: bool) -> None:
    """``src/api/server.rs`` ``handle_request`` (herdrdev/herdr 00d3d0c9): a socket request
    for ``client_shell.surface.set`` is ``connection_local_only`` "client_shell.surface.set is
    only available through a client shell endpoint", whatever ``active`` asks."""
    assert failure(api, "client_shell.surface.set", active=active) == (
        "connection_local_only",
        "client_shell.surface.set is only available through a client shell endpoint",
    )


def test_ping_does_not_offer_the_surface_lease_it_cannot_give(api: Api) -> None:
    """``surface_interest`` says whether the server supports explicit client-shell surface
    interest (``ServerCapabilities``); the simulator has no client-shell endpoint, so it says
    false, and the lease is refused on the socket either way."""
    assert api("ping")["capabilities"]["surface_interest"] is False
    assert failure(api, "client_shell.surface.set", active=True)[0] == "connection_local_only"
