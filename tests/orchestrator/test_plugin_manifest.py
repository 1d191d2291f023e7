"""The Herdr plugin (issue 18 §7): ``herdr-orchestrator plugin-manifest DIR`` writes a manifest
Herdr's loader accepts, whose one action, ``check``, is read-only; the simulator's plugin
methods link it and invoke the action, which reports on the Herdr that ran it."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from herdr_sim._version import HERDR_VERSION
from herdr_sim.plugins import parse_manifest
from orchestrator import cli
from orchestrator.plugin_manifest import CHECK_ACTION, MANIFEST_FILE, PLUGIN_ID, write_manifest
from orchestrator.tools.registry import ALL_TOOLS
from tests.waits import wait_until

Api = Callable[..., dict[str, Any]]


def test_the_command_writes_a_manifest_herdr_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "plugin"
    assert cli.main(["plugin-manifest", str(target)]) == cli.EXIT_OK
    path = target / MANIFEST_FILE
    assert capsys.readouterr().out.strip() == str(path)
    assert path.stat().st_mode & 0o777 == 0o644
    parsed = parse_manifest(path.read_text(), HERDR_VERSION)
    assert parsed["plugin_id"] == PLUGIN_ID
    assert parsed["warnings"] == []
    (action,) = parsed["actions"]
    assert action["id"] == CHECK_ACTION
    # the action runs one tool, and that tool only reads
    argv = tomllib.loads(path.read_text())["actions"][0]["command"]
    assert argv[1:4] == ["-m", "orchestrator", "call"]
    assert ALL_TOOLS[argv[4]].risk == "R0"


def test_a_link_planted_at_the_manifest_path_is_replaced_not_written_through(
    tmp_path: Path,
) -> None:
    target = tmp_path / "plugin"
    target.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    (target / MANIFEST_FILE).symlink_to(victim)
    write_manifest(target)
    assert victim.read_text() == "untouched"
    assert not (target / MANIFEST_FILE).is_symlink()


def test_the_simulator_links_the_plugin_and_runs_its_check_action(api: Api, tmp_path: Path) -> None:
    root = write_manifest(tmp_path / "plugin").parent
    plugin = api("plugin.link", path=str(root))["plugin"]
    assert (plugin["plugin_id"], plugin["enabled"]) == (PLUGIN_ID, True)
    actions = api("plugin.action.list", plugin_id=PLUGIN_ID)["actions"]
    assert [a["action_id"] for a in actions] == [CHECK_ACTION]
    invoked = api("plugin.action.invoke", plugin_id=PLUGIN_ID, action_id=CHECK_ACTION)
    assert invoked["log"]["status"] == "running"

    def finished() -> dict[str, Any] | None:
        logs = api("plugin.log.list", plugin_id=PLUGIN_ID)["logs"]
        return logs[-1] if logs and logs[-1]["status"] != "running" else None

    log = wait_until(finished, timeout=30, what="the check action to finish")
    assert (log["status"], log["exit_code"]) == ("succeeded", 0), log
    report = json.loads(log["stdout"])
    server = next(c for c in report["checks"] if c["id"] == "herdr.server")
    assert server["status"] == "ok"  # it checked the Herdr that invoked it
    assert any(c["id"] == "policy" for c in report["checks"])
