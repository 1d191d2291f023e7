"""The report sections of a failing test: what every Herdr server it used showed.

Collected when the test's failure is reported, while its servers still run: each pane's
screen, the protocol tail and the agent-state timeline (:mod:`pytest_herdr.forensics`), and
with ``--herdr-artifacts DIR`` one HTML page per failing test drawing the panes where Herdr
lays them out. A ``pytest_herdr_report_section`` hook may replace a server's section.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from .backends import HerdrServer
from .forensics import Forensics
from .settings import settings_of


def _safe_name(nodeid: str) -> str:
    """A file name for a test id (``tests/test_x.py::test_y[a/b]`` → ``tests_test_x.py__…``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")[:180] or "test"


def failure_sections(item: pytest.Item, servers: list[HerdrServer]) -> Iterator[tuple[str, str]]:
    """(title, text) for each of the test's servers that is still running."""
    artifacts = settings_of(item.config).artifacts
    running = [server for server in servers if not server.stopped]
    for number, server in enumerate(running, start=1):
        title = f"herdr {server.backend} server {number}: {server.socket_path}"
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
        if artifacts is not None:
            suffix = "" if len(running) == 1 else f"-{number}"
            page = forensics.render_html(artifacts / f"{_safe_name(item.nodeid)}{suffix}.html")
            text += f"HTML: {page}\n"
        yield title, text
