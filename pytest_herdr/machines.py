"""``herdr_machine``: a second simulator behind a real SSH server, saved as a Herdr machine.

Herdr's ``herdr --machine <label> …`` runs the real ``ssh`` to a saved machine. The
fixtures here make one on the test's own loopback: a second simulator (from
``herdr_server_factory``, so it is reaped and reported like any other), an OpenSSH
``sshd`` in front of it with host and user keys generated in the test's directory
(:class:`herdr_sim.machines.host.SshHost`), the client's ``ssh_config`` block in the local
simulator's config directory, and the catalog entry saved. Then::

    def test_remote_panes(herdr_cli, herdr_machine):
        result = herdr_cli("--machine", "box", "pane", "list")

``~/.ssh`` is never read or written: the local CLI runs ``ssh -F <its config dir>/ssh/config``
and that file names this test's keys and ``known_hosts``. Without ``sshd`` installed the
fixtures serve SSH from this process with asyncssh
(:mod:`herdr_sim.machines.inprocess_ssh`); with neither they skip (fail under ``CI=true``) and say
what to install. They need the simulator backend (a real Herdr's catalog and SSH settings
are the user's own).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pytest

from herdr_sim.machines.endpoints import EndpointCatalog
from herdr_sim.machines.host import SshHost, SshHostUnavailable
from herdr_sim.machines.ssh_servers import new_ssh_host

from .backends import HerdrServer
from .cli_runner import CliResult, HerdrCli
from .fixtures import ServerFactory
from .temp_dirs import short_dir

__all__ = ["Machine", "MachineFactory", "herdr_machine", "herdr_machine_factory"]


@dataclass
class Machine:
    """A saved machine: its catalog entry, the SSH host and the simulator behind it."""

    label: str
    #: the 32-hex profile id in the local catalog
    profile_id: str
    #: the SSH target saved in the catalog (an alias of the local ``ssh/config``)
    target: str
    session: str
    #: the remote simulator (its own ids, its own session)
    server: HerdrServer
    host: SshHost
    #: the local server whose CLI and catalog name this machine
    local: HerdrServer

    def cli(self, *argv: str, env: dict[str, str] | None = None) -> CliResult:
        """``herdr --machine <label> ARGV…`` from the local side."""
        run = HerdrCli(self.local.cli_path, self.local.env)
        return run("--machine", self.label, *argv, env=env)


class MachineFactory(Protocol):
    """``herdr_machine_factory(label, session=…, ssh_server=…, **settings)`` → a new saved
    :class:`Machine` (``ssh_server``: ``"sshd"`` or ``"inprocess"``, default: sshd when
    installed; ``settings`` go to the remote simulator)."""

    def __call__(
        self,
        label: str = "box",
        *,
        session: str = "default",
        ssh_server: str | None = None,
        **settings: Any,
    ) -> Machine: ...


def local_config_dir(server: HerdrServer) -> Path:
    """The local simulator's ``HERDR_SIM_CONFIG_DIR`` (where its CLI reads the catalog)."""
    return Path(server.env["HERDR_SIM_CONFIG_DIR"])


def save_machine(
    local: HerdrServer, label: str, target: str, session: str = "default", enabled: bool = True
) -> str:
    """Save a catalog entry for ``local``'s CLI; return its profile id."""
    env = dict(local.env)
    catalog = EndpointCatalog.load(env)
    profile = catalog.add(label, target, session)
    profile.enabled = enabled
    catalog.store(env)
    return profile.id


@pytest.fixture
def herdr_machine_factory(
    request: pytest.FixtureRequest,
    herdr_server: HerdrServer,
    herdr_server_factory: ServerFactory,
) -> Iterator[MachineFactory]:
    """A factory of saved machines for ``herdr_server``'s CLI; stops their SSH servers."""
    if herdr_server.backend != "sim":
        pytest.skip("herdr_machine needs the simulator backend (a real Herdr's are the user's)")
    hosts: list[SshHost] = []
    ssh_config = local_config_dir(herdr_server) / "ssh" / "config"

    def make(
        label: str = "box",
        *,
        session: str = "default",
        ssh_server: str | None = None,
        **settings: Any,
    ) -> Machine:
        directory = short_dir("herdr-ssh-")
        alias = f"herdr-machine-{len(hosts) + 1}"
        try:
            host = new_ssh_host(
                directory / "ssh", directory / "home", directory / "cfg", alias, ssh_server
            )
            hosts.append(host)
            host.start()
        except SshHostUnavailable as err:
            shutil.rmtree(directory, ignore_errors=True)
            if os.environ.get("CI") == "true":
                pytest.fail(f"herdr_machine: {err}")
            pytest.skip(f"herdr_machine: {err}")
        remote = herdr_server_factory(**settings)
        host.install_remote_herdr()
        host.link_session(remote.socket_path, session)
        ssh_config.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with ssh_config.open("a") as handle:
            handle.write(host.client_config())
        ssh_config.chmod(0o600)
        profile_id = save_machine(herdr_server, label, alias, session)
        return Machine(label, profile_id, alias, session, remote, host, herdr_server)

    yield make
    for host in hosts:
        host.stop()
        shutil.rmtree(host.directory.parent, ignore_errors=True)


@pytest.fixture
def herdr_machine(herdr_machine_factory: MachineFactory) -> Machine:
    """One saved machine labelled ``box``: ``herdr_cli("--machine", "box", "pane", "list")``."""
    return herdr_machine_factory("box")
