"""The request log (``herdr_requests``), run with ``pytester`` as an agent author uses it: the
requests a pane's processes made, with their answers and the pane that sent them, and every
release with its cause, so a "releases on exit" test fails when only the safety net released
the agent; and, directly, the rules of its assertions (seq order, official sources)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest

from pytest_herdr.request_log import RequestLog

pytestmark = pytest.mark.slow

#: a third-party agent as an author writes one: reports working then idle through the
#: ``herdr`` CLI with rising seqs, then does what its first argument says before it exits
AGENT = """\
#!/bin/sh
r() { herdr pane report-agent "$HERDR_PANE_ID" --source custom:my-agent --agent my-agent "$@"; }
r --state working --seq 1
r --state idle --seq 2
case "$1" in
  release) herdr pane release-agent "$HERDR_PANE_ID" --source custom:my-agent \
             --agent my-agent --seq 3 ;;
  wrong-source) herdr pane release-agent "$HERDR_PANE_ID" --source custom:other \
                  --agent my-agent ;;
  stale) r --state working --seq 2 ;;
esac
echo my-agent-done
"""

#: the author's suite: the same test for each way the agent can behave
SUITE = textwrap.dedent("""
    import pytest

    pytestmark = pytest.mark.herdr_pane_path("agent-bin")

    def run(pane, requests, mode):
        pane.run(f"my-agent {mode}")
        return requests.wait_released(pane)

    @pytest.mark.parametrize("mode", ["release", "never", "wrong-source", "stale"])
    def test_releases_on_exit(herdr_pane, herdr_requests, mode):
        run(herdr_pane, herdr_requests, mode)
        herdr_requests.assert_reported(herdr_pane, state="idle", seq_increasing=True)
        herdr_requests.assert_released(herdr_pane, source="custom:my-agent")

    def test_events_alone_pass_without_the_release(herdr_pane, herdr_requests, herdr_events):
        release = run(herdr_pane, herdr_requests, "never")
        # what a test of events sees: the agent was released ...
        herdr_events.wait_for("pane_agent_detected", lambda data: data.get("released"))
        # ... by the safety net, which the log says and the wire does not
        assert release.cause == "safety-net" and release.request is None

    def test_requests_are_attributed_to_the_pane_that_sent_them(
        herdr_workspace, herdr_requests, herdr_client
    ):
        pane = herdr_workspace.root
        other = pane.split()
        # the agent runs in `other` but reports for `pane`
        other.run(f"HERDR_PANE_ID={pane.pane_id} my-agent release")
        herdr_requests.wait_released(pane)
        herdr_client.call("pane.get", pane_id=pane.pane_id)
        reports = herdr_requests.reports(pane)
        assert [r.params["state"] for r in reports] == ["working", "idle"]
        assert {r.sender for r in reports} == {other.pane_id}
        assert {r.sender for r in herdr_requests.requests(method="pane.get")} == {None}
        assert herdr_requests.requests(pane, sender=other, method="pane.release_agent")

    def test_a_refused_report(herdr_pane, herdr_requests, herdr_client):
        with pytest.raises(Exception):  # Herdr refuses a blank agent label
            herdr_client.call("pane.report_agent", pane_id=herdr_pane.pane_id,
                              source="custom:x", agent=" ", state="idle")
        herdr_requests.assert_reported(herdr_pane, state="idle")
    """)


def write_agent(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    agent = directory / "my-agent"
    agent.write_text(AGENT)
    agent.chmod(0o755)


def test_the_request_log_names_what_released_the_agent(pytester: pytest.Pytester) -> None:
    write_agent(pytester.path / "agent-bin")
    pytester.makepyfile(SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(passed=3, failed=4)
    text = result.stdout.str()
    outcomes = {
        "never": "no pane.release_agent request from 'custom:my-agent' for pane w1:p1; "
        "the agent was released by safety-net at *",
        "wrong-source": "no pane.release_agent request from 'custom:my-agent' for pane "
        "w1:p1; the agent was released by safety-net at *",
        "stale": "seq 2 of pane.report_agent from 'custom:my-agent' is not above the 2 "
        "before it: Herdr ignores it (answering ok)",
    }
    result.stdout.fnmatch_lines(
        [f"E   *{outcomes[mode]}*" for mode in ("never", "wrong-source", "stale")],
        consecutive=False,
    )
    # the failure shows the pane's log: the requests, their answers, the sender, the cause
    result.stdout.fnmatch_lines(
        [
            "E   *request log of pane w1:p1:",
            (
                "E   *pane.report_agent pane=w1:p1 source='custom:my-agent' agent='my-agent' "
                "state='working' seq=1 from pane w1:p1 → ok"
            ),
            "E   *pane.report_agent pane=w1:p1 * state='idle' seq=2 from pane w1:p1 → ok",
            "E   *released 'my-agent' in pane w1:p1: safety-net",
        ]
    )
    # a refused report: its error is named
    result.stdout.fnmatch_lines(
        ["E   *no pane.report_agent with state='idle' answered ok; it was refused invalid_agent: *"]
    )
    assert "test_releases_on_exit[release]" not in text  # it passed: no failure section


def test_assert_released_without_source_says_an_ignored_release(
    pytester: pytest.Pytester,
) -> None:
    write_agent(pytester.path / "agent-bin")
    pytester.makepyfile(
        textwrap.dedent("""
        import pytest

        @pytest.mark.herdr_pane_path("agent-bin")
        def test_wrong_source(herdr_pane, herdr_requests):
            herdr_pane.run("my-agent wrong-source")
            herdr_requests.wait_released(herdr_pane)
            herdr_requests.assert_released(herdr_pane)
        """)
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E   *pane.release_agent from 'custom:other' was answered ok but released nothing*",
            "E   *released 'my-agent' in pane w1:p1: safety-net",
        ]
    )


def test_the_log_survives_a_restart(pytester: pytest.Pytester) -> None:
    write_agent(pytester.path / "agent-bin")
    pytester.makepyfile(
        textwrap.dedent("""
        import pytest

        @pytest.mark.herdr_pane_path("agent-bin")
        def test_after_restart(herdr_server, herdr_requests, herdr_client, tmp_path):
            from pytest_herdr import Workspace
            herdr_server.restart()
            pane = Workspace.create(herdr_client, str(tmp_path)).root
            pane.run("my-agent release")
            herdr_requests.wait_released(pane)
            herdr_requests.assert_released(pane, source="custom:my-agent")
        """)
    )
    pytester.runpytest("-p", "no:cacheprovider", "-p", "no:xdist").assert_outcomes(passed=1)


def test_on_the_real_backend_the_assertions_skip_and_releases_come_from_events(
    pytester: pytest.Pytester, standin_herdr: Path
) -> None:
    write_agent(pytester.path / "agent-bin")
    pytester.makepyfile(
        textwrap.dedent("""
        import pytest

        pytestmark = pytest.mark.herdr_pane_path("agent-bin")

        def test_releases(herdr_pane, herdr_requests):
            herdr_pane.run("my-agent release")
            release = herdr_requests.wait_released(herdr_pane)
            assert release.cause == "unknown"
            assert herdr_requests.requests() == []

        def test_assertion(herdr_pane, herdr_requests):
            herdr_requests.assert_released(herdr_pane)
        """)
    )
    result = pytester.runpytest("--herdr-backend=real", f"--herdr-bin={standin_herdr}", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*herdr difference request-log on real: a real Herdr's socket*"])


# -- the assertions' rules, on a log fed by hand -------------------------------------------------


def feed(log: RequestLog, method: str, response: Mapping[str, object], **params: object) -> None:
    """One request and its answer, as the wire tap sees them."""
    log.on_line("request", {"id": "t", "method": method, "params": params})
    log.on_line("response", {"id": "t", **response})


OK = {"result": {"type": "ok"}}


def test_an_official_release_counts_once_the_process_exit_follows_it() -> None:
    # Herdr ignores pane.release_agent from herdr:pi and releases when pi's process exits
    log = RequestLog()
    params = {"pane_id": "w1:p1", "source": "herdr:pi", "agent": "pi"}
    feed(log, "pane.release_agent", OK, **params)
    with pytest.raises(AssertionError, match="answered ok but released nothing"):
        log.assert_released("w1:p1", source="herdr:pi")
    log.on_release("w1:p1", "pi", "process-exit", "")
    assert log.assert_released("w1:p1", source="herdr:pi").source == "herdr:pi"


def test_a_process_exit_alone_is_no_release_by_the_agent() -> None:
    log = RequestLog()
    log.on_release("w1:p1", "pi", "process-exit", "")
    with pytest.raises(AssertionError, match=r"released by process-exit at .* instead"):
        log.assert_released("w1:p1", source="herdr:pi")
    with pytest.raises(AssertionError, match="the agent was never released"):
        log.assert_released("w1:p2")


def test_seq_order_is_per_source_and_an_unsequenced_report_breaks_it() -> None:
    log = RequestLog()
    for source, seq in (("custom:a", 5), ("custom:b", 1), ("custom:a", 6)):
        feed(log, "pane.report_agent", OK, pane_id="p", source=source, agent="x", state="idle",
             seq=seq)  # fmt: skip
    assert len(log.assert_reported("p", state="idle", seq_increasing=True)) == 3
    # a source that never sends a seq is not held to one (Herdr accepts its reports) ...
    feed(log, "pane.report_agent", OK, pane_id="p", source="custom:c", agent="x", state="idle")
    log.assert_reported("p", seq_increasing=True)
    # ... but one that did and then sends none is ignored by Herdr
    feed(log, "pane.report_agent", OK, pane_id="p", source="custom:b", agent="x", state="idle")
    with pytest.raises(AssertionError, match="'custom:b' without a seq after its seq 1"):
        log.assert_reported("p", seq_increasing=True)
    # a refused report does not count in the order
    feed(log, "pane.report_agent", {"error": {"code": "invalid_state"}}, pane_id="q",
         source="custom:a", agent="x", state="idle", seq=1)  # fmt: skip
    with pytest.raises(AssertionError, match="refused invalid_state"):
        log.assert_reported("q", state="idle")
