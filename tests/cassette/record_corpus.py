"""Regenerate the committed corpus: ``python -m tests.cassette.record_corpus``.

* ``corpus/sessions/``: the scripted sessions of :mod:`tests.cassette.sessions`, recorded
  through the recording proxy in front of a simulator in this process (the interleaved one
  needs to see when the server holds client A's wait).
* ``corpus/contract/``: the contract-suite tests in :data:`CONTRACT`, run by pytest with
  ``--herdr-backend real`` on the stand-in real Herdr (:mod:`tests.standin_herdr`) and
  ``--herdr-record``.

Recording runs the tests against the stand-in, so a replay difference in the corpus is the
replay's or the recorder's fault, never a fidelity finding.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from herdr_sim import Simulator
from herdr_sim.cassette.proxy import RecordingProxy
from orchestrator.client.poll import Deadline
from tests.standin_herdr import write_standin

from .sessions import basic_session, interleaved_session

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
REPO = HERE.parents[1]
#: the contract-suite files recorded: their tests neither pass env values (redacted when
#: recorded), nor directories of the recording run as ``cwd``, nor read the simulator's own
#: shell command line, so every cassette replays (the pane, tab and workspace files hold
#: such tests: see docs/simulator/record-replay.md, "What a replay cannot reproduce")
CONTRACT = [
    "tests/contract/test_layout.py",
    "tests/contract/test_events.py",
    "tests/contract/test_subscriptions.py",
]


def record_sessions() -> None:
    """The scripted sessions, each through its own proxy."""
    out = CORPUS / "sessions"
    out.mkdir(parents=True, exist_ok=True)
    short = Path(tempfile.mkdtemp(prefix="hc-", dir="/tmp"))
    try:
        with (
            Simulator(socket_path=short / "s" / "herdr.sock", persist=False) as sim,
            RecordingProxy(sim.socket_path, short / "p1" / "r.sock", out / "basic.jsonl") as p,
        ):
            basic_session(p.socket_path)
        with Simulator(socket_path=short / "t" / "herdr.sock", persist=False) as sim:
            server = sim.socket_server
            assert server is not None

            def wait_started() -> None:
                deadline = Deadline(10)
                while server.in_flight == 0:
                    if deadline.expired():
                        raise TimeoutError("client A's wait never reached the server")
                    time.sleep(0.01)

            with RecordingProxy(
                sim.socket_path, short / "p2" / "r.sock", out / "two_clients.jsonl"
            ) as p:
                interleaved_session(p.socket_path, wait_started)
    finally:
        shutil.rmtree(short, ignore_errors=True)


def record_contract() -> None:
    """The contract tests of :data:`CONTRACT` on the stand-in real Herdr, recorded."""
    out = CORPUS / "contract"
    shutil.rmtree(out, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="hc-") as directory:
        standin = write_standin(Path(directory))
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "-q"]
        real = ["--herdr-backend=real", f"--herdr-bin={standin}", f"--herdr-record={out}"]
        subprocess.run(
            [*pytest, *real, *CONTRACT],
            cwd=REPO,
            env=env,
            check=True,
        )


if __name__ == "__main__":
    record_sessions()
    record_contract()
    print(f"corpus: {len(list(CORPUS.rglob('*.jsonl')))} cassettes under {CORPUS}")
