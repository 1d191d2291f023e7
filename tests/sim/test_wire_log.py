"""The wire log (``$HERDR_SIM_WIRE_LOG``) is written like a secret (issue 13): created 0600,
never through a symlink or into a FIFO left at its path, and ``env`` values redacted with the
helper the failure forensics use (:func:`herdr_sim.persist.redaction.redact`)."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.client import request
from herdr_sim.persist.redaction import REDACTED
from herdr_sim.persist.wire_log import UnsafeWireLog, WireLog
from pytest_herdr import forensics


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A umask that would leave a new file world-readable, so 0600 is the log's own doing."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.usefixtures("open_umask")
def test_a_new_wire_log_is_private(tmp_path: Path) -> None:
    log = WireLog(tmp_path / "wire.jsonl")
    log("request", {"id": "a", "method": "ping", "params": {}})
    log.close()
    path = tmp_path / "wire.jsonl"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["line"]["method"] == "ping"


def test_an_existing_log_of_ours_is_appended_to_and_narrowed(tmp_path: Path) -> None:
    path = tmp_path / "wire.jsonl"
    path.write_text('{"kind":"request","line":{},"pid":1}\n')
    path.chmod(0o644)
    log = WireLog(path)
    log("response", {"id": "a", "result": {}})
    log.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(path.read_text().splitlines()) == 2


def test_a_symlink_at_the_path_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "victim"
    target.write_text("precious\n")
    link = tmp_path / "wire.jsonl"
    link.symlink_to(target)
    with pytest.raises(OSError, match="symbolic links"):  # ELOOP from O_NOFOLLOW
        WireLog(link)
    assert target.read_text() == "precious\n"


def test_a_dangling_symlink_is_refused_and_nothing_created(tmp_path: Path) -> None:
    link = tmp_path / "wire.jsonl"
    link.symlink_to(tmp_path / "planted")
    with pytest.raises(OSError, match="symbolic links"):
        WireLog(link)
    assert not (tmp_path / "planted").exists()


def test_a_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "wire.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="No such device"):  # no reader: ENXIO, no hang
        WireLog(fifo)
    # with a reader on the other end the open succeeds, and the type check refuses it
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(UnsafeWireLog, match="not a regular file"):
            WireLog(fifo)
    finally:
        os.close(reader)


def test_env_values_are_redacted_as_forensics_redacts_them(tmp_path: Path) -> None:
    line: dict[str, Any] = {
        "id": "c",
        "method": "workspace.create",
        "params": {"cwd": "/tmp", "env": {"API_TOKEN": "s3cret", "HOME": "/h"}},
    }
    log = WireLog(tmp_path / "wire.jsonl")
    log("request", line)
    log.close()
    text = (tmp_path / "wire.jsonl").read_text()
    assert "s3cret" not in text
    logged = json.loads(text)["line"]
    assert logged["params"]["env"] == {"API_TOKEN": REDACTED, "HOME": REDACTED}
    assert logged == forensics.redact(line)  # one helper for both
    assert line["params"]["env"]["API_TOKEN"] == "s3cret"  # the server's copy is untouched


def test_env_maps_inside_lists_are_redacted_and_other_items_kept() -> None:
    """An ``env`` map nested in a list (a launch plan's panes, an event batch) is redacted
    like one at the top; the list's other items come through unchanged."""
    line = {"panes": [{"env": {"API_TOKEN": "s3cret"}, "cwd": "/w"}, "plain", 3]}
    assert forensics.redact(line) == {
        "panes": [{"env": {"API_TOKEN": REDACTED}, "cwd": "/w"}, "plain", 3]
    }


def test_a_simulator_logging_its_wire_keeps_env_secrets_off_disk(
    tmp_path: Path, short_dir: Path
) -> None:
    path = tmp_path / "wire.jsonl"
    log = WireLog(path)
    with Simulator(socket_path=short_dir / "w.sock") as sim:
        sim.wire_taps.append(log)
        reply = request(sim.socket_path, "workspace.create", {"env": {"SECRET": "hunter2"}})
        assert "result" in reply
    log.close()
    text = path.read_text()
    assert "hunter2" not in text
    assert '"SECRET": "<redacted>"' in text


def test_lines_from_threads_stay_whole(tmp_path: Path) -> None:
    """Several servers of one test share one log: every line is one append."""
    path = tmp_path / "wire.jsonl"
    logs = [WireLog(path) for _ in range(4)]

    def write(log: WireLog) -> None:
        for index in range(200):
            log("event", {"id": str(index), "text": "x" * 500})

    threads = [threading.Thread(target=write, args=(log,)) for log in logs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for log in logs:
        log.close()
    lines = path.read_text().splitlines()
    assert len(lines) == 800
    assert all(json.loads(line)["kind"] == "event" for line in lines)
