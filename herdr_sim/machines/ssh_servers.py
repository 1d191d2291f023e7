"""Which SSH server fronts a test machine, and ``herdr-sim machine-host`` that serves one.

Two servers can play a saved machine's SSH host: OpenSSH's ``sshd``
(:class:`herdr_sim.machines.host.SshHost`, preferred: it is what users run) and asyncssh in
this process (:class:`herdr_sim.machines.inprocess_ssh.InProcessSshHost`, where ``sshd`` is not
installed). :func:`new_ssh_host` picks one; :func:`serve_machine_host` is the foreground
command for manual use.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
from pathlib import Path

from herdr_sim.host.stop_signals import StopSignals
from herdr_sim.machines.host import SshHost, SshHostUnavailable, find_sshd

__all__ = ["SSH_SERVER_ENV", "new_ssh_host", "serve_machine_host"]

#: Chooses the SSH server: ``sshd`` (OpenSSH) or ``inprocess`` (asyncssh); unset: sshd when
#: installed, else the in-process one.
SSH_SERVER_ENV = "HERDR_SIM_SSH_SERVER"


def new_ssh_host(
    directory: Path,
    remote_home: Path,
    remote_config_dir: Path,
    alias: str = "herdr-sim-machine",
    kind: str | None = None,
) -> SshHost:
    """An SSH host of ``kind`` (``sshd`` or ``inprocess``; default :data:`SSH_SERVER_ENV`,
    else OpenSSH's ``sshd`` when installed, else asyncssh in this process)."""
    kind = kind or os.environ.get(SSH_SERVER_ENV) or None
    if kind not in (None, "sshd", "inprocess"):
        raise SshHostUnavailable(f"unknown SSH server {kind!r}; use sshd or inprocess")
    if kind == "sshd" or (kind is None and find_sshd() is not None):
        return SshHost(directory, remote_home, remote_config_dir, alias=alias)
    try:
        from .inprocess_ssh import InProcessSshHost
    except ImportError:
        if kind == "inprocess":  # chosen by name: only asyncssh is missing, whatever sshd is
            raise SshHostUnavailable(
                f"{SSH_SERVER_ENV}=inprocess needs asyncssh, which is not installed: "
                "pip install 'pytest-herdr[machines]' (or unset it to use OpenSSH's sshd)"
            ) from None
        raise SshHostUnavailable(
            "no SSH server: install OpenSSH's sshd (Debian: openssh-server) "
            "or asyncssh (pip install 'pytest-herdr[machines]')"
        ) from None
    return InProcessSshHost(directory, remote_home, remote_config_dir, alias=alias)


def serve_machine_host(
    label: str, session: str, directory: Path, env: dict[str, str], stop: StopSignals
) -> int:
    """``herdr-sim machine-host``: a remote simulator behind sshd, saved as machine ``label``
    in the catalog of the simulator CLI that ``env`` names, until ``stop`` is set.

    The SSH client block goes to ``<config dir>/ssh/config`` and the profile to the catalog;
    both are removed again on the way out (the rest lives in ``directory``).
    """
    from herdr_sim.config import SimulatorConfig
    from herdr_sim.machines.endpoints import CatalogError, EndpointCatalog
    from herdr_sim.simulator import Simulator, SimulatorError
    from orchestrator.client.socket_paths import config_dir_str

    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    sim = Simulator(SimulatorConfig(socket_path=directory / "sim.sock"))
    alias = f"herdr-sim-{secrets.token_hex(4)}"  # an ssh Host name, whatever the label
    host = new_ssh_host(directory / "ssh", directory / "home", directory / "cfg", alias=alias)
    ssh_config = Path(config_dir_str(env)) / "ssh" / "config"
    block = ""
    profile_id: str | None = None
    try:
        sim.start()
        host.start()
        host.install_remote_herdr()
        host.link_session(sim.socket_path, session)
        block = host.client_config()
        ssh_config.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with ssh_config.open("a") as handle:
            handle.write(block)
        ssh_config.chmod(0o600)
        catalog = EndpointCatalog.load(env)
        profile_id = catalog.add(label, alias, session).id
        catalog.store(env)
        print(
            f"herdr-sim: machine '{label}' ({profile_id}) is {alias} on 127.0.0.1:{host.port}; "
            f"try: herdr --machine {label} pane list",
            file=sys.stderr,
            flush=True,
        )
        stop.wait()
        return 0
    except (SimulatorError, SshHostUnavailable, CatalogError, OSError) as exc:
        print(f"herdr-sim machine-host: {exc}", file=sys.stderr)
        return 1
    finally:
        if profile_id is not None:
            with contextlib.suppress(CatalogError):
                catalog = EndpointCatalog.load(env)
                if catalog.remove(profile_id):
                    catalog.store(env)
        if block and ssh_config.is_file():
            ssh_config.write_text(ssh_config.read_text().replace(block, "", 1))
        host.stop()
        sim.stop()
