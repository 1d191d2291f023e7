"""The report sections of a failing test: what every Herdr server it used showed.

Collected when the test's failure is reported, while its servers still run: each pane's
screen, the protocol tail and the agent-state timeline (:mod:`pytest_herdr.forensics`), and
the integration checks it ran. The sections are titled ``Captured stdout: herdr …``, so
JUnit XML's ``junit_logging=all`` (or ``system-out``) carries them, as CI shows nothing
else. With ``--herdr-artifacts DIR``: one HTML page per failing test (its failure message
and traceback first, then the panes where Herdr lays them out) and per failing integration
check, and ``index.html`` listing the run's pages. With pytest-html installed, the same
text and a link to each page are attached as its extras. A ``pytest_herdr_report_section``
hook may replace a server's section.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .backends import HerdrServer
from .forensics import Forensics
from .settings import settings_of

#: the title of every section the plugin adds (``Captured stdout`` reaches JUnit XML)
SECTION_PREFIX = "Captured stdout: "
#: the pages written this run: (test id, outcome, first line of the failure, file name)
PAGES_KEY = pytest.StashKey[list[tuple[str, str, str, str]]]()
#: what an xdist worker sends its controller (``config.workeroutput``)
WORKER_PAGES = "herdr_pages"
INDEX = "index.html"


def _safe_name(nodeid: str) -> str:
    """A file name for a test id (``tests/test_x.py::test_y[a/b]`` → ``tests_test_x.py__…``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")[:180] or "test"


def _first_line(report: pytest.TestReport) -> str:
    """What the index shows of a failure: the first ``E`` line of a traceback (the
    assertion), else the first ``FAIL`` line (an integration check's failed rule: its
    message has no traceback, and its last line only says how long the check took), else
    the first line."""
    lines = report.longreprtext.strip().splitlines()
    errors = [line[2:].strip() for line in lines if line.startswith("E ")]
    failed = [line.strip() for line in lines if line.strip().startswith("FAIL ")]
    return next(iter(errors + failed + lines), "")[:300]


def _remember(config: pytest.Config, nodeid: str, report: pytest.TestReport, page: Path) -> None:
    config.stash.setdefault(PAGES_KEY, []).append(
        (nodeid, report.outcome, _first_line(report), page.name)
    )


def _attach(report: pytest.TestReport, name: str, text: str, page: Path | None) -> None:
    """Attach ``text`` (and a link to ``page``) as pytest-html extras, when it is installed."""
    try:  # optional, and untyped: imported by name
        extras = importlib.import_module("pytest_html.extras")
    except ImportError:
        return
    attached: list[Any] = list(getattr(report, "extras", []))
    attached.append(extras.text(text, name=name))
    if page is not None:
        attached.append(extras.url(page.resolve().as_uri(), name=f"{name} (page)"))
    report.extras = attached  # type: ignore[attr-defined]  # read by pytest-html


def failure_sections(
    item: pytest.Item, servers: list[HerdrServer], report: pytest.TestReport | None = None
) -> Iterator[tuple[str, str]]:
    """(title, text) for each of the test's servers that is still running; ``report``
    (the failing one) gives the HTML page its failure message and traceback."""
    artifacts = settings_of(item.config).artifacts
    running = [server for server in servers if not server.stopped]
    for number, server in enumerate(running, start=1):
        title = f"{SECTION_PREFIX}herdr {server.backend} server {number}: {server.socket_path}"
        replaced = item.config.hook.pytest_herdr_report_section(
            config=item.config, item=item, server=server
        )
        if replaced is not None:
            yield title, replaced
            continue
        forensics = Forensics(
            server.socket_path, tail=server.tail, events=server.events, title=item.nodeid
        )
        text = forensics.render_text()
        page = None
        if artifacts is not None:
            suffix = "" if len(running) == 1 else f"-{number}"
            failure = report.longreprtext if report is not None else None
            target = artifacts / f"{_safe_name(item.nodeid)}{suffix}.html"
            page = forensics.render_html(target, failure=failure)
            if report is not None:
                _remember(item.config, item.nodeid, report, page)
            text += f"HTML: {page}\n"
        if report is not None:
            _attach(report, f"herdr {server.backend} server {number}", text, page)
        yield title, text


def integration_sections(item: pytest.Item, report: pytest.TestReport) -> Iterator[tuple[str, str]]:
    """For a failing test that ran integration checks: the page of each check (with
    ``--herdr-artifacts``) and the pytest-html extras. The readable report itself is in
    the test's captured output already (``Captured stdout: herdr integration check``)."""
    from .integration import REPORTS_KEY

    checks = item.stash.get(REPORTS_KEY, [])
    artifacts = settings_of(item.config).artifacts
    for number, check in enumerate(checks, start=1):
        page = None
        if artifacts is not None:
            from .html_report import render_integration

            suffix = "" if len(checks) == 1 else f"-{number}"
            page = artifacts / f"{_safe_name(item.nodeid)}-integration{suffix}.html"
            page.parent.mkdir(parents=True, exist_ok=True)
            title = f"{item.nodeid}: integration check of {' '.join(check.command)}"
            page.write_text(render_integration(check, title, report.longreprtext), encoding="utf-8")
            _remember(item.config, item.nodeid, report, page)
            yield f"{SECTION_PREFIX}herdr integration check page", f"HTML: {page}\n"
        _attach(report, "herdr integration check", check.render(), page)


def _pages(config: pytest.Config) -> list[tuple[str, str, str, str]]:
    return config.stash.setdefault(PAGES_KEY, [])


def worker_pages(config: pytest.Config) -> None:
    """On an xdist worker: hand the pages written to the controller for its index."""
    output: dict[str, Any] | None = getattr(config, "workeroutput", None)
    if output is not None:
        output[WORKER_PAGES] = list(_pages(config))


def merge_pages(config: pytest.Config, node_output: dict[str, Any]) -> None:
    """On the controller: add one worker's pages."""
    pages = config.stash.setdefault(PAGES_KEY, [])
    for nodeid, outcome, message, name in node_output.get(WORKER_PAGES, []):
        pages.append((str(nodeid), str(outcome), str(message), str(name)))


def write_index(config: pytest.Config) -> Path | None:
    """With ``--herdr-artifacts``, on the controller: ``index.html`` listing the run's pages."""
    artifacts = settings_of(config).artifacts
    if artifacts is None or hasattr(config, "workeroutput"):
        return None
    from .html_report import render_index

    pages = sorted(_pages(config))
    target = artifacts / INDEX
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_index("herdr pages of this run", pages), encoding="utf-8")
    return target
