"""The integration checker (issue 4, deliverable 4): Herdr's integration guide for agent
authors as an executable checklist.

The third-party fake-agent persona passes every rule through the CLI, a correct small
integration (``agents/broken_agent.py`` without a fault) passes through the Python API, and
each deliberately broken integration fails with exactly the rule it breaks named.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from herdr_sim.conformance import RULE_IDS, IntegrationReport, check_integration
from tests.waits import SCALE

AGENT = Path(__file__).parent / "agents" / "broken_agent.py"
VENV_BIN = Path(sys.executable).parent
#: the checker's bound on every wait for the small agent (it starts and answers at once)
TIMEOUT = 4.0 * SCALE


@pytest.fixture(scope="module")
def agent_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """``broken-agent`` on PATH (a bare name, as resume commands need) and its own HOME."""
    root = tmp_path_factory.mktemp("broken")
    bin_dir, home = root / "bin", root / "home"
    bin_dir.mkdir()
    home.mkdir()
    launcher = bin_dir / "broken-agent"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{AGENT}" "$@"\n')
    launcher.chmod(0o755)
    path = os.pathsep.join([str(bin_dir), str(VENV_BIN), "/usr/bin", "/bin"])
    return {"PATH": path, "HOME": str(home)}


def broken(agent_env: dict[str, str], fault: str | None, rules: list[str]) -> IntegrationReport:
    """Check ``broken-agent [--fault FAULT]`` on ``rules``."""
    argv = ["broken-agent"] + (["--fault", fault] if fault else [])
    return check_integration(argv, agent_env=agent_env, rules=rules, timeout=TIMEOUT)


def test_fake_agent_persona_passes_every_rule_through_the_cli(tmp_path: Path) -> None:
    """Slow because it runs the whole checklist (every rule: turns, a question, a slow and a
    refused socket, restarts, a restore) through the herdr-sim CLI in a subprocess.
    """
    env = {**os.environ, "HOME": str(tmp_path)}
    env["PATH"] = os.pathsep.join([str(VENV_BIN), env.get("PATH", "/usr/bin:/bin")])
    env = {k: v for k, v in env.items() if not k.startswith("HERDR_")}
    done = subprocess.run(
        [
            str(VENV_BIN / "herdr-sim"),
            "check-integration",
            "--json",
            "--",
            "herdr-sim",
            "fake-agent",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    report = json.loads(done.stdout)
    statuses = {rule["id"]: rule["status"] for rule in report["rules"]}
    assert statuses == dict.fromkeys(RULE_IDS, "passed"), done.stdout
    assert (done.returncode, report["passed"], report["version"]) == (0, True, 2)
    assert report["root_cause"] is None
    assert report["command"] == ["herdr-sim", "fake-agent"]


def test_a_correct_integration_passes_every_rule(agent_env: dict[str, str]) -> None:
    """Slow because it runs every rule of the checklist: turns, a question, a slow and a refused
    socket, restarts and a restore, each agent a new Python process.
    """
    report = broken(agent_env, None, list(RULE_IDS))
    assert [rule.status for rule in report.rules] == ["passed"] * len(RULE_IDS), report.render(
        verbose=True
    )
    assert report.passed
    methods = {item["method"] for item in report.reports}
    assert methods == {"pane.report_agent", "pane.release_agent"}


@pytest.mark.parametrize(
    ("fault", "rule", "summary"),
    [
        ("outside", "outside-herdr", "report(s) sent outside Herdr"),
        ("seq", "seq", "seq does not grow with every report of the source"),
        ("herdr-source", "source", "a source starts with herdr:"),
        ("bad-resume", "resume", "invalid or refused resume command"),
        ("no-release", "release", "no release when the agent exited"),
        ("blocking", "non-blocking", "prompts slowed down"),
        ("no-restore", "restore", "the agent did not report after the restore"),
    ],
)
def test_a_broken_integration_fails_the_rule_it_breaks(
    agent_env: dict[str, str], fault: str, rule: str, summary: str
) -> None:
    """Slow because, in its blocking case, a blocking agent's turn under the slow socket takes
    the fault's 4 s delay (driver.SLOW_DELAY): what the rule catches.
    """
    report = broken(agent_env, fault, [rule])
    assert report.failed_rules == [rule], report.render(verbose=True)
    assert summary in report.rule(rule).summary
    assert report.rule(rule).evidence
    assert f"FAIL  {rule}" in report.render()


def test_the_seq_evidence_shows_the_restart_that_went_back(agent_env: dict[str, str]) -> None:
    evidence = [item.text for item in broken(agent_env, "seq", ["seq"]).rule("seq").evidence]
    assert any(text.startswith("same seq again: [run2]") for text in evidence), evidence


def test_an_invalid_resume_command_shows_the_servers_refusal(agent_env: dict[str, str]) -> None:
    evidence = broken(agent_env, "bad-resume", ["resume"]).rule("resume").evidence
    assert any("error invalid_resume_argv" in item.text for item in evidence)


def test_the_cli_exits_1_when_a_rule_fails(agent_env: dict[str, str]) -> None:
    env = {**os.environ, **agent_env}
    done = subprocess.run(
        [
            str(VENV_BIN / "herdr-sim"),
            "check-integration",
            "--rule",
            "release",
            "--",
            "broken-agent",
            "--fault",
            "no-release",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL  release" in done.stdout
    assert "FAILED: 0 passed, 1 failed, 0 skipped" in done.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["check-integration"],
        ["check-integration", "--rule", "nope", "--", "x"],
        ["check-integration", "--agent-env", "NOEQUALS", "--", "x"],
    ],
)
def test_the_cli_exits_2_on_usage_errors(argv: list[str]) -> None:
    done = subprocess.run(
        [str(VENV_BIN / "herdr-sim"), *argv],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert "check-integration" in done.stderr


def test_without_a_question_prompt_the_blocked_rule_is_skipped(agent_env: dict[str, str]) -> None:
    report = check_integration(
        ["broken-agent"], agent_env=agent_env, rules=["blocked"], question_prompt=None
    )
    assert report.rule("blocked").status == "skipped"
    assert report.passed


# -- the root cause, named once (issue 14) -----------------------------------------------------


def test_an_agent_missing_from_path_is_the_root_cause_and_nothing_passes(
    agent_env: dict[str, str],
) -> None:
    rules = ["outside-herdr", "states", "turn", "resume", "restore"]
    report = check_integration(
        ["broken-agent-missing"], agent_env=agent_env, rules=rules, timeout=TIMEOUT
    )
    assert report.root_cause is not None, report.render()
    assert report.root_cause.kind == "command-not-found"
    assert "command not found" in report.root_cause.summary
    # no false PASS outside-herdr, no eight identical failures: every rule "not judged"
    assert [rule.status for rule in report.rules] == ["not_judged"] * len(rules), report.render()
    assert not report.passed
    text = report.render()
    assert text.splitlines()[3].startswith("ROOT CAUSE: the agent command 'broken-agent-missing'")
    assert "not judged (because the agent command could not be started)" in text
    # the shell's "command not found" ends the wait for a first report at once
    assert report.duration < 2 * TIMEOUT


def test_an_agent_that_never_reports_is_the_root_cause(agent_env: dict[str, str]) -> None:
    report = check_integration(
        ["sh", "-c", "exec cat"],
        agent_env=agent_env,
        rules=["turn", "blocked", "release", "non-blocking"],
        question_prompt=None,
        timeout=2.0,
    )
    assert report.root_cause is not None and report.root_cause.kind == "never-reported"
    assert "never reported inside Herdr" in report.root_cause.summary
    statuses = [rule.status for rule in report.rules]
    # blocked stays skipped: the user left it out, the cause did not keep it from being judged
    assert statuses == ["not_judged", "skipped", "not_judged", "not_judged"], report.render()
    assert not report.passed


def test_a_refused_resume_command_is_named_once_and_its_cascade_not_judged(
    agent_env: dict[str, str],
) -> None:
    """Slow because the check must wait out its whole timeout (TIMEOUT, 4 s) for an accepted idle
    report that never comes.
    """
    report = broken(agent_env, "bad-resume", ["turn", "resume", "restore"])
    cause = report.root_cause
    assert cause is not None and (cause.kind, cause.rule) == ("refused", "resume")
    assert "invalid_resume_argv" in cause.summary
    assert report.failed_rules == ["resume"], report.render()
    # turn lost its idle report to the refusal, restore has nothing accepted to restore
    assert report.rule("turn").status == "not_judged"
    assert report.rule("restore").status == "not_judged"
    text = report.render()
    assert text.splitlines()[3].startswith("ROOT CAUSE (rule resume): the server refused")
    # the refused report is shown once for the cause and once for its rule, not per repeat
    assert text.count("-> error invalid_resume_argv") == 2, text


def test_a_working_report_left_last_is_named_as_such(agent_env: dict[str, str]) -> None:
    report = broken(agent_env, "stuck-working", ["blocked"])
    summary = report.rule("blocked").summary
    assert report.failed_rules == ["blocked"], report.render()
    assert "is 'working'" in summary and "came before it" in summary, summary
    assert report.root_cause is None


def test_the_report_repr_is_one_line_per_failed_rule(agent_env: dict[str, str]) -> None:
    report = broken(agent_env, "bad-resume", ["turn", "resume"])
    lines = repr(report).splitlines()
    assert lines[0] == "<IntegrationReport FAILED: broken-agent --fault bad-resume"
    assert lines[1].startswith("  root cause: the server refused a pane.report_agent")
    assert lines[2:] == [
        (
            "  N/J turn: not judged (because the server refused reports the rule needs; "
            "see rule resume)"
        ),
        "  FAIL resume: invalid or refused resume command>",
    ]


def test_idle_reports_refused_for_their_resume_command_are_not_read_as_missing(
    agent_env: dict[str, str],
) -> None:
    """Slow because the check must wait out its whole timeout (TIMEOUT, 4 s) for an accepted idle
    report that never comes.
    """
    # every idle report carries the refused resume command: the turn and the question look
    # unfinished, restore has nothing to restore; one cause, one failed rule
    report = broken(agent_env, "resume-always", ["turn", "blocked", "resume", "restore"])
    assert report.root_cause is not None and report.root_cause.rule == "resume"
    assert report.failed_rules == ["resume"], report.render()
    statuses = {rule.id: rule.status for rule in report.rules}
    assert statuses == {
        "turn": "not_judged",
        "blocked": "not_judged",
        "resume": "failed",
        "restore": "not_judged",
    }
    # the refusal is shown once per distinct problem, the repeats by number only
    evidence = [item.text for item in report.rule("resume").evidence]
    assert "(and " in evidence[0] and "more: #" in evidence[0], evidence
    assert len(evidence) <= 4, evidence


def test_a_stale_report_delivered_late_is_information_not_a_failure(
    agent_env: dict[str, str],
) -> None:
    # the working report after the answer reaches Herdr after the idle that follows it:
    # Herdr ignores it as stale and the pane is idle, so nothing fails
    report = broken(agent_env, "late", ["seq", "blocked"])
    assert report.failed_rules == [], report.render(verbose=True)
    assert "out of order" in report.rule("seq").summary
    assert any("ignored by Herdr as stale" in e.text for e in report.rule("seq").evidence)
    assert report.rule("blocked").status == "passed"


def test_a_report_the_cli_refuses_locally_is_the_root_cause(agent_env: dict[str, str]) -> None:
    # `--state busy` never reaches the socket: the simulated CLI records its refusal
    report = broken(agent_env, "cli-busy", ["states", "turn"])
    assert report.rule("states").status == "failed", report.render(verbose=True)
    assert report.root_cause is not None and report.root_cause.kind == "cli-refused"
    assert "--state busy" in report.root_cause.summary
    assert "invalid pane agent state: busy" in report.root_cause.summary
    assert report.rule("turn").status == "not_judged"
    assert "PASS  states" not in report.render()
