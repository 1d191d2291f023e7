"""The pytest plugin as its users meet it, run with ``pytester``: options and their ini and
environment spellings, markers under ``--strict-markers``, hooks, every fixture, the real
backend (skipped without a binary; run against a stand-in binary), cleanup and xdist."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from herdr_sim.schema import build_schema
from pytest_herdr.differences import DIFFERENCES

pytestmark = pytest.mark.slow


def source(text: str) -> str:
    """A test module's source (dedented)."""
    return textwrap.dedent(text)


# -- registration ---------------------------------------------------------------------------------


def test_importing_the_plugin_starts_nothing() -> None:
    # no thread, no socket, no temporary directory may come out of the import itself
    code = (
        "import socket, tempfile, threading\n"
        "def refuse(*args, **kwargs):\n"
        "    raise AssertionError('the import started something')\n"
        "socket.socket = tempfile.mkdtemp = refuse\n"
        "import pytest_herdr.plugin\n"
        "assert threading.active_count() == 1, threading.enumerate()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_the_entry_point_loads_the_plugin(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*herdr*", "*--herdr-backend=*", "*--herdr-settle-ms=*"])


def test_markers_are_registered_for_strict_markers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        source("""
        import pytest

        @pytest.mark.herdr(cols=80)
        @pytest.mark.herdr_sim_only
        @pytest.mark.herdr_difference("fault-injection")
        def test_marked():
            pass
        """)
    )
    pytester.runpytest("--strict-markers").assert_outcomes(passed=1)
    pytester.runpytest("--markers").stdout.fnmatch_lines(
        ["@pytest.mark.herdr(**settings)*", "@pytest.mark.herdr_sim_only*"]
    )


# -- options ------------------------------------------------------------------------------------

SHOW_SETTINGS = source("""
    def test_show(herdr_settings):
        print("SETTINGS", herdr_settings.backend, herdr_settings.settle_ms)
    """)


def test_option_ini_and_environment_spellings(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(SHOW_SETTINGS)
    pytester.runpytest("-s").stdout.fnmatch_lines(["*SETTINGS sim 200*"])  # the default
    pytester.makeini("[pytest]\nherdr_settle_ms = 50\n")
    pytester.runpytest("-s").stdout.fnmatch_lines(["*SETTINGS sim 50*"])
    monkeypatch.setenv("HERDR_TEST_SETTLE_MS", "40")
    pytester.runpytest("-s").stdout.fnmatch_lines(["*SETTINGS sim 40*"])  # env over ini
    result = pytester.runpytest("-s", "--herdr-settle-ms", "60")  # flag over env
    result.stdout.fnmatch_lines(["*SETTINGS sim 60*"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--herdr-backend", "tmux"], "*--herdr-backend: expected one of sim, real; got 'tmux'*"),
        (["--herdr-settle-ms", "soon"], "*--herdr-settle-ms: expected milliseconds*"),
    ],
)
def test_bad_option_values_are_usage_errors(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    pytester.makepyfile(SHOW_SETTINGS)
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_settle_option_reaches_the_simulator(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        source("""
        def test_settle(herdr_server):
            assert herdr_server.sim.config.agent_start_settle == 0.025
        """)
    )
    pytester.runpytest("--herdr-settle-ms", "25").assert_outcomes(passed=1)


# -- markers and hooks ----------------------------------------------------------------------------


def test_herdr_marker_sets_simulator_settings_and_rejects_unknown_ones(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        source("""
        import pytest

        @pytest.mark.herdr(cols=80, rows=24)
        def test_size(herdr_client, herdr_pane):
            layout = herdr_client.call("pane.layout", pane_id=herdr_pane.pane_id)
            assert herdr_pane.info["pane_id"] == herdr_pane.pane_id
            # an 80x24 headless frame less Herdr's 26-column sidebar and tab-bar row
            assert (layout["layout"]["area"]["width"], layout["layout"]["area"]["height"]) == (
                54, 23)

        @pytest.mark.herdr(colour="blue")
        def test_typo(herdr_server):
            pass
        """)
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*unknown simulator setting 'colour'*"])


def test_hooks_shape_config_see_servers_and_add_kinds(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        source("""
        STARTED = []

        def pytest_herdr_sim_config(config, sim_config, node):
            sim_config.cols = 90

        def pytest_herdr_server_started(config, server):
            STARTED.append(server.backend)
            server.sim.call("workspace.create", {"cwd": "/tmp", "label": "seeded"})

        def pytest_herdr_agent_kinds(config, kinds):
            kinds.append("gemini")
        """)
    )
    pytester.makepyfile(
        source("""
        from conftest import STARTED

        def test_config(herdr_server, herdr_client):
            assert herdr_server.sim.config.cols == 90
            assert STARTED == ["sim"]
            labels = [w["label"] for w in herdr_client.call("workspace.list")["workspaces"]]
            assert labels == ["seeded"]

        def test_kinds(herdr_agent_kind):
            pass
        """)
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["*test_kinds?gemini?*PASSED*"])


def test_sim_only_and_real_only(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        source("""
        import pytest

        @pytest.mark.herdr_sim_only
        def test_sim():
            pass

        @pytest.mark.herdr_real_only
        def test_real():
            pass
        """)
    )
    result = pytester.runpytest("-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*herdr_real_only: run with --herdr-backend real*"])


def test_differences_are_data_and_an_unknown_id_is_an_error(pytester: pytest.Pytester) -> None:
    assert len({d.id for d in DIFFERENCES}) == len(DIFFERENCES)
    pytester.makepyfile(
        source("""
        import pytest

        @pytest.mark.herdr_difference("ui-methods")
        def test_needs_ui():
            pass

        @pytest.mark.herdr_difference("fault-injection")
        def test_faults_are_fine_on_the_sim():
            pass
        """)
    )
    result = pytester.runpytest("-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*herdr difference ui-methods on sim: the simulator has no*"])
    pytester.makepyfile(
        test_typo=source("""
        import pytest

        @pytest.mark.herdr_difference("no-such-thing")
        def test_typo():
            pass
        """)
    )
    result = pytester.runpytest("test_typo.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


# -- fixtures -----------------------------------------------------------------------------------


def test_every_fixture_against_the_simulator(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        source("""
        import asyncio
        import os
        import stat

        def test_server(herdr_server):
            mode = stat.S_IMODE(os.stat(herdr_server.socket_path).st_mode)
            assert mode == 0o600
            assert len(str(herdr_server.socket_path)) < 100
            assert herdr_server.env["HOME"].startswith(str(herdr_server.directory))

        def test_clients(herdr_client, herdr_async_client):
            assert herdr_client.ping()["protocol"] == 22
            assert asyncio.run(herdr_async_client.call("ping"))["type"] == "pong"

        def test_cli(herdr_cli, herdr_workspace):
            listed = herdr_cli("workspace", "list")
            assert listed.ok and listed.json["result"]["workspaces"][0]["label"].startswith("test_")
            missing = herdr_cli("pane", "get", "w9:p9")
            assert missing.code == 1 and missing.error["error"]["code"] == "pane_not_found"

        def test_pane_and_wait(herdr_pane, herdr_wait, tmp_path):
            assert herdr_pane.info["cwd"] == str(tmp_path)
            herdr_pane.run("echo sum-$((40+2))")
            matched = herdr_wait.for_output(herdr_pane.pane_id, regex="^sum-42$")
            assert matched["matched_line"] == "sum-42"
            other = herdr_pane.split("down")
            assert other.pane_id != herdr_pane.pane_id

        def test_events(herdr_workspace, herdr_events):
            herdr_workspace.new_tab(label="second")
            created = herdr_events.wait_for("tab_created", lambda d: d["tab"]["label"] == "second")
            assert created.data["tab"]["workspace_id"] == herdr_workspace.workspace_id
            assert [e.kind for e in herdr_events.of("workspace.created")] == ["workspace_created"]

        def test_faults(herdr_faults, herdr_client):
            herdr_faults.add("pane.list", error=("server_busy", "try later"), times=1)
            try:
                herdr_client.call("pane.list")
            except Exception as exc:
                assert exc.code == "server_busy"
            else:
                raise AssertionError("the fault was not injected")

        def test_fake_agent(herdr_fake_agent, herdr_events):
            scenario = herdr_fake_agent.scenario().wait(300).reply("fixture-reply")
            agent = herdr_fake_agent.start("claude", scenario)  # screen detection only
            assert agent.info["interactive_ready"] is True
            agent.prompt("hello")
            assert "fixture-reply" in agent.read()
            statuses = [e.data.get("agent_status") for e in herdr_events.timeline()]
            assert "working" in statuses

        def test_factory(herdr_server_factory):
            a, b = herdr_server_factory(), herdr_server_factory(cols=100)
            assert a.socket_path != b.socket_path and b.sim.config.cols == 100
        """)
    )
    pytester.runpytest("--herdr-settle-ms", "50").assert_outcomes(passed=8)


def test_servers_are_reaped_with_their_processes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        source("""
        import os
        SEEN = {}

        def test_start(herdr_server, herdr_pane):
            herdr_pane.run("sleep 300 & echo pid=$!")
            line = herdr_pane.wait_for(regex="^pid=[0-9]+$")
            SEEN["pid"] = int(line.split("=")[1])
            SEEN["dir"] = herdr_server.directory

        def test_after():
            assert not SEEN["dir"].exists()
            try:
                os.kill(SEEN["pid"], 0)
            except ProcessLookupError:
                return
            raise AssertionError("a pane's background process outlived its server")
        """)
    )
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=2)


def test_cleanup_errors_never_mask_the_tests_own_failure(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        source("""
        def broken(server):
            def check():
                raise RuntimeError("server-side trouble")
            server.check = check

        def test_passes(herdr_server):
            broken(herdr_server)

        def test_fails(herdr_server):
            broken(herdr_server)
            assert 1 == 2, "the test's own failure"
        """)
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*ERROR at teardown of test_passes*", "*server-side trouble*", "*the test's own failure*"]
    )
    assert "ERROR at teardown of test_fails" not in result.stdout.str()


def test_xdist_workers_get_separate_servers(pytester: pytest.Pytester) -> None:
    """Slow because it runs a pytest subprocess with two xdist workers, each importing the plugin
    and starting its own simulators.
    """
    pytester.makepyfile(
        source("""
        import pytest

        @pytest.mark.parametrize("n", range(6))
        def test_isolated(herdr_client, herdr_workspace, n):
            listed = herdr_client.call("workspace.list")["workspaces"]
            assert [w["workspace_id"] for w in listed] == [herdr_workspace.workspace_id]
        """)
    )
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)


# -- the real backend ---------------------------------------------------------------------------

REAL_TESTS = source("""
    import pytest

    def test_real(herdr_server, herdr_client, herdr_cli, herdr_pane, herdr_backend_name):
        assert herdr_backend_name == "real" and herdr_server.sim is None
        assert "/herdr/sessions/pytest-" in str(herdr_server.socket_path)
        herdr_pane.run("echo from-$((6*7))")
        assert herdr_pane.wait_for(regex="^from-42$") == "from-42"
        assert herdr_cli("pane", "list").ok

    def test_faults_skip(herdr_faults):
        pass

    @pytest.mark.herdr_difference("simulator-internals")
    def test_internals(herdr_server):
        herdr_server.sim.events
    """)


def test_real_backend_without_a_binary_skips_with_the_reason(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    pytester.makepyfile(REAL_TESTS)
    result = pytester.runpytest("--herdr-backend", "real", "-rs")
    result.assert_outcomes(skipped=3)
    result.stdout.fnmatch_lines(["*no real herdr: pass --herdr-bin PATH*"])


def test_the_simulators_cli_does_not_pass_for_a_real_herdr(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        source("""
        def test_real(herdr_server):
            pass
        """)
    )
    install = pytester.path / "bin"
    done = subprocess.run(
        [sys.executable, "-m", "herdr_sim", "install-cli", str(install)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = pytester.runpytest("--herdr-backend=real", f"--herdr-bin={install / 'herdr'}", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*is the simulator's herdr CLI, not Herdr*"])


def test_real_backend_runs_the_same_tests_on_a_herdr_binary(
    pytester: pytest.Pytester, standin_herdr: Path
) -> None:
    pytester.makepyfile(REAL_TESTS)
    result = pytester.runpytest("--herdr-backend=real", f"--herdr-bin={standin_herdr}", "-rs")
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(
        [
            "*herdr difference fault-injection on real*",
            "*herdr difference simulator-internals on real*",
        ]
    )
    assert threading.active_count() < 50


# -- failure reports and contract checks --------------------------------------------------------

FAILING = source("""
    def test_fails(herdr_pane, herdr_fake_agent):
        herdr_pane.run("echo screen-marker-$((6*7))")
        herdr_pane.wait_for(regex="^screen-marker-42$")
        other = herdr_pane.split("right")
        agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("x"), pane=other)
        agent.prompt("go")
        assert agent.status == "working", "deliberately wrong"
    """)


def test_a_failing_test_shows_screens_protocol_tail_and_state_timeline(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    pytester.makepyfile(FAILING)
    artifacts = tmp_path / "artifacts"
    result = pytester.runpytest("--herdr-settle-ms=50", f"--herdr-artifacts={artifacts}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*- Captured stdout: herdr sim server 1: /tmp/herdr-*/herdr.sock -*",
            "*──────── panes*",
            "*┌─ w1:p1 ·*",
            "*│screen-marker-42*",
            "*┌─ w1:p2 · agent pi · idle*",
            "*──────── protocol tail (last *",
            '*→ {"id":"pytest-herdr:*","method":"agent.prompt"*',
            "*──────── agent timeline*",
            "*w1:p2    detected agent=pi*",
            "*w1:p2    status agent=pi status=working*",
            "*w1:p2    status agent=pi status=idle*",
            "*HTML: *test_a_failing_test_shows_screens*test_fails.html",
        ]
    )
    [page] = [p for p in artifacts.glob("*.html") if p.name != "index.html"]
    html = page.read_text()
    assert 'data-pane-id="w1:p1"' in html and 'data-pane-id="w1:p2"' in html
    assert "screen-marker-42" in html


def test_a_report_section_hook_replaces_the_section(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        source("""
        def pytest_herdr_report_section(config, item, server):
            return f"custom section for {item.name}"
        """)
    )
    pytester.makepyfile(
        source("""
        def test_fails(herdr_server):
            assert False
        """)
    )
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(["*herdr sim server 1*", "custom section for test_fails"])
    assert "──────── panes" not in result.stdout.str()


def test_passing_tests_collect_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        source("""
        def test_ok(herdr_pane):
            herdr_pane.run("true")
        """)
    )
    result = pytester.runpytest("-rA")
    result.assert_outcomes(passed=1)
    assert "──────── panes" not in result.stdout.str()


def test_schema_checks_report_coverage_and_fail_on_violations(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    # a schema stricter than the server: ping takes no parameters at all
    bundle = build_schema()
    [ping] = [v for v in bundle["schemas"]["request"]["oneOf"] if v["title"] == "ping"]
    ping["properties"]["params"]["additionalProperties"] = False
    strict = tmp_path / "strict.json"
    strict.write_text(json.dumps(bundle))
    pytester.makepyfile(
        source("""
        from herdr_sim.client import request

        def test_clean(herdr_client, herdr_cli):
            herdr_client.call("workspace.create", cwd="/tmp")
            assert herdr_cli("pane", "list").ok

        def test_accepted_but_forbidden(herdr_server):
            assert "result" in request(herdr_server.socket_path, "ping", {"bogus": 1})
        """)
    )
    result = pytester.runpytest(f"--herdr-schema={strict}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*- herdr contract checks -*",
            "*methods exercised: *workspace.create ×1*",
            "*herdr contract violations (1)*",
            "*request ping*bogus*",
        ]
    )
    clean = pytester.runpytest("--herdr-schema=builtin", "-k", "clean")
    assert clean.ret == pytest.ExitCode.OK
    clean.stdout.fnmatch_lines(["*pane.list ×1*"])  # the CLI's requests are checked too


def test_schema_checks_under_xdist_are_merged(pytester: pytest.Pytester) -> None:
    """Slow because it runs a pytest subprocess with two xdist workers, each importing the plugin
    and starting its own simulator.
    """
    pytester.makepyfile(
        source("""
        import pytest

        @pytest.mark.parametrize("n", range(4))
        def test_ping(herdr_client, n):
            herdr_client.ping()
        """)
    )
    result = pytester.runpytest_subprocess("-n", "2", "--herdr-schema=builtin")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*methods exercised: *ping ×4*"])


def test_integration_check_fixture_passes_the_reference_persona(
    pytester: pytest.Pytester,
) -> None:
    """Slow because an inner pytest session runs two integration checks, each starting a simulator
    and driving an agent through its rules.
    """
    pytester.makepyfile(
        source("""
        import sys

        def test_persona(herdr_integration_check):
            report = herdr_integration_check(
                [sys.executable, "-m", "herdr_sim", "fake-agent"], rules=["source", "states"]
            )
            assert report.passed

        def test_broken(herdr_integration_check, tmp_path):
            agent = tmp_path / "agent.sh"
            agent.write_text(
                '"$HERDR_BIN_PATH" pane report-agent "$HERDR_PANE_ID" --source herdr:mine '
                '--agent mine --state working\\nexec cat\\n'
            )
            report = herdr_integration_check(["sh", str(agent)], rules=["source"])
            assert report.passed
        """)
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*- Captured stdout: herdr integration check call -*", "*FAIL*source*"]
    )
