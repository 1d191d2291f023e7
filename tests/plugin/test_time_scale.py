"""The time scale as a plugin user sets it (``--herdr-time-scale``, its ini key and variable,
``@pytest.mark.herdr_time_scale``, the ``time_scale`` simulator setting), run with
``pytester``: it reaches the simulators and the plugin's default waits, it shortens Herdr's
timers and the fake agents' scripted delays by one factor, and a suite means at 0.1 what it
means at 1 — the settle delay still ends before a prompt is taken, a question still blocks
until answered, a prompt the agent never takes still stalls rather than timing out."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def source(text: str) -> str:
    """A test module's source (dedented)."""
    return textwrap.dedent(text)


SEEN = source("""
    import pytest

    def test_seen(herdr_sim_config, herdr_server, herdr_wait, herdr_fake_agent, request):
        expected = float(request.config.getoption("expected"))
        assert herdr_sim_config.time_scale == expected
        assert herdr_server.time_scale == expected
        timers = herdr_server.sim.config.timers()
        assert timers.agent_prompt_submit_delay == pytest.approx(0.3 * expected)
        assert timers.agent_start_timeout == pytest.approx(30 * expected)
        assert herdr_wait.timeout == pytest.approx(10 * expected)
        assert herdr_fake_agent.time_scale == expected
""")

CONFTEST = source("""
    def pytest_addoption(parser):
        parser.addoption("--expected")
""")


@pytest.mark.parametrize(
    ("how", "expected"),
    [
        ((), "1"),
        (("--herdr-time-scale", "0.1"), "0.1"),
        (("-o", "herdr_time_scale=0.25"), "0.25"),
    ],
    ids=["default", "option", "ini"],
)
def test_the_option_reaches_the_simulator_and_the_waits(
    pytester: pytest.Pytester, how: tuple[str, ...], expected: str
) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(SEEN)
    result = pytester.runpytest("-p", "no:cacheprovider", *how, f"--expected={expected}")
    result.assert_outcomes(passed=1)


def test_the_environment_variable_sets_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERDR_TEST_TIME_SCALE", "0.5")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(SEEN)
    pytester.runpytest("-p", "no:cacheprovider", "--expected=0.5").assert_outcomes(passed=1)


def test_the_marker_and_the_setting_override_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        source("""
        import pytest

        pytestmark = pytest.mark.herdr_time_scale(0.5)

        @pytest.mark.herdr_time_scale(0.2)
        def test_closest_marker(herdr_server, herdr_wait):
            assert herdr_server.time_scale == 0.2
            assert herdr_wait.timeout == pytest.approx(2.0)

        def test_module_marker(herdr_server):
            assert herdr_server.time_scale == 0.5

        @pytest.mark.herdr(time_scale=0.3)
        def test_setting(herdr_server):
            assert herdr_server.time_scale == 0.3

        def test_factory(herdr_server_factory):
            assert herdr_server_factory(time_scale=0.4).time_scale == 0.4
        """)
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--herdr-time-scale=0.1")
    result.assert_outcomes(passed=4)


@pytest.mark.parametrize("value", ["0", "-1", "nan", "fast"])
def test_a_bad_option_value_is_a_usage_error(pytester: pytest.Pytester, value: str) -> None:
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest("-p", "no:cacheprovider", f"--herdr-time-scale={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--herdr-time-scale: expected a number > 0*"])


def test_a_bad_marker_value_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        source("""
        import pytest

        @pytest.mark.herdr_time_scale(0)
        def test_zero(herdr_server):
            pass
        """)
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*herdr_time_scale on *test_zero: expected one number > 0*"])


def test_a_real_herdr_keeps_its_clocks(pytester: pytest.Pytester, standin_herdr: Path) -> None:
    # the time scale is the simulator's: a real Herdr's waits keep their real bounds
    pytester.makepyfile(
        source("""
        import pytest

        def test_real(herdr_server, herdr_wait):
            assert herdr_server.sim is None and herdr_server.time_scale == 1
            assert herdr_wait.timeout == pytest.approx(10)
        """)
    )
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--herdr-time-scale=0.1", "--herdr-backend=real",
        f"--herdr-bin={standin_herdr}",
    )  # fmt: skip
    result.assert_outcomes(passed=1)


# -- what a suite means at 0.1 -------------------------------------------------------------------

ORDER = source("""
    import os
    import time

    import pytest
    from herdr_sim.client import RequestFailed

    #: upper bounds stretch on a slow machine (HERDR_WAIT_SCALE, as tests.waits.SCALE)
    SLOW = float(os.environ.get("HERDR_WAIT_SCALE", "1"))

    # Herdr's own 3 s settle delay (the plugin shortens it by default), at 0.1: 0.3 s
    @pytest.mark.herdr(agent_start_settle=3.0)
    def test_settle_still_comes_before_the_prompt(
        herdr_client, herdr_pane, herdr_fake_agent, herdr_wait
    ):
        scenario = herdr_fake_agent.write(herdr_fake_agent.scenario().reply("took it"))
        started = time.monotonic()
        herdr_client.call("agent.start", name="a", kind="pi", pane_id=herdr_pane.pane_id,
                          args=["--scenario", str(scenario)])
        with pytest.raises(RequestFailed) as early:
            herdr_client.call("agent.prompt", target="a", text="too early")
        assert early.value.code == "agent_not_ready"

        def ready():
            return herdr_client.call("agent.get", target="a")["agent"].get("interactive_ready")

        herdr_wait.until(ready, what="a to be interactive_ready")
        took = time.monotonic() - started
        assert 0.3 <= took < 3.0 * SLOW, took  # the settle delay ran, a tenth as long
        info = herdr_client.call("agent.prompt", target="a", text="now", wait={})["agent"]
        assert info["agent_status"] == "idle"
        assert "took it" in herdr_client.call("agent.read", target="a",
                                              source="recent")["read"]["text"]

    def test_question_blocks_until_answered(herdr_fake_agent):
        scenario = herdr_fake_agent.scenario().ask("Proceed?").reply("answered")
        agent = herdr_fake_agent.start("pi", scenario)
        assert agent.prompt("go", until=("blocked",))["agent_status"] == "blocked"
        agent.send_keys("y", "Enter")
        assert agent.wait("idle")["agent_status"] == "idle"
        assert "answered" in agent.read()

    def test_scripted_delays_follow_the_scale(herdr_fake_agent):
        agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().wait(3000).reply("x"))
        started = time.monotonic()
        agent.prompt("go")
        took = time.monotonic() - started
        assert 0.3 <= took < 3.0 * SLOW, took  # the fake agent's 3 s of work, a tenth as long

    def test_a_prompt_never_taken_still_stalls(herdr_client, herdr_fake_agent):
        # the agent is still starting up (its own 80 s, 8 s at 0.1) and keeps the prompt
        # in its editor: Herdr gives it its stall time (5 s; 0.5 s at 0.1), then answers
        # agent_prompt_stalled, not a plain timeout
        agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().start_slowly(80_000))
        started = time.monotonic()
        with pytest.raises(RequestFailed) as stalled:
            herdr_client.call("agent.prompt", target=agent.name, text="hi",
                              wait={"timeout_ms": 30_000})
        took = time.monotonic() - started
        assert stalled.value.code == "agent_prompt_stalled"
        assert "no observed state change within 500 ms" in str(stalled.value)
        assert 0.5 <= took < 5.0 * SLOW, took
""")


def test_a_suite_means_at_a_tenth_what_it_means_at_one(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(ORDER)
    result = pytester.runpytest("-p", "no:cacheprovider", "--herdr-time-scale=0.1")
    result.assert_outcomes(passed=4)
