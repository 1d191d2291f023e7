"""``integration.list/install/uninstall`` and ``herdr integration``: the simulator's own
integrations for its fake agents, written where Herdr writes its own
(``src/integration/env.rs``, ``targets.rs``), with Herdr's config edits and messages
(``config_edit.rs``, ``claude_settings.rs``, ``opencode_config.rs``, ``actions.rs``), into
the panes' HOME: the fakes' sandbox, never the user's home."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.client import RequestFailed, call, request
from herdr_sim.integrations import TARGETS
from herdr_sim.registry import UNSUPPORTED
from pytest_herdr.cli_runner import HerdrCli
from tests.waits import wait_until

pytestmark = pytest.mark.herdr_sim_only

Api = Callable[..., dict[str, Any]]

#: the file each provided integration's state is read from, relative to HOME (registry.rs)
STATUS_FILES = {
    "pi": ".pi/agent/extensions/herdr-agent-state.ts",
    "claude": ".claude/hooks/herdr-agent-state.sh",
    "codex": ".codex/herdr-agent-state.sh",
    "opencode": ".config/opencode/plugins/herdr-agent-state.js",
}
PROTOCOL_TARGETS = [
    "pi", "omp", "claude", "codex", "copilot", "devin", "droid", "kimi", "opencode", "kilo",
    "hermes", "qodercli", "qwen", "cursor", "mastracode", "antigravity_cli", "grok",
]  # fmt: skip


def states(api: Api) -> dict[str, str]:
    return {item["target"]: item["state"] for item in api("integration.list")["integrations"]}


def sandbox(sim: Simulator) -> Path:
    assert sim.agent_home is not None
    return sim.agent_home


def failure(sim: Simulator, method: str, **params: Any) -> dict[str, str]:
    error: dict[str, str] = request(sim.socket_path, method, params, request_id="t")["error"]
    return error


def test_integration_methods_are_implemented() -> None:
    assert not {"integration.list", "integration.install", "integration.uninstall"} & set(
        UNSUPPORTED
    )


def test_list_names_every_target_with_label_command_and_availability(api: Api) -> None:
    """``integration_recommendations`` (registry.rs): every target in protocol order; the
    fakes on the panes' PATH make pi, claude, codex and opencode available."""
    listed = api("integration.list")["integrations"]
    assert [item["target"] for item in listed] == PROTOCOL_TARGETS
    by_target = {item["target"]: item for item in listed}
    assert by_target["antigravity_cli"] | {} == {
        "target": "antigravity_cli",
        "label": "antigravity-cli",
        "command": "agy",
        "available": False,
        "state": "not_installed",
    }
    assert by_target["cursor"]["command"] == "cursor-agent"
    assert {t for t, item in by_target.items() if item["available"]} == set(STATUS_FILES)
    assert {item["state"] for item in listed} == {"not_installed"}


@pytest.mark.parametrize("target", sorted(STATUS_FILES))
def test_install_writes_into_the_sandbox_home_and_list_shows_it(
    target: str, sim: Simulator, api: Api
) -> None:
    answer = api("integration.install", target=target)
    assert answer["type"] == "integration_install"
    assert answer["target"] == target
    home = sandbox(sim)
    status_file = home / STATUS_FILES[target]
    assert status_file.is_file()
    assert "HERDR_INTEGRATION_VERSION=" in status_file.read_text()
    assert str(status_file) in "\n".join(answer["details"]["messages"])
    assert states(api)[target] == "current"


def test_install_messages_and_files_are_herdrs(sim: Simulator, api: Api) -> None:
    home = sandbox(sim)
    claude = api("integration.install", target="claude")["details"]["messages"]
    assert claude == [
        f"installed claude integration hook to {home}/.claude/hooks/herdr-agent-state.sh",
        f"ensured claude settings at {home}/.claude/settings.json",
    ]
    hook = home / ".claude" / "hooks" / "herdr-agent-state.sh"
    assert hook.stat().st_mode & 0o111
    assert json.loads((home / ".claude" / "settings.json").read_text()) == {
        "hooks": {
            "SessionStart": [
                {
                    "matcher": "*",
                    "hooks": [
                        {"type": "command", "command": f"bash '{hook}' session", "timeout": 10}
                    ],
                }
            ]
        }
    }
    codex = api("integration.install", target="codex")["details"]["messages"]
    assert codex == [
        f"installed codex integration hook to {home}/.codex/herdr-agent-state.sh",
        f"ensured codex hooks at {home}/.codex/hooks.json",
        f"ensured codex config at {home}/.codex/config.toml",
    ]
    assert (home / ".codex" / "config.toml").read_text() == "[features]\nhooks = true\n"
    codex_hook = home / ".codex" / "herdr-agent-state.sh"
    assert json.loads((home / ".codex" / "hooks.json").read_text())["hooks"]["SessionStart"] == [
        {"hooks": [{"type": "command", "command": f"bash '{codex_hook}' session", "timeout": 10}]}
    ]
    opencode = api("integration.install", target="opencode")["details"]["messages"]
    config = home / ".config" / "opencode"
    assert opencode == [
        f"installed opencode integration plugin to {config}/plugins/herdr-agent-state.js",
        f"installed opencode tui integration plugin to {config}/herdr-tui-session.js",
        f"ensured opencode tui plugin config at {config}/tui.jsonc",
    ]
    assert json.loads((config / "tui.jsonc").read_text()) == {"plugin": ["./herdr-tui-session.js"]}
    assert api("integration.install", target="pi")["details"]["messages"] == [
        f"installed pi integration to {home}/.pi/agent/extensions/herdr-agent-state.ts"
    ]


def test_install_is_idempotent(sim: Simulator, api: Api) -> None:
    home = sandbox(sim)
    files = [
        home / ".claude" / "settings.json",
        home / ".codex" / "hooks.json",
        home / ".codex" / "config.toml",
        home / ".config" / "opencode" / "tui.jsonc",
        *(home / relative for relative in STATUS_FILES.values()),
    ]
    for target in STATUS_FILES:
        api("integration.install", target=target)
    first = {path: path.read_text() for path in files}
    for target in STATUS_FILES:
        api("integration.install", target=target)
    assert {path: path.read_text() for path in files} == first


def test_uninstall_removes_the_files_and_undoes_the_config_edits(sim: Simulator, api: Api) -> None:
    """The user's own settings survive install + uninstall; Herdr leaves codex's
    ``config.toml`` as install left it ("left codex config unchanged", actions.rs)."""
    home = sandbox(sim)
    settings = home / ".claude" / "settings.json"
    mine = {
        "model": "opus",
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]},
    }
    settings.write_text(json.dumps(mine))
    toml = home / ".codex" / "config.toml"
    toml.write_text('model = "gpt-5"\n\n[features]\ncodex_hooks = true\n')
    tui = home / ".config" / "opencode" / "tui.jsonc"
    tui.write_text('{\n  // mine\n  "theme": "system",\n  "plugin": ["other"],\n}\n')
    for target in STATUS_FILES:
        api("integration.install", target=target)
    assert toml.read_text() == 'model = "gpt-5"\n\n[features]\nhooks = true\n'
    assert json.loads(tui.read_text())["plugin"] == ["other", "./herdr-tui-session.js"]

    claude = api("integration.uninstall", target="claude")
    assert claude["type"] == "integration_uninstall"
    assert claude["details"]["messages"] == [
        f"removed claude hook at {home}/.claude/hooks/herdr-agent-state.sh",
        f"removed herdr claude hook entries from {settings}",
    ]
    assert json.loads(settings.read_text()) == mine
    codex = api("integration.uninstall", target="codex")["details"]["messages"]
    assert codex[-1] == f"left codex config unchanged at {toml}"
    assert json.loads((home / ".codex" / "hooks.json").read_text()) == {"hooks": {}}
    assert toml.read_text() == 'model = "gpt-5"\n\n[features]\nhooks = true\n'
    opencode = api("integration.uninstall", target="opencode")["details"]["messages"]
    assert opencode[-1] == f"removed herdr opencode plugin entry from {tui}"
    assert json.loads(tui.read_text()) == {"theme": "system", "plugin": ["other"]}
    api("integration.uninstall", target="pi")
    assert not any((home / relative).exists() for relative in STATUS_FILES.values())
    assert not (home / ".config" / "opencode" / "herdr-tui-session.js").exists()
    assert set(states(api).values()) == {"not_installed"}
    # uninstalling again finds nothing, as Herdr says
    assert api("integration.uninstall", target="pi")["details"]["messages"] == [
        f"no pi integration extension found at {home}/.pi/agent/extensions/herdr-agent-state.ts"
    ]


def test_an_old_version_is_outdated(sim: Simulator, api: Api) -> None:
    api("integration.install", target="pi")
    path = sandbox(sim) / STATUS_FILES["pi"]
    path.write_text(
        path.read_text().replace("HERDR_INTEGRATION_VERSION=8", "HERDR_INTEGRATION_VERSION=7")
    )
    assert states(api)["pi"] == "outdated"


def test_the_installed_claude_hook_reports_the_session_to_the_simulator(
    sim: Simulator, api: Api
) -> None:
    """Claude runs the hook on SessionStart with its event on stdin; with the pane's Herdr
    variables (the guide's ``HERDR_ENV``, ``HERDR_PANE_ID``, ``HERDR_BIN_PATH``,
    ``HERDR_SOCKET_PATH``) the session reaches the pane as ``herdr:claude``'s."""
    api("integration.install", target="claude")
    hook = sandbox(sim) / ".claude" / "hooks" / "herdr-agent-state.sh"
    pane = api("workspace.create", cwd="/tmp")["root_pane"]["pane_id"]
    event = {
        "hook_event_name": "SessionStart",
        "session_id": "0b5c6f5e-claude",
        "transcript_path": "/tmp/t.jsonl",
        "source": "startup",
    }
    outside = {"PATH": os.environ["PATH"], "HOME": str(sandbox(sim))}
    inside = outside | {
        "HERDR_ENV": "1",
        "HERDR_PANE_ID": pane,
        "HERDR_BIN_PATH": str(sim.cli_path),
        "HERDR_SOCKET_PATH": str(sim.socket_path),
    }

    def run_hook(env: dict[str, str]) -> None:
        subprocess.run(
            ["bash", str(hook), "session"], input=json.dumps(event), env=env, timeout=30,
            text=True, check=True,
        )  # fmt: skip

    run_hook(outside)  # outside Herdr the hook does nothing, as the guide asks
    assert api("pane.get", pane_id=pane)["pane"].get("agent_session") is None
    run_hook(inside)
    info = wait_until(
        lambda: api("pane.get", pane_id=pane)["pane"].get("agent_session") or None,
        what="the reported session",
    )
    assert info == {
        "source": "herdr:claude",
        "agent": "claude",
        "kind": "id",
        "value": "0b5c6f5e-claude",
    }


def test_a_target_the_simulator_has_no_integration_for_fails_like_herdr(sim: Simulator) -> None:
    for method in ("integration.install", "integration.uninstall"):
        error = failure(sim, method, target="grok")
        assert error["code"] == method.replace(".", "_") + "_failed"
        assert error["message"].startswith(
            "grok integration is not provided by the Herdr simulator"
        )
    assert failure(sim, "integration.install", target="nope")["code"] == "invalid_request"


def test_a_missing_agent_directory_fails_with_herdrs_message(short_dir: Path) -> None:
    """Without the fakes the panes' HOME is the server's; an agent never installed there
    has no config dir (``install_claude``: "install claude code first")."""
    home = short_dir / "home"
    home.mkdir()
    base = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    with Simulator(socket_path=short_dir / "herdr.sock", base_env=base, fake_agents=False) as sim:
        error = failure(sim, "integration.install", target="claude")
        assert error == {
            "code": "integration_install_failed",
            "message": f"claude directory not found at {home}/.claude. install claude code first",
        }
        assert failure(sim, "integration.install", target="pi")["message"] == (
            f"pi extension directory not found at {home}/.pi/agent/extensions. install pi first"
        )
    assert list(home.iterdir()) == []


def test_the_users_own_home_is_never_written(
    short_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the fakes off the panes see the server's HOME; when that is the user's own home
    (here: the HOME of the process running the simulator), install refuses."""
    users_home = short_dir / "users-home"
    (users_home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(users_home))
    base = {"HOME": str(users_home), "PATH": "/usr/bin:/bin"}
    with Simulator(socket_path=short_dir / "herdr.sock", base_env=base, fake_agents=False) as sim:
        error = failure(sim, "integration.install", target="claude")
        assert error["code"] == "integration_install_failed"
        assert "does not write agent integrations into your home" in error["message"]
        with pytest.raises(RequestFailed):
            call(sim.socket_path, "integration.uninstall", {"target": "claude"})
    assert list((users_home / ".claude").iterdir()) == []


def test_the_cli_installs_into_its_own_home_like_herdrs(sim: Simulator, api: Api) -> None:
    """``herdr integration`` runs in the CLI process (``src/cli/integration.rs``): in a
    pane that is the sandbox HOME, so the server then lists the integration as current."""
    home = sandbox(sim)
    cli = HerdrCli(sim.cli_path, {"PATH": os.environ["PATH"], "HOME": str(home)}, timeout=30)
    installed = cli("integration", "install", "codex")
    assert installed.code == 0
    assert installed.stdout.splitlines()[0] == (
        f"installed codex integration hook to {home}/.codex/herdr-agent-state.sh"
    )
    assert states(api)["codex"] == "current"
    status = cli("integration", "status")
    assert status.code == 0
    assert f"codex: current (v8) ({home}/.codex/herdr-agent-state.sh)" in status.stdout.splitlines()
    assert f"pi: not installed ({home}/{STATUS_FILES['pi']})" in status.stdout.splitlines()
    unknown = cli("integration", "install", "nope")
    assert (unknown.code, unknown.stderr.splitlines()[0]) == (2, "unknown integration target: nope")
    assert cli("integration", "install").code == 2
    assert cli("integration", "uninstall", "codex").code == 0
    assert states(api)["codex"] == "not_installed"
    assert len(TARGETS) == 17


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_installed_opencode_plugin_reports_through_herdr_bin_path(
    sim: Simulator, api: Api, tmp_path: Path
) -> None:
    """opencode loads the plugin and calls its ``event`` hook; with the pane's Herdr
    variables a permission request reaches the simulator as ``herdr:opencode`` blocked."""
    api("integration.install", target="opencode")
    plugin = sandbox(sim) / ".config" / "opencode" / "plugins" / "herdr-agent-state.js"
    module = tmp_path / "plugin.mjs"  # node reads a bare .js outside a package as CommonJS
    module.write_text(plugin.read_text())
    pane = api("workspace.create", cwd="/tmp")["root_pane"]["pane_id"]
    seen: list[dict[str, Any]] = []
    sim.wire_taps.append(lambda kind, line: seen.append(line) if kind == "request" else None)
    script = (
        "const plugin = await import(process.argv[1]);"
        "const hooks = await plugin.HerdrAgentState();"
        'await hooks.event({event: {type: "permission.asked", properties: {sessionID: "ses_1"}}});'
    )
    env = {
        "PATH": os.environ["PATH"],
        "HERDR_ENV": "1",
        "HERDR_PANE_ID": pane,
        "HERDR_BIN_PATH": str(sim.cli_path),
        "HERDR_SOCKET_PATH": str(sim.socket_path),
    }
    subprocess.run(
        ["node", "--input-type=module", "-e", script, str(module)],
        env=env, timeout=30, check=True,
    )  # fmt: skip
    report = wait_until(
        lambda: next((r for r in seen if r.get("method") == "pane.report_agent"), None),
        what="the plugin's report",
    )
    assert {k: report["params"].get(k) for k in ("pane_id", "source", "agent", "state")} == {
        "pane_id": pane,
        "source": "herdr:opencode",
        "agent": "opencode",
        "state": "blocked",
    }
    assert report["params"]["agent_session_id"] == "ses_1"


def test_cli_status_outdated_only_names_what_to_reinstall(sim: Simulator, api: Api) -> None:
    """``print_outdated_update_notice`` (registry.rs): one stderr line, exit 0."""
    home = sandbox(sim)
    cli = HerdrCli(sim.cli_path, {"PATH": os.environ["PATH"], "HOME": str(home)}, timeout=30)
    quiet = cli("integration", "status", "--outdated-only")
    assert (quiet.code, quiet.stdout, quiet.stderr) == (0, "", "")
    for target in ("pi", "claude"):
        api("integration.install", target=target)
        path = home / STATUS_FILES[target]
        path.write_text(path.read_text().replace("INTEGRATION_VERSION=8", "INTEGRATION_VERSION=1"))
    notice = cli("integration", "status", "--outdated-only")
    assert (notice.code, notice.stdout) == (0, "")
    assert notice.stderr == (
        "installed herdr integrations need updating; run herdr integration install pi and "
        "herdr integration install claude.\n"
    )
    status = cli("integration", "status").stdout.splitlines()
    assert f"pi: outdated (v1 < v8) ({home}/{STATUS_FILES['pi']})" in status
    assert cli("integration", "status", "--bogus").code == 2
