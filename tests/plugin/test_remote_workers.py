"""A suite spread over an xdist worker started through ``--tx`` (docs/pytest-plugin/usage.md).

Issue 17: a suite that outgrows one machine runs on pytest-xdist's own remote workers
(``--tx ssh=host//python=…//chdir=…``), each starting its own simulators, nothing shared
but the code. ``popen//python=<sys.executable>//chdir=<copy>`` is the local stand-in for a
remote worker: a separate interpreter, started through execnet the way an ``ssh`` worker is,
running in its own copy of the test code. Each test takes ``herdr_pane`` (a simulator of
its own, a real shell) and records which worker ran it, from which directory, and which
socket it talked to.
"""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

SUITE = textwrap.dedent("""
    import json
    import os

    import pytest

    @pytest.mark.parametrize("n", range(4))
    def test_on_a_worker(herdr_pane, herdr_server, worker_id, n):
        herdr_pane.run(f"echo from-$(({n}*7))")
        assert herdr_pane.wait_for(regex=f"^from-{n * 7}$") == f"from-{n * 7}"
        record = {
            "worker": worker_id,
            "cwd": os.getcwd(),
            "socket": str(herdr_server.socket_path),
        }
        with open(os.environ["RECORDS"], "a") as out:
            out.write(json.dumps(record) + "\\n")
""")


def test_a_tx_worker_runs_tests_with_its_own_simulators(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Slow because it starts a pytest run with two worker interpreters (each importing
    pytest, xdist, the plugin and the simulator) and four simulators: 3-12 s, by load."""
    pytester.makepyfile(test_remote=SUITE)
    checkout = tmp_path / "worker-checkout"  # the code, as a remote worker would have it
    shutil.copytree(pytester.path, checkout)
    records = tmp_path / "records.jsonl"
    monkeypatch.setenv("RECORDS", str(records))
    result = pytester.runpytest_subprocess(
        "--tx",
        "popen",
        "--tx",
        f"popen//python={sys.executable}//chdir={checkout}",
        "--dist",
        "load",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=4)
    seen = [json.loads(line) for line in records.read_text().splitlines()]
    by_worker = {r["worker"]: r for r in seen}
    assert set(by_worker) == {"gw0", "gw1"}, seen
    assert by_worker["gw1"]["cwd"] == str(checkout)  # it ran from its own copy of the code
    assert by_worker["gw0"]["cwd"] != str(checkout)
    sockets = [r["socket"] for r in seen]
    assert len(set(sockets)) == len(sockets) == 4  # a simulator per test, none shared
