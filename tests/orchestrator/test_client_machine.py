"""The CLI transport's ``machine``: Herdr's ``--machine <label>`` prefix, and nothing local.

A stub ``herdr`` records the argv and the ``HERDR_PANE_ID`` it got, so these tests see
exactly what a saved machine's call would run (the end-to-end path over a real SSH server
is tests/orchestrator/agent_tools/test_machines.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.client import cli_map
from orchestrator.client.transports import CliTransport

STUB = """#!/bin/sh
printf '%s\\n' "$@" > "$0.argv"
printf '%s' "${HERDR_PANE_ID-unset}" > "$0.pane"
echo '{"error":{"code":"x","message":"stub"}}' >&2
exit 1
"""


def stub_herdr(tmp_path: Path) -> Path:
    herdr = tmp_path / "herdr"
    herdr.write_text(STUB)
    herdr.chmod(0o755)
    return herdr


def test_a_machine_prefixes_every_command_and_drops_the_local_pane(tmp_path: Path) -> None:
    herdr = stub_herdr(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "HERDR_PANE_ID": "w1:p1"}
    transport = CliTransport(herdr, env=env, machine="box")
    exchange = transport.run(cli_map.operation("agent.list"), {})
    assert exchange.argv[:4] == ("herdr", "--machine", "box", "agent")
    assert Path(f"{herdr}.argv").read_text().split("\n")[:3] == ["--machine", "box", "agent"]
    assert Path(f"{herdr}.pane").read_text() == "unset"
    assert env["HERDR_PANE_ID"] == "w1:p1"  # the caller's own mapping is left alone


def test_without_a_machine_nothing_changes(tmp_path: Path) -> None:
    herdr = stub_herdr(tmp_path)
    transport = CliTransport(herdr, env={"PATH": "/usr/bin:/bin", "HERDR_PANE_ID": "w1:p1"})
    exchange = transport.run(cli_map.operation("agent.list"), {})
    assert exchange.argv[:3] == ("herdr", "agent", "list")
    assert Path(f"{herdr}.pane").read_text() == "w1:p1"
    assert json.loads(exchange.stderr)["error"]["message"] == "stub"


@pytest.mark.parametrize("machine", ["", "-F/tmp/x", "--session"])
def test_a_label_that_reads_as_an_option_is_refused(tmp_path: Path, machine: str) -> None:
    with pytest.raises(ValueError, match="not a machine label"):
        CliTransport(stub_herdr(tmp_path), env={}, machine=machine)
