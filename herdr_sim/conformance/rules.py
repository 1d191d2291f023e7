"""The rules of Herdr's integration guide for agent authors, judged on what a check saw.

Each rule is a function from :class:`~herdr_sim.conformance.driver.Observed` to a
:class:`~herdr_sim.conformance.report.RuleResult`: ``passed`` only on positive evidence,
``failed`` with the reports (or screens) that break it, ``skipped`` with the reason when
the check could not exercise it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass

from ..model import agents
from .causes import RESUME_ERRORS, not_found_line
from .driver import SLOW_ALLOWANCE, SLOW_DELAY, Observed
from .recorder import Report
from .report import Evidence, RuleResult, Status

__all__ = ["RULES", "Rule", "judge"]

VALID_STATES = ("idle", "working", "blocked")


@dataclass(frozen=True)
class Rule:
    """One checklist item: its id (``--rule ID``), title and judge."""

    id: str
    title: str
    judge: Callable[[Observed], tuple[Status, str, list[Evidence]]]


def _ev(report: Report) -> Evidence:
    return Evidence(report.describe(), report.t)


def _all(seen: Observed) -> list[Report]:
    return [r for r in seen.log.snapshot() if r.phase != "outside"]


def _without_retries(reports: list[Report]) -> list[Report]:
    """``reports`` without exact resends of a line already read (a client's retry)."""
    seen_lines: set[str] = set()
    kept: list[Report] = []
    for report in reports:
        if report.raw in seen_lines:
            continue
        seen_lines.add(report.raw)
        kept.append(report)
    return kept


def _applied(seen: Observed) -> set[int]:
    """The indexes of the reports Herdr applied: answered ``ok`` and not stale.

    Herdr acknowledges a report whose ``seq`` is not above the highest its source has
    sent to the pane, and ignores it (its seq rule): reports sent in the background can
    arrive out of order, and the older one is then stale. The state a pane is left in is
    what the applied reports said, so the rules judge those.
    """
    highest: dict[str, int] = {}
    applied: set[int] = set()
    for report in _without_retries(_all(seen)):
        if not report.ok:
            continue
        number, key = report.seq, report.source or ""
        if number is None and key in highest:
            continue  # an unsequenced report after a sequenced one: ignored too
        if number is not None:
            if number <= highest.get(key, -1):
                continue
            highest[key] = number
        applied.add(report.index)
    return applied


def _cli_refused_reports(seen: Observed) -> list[Evidence]:
    """The reports the simulated ``herdr`` CLI refused before the socket, as evidence."""
    return [Evidence(r.describe(), r.t) for r in seen.cli_refusals if r.is_report]


def _no_reports(seen: Observed) -> tuple[Status, str, list[Evidence]] | None:
    if _all(seen):
        return None
    why = seen.aborted or "the agent never reported inside Herdr"
    return "failed", why, list(seen.timeline)


def _aborted_before(seen: Observed, mark: str) -> tuple[Status, str, list[Evidence]] | None:
    if mark in seen.marks:
        return None
    why = seen.aborted or f"the check did not reach {mark}"
    return "skipped", f"not exercised: {why}", list(seen.timeline[-3:])


# -- rules -------------------------------------------------------------------------------------


def outside_herdr(seen: Observed) -> tuple[Status, str, list[Evidence]]:
    """Reports only when HERDR_ENV=1 and HERDR_SOCKET_PATH / HERDR_PANE_ID are set."""
    evidence: list[Evidence] = []
    leaked = 0
    for run in seen.outside:
        evidence.append(Evidence(f"run outside Herdr with {run.label}: env {run.env}"))
        if not run.exited:
            evidence.append(Evidence("  (the agent did not exit on the exit keys; killed)"))
        for t, line in run.lines:
            leaked += 1
            evidence.append(Evidence(f"  reported anyway: {line}", t))
    if not seen.outside:
        return "skipped", "the outside runs did not happen", evidence
    for run in seen.outside:
        said = not_found_line(run.output, seen.options.argv[0])
        if said is not None and not run.lines:
            return "skipped", f"the agent could not be started outside Herdr: {said}", evidence
    if leaked:
        return "failed", f"{leaked} report(s) sent outside Herdr", evidence
    if not any(run.output.strip() for run in seen.outside):
        return "skipped", "the agent printed nothing outside Herdr; did it run?", evidence
    return "passed", f"no report in {len(seen.outside)} runs outside Herdr", evidence


def states(seen: Observed) -> tuple[Status, str, list[Evidence]]:
    """Every report well-formed and every state one of idle, working, blocked."""
    refused_locally = _cli_refused_reports(seen)
    if refused_locally:
        why = f"{len(refused_locally)} report(s) refused by the herdr CLI, never sent to Herdr"
        return "failed", why, refused_locally
    if (empty := _no_reports(seen)) is not None:
        return empty
    bad: list[Evidence] = []
    for report in _all(seen):
        code = report.error
        refused = code is not None and code not in RESUME_ERRORS
        if refused or (report.method == "pane.report_agent" and report.state not in VALID_STATES):
            bad.append(_ev(report))
    if bad:
        return "failed", f"{len(bad)} malformed report(s) or invalid state(s)", bad
    used = sorted({r.state for r in _all(seen) if r.state})
    shown = [_ev(r) for r in _all(seen) if r.method == "pane.report_agent"][:6]
    return "passed", f"states reported: {', '.join(used) or 'none'}", shown


def seq(seen: Observed) -> tuple[Status, str, list[Evidence]]:
    """``seq`` strictly increasing per source, across restarts of the agent.

    A request line read twice, byte for byte (same request id, same params), is one report
    retried after its answer was slow or lost, not a second report: Herdr takes the first and
    ignores the copy as stale, which is what the number is for. Likewise a report that
    arrives after a newer one (reports sent in the background race) is acknowledged and
    ignored by Herdr: information, not a failure, as long as its number is its own. What
    fails is a number used by two different reports (a counter that restarts or repeats),
    whose later report Herdr drops although it is new.
    """
    if (empty := _no_reports(seen)) is not None:
        return empty
    reports = _without_retries([r for r in _all(seen) if not r.faulted])
    numbered = [r for r in reports if r.seq is not None]
    if not numbered:
        why = "no report carries a seq (optional, but recommended by the guide)"
        return "skipped", why, [_ev(r) for r in reports[:5]]
    evidence: list[Evidence] = []
    late: list[Evidence] = []
    newest: dict[str, Report] = {}
    read: dict[str, list[Report]] = {}
    for report in reports:
        key = report.source or ""
        if report.seq is None:
            evidence.append(Evidence("report without seq: " + report.describe(), report.t))
            continue
        earlier = read.setdefault(key, [])
        earlier.append(report)
        number = report.seq
        twin = next((r for r in earlier[:-1] if r.seq == number), None)
        if twin is not None:
            evidence.append(_ev(twin))
            evidence.append(Evidence("same seq again: " + report.describe(), report.t))
            continue
        before = newest.get(key)
        if before is None or before.seq is None or number > before.seq:
            newest[key] = report
            continue
        overtaker = next(r for r in earlier if r.seq is not None and r.seq > number)
        prior = earlier[: earlier.index(overtaker)]
        if overtaker.phase == report.phase and all((r.seq or 0) < number for r in prior):
            # sent before the reports that overtook it, by the same process: a race
            late.append(
                Evidence(
                    f"arrived after #{before.index} (seq {before.seq}), ignored by Herdr as "
                    "stale: " + report.describe(),
                    report.t,
                )
            )
            continue
        evidence.append(_ev(before))
        evidence.append(Evidence("not greater: " + report.describe(), report.t))
    if evidence:
        return "failed", "seq does not grow with every report of the source", evidence
    phases = ", ".join(sorted({r.phase for r in numbered}))
    edges = [r for i, r in enumerate(numbered) if i == 0 or r.phase != numbered[i - 1].phase]
    shown = [_ev(r) for r in edges]
    summary = f"{len(numbered)} reports, seq strictly increasing across {phases}"
    if late:
        summary += f"; {len(late)} delivered out of order (stale, ignored by Herdr as it should)"
    return "passed", summary, shown + late


def source(seen: Observed) -> tuple[Status, str, list[Evidence]]:
    """One stable source, not ``herdr:``-prefixed, and the agent's own name."""
    if (empty := _no_reports(seen)) is not None:
        return empty
    reports = _all(seen)
    sources = sorted({r.source or "" for r in reports})
    labels = sorted({str(r.get("agent")) for r in reports if r.get("agent") is not None})
    evidence: list[Evidence] = []
    problems: list[str] = []
    if len(sources) > 1:
        problems.append(f"{len(sources)} different sources {sources}")
    if any(s.startswith("herdr:") for s in sources):
        problems.append("a source starts with herdr: (reserved for Herdr's own integrations)")
    if not all(sources):
        problems.append("a report has an empty or missing source")
    known = [label for label in labels if agents.known_agent(label)]
    if known:
        problems.append(f"agent name {known} is one Herdr already supports; use your own")
    if problems:
        seen_sources: set[str] = set()
        for report in reports:
            if report.source not in seen_sources:
                seen_sources.add(report.source or "")
                evidence.append(_ev(report))
        return "failed", "; ".join(problems), evidence
    return "passed", f"source {sources[0]!r}, agent {labels}", [_ev(reports[0])]


def turn(seen: Observed) -> tuple[Status, str, list[Evidence]]:
    """``idle`` when ready for input, ``working`` at turn start, ``idle`` again after it."""
    if (empty := _no_reports(seen)) is not None:
        return empty
    if (missing := _aborted_before(seen, "prompt")) is not None:
        return missing
    startup = seen.between("run1.start", "prompt")
    turn_reports = seen.between("prompt", _next_mark(seen, "prompt"))
    evidence = [_ev(r) for r in startup + turn_reports if r.state is not None]
    problems: list[str] = []
    applied = _applied(seen)
    if not any(r.state == "idle" and r.index in applied for r in startup):
        problems.append("no idle report when the agent was ready for input")
    working = next((r for r in turn_reports if r.state == "working" and r.index in applied), None)
    if working is None:
        problems.append("no working report at the start of the turn")
    else:
        later = [r for r in turn_reports if r.index > working.index and r.state is not None]
        after = [r for r in later if r.index in applied]
        if not after or after[-1].state != "idle":
            problems.append(_not_idle_at_end("when the turn ended", after, later))
    if problems:
        return "failed", "; ".join(problems), evidence + _screen(seen, "run1")
    return "passed", "idle at start, working then idle for the prompt", evidence


def blocked(seen: Observed) -> tuple[Status, str, list[Evidence]]:
    """``blocked`` with a message when the agent needs a decision; back to work after it."""
    if seen.options.question_prompt is None:
        return "skipped", "no question prompt given (--question-prompt)", []
    if (empty := _no_reports(seen)) is not None:
        return empty
    if (missing := _aborted_before(seen, "question")) is not None:
        return missing
    asked = seen.between("question", "question.end")
    evidence = [_ev(r) for r in asked if r.state is not None]
    hit = next((r for r in asked if r.state == "blocked" and r.index in _applied(seen)), None)
    if hit is None:
        why = f"no blocked report after the question prompt {seen.options.question_prompt!r}"
        return "failed", why, evidence + _screen(seen, "question")
    message = hit.get("message")
    if not isinstance(message, str) or not message.strip():
        return "failed", "blocked reported without --message", evidence
    answered = [r for r in seen.between("answer", "question.end") if r.state is not None]
    applied = _applied(seen)
    after = [r for r in answered if r.index in applied]
    if not after or after[-1].state != "idle":
        why = _not_idle_at_end("after the question was answered", after, answered)
        return "failed", why, evidence
    return "passed", f"blocked with message {message!r}, idle after the answer", evidence


def resume(seen: Observed) -> tuple[Status, str, list[Evidence]]:
    """A valid resume command, accepted, and reported again when the session changes."""
    if (empty := _no_reports(seen)) is not None:
        return empty
    reports = [r for r in _all(seen) if r.resume_argv is not None or r.error in RESUME_ERRORS]
    if not reports:
        return "failed", "no resume command reported: Herdr cannot restore the session", []
    bad: dict[str, list[Report]] = {}
    for report in reports:
        argv = report.resume_argv
        problem = None if argv is None else agents.resume_argv_error(argv)
        if problem is None and argv and shutil.which(argv[0], path=seen.path) is None:
            problem = f"{argv[0]!r} is not on the PATH of the pane"
        if problem is not None or report.error in RESUME_ERRORS:
            parts = [problem] if problem else []
            if report.error is not None:
                parts.append(f"refused: {report.answer().removeprefix('error ')}")
            bad.setdefault("; ".join(parts), []).append(report)
    if bad:
        # one line per distinct problem: the first report, and how often it recurred
        evidence = []
        for problem_text, alike in bad.items():
            more = "" if len(alike) == 1 else f" (and {len(alike) - 1} more: " + ", ".join(
                f"#{r.index}" for r in alike[1:]) + ")"  # fmt: skip
            evidence.append(Evidence(f"{problem_text}{more}", alike[0].t))
            evidence.append(_ev(alike[0]))
        return "failed", "invalid or refused resume command", evidence
    notes: list[str] = []
    if "new-session" in seen.marks:
        again = [r for r in seen.between("new-session", "new-session.end") if r.resume_argv]
        releases = [
            r
            for r in seen.between("new-session", "new-session.end")
            if r.method == "pane.release_agent"
        ]
        if releases:
            return "failed", "released the pane on a session change", [_ev(r) for r in releases]
        if not again:
            why = f"no resume command re-reported after {seen.options.new_session_prompt!r}"
            return "failed", why, _screen(seen, "new-session")
        notes.append("re-reported on a session change")
    if "run2.start" in seen.marks:
        if not any(r.resume_argv for r in seen.between("run2.start")):
            return "failed", "no resume command reported after the restart", []
        notes.append("reported again after a restart")
    else:
        notes.append("restart not exercised")
    summary = f"{len(reports)} resume report(s) valid and accepted; " + ", ".join(notes)
    return "passed", summary, [_ev(r) for r in reports]


def release(seen: Observed) -> tuple[Status, str, list[Evidence]]:
    """``pane.release_agent`` when the agent really exits, never before."""
    if (empty := _no_reports(seen)) is not None:
        return empty
    early = [r for r in seen.between("run1.start", "exit1") if r.method == "pane.release_agent"]
    if early:
        return "failed", "released the pane before exiting", [_ev(r) for r in early]
    if (missing := _aborted_before(seen, "exit1")) is not None:
        return missing
    if not seen.exited:
        why = "not exercised: the agent did not exit on the exit keys (see --exit-key)"
        return "skipped", why, _screen(seen, "exit1")
    after = [r for r in seen.between("exit1", "run2.start") if r.method == "pane.release_agent"]
    if not any(r.ok for r in after):
        evidence = _notes_since(seen, "exit1", "run2.start")
        evidence += [_ev(r) for r in seen.between("exit1", "run2.start")]
        return "failed", "no release when the agent exited", evidence
    return "passed", "released on exit, not before", [_ev(r) for r in after]


def non_blocking(seen: Observed) -> tuple[Status, str, list[Evidence]]:
    """Reports never slow the agent: slow or refused socket, prompts answered as fast."""
    if (missing := _aborted_before(seen, "slow")) is not None:
        return missing
    base = seen.baseline
    evidence: list[Evidence] = []
    if base is not None:
        shown = "not answered" if base.elapsed is None else f"{base.elapsed:.2f}s"
        evidence.append(Evidence(f"baseline prompt answered in {shown}", base.started))
    slow = []
    for timing in seen.faulted_turns:
        took = "not answered" if timing.elapsed is None else f"{timing.elapsed:.2f}s"
        evidence.append(
            Evidence(
                f"prompt with socket {timing.label}: {took} (bound {timing.bound:.2f}s)",
                timing.started,
            )
        )
        if timing.elapsed is None or timing.elapsed > timing.bound:
            slow.append(timing.label)
    if slow:
        why = (
            f"prompts slowed down while reports were delayed {SLOW_DELAY:g}s or refused: "
            f"{', '.join(slow)} (allowed: baseline + {SLOW_ALLOWANCE:g}s)"
        )
        return "failed", why, evidence
    if not seen.running_after_faults:
        return "failed", "the agent stopped running while the socket was faulted", evidence
    recovered = [r for r in seen.between("recovered", "faults.end") if not r.faulted and r.ok]
    if not recovered:
        return "failed", "no report got through once the socket was healthy again", evidence
    why = "prompts answered at normal speed with a slow and a refused socket"
    return "passed", why, evidence + [_ev(r) for r in recovered[:2]]


def restore(seen: Observed) -> tuple[Status, str, list[Evidence]]:
    """After a session stop and start, the resume command runs in the same cwd and reports."""
    if (empty := _no_reports(seen)) is not None:
        return empty
    if (missing := _aborted_before(seen, "restore.start")) is not None:
        return missing
    accepted = [r for r in seen.between("run1.start", "restore.stop") if r.resume_argv and r.ok]
    evidence = [_ev(r) for r in accepted[-1:]]
    if not accepted:
        return "failed", "nothing to restore: no accepted resume command", evidence
    after = seen.between("restore.start", "restore.end")
    evidence += [_ev(r) for r in after[:3]]
    if not any(r.ok for r in after):
        return (
            "failed",
            "the agent did not report after the restore",
            evidence + _screen(seen, "restore"),
        )
    cwds = sorted({str(p.get("cwd")) for p in seen.restored_processes if p.get("cwd")})
    evidence.append(Evidence(f"restored foreground: {seen.restored_processes}"))
    if cwds and seen.cwd not in cwds:
        return "failed", f"the resumed agent runs in {cwds}, not {seen.cwd}", evidence
    summary = f"resumed with {accepted[-1].resume_argv} in {seen.cwd}, reporting again"
    return "passed", summary, evidence


def _not_idle_at_end(when: str, after: list[Report], sent: list[Report]) -> str:
    """Why the state last accepted (``after``, of the reports ``sent``) is not ``idle``:
    none at all, an idle report the server refused, or which state was left."""
    refused = [r for r in sent if r.state == "idle" and r.error is not None]
    if refused:
        last_refused = refused[-1]
        return (
            f"the idle report {when} (#{last_refused.index}) was refused by the server: "
            f"{last_refused.answer().removeprefix('error ')}"
        )
    if not after:
        return f"no state report {when} (idle expected)"
    last = after[-1]
    idle = [r for r in after if r.state == "idle"]
    before = f"; its idle report #{idle[-1].index} came before it" if idle else ""
    return (
        f"the last state reported {when} is {last.state!r} (#{last.index}), not idle: "
        f"the pane is left {last.state}{before}"
    )


def _next_mark(seen: Observed, name: str) -> str | None:
    start = seen.marks[name][1]
    later = [(t, mark) for mark, (_, t) in seen.marks.items() if t > start]
    return min(later)[1] if later else None


def _notes_since(seen: Observed, start: str, end: str) -> list[Evidence]:
    """What the checker did and saw from mark ``start`` up to mark ``end``."""
    begin = seen.marks[start][1]
    stop = seen.marks[end][1] if end in seen.marks else float("inf")
    return [item for item in seen.timeline if item.t is not None and begin <= item.t < stop]


def _screen(seen: Observed, name: str) -> list[Evidence]:
    screen = seen.screens.get(name)
    return [] if screen is None else [Evidence(f"screen ({name})", None, screen.rstrip())]


RULES: tuple[Rule, ...] = (
    Rule(
        "outside-herdr", "reports nothing outside Herdr (HERDR_ENV, socket, pane id)", outside_herdr
    ),
    Rule("states", "reports well-formed, states idle/working/blocked", states),
    Rule("seq", "seq strictly increasing, also across restarts", seq),
    Rule("source", "one stable source, not herdr:-prefixed, own agent name", source),
    Rule("turn", "idle when ready, working at turn start, idle after", turn),
    Rule("blocked", "blocked with a message when it needs a decision", blocked),
    Rule("resume", "resume command valid, accepted, re-reported on session change", resume),
    Rule("release", "releases the pane on real exit only", release),
    Rule("non-blocking", "reports never slow the agent (slow, refused socket)", non_blocking),
    Rule("restore", "after a restore the resume command runs in the same cwd and reports", restore),
)


def judge(seen: Observed, rule_ids: list[str]) -> list[RuleResult]:
    """The verdicts on the chosen rules, in checklist order."""
    results: list[RuleResult] = []
    for rule in RULES:
        if rule.id in rule_ids:
            status, summary, evidence = rule.judge(seen)
            results.append(RuleResult(rule.id, rule.title, status, summary, evidence))
    return results
