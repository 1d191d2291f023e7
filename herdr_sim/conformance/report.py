"""The result of an integration check: one verdict per rule, with its evidence.

:class:`IntegrationReport` is what :func:`herdr_sim.conformance.check_integration` returns.
``to_json()`` has a stable, versioned shape for CI (documented in
``docs/pytest-plugin/integration-checks.md``); ``render()`` is the readable text the
``herdr-sim check-integration`` command prints. When one bug keeps the check from judging
other rules (the agent was not found, never reported, or the server refused its reports),
the report names that :class:`RootCause` first and marks those rules ``not_judged`` with
the reason, instead of failing each of them with the same evidence.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["JSON_VERSION", "Evidence", "IntegrationReport", "RootCause", "RuleResult", "Status"]

#: bumped when the JSON shape changes incompatibly (2: ``root_cause``, status ``not_judged``)
JSON_VERSION = 2

Status = Literal["passed", "failed", "skipped", "not_judged"]
_MARK = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP", "not_judged": "N/J "}


@dataclass(frozen=True)
class Evidence:
    """One line of evidence: ``t`` seconds since the check started (None: not timed), the
    text (a report as received, or what the checker did or saw) and optionally a screen."""

    text: str
    t: float | None = None
    screen: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"t", "text", "screen"}``."""
        return {
            "t": None if self.t is None else round(self.t, 3),
            "text": self.text,
            "screen": self.screen,
        }

    def line(self) -> str:
        """``+1.234s text``."""
        return self.text if self.t is None else f"+{self.t:.3f}s {self.text}"


@dataclass
class RootCause:
    """The first thing that went wrong, which kept other rules from being judged.

    ``kind``: ``command-not-found``, ``cli-refused``, ``never-reported`` or ``refused``;
    ``rule``: the rule it breaks (its verdict is ``failed`` with this summary), or None when
    it breaks none by itself (the agent never got far enough: the check as a whole fails).
    """

    kind: str
    summary: str
    rule: str | None = None
    evidence: list[Evidence] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``{"kind", "summary", "rule", "evidence": [...]}``."""
        return {
            "kind": self.kind,
            "summary": self.summary,
            "rule": self.rule,
            "evidence": [item.to_json() for item in self.evidence],
        }


@dataclass
class RuleResult:
    """The verdict on one rule: ``summary`` says why in one line."""

    id: str
    title: str
    status: Status
    summary: str
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """The rule held."""
        return self.status == "passed"

    @property
    def failed(self) -> bool:
        """The rule was broken."""
        return self.status == "failed"

    @property
    def not_judged(self) -> bool:
        """The check could not judge the rule because of the report's root cause."""
        return self.status == "not_judged"

    def line(self) -> str:
        """``FAIL resume: invalid or refused resume command`` (one line)."""
        return f"{_MARK[self.status].strip()} {self.id}: {self.summary}"

    def to_json(self) -> dict[str, Any]:
        """``{"id", "title", "status", "summary", "evidence": [...]}``."""
        return {
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "summary": self.summary,
            "evidence": [item.to_json() for item in self.evidence],
        }


@dataclass
class IntegrationReport:
    """Every rule's verdict, the command checked and every report the agent made."""

    command: list[str]
    cwd: str
    rules: list[RuleResult]
    reports: list[dict[str, Any]] = field(default_factory=list)
    timeline: list[Evidence] = field(default_factory=list)
    duration: float = 0.0
    root_cause: RootCause | None = None

    @property
    def passed(self) -> bool:
        """No rule failed and nothing kept the check from judging (skipped rules do not count
        as passed, nor as failed)."""
        return self.root_cause is None and not any(rule.failed for rule in self.rules)

    def __repr__(self) -> str:
        """One line for the check, then one per rule that failed or was not judged."""
        verdict = "PASSED" if self.passed else "FAILED"
        lines = [f"<IntegrationReport {verdict}: {' '.join(self.command)}"]
        if self.root_cause is not None:
            lines.append(f"  root cause: {self.root_cause.summary}")
        lines += [f"  {rule.line()}" for rule in self.rules if rule.failed or rule.not_judged]
        return "\n".join(lines) + ">"

    def root_cause_rule(self) -> str | None:
        """The rule whose verdict carries the root cause: the rule it breaks, when it was
        checked, else the first rule it kept from being judged (None: no root cause)."""
        if self.root_cause is None:
            return None
        ids = [rule.id for rule in self.rules]
        if self.root_cause.rule in ids:
            return self.root_cause.rule
        return next((rule.id for rule in self.rules if rule.not_judged), None)

    def rule(self, rule_id: str) -> RuleResult:
        """The verdict on one rule (KeyError if it was not checked)."""
        for result in self.rules:
            if result.id == rule_id:
                return result
        raise KeyError(rule_id)

    @property
    def failed_rules(self) -> list[str]:
        """The ids of the rules that failed."""
        return [rule.id for rule in self.rules if rule.failed]

    def counts(self) -> dict[str, int]:
        """How many rules passed, failed and were skipped."""
        counts = {"passed": 0, "failed": 0, "skipped": 0, "not_judged": 0}
        for rule in self.rules:
            counts[rule.status] += 1
        return counts

    def to_json(self) -> dict[str, Any]:
        """The documented JSON shape (``version`` 1)."""
        return {
            "version": JSON_VERSION,
            "passed": self.passed,
            "command": list(self.command),
            "cwd": self.cwd,
            "duration_s": round(self.duration, 3),
            "counts": self.counts(),
            "root_cause": None if self.root_cause is None else self.root_cause.to_json(),
            "rules": [rule.to_json() for rule in self.rules],
            "reports": list(self.reports),
            "timeline": [item.to_json() for item in self.timeline],
        }

    def dumps(self) -> str:
        """:meth:`to_json` as indented JSON text."""
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False)

    def render(self, *, verbose: bool = False) -> str:
        """The root cause first (with its evidence), then one line per rule (PASS, FAIL, SKIP,
        N/J for not judged), the evidence of failed rules under it (of every rule with
        ``verbose``), and a summary line."""
        lines = [f"herdr integration check: {' '.join(self.command)}", f"  cwd: {self.cwd}", ""]
        cause = self.root_cause
        if cause is not None:
            owner = f" (rule {cause.rule})" if cause.rule else ""
            lines.append(f"ROOT CAUSE{owner}: {cause.summary}")
            lines.extend(_evidence_lines(cause.evidence, "  | "))
            lines.append("")
        for rule in self.rules:
            lines.append(f"{_MARK[rule.status]}  {rule.id:<14} {rule.title}")
            if rule.status != "passed" or verbose:
                lines.append(f"      {rule.summary}")
            if rule.failed or verbose:
                lines.extend(_evidence_lines(rule.evidence, "      | "))
        counts = self.counts()
        verdict = "PASSED" if self.passed else "FAILED"
        judged = f", {counts['not_judged']} not judged" if counts["not_judged"] else ""
        lines += [
            "",
            (
                f"{verdict}: {counts['passed']} passed, {counts['failed']} failed, "
                f"{counts['skipped']} skipped{judged} in {self.duration:.1f}s"
            ),
        ]
        return "\n".join(lines) + "\n"


def _evidence_lines(evidence: list[Evidence], prefix: str) -> list[str]:
    lines: list[str] = []
    for item in evidence:
        lines.append(f"{prefix}{item.line()}")
        if item.screen is not None:
            lines.extend(f"{prefix}  {row}" for row in item.screen.splitlines())
    return lines
