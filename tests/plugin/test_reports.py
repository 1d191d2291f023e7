"""Reports that explain (issue 14), as CI maintainers meet them through ``pytester``: one item
per integration rule with the root cause failing once, the integration check's traffic
contract-checked, JUnit XML carrying the sections, HTML pages (failure, highlights, index,
integration check, pytest-html extras) and a stable coverage file."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def source(text: str) -> str:
    """A test module's source (dedented)."""
    return textwrap.dedent(text)


#: a test module with a per-rule integration check of an agent that is not on PATH
MISSING_AGENT = source("""
    import pytest

    @pytest.mark.herdr_integration(
        ["no-such-agent-14"], rules=["outside-herdr", "states", "turn"], timeout=3
    )
    def test_agent(herdr_integration_rule):
        herdr_integration_rule.check()
""")

#: the fake-agent persona, checked rule by rule (passes)
PERSONA = source("""
    import sys
    import pytest

    @pytest.mark.herdr_integration(
        [sys.executable, "-m", "herdr_sim", "fake-agent"], rules=["states", "source"]
    )
    def test_persona(herdr_integration_rule):
        herdr_integration_rule.check()
""")


def test_one_item_per_rule_and_the_root_cause_fails_exactly_one(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # under CI=true pytest prints whole failure messages in the short summary: the counts
    # below are of the default (truncated) summary
    monkeypatch.delenv("CI", raising=False)
    pytester.makepyfile(MISSING_AGENT)
    result = pytester.runpytest("-rA")
    result.assert_outcomes(failed=1, skipped=2)
    out = result.stdout.str()
    # the first rule the cause kept from being judged carries it; the others say why not
    result.stdout.fnmatch_lines(
        [
            "*ROOT CAUSE: the agent command 'no-such-agent-14' could not be started*",
            "*FAILED test_*.py::test_agent[[]outside-herdr[]]*",
        ]
    )
    summary = out.split("short test summary info", 1)[1]
    assert "states: not judged (because the agent command could not be started); the root " \
        "cause fails [outside-herdr]" in summary  # fmt: skip
    assert "turn: not judged (because the agent command could not be started)" in summary
    assert "ROOT CAUSE" not in summary and "could not be started: bash" not in summary
    # the failure: the cause once in its message (with the shell's screen), once in the report
    result.stdout.fnmatch_lines(["*  |   bash: no-such-agent-14: command not found"])
    assert out.count("ROOT CAUSE:") == 2, out


def test_per_rule_items_pass_and_their_traffic_is_contract_checked(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    pytester.makepyfile(PERSONA)
    coverage = tmp_path / "coverage.json"
    result = pytester.runpytest("-v", "--herdr-schema=builtin", f"--herdr-coverage-json={coverage}")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["*test_persona[[]states[]] PASSED*", "*test_persona[[]source[]] PASSED*"]
    )
    assert "lines checked: 0 requests" not in result.stdout.str()
    data = json.loads(coverage.read_text())
    assert "pane.report_agent" in data["methods"]["names"]
    assert "ok" in data["result_types"]["names"]  # the answers to the agent's reports
    assert data["violations"] == []


def test_a_rule_without_the_marker_or_with_an_unknown_rule_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        source("""
        def test_no_marker(herdr_integration_rule):
            pass
        """)
    )
    result = pytester.runpytest()
    assert result.ret != pytest.ExitCode.OK
    assert "needs @pytest.mark.herdr_integration(argv" in result.stdout.str() + str(result.stderr)


def test_junit_xml_carries_the_integration_report_and_the_server_sections(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    pytester.makepyfile(
        MISSING_AGENT
        + source("""
        def test_server(herdr_pane):
            herdr_pane.run("echo junit-marker-14")
            herdr_pane.wait_for("junit-marker-14")
            assert False, "deliberately"
        """)
    )
    xml_path = tmp_path / "junit.xml"
    result = pytester.runpytest(f"--junitxml={xml_path}", "-o", "junit_logging=all")
    result.assert_outcomes(failed=2, skipped=2)
    cases = {case.get("name"): case for case in ET.parse(xml_path).getroot().iter("testcase")}
    check = cases["test_agent[outside-herdr]"]
    failure = check.find("failure")
    assert failure is not None and "ROOT CAUSE" in (failure.get("message") or "")
    out = "".join(node.text or "" for node in check.iter("system-out"))
    assert "herdr integration check: no-such-agent-14" in out
    assert "N/J   states" in out
    server = "".join(node.text or "" for node in cases["test_server"].iter("system-out"))
    assert "──────── panes" in server and "junit-marker-14" in server
    assert "──────── protocol tail" in server


def test_html_pages_show_the_failure_highlight_errors_and_leave_pings_out(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    pytester.makepyfile(
        source("""
        import pytest
        from orchestrator.client.errors import HerdrError

        def test_fails(herdr_client, herdr_pane):
            herdr_client.ping()
            with pytest.raises(HerdrError):
                herdr_client.call("pane.get", pane_id="w9:p9")
            assert 1 + 1 == 3, "html-failure-marker"

        def test_passes(herdr_pane):
            pass
        """)
    )
    artifacts = tmp_path / "artifacts"
    result = pytester.runpytest(f"--herdr-artifacts={artifacts}")
    result.assert_outcomes(failed=1, passed=1)
    [page] = [p for p in artifacts.glob("*.html") if p.name != "index.html"]
    html = page.read_text()
    assert '<pre class="failure">' in html and "html-failure-marker" in html
    assert "test_fails" in html.split('<pre class="failure">', 1)[1]  # the traceback
    assert '<tr class="error">' in html and "pane_not_found" in html
    assert '<tr class="refused">' in html  # the request the error answered
    assert '"method": "ping"' not in html and "ping lines left out" in html
    index = (artifacts / "index.html").read_text()
    assert f'href="{page.name}"' in index and "html-failure-marker" in index
    assert "test_passes" not in index


def test_a_failing_integration_check_gets_a_page(pytester: pytest.Pytester, tmp_path: Path) -> None:
    pytester.makepyfile(MISSING_AGENT)
    artifacts = tmp_path / "artifacts"
    result = pytester.runpytest(f"--herdr-artifacts={artifacts}")
    result.assert_outcomes(failed=1, skipped=2)
    [page] = artifacts.glob("*-integration.html")
    html = page.read_text()
    assert '<div class="cause"><b>root cause:</b> the agent command' in html
    assert '<td class="rule-not_judged">not_judged</td><td>turn</td>' in html
    assert "ROOT CAUSE" in html.split('<pre class="failure">', 1)[1]
    index = (artifacts / "index.html").read_text()
    assert page.name in index
    # the row says what failed, as a fixture test's row shows its assertion, not the timing
    # (a root cause with no rule failed: its line; a failed rule's FAIL line is in
    # test_agent_author_example.py)
    [row] = [line for line in index.splitlines() if page.name in line]
    assert row.split("</td><td>")[-1].startswith("ROOT CAUSE: the agent command"), row
    assert "(check of" not in row


def test_pytest_html_gets_the_same_content_as_extras(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    pytest.importorskip("pytest_html")
    pytester.makepyfile(
        source("""
        def test_fails(herdr_pane):
            herdr_pane.run("echo extras-marker-14")
            herdr_pane.wait_for("extras-marker-14")
            assert False
        """)
    )
    report = tmp_path / "report.html"
    artifacts = tmp_path / "artifacts"
    result = pytester.runpytest(
        f"--html={report}", "--self-contained-html", f"--herdr-artifacts={artifacts}"
    )
    result.assert_outcomes(failed=1)
    html = report.read_text()
    assert "herdr sim server 1" in html
    assert "extras-marker-14" in html or "ZXh0cmFzLW1hcmtlci0xNA" in html  # text or base64
    assert (artifacts / "index.html").exists()


def test_contract_coverage_file_is_the_same_for_identical_runs(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    # agent.get is polled: how often differs between runs, what was exercised does not
    pytester.makepyfile(
        source("""
        def test_agent(herdr_fake_agent, herdr_events):
            agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("done"))
            agent.prompt("go")
            herdr_events.wait_for("pane_agent_detected")
        """)
    )
    files = [tmp_path / "one.json", tmp_path / "two.json"]
    for path in files:
        result = pytester.runpytest("--herdr-schema=builtin", f"--herdr-coverage-json={path}")
        result.assert_outcomes(passed=1)
    first, second = (json.loads(path.read_text()) for path in files)
    assert first == second
    assert first["methods"]["covered"] >= 3 and first["methods"]["known"] > 50
    assert "agent.prompt" in first["methods"]["names"]


def test_coverage_json_needs_the_schema_checks(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest("--herdr-coverage-json=out.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--herdr-coverage-json needs --herdr-schema" in result.stderr.str()


def test_a_state_wait_says_the_server_refused_the_report_and_hides_its_frames(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        source("""
        from herdr_sim.client import request

        def report(server, pane, state, **extra):
            params = {"pane_id": pane.pane_id, "source": "mine", "agent": "mine",
                      "state": state, **extra}
            return request(server.socket_path, "pane.report_agent", params)

        def test_refused(herdr_server, herdr_pane, herdr_wait):
            answer = report(herdr_server, herdr_pane, "idle", resume_argv=["/abs/mine"])
            assert "error" in answer
            herdr_wait.for_pane_status(herdr_pane.pane_id, "idle", timeout=0.3)

        def test_never_reported(herdr_server, herdr_pane, herdr_wait):
            assert "result" in report(herdr_server, herdr_pane, "working")
            herdr_wait.for_pane_status(herdr_pane.pane_id, "blocked", timeout=0.3)
        """)
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "E*WaitTimeout: pane w1:p1 never reached agent status 'idle': timeout*",
            (
                "E*idle: the state was reported but refused by the server: mine reported 'idle' "
                "at +*s and the server refused it: invalid_resume_argv: *"
            ),
            "E*WaitTimeout: pane w1:p1 never reached agent status 'blocked': timeout*",
            (
                "E*blocked: no pane.report_agent of 'blocked' reached the server among the last "
                "* wire lines (states reported: working)"
            ),
        ]
    )
    # the plugin's helpers stay out of the traceback: the test's own line is the last frame
    assert "pytest_herdr/waits.py" not in result.stdout.str()


def test_the_integration_page_highlights_refused_reports_and_escapes_text() -> None:
    from herdr_sim.conformance import Evidence, IntegrationReport, RootCause, RuleResult
    from pytest_herdr.html_report import render_integration

    refused = {"id": "a", "error": {"code": "invalid_resume_argv", "message": "<bare>"}}
    report = IntegrationReport(
        command=["my-agent"],
        cwd="/tmp/x",
        rules=[
            RuleResult("resume", "resume title", "failed", "invalid or refused <resume>"),
            RuleResult("turn", "turn title", "not_judged", "not judged (because …)"),
        ],
        reports=[
            {
                "index": 0,
                "t": 0.5,
                "phase": "run1",
                "method": "pane.report_agent",
                "params": {"state": "idle"},
                "faulted": False,
                "response": refused,
            },
            {
                "index": 1,
                "t": 0.6,
                "phase": "run1",
                "method": "pane.report_agent",
                "params": {"state": "working"},
                "faulted": False,
                "response": {"id": "b", "result": {"type": "ok"}},
            },
        ],
        root_cause=RootCause("refused", "the server refused <it>", "resume", [Evidence("e")]),
    )
    page = render_integration(report, "check <1>", "Failed: <msg>")
    assert page.count('<tr class="refused">') == 1
    assert "invalid_resume_argv" in page.split('<tr class="refused">', 1)[1].split("</tr>")[0]
    assert "<bare>" not in page and "&lt;bare&gt;" in page and "&lt;msg&gt;" in page
    assert "root cause (rule resume):</b> the server refused &lt;it&gt;" in page
    assert '<td class="rule-failed">failed</td><td>resume</td>' in page


def test_under_xdist_the_index_and_the_coverage_file_gather_every_worker(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """Slow because it runs a pytest subprocess with two xdist workers, each importing the plugin
    and starting its own simulator.
    """
    pytester.makepyfile(
        source("""
        import pytest

        @pytest.mark.parametrize("n", range(4))
        def test_ping(herdr_client, n):
            herdr_client.ping()
            assert n % 2 == 0, f"xdist-failure-{n}"
        """)
    )
    artifacts, coverage = tmp_path / "artifacts", tmp_path / "coverage.json"
    result = pytester.runpytest_subprocess(
        "-n",
        "2",
        "--herdr-schema=builtin",
        f"--herdr-coverage-json={coverage}",
        f"--herdr-artifacts={artifacts}",
    )
    result.assert_outcomes(passed=2, failed=2)
    index = (artifacts / "index.html").read_text()
    assert "xdist-failure-1" in index and "xdist-failure-3" in index
    assert json.loads(coverage.read_text())["methods"]["names"] == ["ping"]


def test_under_the_real_backend_the_integration_check_skips_saying_why(
    pytester: pytest.Pytester, standin_herdr: Path
) -> None:
    pytester.makepyfile(
        source("""
        import pytest

        def test_call(herdr_integration_check):
            pass

        @pytest.mark.herdr_integration(["my-agent"], rules=["states"])
        def test_rules(herdr_integration_rule):
            herdr_integration_rule.check()
        """)
    )
    result = pytester.runpytest("--herdr-backend=real", f"--herdr-bin={standin_herdr}", "-rs")
    result.assert_outcomes(skipped=2)
    out = result.stdout.str()
    assert out.count("herdr difference integration-check on real") == 2, out
    assert out.count("simulators of its own") == 2, out
