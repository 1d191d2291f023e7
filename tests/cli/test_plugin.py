"""`herdr plugin ...` against a simulator and without one, as Herdr's ``src/cli/plugin.rs``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from herdr_sim.simulator import Simulator
from pytest_herdr.cli_runner import HerdrCli
from tests.cli.conftest import Run
from tests.sim.test_plugins import make_plugin
from tests.waits import wait_until


@pytest.fixture
def plugin_dir(tmp_path: Path) -> Path:
    return make_plugin(tmp_path / "hello")


def test_link_list_enable_disable_unlink(
    sim: Simulator, herdr: HerdrCli, plugin_dir: Path, short_dir: Path
) -> None:
    """plugin.rs ``plugin_link`` (JSON response), ``plugin_list`` (human list with the config
    dir, ``--json``), ``plugin_set_enabled`` and ``plugin_unlink``."""
    linked = herdr("plugin", "link", str(plugin_dir), "--disabled")
    assert linked.code == 0, linked.stderr
    assert linked.json["id"] == "cli:plugin"
    assert linked.json["result"]["plugin"]["enabled"] is False
    listed = herdr("plugin", "list")
    config = short_dir / "cfg" / "plugins" / "config" / "example.hello"
    assert listed.stdout.splitlines() == [
        "1 plugin installed:",
        f"- example.hello (Hello) disabled [local:{plugin_dir.resolve()}]",
        f"  config: {config}",
    ]
    assert herdr("plugin", "enable", "example.hello").json["result"]["type"] == "plugin_enabled"
    as_json = herdr("plugin", "list", "--json", "--plugin", "example.hello").json
    assert as_json["result"]["plugins"][0]["enabled"] is True
    missing = herdr("plugin", "disable", "nope")
    assert missing.code == 1
    assert json.loads(missing.stderr)["error"]["code"] == "plugin_not_found"
    assert herdr("plugin", "unlink", "example.hello").json["result"]["removed"] is True
    assert herdr("plugin", "list").stdout == "No plugins installed.\n"


def test_actions_logs_and_panes(sim: Simulator, herdr: HerdrCli, plugin_dir: Path) -> None:
    """plugin.rs ``plugin_action_invoke`` (context ``invocation_source: cli``),
    ``plugin_log_list`` and ``plugin_pane_open`` (``--placement``, focus by default)."""
    herdr("plugin", "link", str(plugin_dir))
    herdr("workspace", "create", "--focus")
    actions = herdr("plugin", "action", "list", "--plugin", "example.hello").json
    assert [a["action_id"] for a in actions["result"]["actions"]] == ["fail", "greet"]
    invoked = herdr("plugin", "action", "invoke", "greet", "--plugin", "example.hello").json
    assert invoked["result"]["context"]["invocation_source"] == "cli"

    def done() -> bool:
        logs = herdr("plugin", "log", "list", "--limit", "5").json["result"]["logs"]
        return bool(logs) and logs[-1]["status"] == "succeeded"

    wait_until(done, what="the action's log")
    opened = herdr(
        "plugin",
        "pane",
        "open",
        "--plugin",
        "example.hello",
        "--entrypoint",
        "board",
        "--placement",
        "tab",
    ).json["result"]["plugin_pane"]
    assert opened["pane"]["focused"] is True
    pane_id = opened["pane"]["pane_id"]
    assert herdr("plugin", "pane", "focus", pane_id).json["result"]["type"] == "plugin_pane_focused"
    closed = herdr("plugin", "pane", "close", pane_id).json
    assert closed["result"] == {"type": "plugin_pane_closed", "pane_id": pane_id}


@pytest.mark.parametrize(
    ("argv", "err"),
    [
        (["plugin", "link"], "usage: herdr plugin link <path> [--disabled]\n"),
        (["plugin", "list", "--frob"], "unknown option: --frob\n"),
        (["plugin", "list", "--plugin"], "missing value for --plugin\n"),
        (["plugin", "unlink"], "usage: herdr plugin unlink <plugin_id>\n"),
        (["plugin", "log", "--limit", "x"], "invalid --limit value: x\n"),
        (["plugin", "pane", "open", "--plugin", "p"], "missing required --entrypoint\n"),
        (
            ["plugin", "pane", "open", "--plugin", "p", "--entrypoint", "e", "--placement", "x"],
            "invalid pane placement: x\n",
        ),
        (
            ["plugin", "action", "invoke"],
            "usage: herdr plugin action invoke <action_id> [--plugin ID]\n",
        ),
    ],
)
def test_usage_errors_exit_2(
    cli: Callable[..., Run], clean_env: Path, argv: list[str], err: str
) -> None:
    """plugin.rs prints its own messages and exits 2 before sending anything."""
    run = cli(*argv)
    assert (run.code, run.err) == (2, err)


def test_bare_plugin_prints_the_command_list(cli: Callable[..., Run], clean_env: Path) -> None:
    """plugin.rs ``print_plugin_help``: exit 2 without a subcommand, 0 for ``help``."""
    bare = cli("plugin")
    assert bare.code == 2
    assert bare.err_lines[0] == "herdr plugin commands:"
    assert "  herdr plugin log list [--plugin ID] [--limit N]" in bare.err_lines
    assert cli("plugin", "help").code == 0


def test_link_and_list_work_without_a_server(
    cli: Callable[..., Run], clean_env: Path, plugin_dir: Path
) -> None:
    """plugin.rs ``offline_plugin_link_response`` / ``offline_plugin_list_response``: no
    server → the registry file is read and written directly."""
    linked = cli("plugin", "link", str(plugin_dir))
    assert linked.code == 0, linked.err
    assert json.loads(linked.out)["result"]["plugin"]["plugin_id"] == "example.hello"
    assert json.loads((clean_env / "plugins.json").read_text())[0]["plugin_id"] == "example.hello"
    assert cli("plugin", "list").out.startswith("1 plugin installed:\n- example.hello (Hello)")
    config_dir = cli("plugin", "config-dir", "example.hello")
    assert config_dir.out == f"{clean_env / 'plugins' / 'config' / 'example.hello'}\n"
    gone = cli("plugin", "uninstall", "example.hello")
    assert (gone.code, gone.out) == (0, "Uninstalled example.hello.\n")
    again = cli("plugin", "uninstall", "example.hello")
    assert (again.code, again.err) == (1, "plugin not installed: example.hello\n")


def test_offline_link_of_a_bad_manifest_is_an_error(
    cli: Callable[..., Run], clean_env: Path, tmp_path: Path
) -> None:
    """plugin.rs ``load_cli_plugin_manifest``: the manifest error escapes ``main``."""
    run = cli("plugin", "link", str(tmp_path / "missing"))
    assert run.code == 1
    assert run.err.startswith('Error: Custom { kind: Other, error: "')
