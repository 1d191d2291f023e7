"""The plugin's cassettes: ``--herdr-record DIR`` on the real backend writes one per test
(named by node id), and ``herdr_cassette`` / ``herdr_replay`` replay one as a test on the
simulator, failing with the differences. The real backend here is the stand-in binary."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from herdr_sim.command import main
from pytest_herdr.cassettes import cassette_name

pytestmark = pytest.mark.slow

SESSION = textwrap.dedent("""
    def test_session(herdr_client, herdr_pane, herdr_workspace):
        split = herdr_pane.split(env={"SECRET_TOKEN": "do-not-keep"})
        split.run("echo plugin-$((40+2))")
        assert split.wait_for("plugin-42") == "plugin-42"
        herdr_client.call("workspace.list")
        herdr_client.call("pane.get", pane_id=split.pane_id)
""")


def test_a_real_run_is_recorded_per_test_and_replays_clean(
    pytester: pytest.Pytester, standin_herdr: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Slow because it runs pytest (a real-backend test) under pytester, then a replay."""
    pytester.makepyfile(test_rec=SESSION)
    result = pytester.runpytest(
        "--herdr-backend=real", f"--herdr-bin={standin_herdr}", "--herdr-record=tapes"
    )
    result.assert_outcomes(passed=1)
    cassette = pytester.path / "tapes" / cassette_name("test_rec.py::test_session", 1)
    assert cassette.name == "test_rec.py_test_session.jsonl"
    text = cassette.read_text()
    assert "do-not-keep" not in text  # the split's env, redacted
    methods = [
        json.loads(line)["line"].get("method")
        for line in text.splitlines()[1:-1]
        if json.loads(line)["dir"] == "send"
    ]
    # the fixtures' own requests and the test's, not the event recorder's subscription
    assert "pane.split" in methods and "pane.wait_for_output" in methods
    assert "events.subscribe" not in methods
    assert main(["replay", str(cassette)]) == 0, capsys.readouterr().out

    # the recorded cassette as an offline test, by marker and by fixture
    pytester.makepyfile(
        test_offline=textwrap.dedent(f"""
        import pytest

        @pytest.mark.herdr_cassette({str(cassette)!r})
        def test_marked():
            pass

        def test_by_fixture(herdr_replay):
            report = herdr_replay({str(cassette)!r})
            assert report.methods["pane.split"] == [1, 0]
        """)
    )
    pytester.runpytest("test_offline.py").assert_outcomes(passed=2)


def test_a_difference_fails_the_test_naming_method_and_field(pytester: pytest.Pytester) -> None:
    """Slow because it runs pytest under pytester (a simulator recorded, then replayed)."""
    pytester.makepyfile(
        test_diff=textwrap.dedent("""
        import json
        import pytest
        from herdr_sim import Simulator
        from herdr_sim.client import call
        from herdr_sim.cassette.proxy import RecordingProxy

        def record(tmp_path):
            import tempfile
            from pathlib import Path
            short = Path(tempfile.mkdtemp(prefix="hs-", dir="/tmp"))
            with Simulator(socket_path=short / "s" / "herdr.sock", persist=False) as sim:
                with RecordingProxy(sim.socket_path, short / "p" / "x.sock",
                                    tmp_path / "run.jsonl") as proxy:
                    call(proxy.socket_path, "workspace.create", {"label": "alpha", "cwd": "/"})
            lines = (tmp_path / "run.jsonl").read_text().splitlines()
            for i, line in enumerate(lines):
                record = json.loads(line)
                if record.get("dir") == "recv":
                    record["line"]["result"]["workspace"]["label"] = "beta"
                    lines[i] = json.dumps(record)
            (tmp_path / "run.jsonl").write_text("\\n".join(lines) + "\\n")
            return tmp_path / "run.jsonl"

        def test_replay(herdr_replay, tmp_path):
            herdr_replay(record(tmp_path))

        def test_replay_ignoring(herdr_replay, tmp_path):
            herdr_replay(record(tmp_path), ignore=["result.workspace.label"])
        """)
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*workspace.create (connection 1, line 1): result.workspace.label: recorded *beta*"]
    )


def test_recording_needs_the_real_backend(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_x(): pass\n")
    result = pytester.runpytest("--herdr-record=tapes")
    result.stderr.fnmatch_lines(["*--herdr-record records a real Herdr*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_cassette_names_are_node_ids_made_safe() -> None:
    assert cassette_name("tests/a b.py::T::test_x[1-y]", 1) == "tests_a_b.py_T_test_x[1-y].jsonl"
    assert cassette_name("t.py::test", 2) == "t.py_test-2.jsonl"
