"""The Herdr plugin (issue 18 §7): ``herdr-orchestrator plugin-manifest DIR`` writes a manifest
Herdr's loader accepts, whose one action, ``check``, is read-only; the simulator's plugin
methods link it and invoke the action, which reports on the Herdr that ran it."""

from __future__ import annotations

import json
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from herdr_sim._version import HERDR_VERSION
from herdr_sim.herdr_plugins.registry import parse_manifest
from orchestrator import cli
from orchestrator.pipeline.registry import ALL_TOOLS
from orchestrator.plugin_manifest import CHECK_ACTION, MANIFEST_FILE, PLUGIN_ID, write_manifest
from tests.results import field
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
    # the action runs the doctor subcommand, whose one tool only reads
    argv = tomllib.loads(path.read_text())["actions"][0]["command"]
    assert argv[1:] == ["-m", "orchestrator", "doctor"]
    assert ALL_TOOLS[cli.DOCTOR_TOOL].risk == "R0"


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


def _run_check_action(api: Api, root: Path) -> dict[str, Any]:
    """Link the plugin at ``root``, invoke its ``check`` action, and return its finished log."""
    plugin = api("plugin.link", path=str(root))["plugin"]
    assert (plugin["plugin_id"], plugin["enabled"]) == (PLUGIN_ID, True)
    actions = api("plugin.action.list", plugin_id=PLUGIN_ID)["actions"]
    assert [a["action_id"] for a in actions] == [CHECK_ACTION]
    invoked = api("plugin.action.invoke", plugin_id=PLUGIN_ID, action_id=CHECK_ACTION)
    assert invoked["log"]["status"] == "running"

    def finished() -> dict[str, Any] | None:
        logs = api("plugin.log.list", plugin_id=PLUGIN_ID)["logs"]
        return logs[-1] if logs and logs[-1]["status"] != "running" else None

    return wait_until(finished, timeout=30, what="the check action to finish")


def test_the_simulator_links_the_plugin_and_runs_its_check_action(api: Api, tmp_path: Path) -> None:
    log = _run_check_action(api, write_manifest(tmp_path / "plugin").parent)
    assert (field(log, "status"), log["exit_code"]) == ("succeeded", 0), log
    report = json.loads(log["stdout"])
    assert report["ok"] is True
    server = next(c for c in report["checks"] if c["id"] == "herdr.server")
    assert field(server, "status") == "ok"  # it checked the Herdr that invoked it
    assert any(c["id"] == "policy" for c in report["checks"])


def test_the_check_action_fails_when_a_doctor_check_fails(api: Api, tmp_path: Path) -> None:
    """The same action over a Herdr socket that is not there (this Python behind a wrapper
    that points ``HERDR_SOCKET_PATH`` elsewhere, as a stale setup would): the doctor's
    ``herdr.server`` check fails and so does the action's run (exit 1), its report in the log."""
    wrapper = tmp_path / "python-elsewhere"
    wrapper.write_text(
        f"#!/bin/sh\nHERDR_SOCKET_PATH={tmp_path / 'missing.sock'}\nexport HERDR_SOCKET_PATH\n"
        f'exec {sys.executable} "$@"\n'
    )
    wrapper.chmod(0o755)
    log = _run_check_action(api, write_manifest(tmp_path / "plugin", python=str(wrapper)).parent)
    assert (field(log, "status"), log["exit_code"]) == ("failed", 1), log
    report = json.loads(log["stdout"])
    assert report["ok"] is False
    server = next(c for c in report["checks"] if c["id"] == "herdr.server")
    assert field(server, "status") == "fail"


@pytest.mark.parametrize(
    ("result", "failed"),
    [
        (
            {"ok": True, "checks": [{"id": "a", "status": "ok"}, {"id": "b", "status": "warn"}]},
            False,
        ),
        (
            {"ok": False, "checks": [{"id": "a", "status": "ok"}, {"id": "b", "status": "fail"}]},
            True,
        ),
        ({"ok": False, "checks": []}, True),
        ({"ok": False, "error": {"code": "INVALID_ARGUMENTS"}}, True),
        ({"checks": ["not a check"]}, True),
    ],
)
def test_doctor_failed_passes_only_a_report_without_a_failing_check(
    result: dict[str, Any], failed: bool
) -> None:
    assert cli.doctor_failed(result) is failed


def test_the_doctor_subcommand_exits_by_the_report(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from orchestrator.pipeline import registry

    reports = {
        "good": {"ok": True, "checks": [{"id": "a", "status": "warn"}]},
        "bad": {"ok": False, "checks": [{"id": "a", "status": "fail"}]},
    }
    for name, code in (("good", cli.EXIT_OK), ("bad", cli.EXIT_NOT_OK)):
        monkeypatch.setattr(registry, "run_tool", lambda tool, args, r=reports[name]: r)
        assert cli.main(["doctor"]) == code
        assert json.loads(capsys.readouterr().out) == reports[name]
