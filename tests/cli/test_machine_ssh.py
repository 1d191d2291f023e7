"""``herdr --machine`` over a real SSH server: the ``herdr_machine`` fixture end to end.

Each machine is a second simulator behind OpenSSH's ``sshd`` on a loopback port, reached
by the real ``ssh`` client with strict host key checking and keys generated for the test.
Two machines and the local server each number their own workspaces from ``w1``, so
``w1:p1`` exists three times: the tests prove a call lands on the server it names.
Each ``--machine`` call authenticates once (about a quarter of a second here), so these
tests take a second or two each.
"""

from __future__ import annotations

import json
import os
import pwd
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from herdr_sim.machines.endpoints import EndpointCatalog
from herdr_sim.machines.host import SshHostUnavailable
from herdr_sim.machines.ssh_servers import new_ssh_host
from pytest_herdr.backends import HerdrServer
from pytest_herdr.cli_runner import HerdrCli
from pytest_herdr.machines import Machine, MachineFactory
from tests.cli.conftest import Run
from tests.waits import SCALE, wait_until


def local_cli(server: HerdrServer) -> HerdrCli:
    """The ``herdr`` of a server, with that server's environment."""
    return HerdrCli(server.cli_path, server.env)


def label_first_workspace(server: HerdrServer, label: str) -> None:
    """Create the server's first workspace (``w1``, pane ``w1:p1``) labelled ``label``."""
    created = local_cli(server)("workspace", "create", "--label", label)
    assert created.ok, created
    assert created.json["result"]["workspace"]["workspace_id"] == "w1"


def user_ssh_dir_state() -> object:
    """What the user's real ``~/.ssh`` holds (ssh finds it through the password database,
    not ``$HOME``): names and modification times, or ``None`` when it does not exist."""
    ssh_dir = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".ssh"
    if not ssh_dir.exists():
        return None
    return sorted((p.name, p.stat().st_mtime_ns) for p in ssh_dir.iterdir())


def test_pane_list_runs_on_the_machine(
    herdr_server: HerdrServer, herdr_cli: HerdrCli, herdr_machine: Machine
) -> None:
    before = user_ssh_dir_state()
    label_first_workspace(herdr_machine.server, "remote-only")
    remote = herdr_cli("--machine", "box", "pane", "list")
    assert remote.ok, remote
    assert [p["pane_id"] for p in remote.json["result"]["panes"]] == ["w1:p1"]
    assert herdr_cli("pane", "list").json["result"]["panes"] == []
    workspaces = herdr_cli("--machine", herdr_machine.profile_id, "workspace", "list")
    assert [w["label"] for w in workspaces.json["result"]["workspaces"]] == ["remote-only"]
    assert user_ssh_dir_state() == before


def test_two_machines_two_id_spaces(
    herdr_server: HerdrServer, herdr_cli: HerdrCli, herdr_machine_factory: MachineFactory
) -> None:
    """Slow-ish (about 3 s): two SSH servers and five forwarded calls."""
    first = herdr_machine_factory("box")
    second = herdr_machine_factory("box2")
    label_first_workspace(herdr_server, "local")
    label_first_workspace(first.server, "first")
    label_first_workspace(second.server, "second")
    renamed = herdr_cli("--machine", "box", "workspace", "rename", "w1", "renamed-on-box")
    assert renamed.ok, renamed

    def label_on(*prefix: str) -> str:
        got = herdr_cli(*prefix, "workspace", "get", "w1")
        assert got.ok, got
        return str(got.json["result"]["workspace"]["label"])

    assert label_on("--machine", "box") == "renamed-on-box"
    assert label_on("--machine", "box2") == "second"
    assert label_on() == "local"
    # the requests reached the servers they named, and only those
    assert second.server.requests is not None and first.server.requests is not None
    assert not second.server.requests.requests(method="workspace.rename")
    assert len(first.server.requests.requests(method="workspace.rename")) == 1


def test_disabled_and_unknown_machines_are_refused(
    herdr_cli: HerdrCli, herdr_machine: Machine
) -> None:
    disabled = herdr_cli("machine", "disable", herdr_machine.profile_id)
    assert disabled.stdout == f"Disabled SSH machine {herdr_machine.profile_id}.\n"
    refused = herdr_cli("--machine", "box", "pane", "list")
    assert (refused.code, refused.stderr) == (2, "error: machine 'box' is disabled\n")
    unknown = herdr_cli("--machine", "nobox", "pane", "list")
    assert (unknown.code, unknown.stderr) == (
        2,
        "error: unknown machine 'nobox'; use `herdr machine list`\n",
    )
    assert herdr_machine.server.requests is not None
    assert herdr_machine.server.requests.requests(method="pane.list") == []


def test_host_key_mismatch_is_refused(herdr_cli: HerdrCli, herdr_machine: Machine) -> None:
    other = herdr_machine.host.directory / "other_host_key"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True, timeout=30
    )
    herdr_machine.host.trust_host_key(other.with_suffix(".pub").read_text())
    run = herdr_cli("--machine", "box", "pane", "list")
    assert run.code == 1, run
    assert run.stderr.startswith("Error: Custom { kind: Other, error: \"machine 'box': ")
    assert "Host key verification failed" in run.stderr
    assert "strict host key checking" in run.stderr
    assert herdr_machine.server.requests is not None
    assert herdr_machine.server.requests.requests(method="pane.list") == []


def test_a_stopped_remote_server_is_a_runtime_error(
    herdr_cli: HerdrCli, herdr_machine: Machine
) -> None:
    herdr_machine.server.stop()
    run = herdr_cli("--machine", "box", "pane", "list")
    assert run.code == 1
    assert "machine 'box' (session default): failed to connect to remote Herdr API socket" in (
        run.stderr
    )


def test_machine_status_reports_each_machine(
    herdr_cli: HerdrCli, herdr_machine_factory: MachineFactory
) -> None:
    up = herdr_machine_factory("up")
    down = herdr_machine_factory("down")
    down.host.stop()
    status = herdr_cli("machine", "status", "--json")
    rows = {row["label"]: row for row in json.loads(status.stdout)}
    assert rows["up"]["reachable"] is True and rows["up"]["error"] is None
    assert rows["down"]["reachable"] is False and "refused" in rows["down"]["error"].lower()
    one = herdr_cli("machine", "status", up.profile_id)
    assert one.stdout == f"{up.profile_id}\tup\treachable\n"


def test_machine_add_checks_the_remote_before_saving(
    herdr_server: HerdrServer, herdr_cli: HerdrCli, herdr_machine: Machine
) -> None:
    env = dict(herdr_server.env)
    added = herdr_cli("machine", "add", herdr_machine.target, "--label", "again")
    assert added.ok, added
    assert added.stdout.startswith("Saved SSH machine ")
    assert added.stdout.endswith(
        ". Remote server is ready.\nOpen Herdr clients connect automatically.\n"
    )
    labels = [p.label for p in EndpointCatalog.load(env).ssh]
    assert labels == ["box", "again"]
    herdr_machine.server.stop()
    failed = herdr_cli("machine", "add", herdr_machine.target, "--label", "third")
    assert failed.code == 1
    assert "; machine was not saved" in failed.stderr
    assert [p.label for p in EndpointCatalog.load(env).ssh] == ["box", "again"]


def test_bridge_check_and_usage(cli: Callable[..., Run], clean_env: Path) -> None:
    assert cli("remote-api-bridge", "--check") == Run(0, "herdr-api-bridge-v1\n", "")
    assert cli("remote-api-bridge", "--now") == Run(
        2, "", "usage: herdr remote-api-bridge [--check]\n"
    )
    run = cli("--session", "gone", "remote-api-bridge")
    assert run.code == 1
    assert run.err.startswith("failed to connect to remote Herdr API socket ")
    assert "sessions/gone/herdr.sock" in run.err


def test_remote_worktree_home_path_is_not_expanded_here(
    herdr_cli: HerdrCli, herdr_machine: Machine
) -> None:
    herdr_cli("--machine", "box", "worktree", "list", "--cwd", "~/project")
    assert herdr_machine.server.requests is not None
    (sent,) = herdr_machine.server.requests.requests(method="worktree.list")
    assert sent.params["cwd"] == "~/project"


def test_machine_host_command_serves_and_cleans_up(
    launcher: Path, clean_env: Path, sock_dir: Path
) -> None:
    """``herdr-sim machine-host`` for manual use (about 2 s: an SSH server, a simulator, one
    call; sshd when installed, else the in-process server)."""
    env = {**os.environ, "HERDR_SIM_CONFIG_DIR": str(clean_env)}
    argv = ["machine-host", "--label", "lab", "--dir", str(sock_dir / "m")]
    host = subprocess.Popen(
        [sys.executable, "-m", "herdr_sim", *argv],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert host.stderr is not None
        ready = host.stderr.readline()  # the first line is the ready line (or an error)
        assert "try: herdr --machine lab pane list" in ready, ready
        done = subprocess.run(
            [str(launcher), "--machine", "lab", "status", "server"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60 * SCALE,
            check=False,
        )
        assert done.returncode == 0, done
        assert "status: running" in done.stdout
    finally:
        host.send_signal(signal.SIGTERM)
        host.wait(timeout=30 * SCALE)
        assert host.stderr is not None
        host.stderr.close()
    assert host.returncode == 0
    assert EndpointCatalog.load(env).ssh == []
    assert (clean_env / "ssh" / "config").read_text() == ""


def test_server_stop_on_a_machine_stops_the_remote_server_only(
    herdr_server: HerdrServer, herdr_cli: HerdrCli, herdr_machine: Machine
) -> None:
    stopped = herdr_cli("--machine", "box", "server", "stop")
    assert (stopped.code, stopped.stderr) == (0, ""), stopped
    remote = herdr_machine.server.sim
    assert remote is not None and remote.wait_stopped(timeout=10 * SCALE)
    assert herdr_cli("pane", "list").ok  # the local server still runs


def test_a_remote_herdr_without_the_bridge_is_refused(
    herdr_cli: HerdrCli, herdr_machine: Machine
) -> None:
    """A remote Herdr older than 0.9.1 has no ``remote-api-bridge``."""
    old = herdr_machine.host.remote_home / ".local" / "bin" / "herdr"
    old.write_text('#!/bin/sh\necho "unknown command: $2" >&2\nexit 2\n')
    run = herdr_cli("--machine", "box", "pane", "list")
    assert run.code == 1
    assert "machine 'box': remote Herdr at" in run.stderr
    assert "does not support machine API forwarding" in run.stderr
    assert "install or update Herdr 0.9.1 or newer" in run.stderr


def test_protocol_mismatch_names_the_machine(
    herdr_cli: HerdrCli, herdr_machine_factory: MachineFactory
) -> None:
    herdr_machine_factory("old", protocol=21)
    run = herdr_cli("--machine", "old", "pane", "list")
    assert run.code == 1
    error = json.loads(run.stderr)["error"]
    assert error["code"] == "protocol_mismatch"
    assert error["message"].startswith("client protocol 22 is newer than server protocol 21")
    assert "restart the server on machine 'old' (session default)" in error["message"]


def test_the_in_process_ssh_server_serves_the_same_path(
    herdr_cli: HerdrCli, herdr_machine_factory: MachineFactory
) -> None:
    """The fallback where sshd is not installed (asyncssh in this process): same client, same
    strict host key checking, same remote command."""
    machine = herdr_machine_factory("inproc", ssh_server="inprocess")
    assert type(machine.host).__name__ == "InProcessSshHost"
    label_first_workspace(machine.server, "in-process")
    listed = herdr_cli("--machine", "inproc", "workspace", "list")
    assert listed.ok, listed
    assert [w["label"] for w in listed.json["result"]["workspaces"]] == ["in-process"]
    other = machine.host.directory / "other_host_key"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True, timeout=30
    )
    machine.host.trust_host_key(other.with_suffix(".pub").read_text())
    refused = herdr_cli("--machine", "inproc", "workspace", "list")
    assert refused.code == 1 and "Host key verification failed" in refused.stderr


def test_the_in_process_ssh_server_offers_ed25519_alone(
    herdr_machine_factory: MachineFactory,
) -> None:
    """The asyncssh fallback negotiates only the key type its keys have: a client that will take
    nothing but an RSA or ECDSA host key finds no common algorithm, while ed25519 connects."""
    machine = herdr_machine_factory("algs", ssh_server="inprocess")
    config = machine.host.directory / "client_config"
    config.write_text(machine.host.client_config())

    def ssh(*options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["ssh", "-F", str(config), "-o", "LogLevel=INFO", *options, machine.host.alias, "true"],
            capture_output=True,
            text=True,
            timeout=30 * SCALE,
            check=False,
        )

    for algorithm in ("rsa-sha2-512", "ecdsa-sha2-nistp256"):
        refused = ssh("-o", f"HostKeyAlgorithms={algorithm}")
        assert refused.returncode == 255, refused
        assert "no matching host key type found" in refused.stderr, refused.stderr
    assert ssh("-o", "HostKeyAlgorithms=ssh-ed25519").returncode == 0


def test_importing_the_in_process_ssh_server_raises_no_warning() -> None:
    """asyncssh names cryptography's deprecated DSA classes on import; the simulator's module
    silences that one warning for that import alone, so a program running with warnings as
    errors can still use it, and nothing else is filtered (a warning of ours still raises)."""
    probe = (
        "import warnings\n"
        "import herdr_sim.machines.inprocess_ssh\n"
        "try:\n"
        "    warnings.warn('ours', DeprecationWarning)\n"
        "except DeprecationWarning:\n"
        "    print('still errors')\n"
    )
    run = subprocess.run(
        [sys.executable, "-W", "error", "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == "still errors\n"


def test_an_unknown_ssh_server_kind_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SshHostUnavailable, match="unknown SSH server 'telnet'"):
        new_ssh_host(tmp_path / "s", tmp_path / "h", tmp_path / "c", kind="telnet")


@pytest.mark.parametrize("how", ["env", "kind"])
def test_the_in_process_server_chosen_without_asyncssh_asks_for_asyncssh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """``HERDR_SIM_SSH_SERVER=inprocess`` names the server: when asyncssh is missing the
    reason asks for it (the ``machines`` extra), not for sshd, which may well be installed."""
    monkeypatch.setitem(sys.modules, "herdr_sim.machines.inprocess_ssh", None)  # import fails
    monkeypatch.setenv("HERDR_SIM_SSH_SERVER", "inprocess" if how == "env" else "sshd")
    kind = "inprocess" if how == "kind" else None
    with pytest.raises(SshHostUnavailable) as raised:
        new_ssh_host(tmp_path / "s", tmp_path / "h", tmp_path / "c", kind=kind)
    reason = str(raised.value)
    assert "needs asyncssh" in reason and "pytest-herdr[machines]" in reason, reason
    assert "install OpenSSH" not in reason


def test_ssh_server_dying_mid_request_ends_the_call_with_the_machine_named(
    herdr_server: HerdrServer, herdr_machine: Machine
) -> None:
    """A request in flight when the machine's SSH server dies fails (exit 1) at once, and
    names the machine and session; what the server did with it is for the caller to check."""
    label_first_workspace(herdr_machine.server, "remote")
    argv = ["--machine", "box", "pane", "wait-output", "w1:p1", "--match", "NEVER-PRINTED"]
    waiting = subprocess.Popen(
        [str(herdr_server.cli_path), *argv, "--timeout", "60000"],
        env=herdr_server.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        log = herdr_machine.server.requests
        assert log is not None
        wait_until(lambda: log.requests(method="pane.wait_for_output"), timeout=30)
        herdr_machine.host.stop()
        out, err = waiting.communicate(timeout=15 * SCALE)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.communicate()
    assert waiting.returncode == 1, (out, err)
    assert "machine 'box' (session default): " in err


def test_machine_reconnect_checks_with_the_terminal_attached(
    herdr_cli: HerdrCli, herdr_machine: Machine
) -> None:
    """Our key needs no prompt, so the interactive ssh succeeds on its own here."""
    done = herdr_cli("machine", "reconnect", "box")
    assert (done.code, done.stdout) == (
        0,
        f"SSH machine {herdr_machine.profile_id} is reachable.\n",
    )
    unknown = herdr_cli("machine", "reconnect", "nobox")
    assert (unknown.code, unknown.stderr) == (
        2,
        "error: unknown machine 'nobox'; use `herdr machine list`\n",
    )
    herdr_machine.server.stop()
    down = herdr_cli("machine", "reconnect", herdr_machine.profile_id)
    assert down.code == 1 and down.stderr.startswith("error: machine 'box': ")
