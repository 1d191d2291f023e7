"""The contract suite runs on the plugin's fixtures, so ``--herdr-backend real`` collects all
of it and runs what is not ``herdr_sim_only`` (here against the stand-in binary; CI runs the
whole suite that way in ``.ci/contract-real``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from herdr_sim import testing
from pytest_herdr.fixtures import ServerFactory
from tests.waits import SCALE, wait_until

REPO = Path(__file__).resolve().parents[2]
#: a test of Herdr's behaviour (runs on both backends) and one of a simulator seam
ON_BOTH = "tests/contract/test_workspace.py::test_first_create_matches_herdr_checklist"
SIM_ONLY = "tests/contract/test_faults.py::test_fault_plan_rejects_contradictions"


def run_pytest(*args: str) -> subprocess.CompletedProcess[str]:
    """pytest in the repository, in a process of its own (the suite's conftests apply)."""
    outer = ("PYTEST_CURRENT_TEST", "PYTEST_XDIST", "HERDR_SIM_WIRE_LOG")  # this run's own
    env = {key: value for key, value in os.environ.items() if not key.startswith(outer)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300 * SCALE,
        check=False,
    )


def collected(result: subprocess.CompletedProcess[str]) -> int:
    found = re.search(r"(\d+) tests? collected", result.stdout)
    assert result.returncode == 0 and found, result.stdout[-2000:] + result.stderr[-2000:]
    return int(found.group(1))


def test_the_real_backend_collects_the_whole_contract_suite(standin_herdr: Path) -> None:
    """Slow because it runs two pytest subprocesses that each collect the 900-odd tests of the
    contract suite.
    """
    real = ("--herdr-backend=real", f"--herdr-bin={standin_herdr}")
    on_sim = collected(run_pytest("--collect-only", "-q", "tests/contract"))
    on_real = collected(run_pytest("--collect-only", "-q", *real, "tests/contract"))
    assert on_real == on_sim > 900


def test_the_real_backend_runs_what_is_not_sim_only(standin_herdr: Path) -> None:
    result = run_pytest(
        "--herdr-backend=real", f"--herdr-bin={standin_herdr}", "-rs", ON_BOTH, SIM_ONLY
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert re.search(r"\b1 passed, 1 skipped\b", result.stdout), result.stdout[-2000:]
    skipped = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skipped == [
        "SKIPPED [1] tests/contract/test_faults.py: herdr_sim_only: needs the simulator"
    ]


def test_a_contract_test_using_the_simulator_must_be_marked_sim_only(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        """
        from pathlib import Path

        import pytest

        from tests.contract.conftest import sim_only_violations


        @pytest.fixture
        def sim():
            return object()


        def pytest_collection_modifyitems(config, items):
            unmarked = sim_only_violations(items, Path(__file__).parent)
            if unmarked:
                raise pytest.UsageError("unmarked: " + " ".join(unmarked))
        """
    )
    pytester.makepyfile(
        """
        import pytest

        def test_seam(sim): pass

        @pytest.mark.herdr(cols=80)
        def test_settings(): pass

        @pytest.mark.herdr_sim_only
        def test_marked(sim): pass

        def test_plain(): pass
        """
    )
    result = pytester.runpytest("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    (line,) = [line for line in result.errlines if "unmarked:" in line]
    assert line.endswith(
        "unmarked: test_a_contract_test_using_the_simulator_must_be_marked_sim_only.py::test_seam "
        "test_a_contract_test_using_the_simulator_must_be_marked_sim_only.py::test_settings"
    )


def test_a_server_can_start_without_its_event_recorder(
    herdr_server_factory: ServerFactory,
) -> None:
    # the contract tests count the server's connections: the recorder's stream would be one
    recorded, bare = herdr_server_factory(), herdr_server_factory(record_events=False)
    sim, bare_sim = recorded.sim, bare.sim
    assert sim is not None and bare_sim is not None
    assert recorded.events is not None and bare.events is None
    wait_until(lambda: testing.connections(sim) == 1, what="the recorder's stream")
    assert testing.connections(bare_sim) == 0
