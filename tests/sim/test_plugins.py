"""``plugin.*``: the registry, actions and their logs, and plugin panes, as headless Herdr.

Each test cites the Herdr source it follows (herdrdev/herdr): ``src/app/api/plugins/mod.rs``
(handlers), ``manifest.rs`` (the manifest), ``runtime.rs`` (action commands), ``panes.rs``
(plugin panes) and ``src/persist/plugin_registry.rs`` (``plugins.json``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.client import RequestFailed, call
from herdr_sim.herdr_plugins.registry import PluginError, managed_checkout_path, parse_manifest
from herdr_sim.methods.plugins import host
from herdr_sim.simulator import Simulator
from tests.waits import wait_until

Api = Callable[..., dict[str, Any]]

MANIFEST = """
id = "example.hello"
name = "Hello"
version = "0.1.0"
min_herdr_version = "0.6.10"
description = "  says hello  "
platforms = ["linux", "macos"]

[[actions]]
id = "greet"
title = "Greet"
contexts = ["workspace"]
command = ["./greet.sh", "world"]

[[actions]]
id = "fail"
title = "Fail"
command = ["sh", "-c", "echo oops >&2; exit 3"]

[[panes]]
id = "board"
title = "Hello board"
placement = "split"
command = [
  "sh", "-c",
  "echo BOARD-$HERDR_PLUGIN_ID-$HERDR_PLUGIN_ENTRYPOINT_ID-$MINE-$PWD; exec sleep 600",
]
"""

GREET = """#!/bin/sh
echo "hello $1 from $(pwd) id=$HERDR_PLUGIN_ID action=$HERDR_PLUGIN_ACTION_ID"
echo "$HERDR_PLUGIN_CONTEXT_JSON" > "$HERDR_PLUGIN_STATE_DIR/context.json"
"""


def make_plugin(root: Path, manifest: str = MANIFEST) -> Path:
    """A plugin directory with its manifest and the ``greet.sh`` action script."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "herdr-plugin.toml").write_text(manifest)
    script = root / "greet.sh"
    script.write_text(GREET)
    script.chmod(0o700)
    return root


def error_of(api: Api, method: str, **params: Any) -> tuple[str, str]:
    with pytest.raises(RequestFailed) as caught:
        api(method, **params)
    return caught.value.code, caught.value.message


def config_dir(sim: Simulator) -> Path:
    return Path(sim.config.base_env["HERDR_SIM_CONFIG_DIR"])


@pytest.fixture
def plugin_dir(tmp_path: Path) -> Path:
    return make_plugin(tmp_path / "hello")


@pytest.fixture
def linked(api: Api, plugin_dir: Path) -> dict[str, Any]:
    plugin: dict[str, Any] = api("plugin.link", path=str(plugin_dir))["plugin"]
    return plugin


@pytest.fixture
def workspace(api: Api) -> dict[str, Any]:
    """A focused workspace (a fresh simulator, like a headless Herdr, has none)."""
    created: dict[str, Any] = api("workspace.create", focus=True)["workspace"]
    return created


def test_link_reads_the_manifest_and_saves_the_registry_in_the_sim_config_dir(
    sim: Simulator, api: Api, plugin_dir: Path
) -> None:
    """manifest.rs ``load_plugin_manifest`` (trimmed fields, canonical paths, ids sorted,
    source local) and plugin_registry.rs (``<config dir>/plugins.json``)."""
    plugin = api("plugin.link", path=str(plugin_dir), enabled=False)["plugin"]
    assert plugin["plugin_id"] == "example.hello"
    assert plugin["description"] == "says hello"
    assert plugin["manifest_path"] == str((plugin_dir / "herdr-plugin.toml").resolve())
    assert plugin["plugin_root"] == str(plugin_dir.resolve())
    assert plugin["enabled"] is False
    assert plugin["min_herdr_version"] == "0.6.10"
    assert [action["id"] for action in plugin["actions"]] == ["fail", "greet"]
    assert plugin["panes"][0]["placement"] == "split"
    assert plugin["source"] == {"kind": "local"}
    assert "warnings" not in plugin
    saved = json.loads((config_dir(sim) / "plugins.json").read_text())
    assert [entry["plugin_id"] for entry in saved] == ["example.hello"]
    assert (config_dir(sim) / "plugins" / "config" / "example.hello").is_dir()
    listed = api("plugin.list")["plugins"]
    assert listed == [plugin]
    assert api("plugin.list", plugin_id="other")["plugins"] == []


def test_undeclared_platforms_and_unknown_hook_events_are_warnings(
    api: Api, tmp_path: Path
) -> None:
    """manifest.rs ``validate_event_names`` and the missing-platforms warning (Herdr's test
    ``invoke_with_undeclared_platforms_succeeds``)."""
    manifest = MANIFEST.replace('platforms = ["linux", "macos"]\n', "") + (
        '\n[[events]]\non = "pane.nope"\ncommand = ["true"]\n'
    )
    plugin = api("plugin.link", path=str(make_plugin(tmp_path / "p", manifest)))["plugin"]
    assert plugin["warnings"] == [
        "unknown event 'pane.nope'",
        "manifest does not declare platforms; platform support unknown",
    ]


@pytest.mark.parametrize(
    ("edit", "code"),
    [
        (
            lambda m: m.replace('min_herdr_version = "0.6.10"\n', ""),
            "invalid_plugin_min_herdr_version",
        ),
        (lambda m: m.replace('"0.6.10"', '"99.0.0"'), "plugin_requires_newer_herdr"),
        (lambda m: m.replace('"0.6.10"', '"0.6"'), "invalid_plugin_min_herdr_version"),
        (
            lambda m: m.replace('"linux", "macos"', '"linux", "beos"'),
            "plugin_manifest_parse_failed",
        ),
        (lambda m: m.replace('["linux", "macos"]', "[]"), "invalid_plugin_platform"),
        (lambda m: m.replace('id = "fail"', 'id = "greet"'), "duplicate_plugin_action_id"),
        (lambda m: m.replace('["./greet.sh", "world"]', "[]"), "invalid_plugin_command"),
        (lambda m: m.replace('"example.hello"', '"bad id"'), "invalid_plugin_id"),
        (lambda m: m.replace('name = "Hello"', 'name = "  "'), "invalid_plugin_name"),
        (
            lambda m: m.replace('placement = "split"', 'placement = "split"\nwidth = 10'),
            "invalid_plugin_pane_size",
        ),
        (
            lambda m: m + "\n[[link_handlers]]\nid='h'\ntitle='H'\npattern='x'\naction='nope'\n",
            "invalid_plugin_link_handler_action",
        ),
        (lambda m: m + "\nnot toml", "plugin_manifest_parse_failed"),
        (
            lambda m: (
                m + "\n[[link_handlers]]\nid='h'\ntitle='H'\npattern='a(?=b)'\naction='greet'\n"
            ),
            "invalid_plugin_link_handler_pattern",
        ),
    ],
)
def test_manifest_errors_use_herdr_codes(
    api: Api, tmp_path: Path, edit: Callable[[str], str], code: str
) -> None:
    """manifest.rs: each validation step's error code."""
    root = make_plugin(tmp_path / "p", edit(MANIFEST))
    assert error_of(api, "plugin.link", path=str(root))[0] == code


def test_a_github_source_must_be_the_managed_checkout(
    sim: Simulator, api: Api, plugin_dir: Path
) -> None:
    """manifest.rs ``normalize_plugin_source``: a GitHub source needs ``managed_path``, and it
    must be ``<config>/plugins/github/<slug>-<hash>`` holding the manifest."""
    github = {"kind": "github", "owner": "o", "repo": "r"}
    code, message = error_of(api, "plugin.link", path=str(plugin_dir), source=github)
    assert (code, message) == (
        "invalid_plugin_source",
        "GitHub plugin source requires managed_path",
    )
    elsewhere = github | {"managed_path": str(plugin_dir)}
    code, _ = error_of(api, "plugin.link", path=str(plugin_dir), source=elsewhere)
    assert code == "invalid_plugin_source"
    expected = managed_checkout_path(config_dir(sim), "example.hello")
    digest = hashlib.sha256(b"example.hello").hexdigest()[:12]
    assert expected == config_dir(sim) / "plugins" / "github" / f"example.hello-{digest}"
    make_plugin(expected)
    source = github | {"managed_path": str(expected)}
    plugin = api("plugin.link", path=str(expected), source=source)["plugin"]
    assert plugin["source"] == source
    assert api("plugin.list")["plugins"][0]["source"] == source


def test_link_of_a_missing_path_is_manifest_not_found(api: Api, tmp_path: Path) -> None:
    """manifest.rs: ``canonicalize`` failing is ``plugin_manifest_not_found``."""
    assert error_of(api, "plugin.link", path=str(tmp_path / "none"))[0] == (
        "plugin_manifest_not_found"
    )


def test_enable_disable_unlink(api: Api, linked: dict[str, Any]) -> None:
    """mod.rs ``set_plugin_enabled`` / ``handle_plugin_unlink`` and ``invalid_plugin_id``."""
    assert api("plugin.disable", plugin_id="example.hello")["plugin"]["enabled"] is False
    assert api("plugin.list")["plugins"][0]["enabled"] is False
    assert api("plugin.enable", plugin_id=" example.hello ")["plugin"]["enabled"] is True
    assert error_of(api, "plugin.enable", plugin_id="nope") == (
        "plugin_not_found",
        "plugin not found",
    )
    code, message = error_of(api, "plugin.disable", plugin_id="a b")
    assert code == "invalid_plugin_id"
    assert message.startswith("plugin id must be non-empty, <= 120 characters")
    assert api("plugin.unlink", plugin_id="example.hello") == {
        "type": "plugin_unlinked",
        "plugin_id": "example.hello",
        "removed": True,
    }
    assert api("plugin.unlink", plugin_id="example.hello")["removed"] is False
    assert api("plugin.list")["plugins"] == []


def test_action_invoke_runs_the_command_in_the_plugin_dir_and_logs_it(
    sim: Simulator, api: Api, linked: dict[str, Any], plugin_dir: Path, workspace: dict[str, Any]
) -> None:
    """runtime.rs ``start_plugin_command`` (argv in plugin_root, Herdr's env, a ``running``
    log answered at once) and the finish handler in src/app/api.rs (``succeeded`` on exit 0,
    ``failed`` otherwise, stdout/stderr kept)."""
    actions = api("plugin.action.list")["actions"]
    assert [(a["plugin_id"], a["action_id"]) for a in actions] == [
        ("example.hello", "fail"),
        ("example.hello", "greet"),
    ]
    assert actions[1]["platforms"] == ["linux", "macos"]
    invoked = api("plugin.action.invoke", action_id="example.hello.greet")
    assert invoked["action"]["action_id"] == "greet"
    assert invoked["log"]["status"] == "running"
    assert invoked["log"]["log_id"] == "plugin-log-1"
    context = invoked["context"]
    assert context["invocation_source"] == "api"
    assert context["workspace_id"] == workspace["workspace_id"]
    assert context["focused_pane_id"] == api("pane.current")["pane"]["pane_id"]

    def finished() -> dict[str, Any] | None:
        logs = api("plugin.log.list", plugin_id="example.hello")["logs"]
        return logs[0] if logs and logs[0]["status"] != "running" else None

    log = wait_until(finished, what="the action to finish")
    assert log["status"] == "succeeded"
    assert log["exit_code"] == 0
    root = plugin_dir.resolve()
    assert log["stdout"] == f"hello world from {root} id=example.hello action=greet\n"
    state = config_dir(sim) / "state" / "plugins" / "example.hello" / "context.json"
    assert json.loads(state.read_text())["correlation_id"] == context["correlation_id"]

    api("plugin.action.invoke", plugin_id="example.hello", action_id="fail")
    failed = wait_until(
        lambda: [
            entry
            for entry in api("plugin.log.list")["logs"]
            if entry["action_id"] == "fail" and entry["status"] != "running"
        ],
        what="the failing action",
    )[0]
    assert (failed["status"], failed["exit_code"], failed["stderr"]) == ("failed", 3, "oops\n")
    assert [entry["log_id"] for entry in api("plugin.log.list", limit=1)["logs"]] == [
        "plugin-log-2"
    ]


def test_invoke_refusals(api: Api, linked: dict[str, Any], tmp_path: Path) -> None:
    """mod.rs ``find_plugin_action`` (not found, ambiguous) and the disabled and platform
    checks (Herdr's test ``invoke_on_unsupported_platform_returns_error``)."""
    assert error_of(api, "plugin.action.invoke", action_id="nope")[0] == "plugin_action_not_found"
    other = MANIFEST.replace("example.hello", "example.other")
    api("plugin.link", path=str(make_plugin(tmp_path / "other", other)))
    assert error_of(api, "plugin.action.invoke", action_id="greet")[0] == "ambiguous_plugin_action"
    api("plugin.disable", plugin_id="example.other")
    assert error_of(api, "plugin.action.invoke", action_id="example.other.greet") == (
        "plugin_disabled",
        "plugin example.other is disabled",
    )
    elsewhere = MANIFEST.replace("example.hello", "example.win").replace(
        '"linux", "macos"', '"windows"'
    )
    api("plugin.link", path=str(make_plugin(tmp_path / "win", elsewhere)))
    code, message = error_of(
        api, "plugin.action.invoke", plugin_id="example.win", action_id="greet"
    )
    assert code == "platform_unsupported"
    assert "example.win.greet" in message


def test_a_vanished_manifest_keeps_the_entry_with_a_warning(
    api: Api, linked: dict[str, Any], plugin_dir: Path
) -> None:
    """plugin_registry.rs ``reload_manifests`` (Herdr's test
    ``reload_manifests_keeps_entry_with_warning_when_manifest_gone``) and
    ``plugin_manifest_unavailable`` in mod.rs."""
    (plugin_dir / "herdr-plugin.toml").unlink()
    plugin = api("plugin.list")["plugins"][0]
    assert plugin["manifest_path"] == linked["manifest_path"]
    assert plugin["warnings"][0].startswith("manifest unavailable: ")
    assert api("plugin.action.list")["actions"] == []
    code, _ = error_of(api, "plugin.action.invoke", plugin_id="example.hello", action_id="greet")
    assert code == "plugin_manifest_unavailable"


def test_plugin_pane_is_a_real_pane_running_the_entrypoint(
    sim: Simulator,
    api: Api,
    linked: dict[str, Any],
    plugin_dir: Path,
    workspace: dict[str, Any],
) -> None:
    """panes.rs ``open_plugin_split_pane`` + ``finish_plugin_pane_open`` (title as label,
    pane_created/layout_updated), ``plugin_pane_launch_env`` (caller env without the
    protected keys, PWD the plugin root) and mod.rs ``handle_plugin_pane_focus``/``_close``."""
    first = api("pane.current")["pane"]["pane_id"]
    mark = len(sim.events)
    spoofed = {"HERDR_PLUGIN_ID": "spoof", "MINE": "mine"}  # a protected key is dropped
    opened = api("plugin.pane.open", plugin_id="example.hello", entrypoint="board", env=spoofed)[
        "plugin_pane"
    ]
    pane = opened["pane"]
    assert (opened["plugin_id"], opened["entrypoint"]) == ("example.hello", "board")
    assert pane["label"] == "Hello board"
    assert pane["focused"] is False
    wait_until(
        lambda: (
            f"BOARD-example.hello-board-mine-{plugin_dir.resolve()}"
            in api("pane.read", pane_id=pane["pane_id"], source="recent_unwrapped")["read"]["text"]
        ),
        what="the plugin pane's output",
    )
    assert len(api("pane.layout", pane_id=first)["layout"]["panes"]) == 2
    kinds = [env["event"] for env in sim.events[mark:]]
    assert kinds[:2] == ["pane_created", "layout_updated"]
    focused = api("plugin.pane.focus", pane_id=pane["pane_id"])["plugin_pane"]
    assert focused["pane"]["focused"] is True
    assert error_of(api, "plugin.pane.focus", pane_id=first) == (
        "plugin_pane_not_found",
        "plugin pane not found",
    )
    assert api("plugin.pane.close", pane_id=pane["pane_id"]) == {
        "type": "plugin_pane_closed",
        "pane_id": pane["pane_id"],
    }
    assert [p["pane_id"] for p in api("pane.list")["panes"]] == [first]


def test_closed_plugin_panes_leave_no_record_behind(
    sim: Simulator, api: Api, linked: dict[str, Any], workspace: dict[str, Any]
) -> None:
    """Herdr drops a plugin pane's record when the pane goes (actions.rs, Herdr's test
    ``pane_exit_removes_plugin_pane_record``); opening and closing many keeps memory flat."""
    for _ in range(5):
        pane = api("plugin.pane.open", plugin_id="example.hello", entrypoint="board")
        api("pane.close", pane_id=pane["plugin_pane"]["pane"]["pane_id"])
    api("plugin.pane.open", plugin_id="example.hello", entrypoint="board")
    assert sim.run_in_loop(lambda rt: len(host(rt).panes)) == 1


def test_tab_and_overlay_placements(
    api: Api, linked: dict[str, Any], workspace: dict[str, Any]
) -> None:
    """panes.rs ``open_plugin_tab`` (a new tab) and navigate.rs
    ``spawn_overlay_argv_command`` (a focused split of the active pane, tab zoomed)."""
    tab = api("plugin.pane.open", plugin_id="example.hello", entrypoint="board", placement="tab")
    tab_pane = tab["plugin_pane"]["pane"]
    assert len(api("tab.list")["tabs"]) == 2
    assert api("tab.get", tab_id=tab_pane["tab_id"])["tab"]["pane_count"] == 1
    overlay = api(
        "plugin.pane.open", plugin_id="example.hello", entrypoint="board", placement="overlay"
    )["plugin_pane"]["pane"]
    assert overlay["focused"] is True
    assert api("pane.layout", pane_id=overlay["pane_id"])["layout"]["zoomed"] is True


def test_an_exiting_overlay_gives_the_tab_back(
    api: Api, tmp_path: Path, workspace: dict[str, Any]
) -> None:
    """app/api.rs ``restore_overlay_after_exit``: when the overlay's process exits, the pane
    focused before it is focused again and the tab's zoom is what it was before."""
    manifest = MANIFEST.replace('placement = "split"', 'placement = "overlay"').replace(
        "exec sleep 600", "read line"
    )
    api("plugin.link", path=str(make_plugin(tmp_path / "p", manifest)))
    first = api("pane.current")["pane"]["pane_id"]
    api("pane.split", target_pane_id=first, direction="down")
    api("pane.zoom", pane_id=first, mode="on")
    overlay = api("plugin.pane.open", plugin_id="example.hello", entrypoint="board")
    overlay_id = overlay["plugin_pane"]["pane"]["pane_id"]
    assert api("pane.layout", pane_id=first)["layout"]["zoomed"] is True
    api("pane.send_text", pane_id=overlay_id, text="bye\n")
    wait_until(lambda: len(api("pane.list")["panes"]) == 2, what="the overlay to exit")
    layout = wait_until(
        lambda: (
            (found := api("pane.layout", pane_id=first)["layout"])["focused_pane_id"] == first
            and found
        ),
        what="focus back on the first pane",
    )
    assert layout["zoomed"] is True  # as before the overlay (removing a pane unzooms)
    assert api("pane.current")["pane"]["pane_id"] == first


def test_pane_open_refusals(api: Api, linked: dict[str, Any], workspace: dict[str, Any]) -> None:
    """mod.rs ``handle_plugin_pane_open``: entrypoint, size and target checks; popups need
    the TUI (documented refusal)."""
    assert error_of(api, "plugin.pane.open", plugin_id="example.hello", entrypoint="nope")[0] == (
        "plugin_pane_not_found"
    )
    assert error_of(api, "plugin.pane.open", plugin_id="nope", entrypoint="board")[0] == (
        "plugin_not_found"
    )
    assert error_of(
        api, "plugin.pane.open", plugin_id="example.hello", entrypoint="board", width=10
    ) == ("invalid_params", "width and height are only supported when placement is popup")
    assert (
        error_of(
            api,
            "plugin.pane.open",
            plugin_id="example.hello",
            entrypoint="board",
            workspace_id="w1",
        )[0]
        == "invalid_params"
    )
    assert (
        error_of(
            api,
            "plugin.pane.open",
            plugin_id="example.hello",
            entrypoint="board",
            placement="popup",
        )[0]
        == "not_supported_by_simulator"
    )
    api("plugin.disable", plugin_id="example.hello")
    assert error_of(api, "plugin.pane.open", plugin_id="example.hello", entrypoint="board")[0] == (
        "plugin_disabled"
    )


# -- trust ------------------------------------------------------------------------------------


def test_a_symlinked_plugin_dir_is_not_trusted(api: Api, plugin_dir: Path, tmp_path: Path) -> None:
    """The simulator refuses what Herdr would follow (manifest.rs canonicalizes): a plugin
    directory or manifest reached through a symlink."""
    link = tmp_path / "link"
    link.symlink_to(plugin_dir)
    assert error_of(api, "plugin.link", path=str(link))[0] == "plugin_untrusted"
    other = tmp_path / "other"
    other.mkdir()
    (other / "herdr-plugin.toml").symlink_to(plugin_dir / "herdr-plugin.toml")
    assert error_of(api, "plugin.link", path=str(other))[0] == "plugin_untrusted"


def test_a_group_writable_manifest_or_registry_is_not_trusted(
    sim: Simulator, api: Api, plugin_dir: Path
) -> None:
    """A manifest names commands the simulator runs; a registry names manifests. Either one
    writable by others is refused (plugin_registry.rs would read it)."""
    manifest = plugin_dir / "herdr-plugin.toml"
    manifest.chmod(0o664)
    code, message = error_of(api, "plugin.link", path=str(plugin_dir))
    assert (code, "writable by group or others" in message) == ("plugin_untrusted", True)
    manifest.chmod(0o644)
    api("plugin.link", path=str(plugin_dir))
    registry = config_dir(sim) / "plugins.json"
    registry.chmod(0o666)
    assert error_of(api, "plugin.list")[0] == "plugin_registry_load_failed"
    registry.chmod(0o600)
    manifest.chmod(0o646)
    warning = api("plugin.list")["plugins"][0]["warnings"][0]
    assert warning.startswith("manifest unavailable: ") and "writable" in warning


def test_a_running_action_ends_with_the_simulator(sim: Simulator, api: Api, tmp_path: Path) -> None:
    """Herdr's plugin commands are children of the server; the simulator ends a command
    still running when it stops (no process left behind, issue 13)."""
    manifest = MANIFEST.replace(
        '["sh", "-c", "echo oops >&2; exit 3"]',
        '["sh", "-c", "echo $$ > \\"$HERDR_PLUGIN_STATE_DIR/pid\\"; exec sleep 600"]',
    )
    api("plugin.link", path=str(make_plugin(tmp_path / "p", manifest)))
    api("plugin.action.invoke", action_id="fail")
    pid_file = config_dir(sim) / "state" / "plugins" / "example.hello" / "pid"

    def written() -> str | None:
        text = pid_file.read_text().strip() if pid_file.exists() else ""
        return text or None

    pid = int(wait_until(written, what="the command's pid"))
    os.kill(pid, 0)  # running
    sim.stop()

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    wait_until(gone, what="the plugin command to end")


HOOKS = (
    MANIFEST
    + """
[[events]]
on = "workspace.created"
command = ["sh", "-c", "echo $HERDR_PLUGIN_EVENT; echo \\"$HERDR_PLUGIN_EVENT_JSON\\""]

[[events]]
on = "layout.updated"
command = ["sh", "-c", "echo never"]

[[startup]]
command = ["sh", "-c", "echo started $HERDR_PLUGIN_ID"]
"""
)


def _finished_logs(api: Api, event: str) -> list[dict[str, Any]] | None:
    logs = [entry for entry in api("plugin.log.list")["logs"] if entry.get("event") == event]
    return logs if logs and all(entry["status"] != "running" for entry in logs) else None


def test_event_hooks_run_on_hookable_events(
    api: Api, tmp_path: Path, workspace: dict[str, Any]
) -> None:
    """runtime.rs ``run_plugin_event_hooks``: an enabled plugin's ``[[events]]`` command runs
    for each event in ``PLUGIN_HOOK_EVENT_KINDS`` (not ``layout.updated``), with the event
    in ``HERDR_PLUGIN_EVENT``/``_JSON``, logged with ``event`` instead of ``action_id``."""
    api("plugin.link", path=str(make_plugin(tmp_path / "p", HOOKS)))
    created = api("workspace.create")["workspace"]
    log = wait_until(lambda: _finished_logs(api, "workspace.created"), what="the hook")[0]
    assert "action_id" not in log
    name, payload = log["stdout"].splitlines()
    assert name == "workspace.created"
    event = json.loads(payload)
    assert event["event"] == "workspace_created"
    assert event["data"]["workspace"]["workspace_id"] == created["workspace_id"]
    assert _finished_logs(api, "layout.updated") is None
    api("plugin.disable", plugin_id="example.hello")
    api("workspace.create")
    assert len(api("plugin.log.list")["logs"]) == 1


def test_startup_hooks_run_when_a_simulator_starts(
    sim: Simulator, api: Api, tmp_path: Path, short_dir: Path
) -> None:
    """runtime.rs ``run_plugin_startup_hooks``: each enabled plugin's ``[[startup]]``
    commands run once at server start (``event: "startup"``), from the saved registry."""
    api("plugin.link", path=str(make_plugin(tmp_path / "p", HOOKS)))
    assert _finished_logs(api, "startup") is None  # linking runs nothing
    second = Simulator(
        socket_path=short_dir / "second.sock",
        base_env=sim.config.base_env,
        runtime_dir=short_dir / "rt2",
    ).start()
    try:

        def second_api(method: str, **params: Any) -> dict[str, Any]:
            return call(second.socket_path, method, params)

        log = wait_until(lambda: _finished_logs(second_api, "startup"), what="startup")[0]
        assert log["stdout"] == "started example.hello\n"
    finally:
        second.stop()


def test_parse_manifest_is_usable_without_a_server() -> None:
    """The parser the orchestrator's own manifest will use (issue 18) gives the same
    normalised fields and codes as ``plugin.link``."""
    parsed = parse_manifest(MANIFEST, "0.9.2")
    assert parsed["plugin_id"] == "example.hello"
    assert [a["id"] for a in parsed["actions"]] == ["fail", "greet"]
    with pytest.raises(PluginError) as caught:
        parse_manifest(MANIFEST, "0.6.9")
    assert caught.value.code == "plugin_requires_newer_herdr"
    assert os.sep == "/"
