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
    assert "not greater" in evidence[-1].text
