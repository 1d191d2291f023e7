"""The root cause of a failed check: the first thing that kept rules from being judged.

One bug in an integration used to fail several rules at once, each with the same evidence
or a misleading message: an agent that is not on the pane's ``PATH`` failed eight rules
(and passed ``outside-herdr`` although it never ran), a refused resume command failed the
rules that needed the report it rode on. :func:`find` names the first cause, in this order:

1. ``command-not-found``: the agent command could not be started (the shell or the
   pseudo-terminal said so);
2. ``cli-refused``: the simulated ``herdr`` CLI refused a report command line on its own
   (``pane report-agent --state busy``: exit 1), so nothing of it reached the socket;
3. ``never-reported``: the agent started but never reported inside Herdr;
4. ``refused``: the server refused a report (not while the checker faulted the socket).

:func:`apply` then marks every rule whose verdict depended on what the cause took away
``not_judged`` (because ...), and keeps the cause only when it broke a chosen rule or kept
one from being judged.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence

from .driver import Observed, not_found_line
from .recorder import Report
from .report import Evidence, RootCause, RuleResult

__all__ = ["RESUME_ERRORS", "apply", "find", "not_found_line"]

#: the error codes of a refused resume command (the ``resume`` rule's, not ``states``')
RESUME_ERRORS = ("invalid_resume_argv", "resume_not_accepted")

#: the rules judged on reports inside Herdr (all of them but outside-herdr)
_INSIDE = ("states", "seq", "source", "turn", "blocked", "resume", "release", "non-blocking",
           "restore")  # fmt: skip


def _inside(seen: Observed) -> list[Report]:
    return [r for r in seen.log.snapshot() if r.phase != "outside"]


def _command_not_found(seen: Observed) -> RootCause | None:
    if _inside(seen):
        return None  # it reported inside Herdr, so it started (whatever its output says)
    command = seen.options.argv[0]
    evidence: list[Evidence] = []
    said = None
    for name, screen in seen.screens.items():
        line = not_found_line(screen, command)
        if line is not None:
            said = said or line
            evidence.append(Evidence(f"screen ({name})", None, screen.rstrip()))
    for run in seen.outside:
        line = not_found_line(run.output, command)
        if line is not None:
            said = said or line
            evidence.append(Evidence(f"run outside Herdr with {run.label}: {line}"))
    if said is None:
        return None
    hint = ""
    if "/" not in command and shutil.which(command, path=seen.path) is None:
        hint = f"; {command!r} is not on the PATH the agent gets ({seen.path})"
    summary = f"the agent command {command!r} could not be started: {said}{hint}"
    return RootCause("command-not-found", summary, None, evidence)


def _cli_refused(seen: Observed) -> RootCause | None:
    refused = [r for r in seen.cli_refusals if r.is_report]
    if not refused:
        return None
    first = refused[0]
    same = [r for r in refused if r.error == first.error]
    times = "once" if len(same) == 1 else f"{len(same)} times"
    others = len(refused) - len(same)
    more = f"; {others} other refused report command(s)" if others else ""
    command = " ".join(["herdr", *first.argv])
    summary = (
        f"the herdr CLI refused `{command}` {times} before sending it (exit {first.exit}): "
        f"{first.error}{more}; Herdr never saw those reports"
    )
    return RootCause("cli-refused", summary, "states", [Evidence(first.describe(), first.t)])


def _never_reported(seen: Observed) -> RootCause | None:
    if _inside(seen) or "run1.start" not in seen.marks:
        return None
    why = seen.aborted or "the agent never reported inside Herdr"
    summary = f"the agent started but never reported inside Herdr: {why}"
    evidence = [item for item in seen.timeline if item.text.startswith("[run1]")][-3:]
    return RootCause("never-reported", summary, None, evidence)


def _refused(seen: Observed) -> RootCause | None:
    refused = [r for r in _inside(seen) if r.error is not None and not r.faulted]
    if not refused:
        return None
    first = refused[0]
    same = [r for r in refused if r.answer() == first.answer()]
    numbers = ", ".join(f"#{r.index}" for r in same[:8]) + (" ..." if len(same) > 8 else "")
    times = "once" if len(same) == 1 else f"{len(same)} times"
    others = len(refused) - len(same)
    more = f"; {others} other refusal(s)" if others else ""
    summary = (
        f"the server refused a {first.method} {times} ({numbers}): "
        f"{first.answer().removeprefix('error ')}{more}"
    )
    owner = "resume" if first.error in RESUME_ERRORS else "states"
    return RootCause("refused", summary, owner, [Evidence(first.describe(), first.t)])


def find(seen: Observed) -> RootCause | None:
    """The first root cause in what the check saw, or None."""
    return _command_not_found(seen) or _cli_refused(seen) or _never_reported(seen) or _refused(seen)


def _short(cause: RootCause) -> str:
    if cause.kind == "command-not-found":
        return "the agent command could not be started"
    if cause.kind == "never-reported":
        return "the agent never reported inside Herdr"
    if cause.kind == "cli-refused":
        return "the herdr CLI refused report commands the rule needs; see rule states"
    return f"the server refused reports the rule needs; see rule {cause.rule}"


def _refused_in(seen: Observed, start: str, end: str | None, *, cli: bool = False) -> bool:
    """A report refused between marks ``start`` and ``end``: by the server, or (``cli``) by
    the simulated ``herdr`` CLI before it was sent."""
    if start not in seen.marks:
        return False
    if cli:
        begin = seen.marks[start][1]
        stop = seen.marks[end][1] if end is not None and end in seen.marks else float("inf")
        return any(r.is_report and begin <= r.t < stop for r in seen.cli_refusals)
    return any(r.error is not None and not r.faulted for r in seen.between(start, end))


def _depends_on_refused(seen: Observed, rule: RuleResult, *, cli: bool = False) -> bool:
    """Whether ``rule`` failed (or was skipped) for lack of a report the server (or, with
    ``cli``, the simulated CLI) refused."""
    if rule.id == "turn":
        later = [m for m in ("question", "new-session", "slow", "exit1") if m in seen.marks]
        return _refused_in(seen, "run1.start", later[0] if later else None, cli=cli)
    if rule.id == "blocked":
        return _refused_in(seen, "question", "question.end", cli=cli)
    if rule.id == "release":
        return _refused_in(seen, "exit1", "run2.start", cli=cli)
    if rule.id == "non-blocking":
        return _refused_in(seen, "recovered", "faults.end", cli=cli)
    if rule.id == "restore":
        resumes = [r for r in _inside(seen) if r.resume_argv is not None and r.phase != "restore"]
        return bool(resumes) and not any(r.ok for r in resumes)
    return False


def apply(
    cause: RootCause | None, seen: Observed, results: Sequence[RuleResult]
) -> tuple[RootCause | None, list[RuleResult]]:
    """``results`` with the rules ``cause`` kept from being judged marked ``not_judged``, and
    the cause if it matters to the chosen rules (else None)."""
    if cause is None:
        return None, list(results)
    because = f"not judged (because {_short(cause)})"
    out: list[RuleResult] = []
    matters = False
    for rule in results:
        hidden = False
        if rule.status != "passed":
            if cause.kind in ("refused", "cli-refused"):
                cli = cause.kind == "cli-refused"
                hidden = rule.id != cause.rule and _depends_on_refused(seen, rule, cli=cli)
            elif rule.id in _INSIDE:
                # a rule the user left out (no question prompt) stays skipped
                hidden = rule.failed or rule.summary.startswith("not exercised")
            elif rule.id == "outside-herdr":
                hidden = rule.status == "skipped" and cause.kind == "command-not-found"
        if hidden:
            matters = True
            rule = RuleResult(rule.id, rule.title, "not_judged", because, [])
        elif cause.rule == rule.id and rule.failed:
            matters = True
        out.append(rule)
    return (cause if matters else None), out
