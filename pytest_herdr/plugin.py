"""The pytest11 entry point: options, markers, hooks and the ``herdr_*`` fixtures.

Importing this module starts nothing: pytest loads it for everyone who installs the
package, so servers start only when a test asks for a ``herdr_*`` fixture.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from . import differences, hookspecs
from .agents import FAKE_KINDS
from .cassettes import herdr_replay  # noqa: F401  (a fixture)
from .fixtures import (  # noqa: F401  (fixtures are found by name in the plugin module)
    CONTRACTS_KEY,
    SERVERS_KEY,
    herdr_agent_kind,
    herdr_async_client,
    herdr_backend_name,
    herdr_cli,
    herdr_client,
    herdr_events,
    herdr_fake_agent,
    herdr_faults,
    herdr_integration_check,
    herdr_integration_rule,
    herdr_pane,
    herdr_pane_env,
    herdr_pane_path,
    herdr_requests,
    herdr_server,
    herdr_server_factory,
    herdr_settings,
    herdr_sim_config,
    herdr_wait,
    herdr_workspace,
)
from .machines import herdr_machine, herdr_machine_factory  # noqa: F401
from .real_agents import herdr_fake_llm, herdr_real_agent  # noqa: F401
from .settings import SETTINGS_KEY, Settings, add_options

MARKERS = (
    (
        "herdr(**settings): simulator settings for this test's herdr_* servers "
        "(SimulatorConfig fields, e.g. cols=80, agent_start_settle=0.1)"
    ),
    (
        "herdr_time_scale(factor): run this test's simulators' Herdr timers and the plugin's "
        "default waits at this factor (overrides --herdr-time-scale; 0.1: ten times faster)"
    ),
    (
        "herdr_pane_env(**variables): environment variables for every pane process and CLI "
        "run of this test's herdr_* servers (the herdr_pane_env fixture)"
    ),
    (
        "herdr_pane_path(*directories): directories (relative to the rootdir) first on PATH in "
        "this test's panes, where your own agent is (the herdr_pane_path fixture)"
    ),
    "herdr_sim_only: run only against the simulator (skipped with --herdr-backend real)",
    "herdr_real_only: run only against a real Herdr (skipped on the simulator)",
    (
        "real_agent: runs a real coding agent (herdr_real_agent); skipped when the agent "
        "cannot be installed, failed instead under CI=true"
    ),
    (
        "herdr_integration(argv, **options): the agent command (and check_integration options) "
        "whose integration check herdr_integration_rule judges, one item per rule"
    ),
    (
        "herdr_cassette(path, ignore=[...], screen='lines'): after the test body, replay this "
        "cassette (relative to the test file) on a fresh simulator; fail with the differences"
    ),
    (
        "herdr_difference(*ids): the test meets known simulator/Herdr differences "
        "(pytest_herdr.differences); skipped or xfailed on the backends where they show"
    ),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--herdr-backend``, ``--herdr-bin``, ``--herdr-artifacts``, ``--herdr-settle-ms``,
    ``--herdr-schema``, ``--herdr-pane-path``, ``--herdr-time-scale`` and their ini keys;
    ``--herdr-coverage-json`` (a flag only)."""
    add_options(parser)
    from .contracts_session import add_coverage_option

    add_coverage_option(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Register the ``pytest_herdr_*`` hook specifications."""
    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers and resolve the options once for the session."""
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    settings = Settings.from_config(config)
    config.stash[SETTINGS_KEY] = settings
    if config.getoption("herdr_coverage_json", None) and settings.schema is None:
        raise pytest.UsageError("--herdr-coverage-json needs --herdr-schema (the checks)")
    if settings.schema is not None:
        from .contracts_session import start_contract_checks

        config.stash[CONTRACTS_KEY] = start_contract_checks(config, settings)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise ``herdr_agent_kind`` over the fake kinds and the hook's additions, and
    ``herdr_integration_rule`` over the rules of the test's integration check."""
    if "herdr_integration_rule" in metafunc.fixturenames:
        from .integration import parametrize_rules

        parametrize_rules(metafunc)
    if "herdr_agent_kind" not in metafunc.fixturenames:
        return
    kinds = list(FAKE_KINDS)
    metafunc.config.hook.pytest_herdr_agent_kinds(config=metafunc.config, kinds=kinds)
    metafunc.parametrize("herdr_agent_kind", kinds, indirect=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip what the backend cannot run: ``herdr_sim_only``/``herdr_real_only`` and the known
    differences a test declares."""
    backend = config.stash[SETTINGS_KEY].backend
    for item in items:
        if backend == "real" and item.get_closest_marker("herdr_sim_only"):
            item.add_marker(pytest.mark.skip(reason="herdr_sim_only: needs the simulator"))
        if backend == "sim" and item.get_closest_marker("herdr_real_only"):
            item.add_marker(
                pytest.mark.skip(reason="herdr_real_only: run with --herdr-backend real")
            )
        differences.mark_item(item, backend)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """A ``herdr_cassette`` test: once its body passed, replay its cassette on a fresh
    simulator and fail with the differences (:mod:`pytest_herdr.cassettes`)."""
    yield
    if item.get_closest_marker("herdr_cassette") is not None:
        from .cassettes import marked_replay

        marked_replay(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """On a failure, add what every server showed: panes, the protocol tail and the agent
    timeline (and an HTML page with ``--herdr-artifacts``), while the servers still run."""
    report = yield
    if report.when == "call" and report.failed:
        item.herdr_call_failed = True  # type: ignore[attr-defined]  # read by the teardown
    if report.failed and report.when in ("setup", "call"):
        from .report import failure_sections, integration_sections

        servers = item.stash.get(SERVERS_KEY, [])
        sections = list(failure_sections(item, servers, report)) if servers else []
        sections += integration_sections(item, report)
        for title, text in sections:
            report.sections.append((title, text))
            # also on the item, so the teardown report carries it: JUnit XML writes the
            # captured output of that one (junit_logging=all / system-out)
            item.add_report_section(report.when, title.removeprefix("Captured "), text)
    return report


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """With ``--herdr-artifacts``: the run's index page (a worker hands its pages to the
    controller). With ``--herdr-schema``: an xdist worker hands its checks to the
    controller; the coverage file is written; a contract violation fails the session."""
    from .report import worker_pages, write_index

    worker_pages(session.config)
    write_index(session.config)
    checker = session.config.stash.get(CONTRACTS_KEY, None)
    if checker is None:
        return
    from .contracts_session import violations_text, worker_output, write_coverage

    worker_output(session.config, checker)
    write_coverage(session.config, checker)
    if violations_text(checker) and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """(pytest-xdist, controller) merge a finished worker's contract checks and pages."""
    checker = node.config.stash.get(CONTRACTS_KEY, None)
    output = getattr(node, "workeroutput", None)
    if output:
        from .report import merge_pages

        merge_pages(node.config, output)
    if checker is not None and output:
        from .contracts_session import merge_worker

        merge_worker(checker, output)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """With ``--herdr-schema``: which methods, result types and events the suite exercised,
    and every violation."""
    checker = config.stash.get(CONTRACTS_KEY, None)
    if checker is not None:
        from .contracts_session import summarize

        summarize(terminalreporter, checker)
