"""The fixtures an agent author leans on, run with ``pytester``: restarting a server to test
what Herdr restores, giving pane processes an environment and your own agent's directory on
PATH, waits whose return means ``herdr_events`` has the same change, and the small usability
fixes of issue 14 (paths as ``str``, readable defaults, option values listed, skip reasons,
the ``xdist`` extra)."""

from __future__ import annotations

import pydoc
import textwrap
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.conformance import check_integration
from herdr_sim.fake_agent import Scenario
from pytest_herdr import EventRecorder, Pane, WaitTimeout
from pytest_herdr.backends import HerdrServer

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def source(text: str) -> str:
    """A test module's source (dedented)."""
    return textwrap.dedent(text)


# -- restart ---------------------------------------------------------------------------------------

RESTART = source("""
    import pytest

    def test_restart_restores_the_session(
        herdr_server, herdr_client, herdr_workspace, herdr_events, tmp_path
    ):
        socket = herdr_server.socket_path
        herdr_workspace.new_tab(label="kept")
        herdr_events.wait_for("tab_created", lambda d: d["tab"]["label"] == "kept")
        before = herdr_events.mark()

        herdr_server.restart()

        assert herdr_server.socket_path == socket and herdr_server.restarts == 1
        workspaces = herdr_client.call("workspace.list")["workspaces"]
        assert [w["label"] for w in workspaces] == [herdr_workspace.info["label"]]
        tabs = herdr_client.call("tab.list", workspace_id=workspaces[0]["workspace_id"])
        assert "kept" in [t.get("label") for t in tabs["tabs"]]
        # the recording goes on after the restart and keeps what came before it
        herdr_client.call("tab.create", workspace_id=workspaces[0]["workspace_id"],
                          label="after")
        herdr_events.wait_for("tab_created", lambda d: d["tab"]["label"] == "after",
                              since=before)
        assert [e.kind for e in herdr_events.of("workspace.created")] == ["workspace_created"]

    def test_persist_off_restarts_empty(herdr_server_factory, herdr_client):
        server = herdr_server_factory(persist=False)
        from pytest_herdr import WireClient
        client = WireClient(server.socket_path)
        client.call("workspace.create", cwd="/tmp")
        server.restart()
        assert client.call("workspace.list")["workspaces"] == []

    def test_a_stopped_server_cannot_restart(herdr_server_factory):
        server = herdr_server_factory()
        server.stop()
        with pytest.raises(RuntimeError, match="cannot restart a stopped server"):
            server.restart()

    def test_the_socket_is_the_plugins(herdr_server, herdr_server_factory):
        with pytest.raises(pytest.UsageError, match=r"socket_path is the plugin's.*restart\\(\\)"):
            herdr_server_factory(socket_path=herdr_server.socket_path, persist=True)
    """)


def test_restart_restores_the_session_on_the_same_socket(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(RESTART)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=4)


def test_restart_keeps_the_forensics_of_before_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        source("""
        def test_fails_after_restart(herdr_server, herdr_pane):
            herdr_pane.run("echo marker-before-restart")
            herdr_pane.wait_for("marker-before-restart")
            herdr_server.restart()
            assert False, "deliberately"
        """)
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    # the protocol tail and the timeline reach back over the restart
    result.stdout.fnmatch_lines(["*marker-before-restart*", "*agent timeline*", "*created*"])


def test_restart_on_the_real_backend(pytester: pytest.Pytester, standin_herdr: Path) -> None:
    pytester.makepyfile(
        source("""
        def test_restart(herdr_server, herdr_client, herdr_workspace):
            label = herdr_workspace.info["label"]
            herdr_server.restart()
            listed = herdr_client.call("workspace.list")["workspaces"]
            assert [w["label"] for w in listed] == [label]
        """)
    )
    result = pytester.runpytest("--herdr-backend=real", f"--herdr-bin={standin_herdr}")
    result.assert_outcomes(passed=1)


# -- environment and PATH of pane processes --------------------------------------------------------

ENV_TESTS = source("""
    import pytest

    def echo(pane, name):
        pane.run(f'echo "{name}=[${name}]"')
        return pane.wait_for(regex=rf"^{name}=\\[.*\\]$")

    @pytest.mark.herdr_pane_env(AGENT_API_KEY="k-123", AGENT_OFFLINE="1")
    def test_marker(herdr_pane):
        assert echo(herdr_pane, "AGENT_API_KEY") == "AGENT_API_KEY=[k-123]"
        assert echo(herdr_pane, "AGENT_OFFLINE") == "AGENT_OFFLINE=[1]"

    def test_monkeypatch_alone_does_not_reach_panes(herdr_pane, monkeypatch):
        monkeypatch.setenv("FROM_MONKEYPATCH", "x")
        assert echo(herdr_pane, "FROM_MONKEYPATCH") == "FROM_MONKEYPATCH=[]"

    def test_fixture_and_factory(herdr_pane_env, herdr_server_factory):
        herdr_pane_env["FROM_FIXTURE"] = "f"
        server = herdr_server_factory(pane_env={"FROM_FACTORY": "g"})
        from pytest_herdr import WireClient
        from pytest_herdr.handles import Workspace
        pane = Workspace.create(WireClient(server.socket_path), "/tmp").root
        assert echo(pane, "FROM_FIXTURE") == "FROM_FIXTURE=[f]"
        assert echo(pane, "FROM_FACTORY") == "FROM_FACTORY=[g]"
        assert server.env["FROM_FIXTURE"] == "f"  # CLI runs get it too

    @pytest.mark.herdr(base_env={"FROM_BASE_ENV": "b"})
    def test_sim_config_base_env_is_added(herdr_pane):
        assert echo(herdr_pane, "FROM_BASE_ENV") == "FROM_BASE_ENV=[b]"

    @pytest.mark.herdr_pane_env(SHARED="all", ONLY_HERE="no")
    def test_one_pane_env(herdr_pane):
        other = herdr_pane.split("down", env={"ONLY_HERE": "yes"})
        assert echo(other, "ONLY_HERE") == "ONLY_HERE=[yes]"
        assert echo(other, "SHARED") == "SHARED=[all]"
        assert echo(herdr_pane, "ONLY_HERE") == "ONLY_HERE=[no]"

    def test_herdr_variables_win(herdr_server_factory):
        server = herdr_server_factory(pane_env={"HERDR_PANE_ID": "mine"})
        from pytest_herdr import WireClient
        from pytest_herdr.handles import Workspace
        pane = Workspace.create(WireClient(server.socket_path), "/tmp").root
        assert echo(pane, "HERDR_PANE_ID") == f"HERDR_PANE_ID=[{pane.pane_id}]"
    """)


def test_pane_env_marker_fixture_factory_and_base_env(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(ENV_TESTS)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=6)


def test_the_closest_pane_env_marker_wins(pytester: pytest.Pytester) -> None:
    """Markers on the module, the class and the test all set ``WHO``: the test's own (the
    closest) wins, and a name only a farther marker sets is kept. Planted-bug check: the
    ``herdr_pane_env`` fixture reading the markers without ``reversed()`` lets the farthest
    (the module's) win, and fails here."""
    pytester.makepyfile(
        source("""
        import pytest

        pytestmark = pytest.mark.herdr_pane_env(WHO="module", FROM_MODULE="m")

        @pytest.mark.herdr_pane_env(WHO="class", FROM_CLASS="c")
        class TestNested:
            @pytest.mark.herdr_pane_env(WHO="test")
            def test_closest(self, herdr_pane_env):
                assert herdr_pane_env == {"WHO": "test", "FROM_MODULE": "m", "FROM_CLASS": "c"}, (
                    f"the closest herdr_pane_env marker must win: {herdr_pane_env}"
                )

            def test_class_over_module(self, herdr_pane_env):
                assert herdr_pane_env["WHO"] == "class", herdr_pane_env
        """)
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_pane_env_on_the_real_backend(pytester: pytest.Pytester, standin_herdr: Path) -> None:
    # Herdr gives its panes its own environment: the variables go on the server process
    pytester.makepyfile(
        source("""
        import pytest

        @pytest.mark.herdr_pane_env(AGENT_API_KEY="k-real")
        def test_marker(herdr_pane):
            herdr_pane.run('echo "key=[$AGENT_API_KEY]"')
            assert herdr_pane.wait_for(regex=r"^key=\\[.*\\]$") == "key=[k-real]"
        """)
    )
    result = pytester.runpytest("--herdr-backend=real", f"--herdr-bin={standin_herdr}")
    result.assert_outcomes(passed=1)


def write_agent(directory: Path, name: str = "my-agent") -> Path:
    """A tiny executable that prints where it ran, in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    agent = directory / name
    agent.write_text('#!/bin/sh\necho "my-agent-ran-$1"\n')
    agent.chmod(0o755)
    return agent


PATH_TEST = source("""
    def test_agent_on_path(herdr_pane):
        herdr_pane.run("my-agent ok")
        # the shell's "not found" ends the wait too: a missing agent fails at once
        line = herdr_pane.wait_for(regex="^my-agent-ran-ok$|my-agent: .*not found")
        assert line == "my-agent-ran-ok"
    """)


def test_pane_path_ini_option_and_environment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Slow because it runs four inner pytest sessions, each with its own simulator and shell."""
    write_agent(pytester.path / "agent-bin")
    pytester.makepyfile(PATH_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)  # not on PATH: the shell says so
    result.stdout.fnmatch_lines(["E *+ *my-agent: *not found"])
    pytester.makeini("[pytest]\nherdr_pane_path = agent-bin\n")  # relative to the rootdir
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--herdr-pane-path=agent-bin")
    result.assert_outcomes(passed=1)
    monkeypatch.setenv("HERDR_TEST_PANE_PATH", str(pytester.path / "agent-bin"))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_pane_path_marker_and_a_missing_directory(pytester: pytest.Pytester) -> None:
    write_agent(pytester.path / "tools")
    pytester.makepyfile(
        "import pytest\npytestmark = pytest.mark.herdr_pane_path('tools')\n" + PATH_TEST
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    result = pytester.runpytest("-p", "no:cacheprovider", "--herdr-pane-path=nowhere")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--herdr-pane-path: no such directory: *nowhere*"])


def test_the_integration_check_gets_the_pane_env_and_path(pytester: pytest.Pytester) -> None:
    # an agent that reports its states only when its key and its PATH are given (without
    # them the states rule fails: "no key" or "not found")
    bin_dir = pytester.path / "agent-bin"
    bin_dir.mkdir()
    agent = bin_dir / "keyed-agent"
    agent.write_text(
        "#!/bin/sh\n"
        '[ "$AGENT_API_KEY" = k-1 ] || { echo "no key"; exit 3; }\n'
        'exec "$HERDR_TEST_PYTHON" -m herdr_sim fake-agent "$@"\n'
    )
    agent.chmod(0o755)
    pytester.makepyfile(
        source("""
        import sys
        import pytest

        @pytest.mark.herdr_pane_env(AGENT_API_KEY="k-1", HERDR_TEST_PYTHON=sys.executable)
        @pytest.mark.herdr_pane_path("agent-bin")
        def test_check(herdr_integration_check):
            report = herdr_integration_check(["keyed-agent"], rules=["states"])
            assert report.passed, report.render()
        """)
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


# -- waits and the event recorder -----------------------------------------------------------------

RACE = source("""
    def test_wait_then_assert_the_recorded_sequence(
        herdr_fake_agent, herdr_wait, herdr_events, herdr_pane
    ):
        pane = herdr_pane.pane_id
        agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario())
        for turn in range(30):
            mark = herdr_events.mark()
            agent.prompt(f"turn {turn}", wait=False)
            herdr_wait.for_pane_status(pane, "working")
            herdr_wait.for_pane_status(pane, "idle")
            # the wait returned: the recorder has the same story, from the mark on
            assert herdr_events.statuses(pane, since=mark)[-2:] == ["working", "idle"], turn
            assert herdr_events.status_of(pane) == "idle"
            # and wait_for(since=) finds this turn's idle, not the first one ever recorded
            idle = herdr_events.wait_for(
                "pane.agent_status_changed",
                lambda d: d["agent_status"] == "idle", since=mark, timeout=1,
            )
            assert herdr_events.events.index(idle) >= mark

    def test_agent_wait_and_prompt_catch_up_too(herdr_fake_agent, herdr_events, herdr_pane):
        agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().wait(50).reply("x"))
        for turn in range(10):
            mark = herdr_events.mark()
            agent.prompt(f"turn {turn}")
            assert herdr_events.statuses(herdr_pane.pane_id, since=mark)[-1:] == ["idle"]
    """)


def test_a_status_wait_returns_once_the_recorder_has_it(pytester: pytest.Pytester) -> None:
    """Slow because it plays 40 fake-pi turns, each waited through working and idle (a race the old
    code lost in most turns must not hide); Herdr's clocks run at 0.2.
    """
    # before the fix, the recorded sequence lagged the server-side wait in most turns
    pytester.makepyfile(RACE)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--herdr-settle-ms=50", "--herdr-time-scale=0.2"
    )
    result.assert_outcomes(passed=2)


def test_mark_and_since_on_the_recorder(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        source("""
        import pytest
        from pytest_herdr import WaitTimeout

        def test_since(herdr_workspace, herdr_events):
            herdr_workspace.new_tab(label="one")
            herdr_events.wait_for("tab_created", lambda d: d["tab"]["label"] == "one")
            mark = herdr_events.mark()
            with pytest.raises(WaitTimeout, match="since mark"):
                herdr_events.wait_for("tab_created", since=mark, timeout=0.3)
            herdr_workspace.new_tab(label="two")
            later = herdr_events.wait_for("tab_created", since=mark)
            assert later.data["tab"]["label"] == "two"
            assert [e.data["tab"]["label"] for e in herdr_events.of("tab.created", since=mark)] \\
                == ["two"]
        """)
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_catch_up_knows_a_plain_pane_and_says_what_it_has_not_seen(
    herdr_events: EventRecorder, herdr_pane: Pane
) -> None:
    pane = herdr_pane.pane_id
    herdr_events.wait_for("pane_created", lambda d: d["pane"]["pane_id"] == pane)
    assert herdr_events.status_of(pane) == "unknown"  # seeded from the event's PaneInfo
    herdr_events.catch_up(pane, "unknown", timeout=0.2)  # a plain pane: nothing to wait for
    herdr_events.catch_up("w99:p99", "idle", timeout=0.2)  # not watched: left alone
    with pytest.raises(WaitTimeout, match=r"w1:p1 working, but herdr_events has not recorded"):
        herdr_events.catch_up(pane, "working", timeout=0.2)


# -- small things --------------------------------------------------------------------------------


def test_scenario_dump_takes_a_str(tmp_path: Path) -> None:
    target = str(tmp_path / "scenario.json")
    written = Scenario().reply("hi").dump(target)
    assert written == Path(target)
    assert Scenario.load(target).to_dict() == Scenario().reply("hi").to_dict()


def test_check_integration_help_shows_the_defaults() -> None:
    text = pydoc.render_doc(check_integration)  # what help() shows
    assert "object object at" not in text
    assert "exit_keys: 'Sequence[str]' = ('/exit', 'Enter')" in text
    assert "answer: 'str' = 'yes'" in text


def test_an_unknown_schema_value_lists_the_valid_ones(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest("--herdr-schema", "protocol22")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--herdr-schema: 'protocol22' is not a schema file*valid values: builtin (*binary (*"]
    )


def test_the_integration_check_on_the_real_backend_says_why_it_skips(
    pytester: pytest.Pytester, standin_herdr: Path
) -> None:
    pytester.makepyfile(
        source("""
        def test_check(herdr_integration_check):
            herdr_integration_check(["my-agent"])
        """)
    )
    result = pytester.runpytest("--herdr-backend=real", f"--herdr-bin={standin_herdr}", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        ["*herdr difference integration-check on real*simulators of its own*--herdr-backend sim*"]
    )
    assert "fault-injection" not in result.stdout.str()


def test_xdist_is_an_extra_the_docs_name() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert any(dep.startswith("pytest-xdist") for dep in project["optional-dependencies"]["xdist"])
    assert not any(dep.startswith("pytest-xdist") for dep in project["dependencies"])
    usage = (REPO / "docs" / "pytest-plugin" / "usage.md").read_text()
    assert "pytest-herdr[xdist]" in usage


def test_a_recorder_stops_at_once_with_nothing_to_read(herdr_server: HerdrServer) -> None:
    """The recorder's thread waits in ``select`` without a timeout and ``stop`` wakes it: a
    100 ms poll made every test's teardown wait half of it on average. With no wake-up, the
    bounded join in ``stop`` would leave the thread running here."""
    recorder = EventRecorder(herdr_server.socket_path)
    timeouts: list[float | None] = []
    select = recorder._selector.select

    def recording_select(timeout: float | None = None) -> Any:
        timeouts.append(timeout)
        return select(timeout)

    recorder._selector.select = recording_select  # type: ignore[method-assign]
    recorder.start()
    thread = recorder._thread
    assert thread is not None and thread.is_alive()
    recorder.stop()
    assert not thread.is_alive(), "stop() returned with the recorder still reading"
    assert timeouts and set(timeouts) == {None}, f"the recorder polled: timeouts {timeouts}"
    recorder.stop()  # idempotent


def test_a_recorder_ends_when_its_server_goes_away(
    herdr_server_factory: Callable[[], HerdrServer],
) -> None:
    """Every stream at its end (the server stopped): the thread ends by itself, the
    wake-up socket being all it still watches."""
    server = herdr_server_factory()
    recorder = EventRecorder(server.socket_path).start()
    thread = recorder._thread
    assert thread is not None
    server.stop()
    thread.join(timeout=10)
    assert not thread.is_alive(), "the recorder kept waiting on a server that is gone"
    recorder.stop()
