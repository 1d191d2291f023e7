"""The integration check in a pytest run: one call, or one pytest item per rule.

``herdr_integration_check(argv, **options)`` runs :func:`herdr_sim.conformance.check_integration`
and returns its report. ``@pytest.mark.herdr_integration(argv, **options)`` on a test that
takes ``herdr_integration_rule`` makes one item per rule (``test_x[turn]``,
``test_x[resume]`` …), so CI shows which rule failed; the check itself runs once per test
function (per xdist worker) and each item judges its own rule.

Either way the check's simulators are tapped by the session's contract checker
(``--herdr-schema``), the readable report goes into the test's captured output (so
``junit_logging=all`` carries it), and a failing test gets an HTML page of the check with
``--herdr-artifacts``. When one root cause kept rules from being judged, exactly one item
fails with it: the rule it breaks, else the first rule it kept from being judged; the
others are skipped as "not judged (because …)".
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from herdr_sim.config import SimulatorConfig

from .differences import skip_for
from .settings import Backend

if TYPE_CHECKING:
    from herdr_sim.conformance.report import Evidence, IntegrationReport, RuleResult

__all__ = [
    "REPORTS_KEY",
    "IntegrationRule",
    "PaneSetup",
    "parametrize_rules",
    "rule_of",
    "run_check",
]

#: a wire observer (``Simulator.wire_taps``)
Tap = Callable[[str, dict[str, Any]], None]

#: the integration reports a test produced (read by the failure report and the HTML page)
REPORTS_KEY = pytest.StashKey[list["IntegrationReport"]]()
#: per session: the report of each per-rule test function, run once for all its items
_CACHE_KEY = pytest.StashKey[dict[tuple[str, ...], "IntegrationReport"]]()
#: the title of the report section (``Captured stdout …`` so JUnit's system-out carries it)
SECTION = "stdout: herdr integration check"
FIXTURE = "herdr_integration_rule"
MARKER = "herdr_integration"


def skip_on_real(backend: Backend) -> None:
    """The check starts, stops and faults simulators of its own: skip on a real Herdr, with
    the ``integration-check`` difference's reason."""
    skip_for("integration-check", backend)


@dataclass(frozen=True)
class PaneSetup:
    """What the test gives its panes (``herdr_pane_env``, ``herdr_pane_path``): the checked
    agent gets the same, under an ``agent_env=`` of the call."""

    env: Mapping[str, str] = field(default_factory=dict)
    path: Sequence[Path | str] = ()

    def agent_env(
        self, sim_config: SimulatorConfig, extra: Mapping[str, str] | None
    ) -> dict[str, str]:
        env = {**sim_config.base_env, **self.env}
        if self.path:
            inherited = env.get("PATH", os.environ.get("PATH", os.defpath))
            env["PATH"] = os.pathsep.join([*(str(entry) for entry in self.path), inherited])
        env.update(extra or {})
        return env


def run_check(
    request: pytest.FixtureRequest,
    sim_config: SimulatorConfig,
    argv: list[str],
    options: dict[str, Any],
    taps: Sequence[Tap] = (),
    panes: PaneSetup | None = None,
) -> IntegrationReport:
    """Run the check with ``taps`` (the session's contract checker) on its wire and the
    test's pane environment (``panes``) for the agent; record its report."""
    from herdr_sim.conformance import check_integration

    options = dict(options)
    # the test's simulators' Herdr timers (--herdr-time-scale) apply to the check's too
    settings: dict[str, Any] = {
        "agent_manifests_dir": sim_config.agent_manifests_dir,
        "time_scale": sim_config.time_scale,
    }
    settings.update(options.pop("settings", {}))
    agent_env = (panes or PaneSetup()).agent_env(sim_config, options.pop("agent_env", None))
    report = check_integration(
        argv, settings=settings, agent_env=agent_env, wire_taps=taps, **options
    )
    record(request.node, report)
    return report


def record(node: pytest.Item, report: IntegrationReport) -> None:
    """Add ``report`` to ``node``'s captured output and to what its failure report shows."""
    node.stash.setdefault(REPORTS_KEY, []).append(report)
    node.add_report_section("call", SECTION, report.render())


# -- one item per rule ----------------------------------------------------------------------


def parametrize_rules(metafunc: pytest.Metafunc) -> None:
    """Parametrise ``herdr_integration_rule`` over the rules of the test's marker."""
    from herdr_sim.conformance import RULE_IDS

    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is None or not marker.args:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid}: {FIXTURE} needs "
            f"@pytest.mark.{MARKER}(argv, **options) (the agent command to check)"
        )
    wanted = marker.kwargs.get("rules")
    unknown = set(wanted or ()) - set(RULE_IDS)
    if unknown:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid}: unknown rule(s) {sorted(unknown)}; "
            f"rules are {', '.join(RULE_IDS)}"
        )
    rules = [r for r in RULE_IDS if wanted is None or r in set(wanted)]
    metafunc.parametrize(FIXTURE, rules, ids=rules, indirect=True)


@dataclass
class IntegrationRule:
    """One rule's verdict in a per-rule item: ``check()`` passes, fails or skips with it."""

    id: str
    report: IntegrationReport

    @property
    def result(self) -> RuleResult:
        """The rule's verdict."""
        return self.report.rule(self.id)

    def check(self) -> None:
        """Pass when the rule held; fail with its summary and evidence when it failed (or
        when this item carries the report's root cause); skip with the reason when it was
        skipped or not judged because of a root cause another item reports."""
        __tracebackhide__ = True
        result, report = self.result, self.report
        if report.root_cause_rule() == self.id and report.root_cause is not None:
            pytest.fail(_failure_text(report, result, root=True), pytrace=False)
        if result.failed:
            pytest.fail(_failure_text(report, result, root=False), pytrace=False)
        if result.status == "skipped":
            pytest.skip(f"{self.id}: {result.summary}")
        if result.not_judged:
            carrier = report.root_cause_rule()
            shown = f"; the root cause fails [{carrier}]" if carrier else ""
            pytest.skip(f"{self.id}: {result.summary}{shown}")


def _failure_text(report: IntegrationReport, result: RuleResult, *, root: bool) -> str:
    lines = []
    cause = report.root_cause
    if root and cause is not None:
        lines.append(f"ROOT CAUSE: {cause.summary}")
        lines += _evidence(cause.evidence)
        judged = [r.id for r in report.rules if r.not_judged]
        if judged:
            lines.append(f"  (not judged because of it: {', '.join(judged)})")
    lines.append(result.line())
    lines += _evidence(result.evidence)
    lines.append(f"  (check of {' '.join(report.command)} in {report.duration:.1f}s)")
    return "\n".join(lines)


def _evidence(evidence: list[Evidence]) -> list[str]:
    lines = []
    for item in evidence:
        lines.append(f"  | {item.line()}")
        if item.screen is not None:
            lines.extend(f"  |   {row}" for row in item.screen.splitlines())
    return lines


def _key(request: pytest.FixtureRequest) -> tuple[str, ...]:
    """The test function and its other parameters: the items that share one check."""
    node = request.node
    base = node.nodeid.split("[", 1)[0]
    callspec = getattr(node, "callspec", None)
    params = {} if callspec is None else dict(callspec.params)
    params.pop(FIXTURE, None)
    return (base, *(f"{name}={value!r}" for name, value in sorted(params.items())))


def rule_of(
    request: pytest.FixtureRequest,
    backend: Backend,
    sim_config: SimulatorConfig,
    taps: Sequence[Tap] = (),
    panes: PaneSetup | None = None,
) -> IntegrationRule:
    """The body of the ``herdr_integration_rule`` fixture: this item's rule, judged by the
    check of its test function (run now if it has not run yet)."""
    skip_on_real(backend)
    rule_id: str = request.param
    marker = request.node.get_closest_marker(MARKER)
    assert marker is not None  # parametrize_rules checked it
    argv = list(marker.args[0])
    cache = request.config.stash.setdefault(_CACHE_KEY, {})
    key = _key(request)
    report = cache.get(key)
    if report is None:
        report = cache[key] = run_check(request, sim_config, argv, dict(marker.kwargs), taps, panes)
    else:
        record(request.node, report)
    return IntegrationRule(rule_id, report)
