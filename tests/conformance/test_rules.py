"""The conformance rules judged on hand-made observations (no agent, no simulator)."""

from __future__ import annotations

import json
from pathlib import Path

from herdr_sim.conformance.driver import CheckOptions, Observed
from herdr_sim.conformance.recorder import Report, ReportLog
from herdr_sim.conformance.rules import seq


def observed(*lines: dict[str, object]) -> Observed:
    log = ReportLog(t0=0.0)
    for index, line in enumerate(lines):
        params = line["params"]
        assert isinstance(params, dict)
        log.reports.append(
            Report(
                index=index,
                t=float(index),
                phase="run1",
                method=str(line["method"]),
                params=params,
                raw=json.dumps(line),
                response={"id": line["id"], "result": {"type": "ok"}},
            )
        )
    return Observed(options=CheckOptions(argv=["agent"]), cwd=str(Path.cwd()), path="", log=log)


def report(request_id: str, number: int, state: str = "idle") -> dict[str, object]:
    params = {"pane_id": "w1:p1", "source": "me", "agent": "me", "state": state, "seq": number}
    return {"id": request_id, "method": "pane.report_agent", "params": params}


def test_an_exact_resend_of_a_report_is_a_retry_not_a_second_report() -> None:
    # The client timed out waiting for the answer and sent the very same line again.
    status, summary, _ = seq(observed(report("a", 1), report("b", 2), report("b", 2)))
    assert status == "passed", summary


def test_a_new_report_that_repeats_the_number_fails() -> None:
    status, _, evidence = seq(observed(report("a", 1), report("b", 1, state="working")))
    assert status == "failed"
    assert "same seq again" in evidence[-1].text


def test_a_report_that_arrives_after_a_newer_one_is_information() -> None:
    # sent in the background, seq 2 arrived after seq 3: Herdr ignores it as stale
    status, summary, evidence = seq(observed(report("a", 1), report("c", 3), report("b", 2)))
    assert status == "passed", summary
    assert "1 delivered out of order" in summary
    assert "arrived after #1 (seq 3)" in evidence[-1].text


def test_the_turn_is_judged_on_the_reports_herdr_applied() -> None:
    from herdr_sim.conformance.rules import turn

    seen = observed(
        report("a", 1),
        report("b", 2, state="working"),
        report("d", 4),
        report("c", 3, state="working"),  # stale: Herdr left the pane idle
    )
    seen.marks["run1.start"] = (0, 0.0)
    seen.marks["prompt"] = (1, 1.0)
    status, summary, _ = turn(seen)
    assert status == "passed", summary


def test_an_agent_that_reported_is_not_called_missing_for_its_own_output() -> None:
    from herdr_sim.conformance import causes

    seen = observed(report("a", 1))
    seen.screens["run1"] = "$ agent\nagent: settings.toml: No such file or directory\n"
    assert causes.find(seen) is None


def test_a_shell_that_cannot_find_the_agent_is_the_root_cause() -> None:
    from herdr_sim.conformance import causes

    seen = observed()
    seen.marks["run1.start"] = (0, 0.0)
    seen.screens["run1"] = "$ agent\nbash: agent: command not found\n$"
    cause = causes.find(seen)
    assert cause is not None and cause.kind == "command-not-found"
    assert "bash: agent: command not found" in cause.summary


def test_a_restart_that_counts_from_a_lower_unused_number_fails() -> None:
    seen = observed(report("a", 10), report("b", 20), report("c", 5))
    seen.log.reports[2].phase = "run2"  # a new process: no race with run1's reports
    status, _, evidence = seq(seen)
    assert status == "failed"
    assert evidence[-1].text.startswith("not greater: [run2]")
