"""Cassettes in the plugin: record a test's run against a real Herdr, replay one as a test.

``--herdr-record DIR`` (with ``--herdr-backend real``) puts ``herdr-sim record``'s proxy
(:class:`herdr_sim.cassette.proxy.RecordingProxy`) in front of every real server a test
starts: the fixtures' clients, the ``herdr`` CLI runs (``HERDR_SOCKET_PATH``) and the test's
own requests to ``server.socket_path`` go through it; the plugin's event recorder does not
(it subscribed before, to the server itself: its subscriptions would make every cassette
depend on when it reconnects). The cassette is ``DIR/<node id>.jsonl`` (a second server of
the same test: ``…-2.jsonl``), written when the server stops.

``@pytest.mark.herdr_cassette("path", ignore=[...], screen="lines")`` makes a test replay
that cassette on a fresh simulator after its body, failing with every difference; the
``herdr_replay`` fixture does the same on demand. A relative path is the test file's
directory's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

# the plugin imports this module for its fixture: the recorder and the replay (asyncio,
# threads) load when a test records or replays, never at import
if TYPE_CHECKING:
    from herdr_sim.cassette.normalise import ScreenRule
    from herdr_sim.cassette.replay import ReplayReport

    from .backends import HerdrServer

#: ``herdr_replay(path, ignore=(), screen="lines", timeout=10.0)``
Replayer = Callable[..., "ReplayReport"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._\[\]-]+")


def cassette_name(nodeid: str, index: int) -> str:
    """A test's cassette file name: its node id with path separators and anything unusual
    made ``_`` (``tests/a.py::test_x[1]`` → ``tests_a.py_test_x[1].jsonl``)."""
    stem = _UNSAFE.sub("_", nodeid).strip("_") or "test"
    return f"{stem}{'' if index == 1 else f'-{index}'}.jsonl"


def record_server(server: HerdrServer, directory: Path, nodeid: str, index: int) -> Path:
    """Put a recording proxy in front of ``server`` (see the module doc); its cassette path.

    The server's ``socket_path`` and ``HERDR_SOCKET_PATH`` become the proxy's; stopping the
    server finishes the cassette first.
    """
    from herdr_sim.cassette.proxy import RecordingProxy

    directory.mkdir(parents=True, exist_ok=True)
    cassette = directory / cassette_name(nodeid, index)
    proxy = RecordingProxy(
        server.socket_path,
        server.directory / "rec" / "herdr.sock",
        cassette,
        runtime_dirs=(server.directory, Path(server.env.get("HOME", server.directory))),
    ).start()
    server.socket_path = proxy.socket_path
    server.env["HERDR_SOCKET_PATH"] = str(proxy.socket_path)
    stop_server = server._stop

    def stop() -> None:
        try:
            proxy.stop()
        finally:
            stop_server()

    server._stop = stop
    return cassette


def replay_cassette(
    path: Path,
    *,
    ignore: Iterable[str] = (),
    screen: ScreenRule = "lines",
    timeout: float = 10.0,
    pace: bool = True,
) -> ReplayReport:
    """Replay the cassette at ``path`` on a fresh simulator; ``pytest.fail`` with every
    difference (or why the cassette cannot be read), else the report."""
    from herdr_sim.cassette.format import CassetteError, load
    from herdr_sim.cassette.normalise import FieldPattern, Rules
    from herdr_sim.cassette.replay import replay_on_simulator

    try:
        cassette = load(path)
    except CassetteError as exc:
        pytest.fail(f"cassette {path}: {exc}", pytrace=False)
    rules = Rules(screen=screen, ignore=tuple(FieldPattern(p) for p in ignore))
    report = replay_on_simulator(cassette, rules=rules, timeout=timeout, pace=pace)
    if not report.ok:
        lines = [d.render() for d in report.differences]
        pytest.fail(
            f"replaying {path} on the simulator: {len(lines)} differences\n"
            + "\n".join(lines)
            + "\n\n"
            + report.table(),
            pytrace=False,
        )
    return report


def marked_replay(item: pytest.Item) -> None:
    """Replay the cassette of ``item``'s ``herdr_cassette`` marker (after its body)."""
    marker = item.get_closest_marker("herdr_cassette")
    if marker is None:
        return
    if len(marker.args) != 1:
        raise pytest.UsageError(f"{item.nodeid}: herdr_cassette takes one path")
    replay_cassette(resolve(item.path.parent, marker.args[0]), **marker.kwargs)


def resolve(base: Path, path: str | Path) -> Path:
    """``path`` relative to ``base`` (a test file's directory) unless absolute."""
    return base / path


@pytest.fixture
def herdr_replay(request: pytest.FixtureRequest) -> Replayer:
    """``herdr_replay("cassettes/run.jsonl", ignore=[...], screen="lines")``: replay a
    cassette (relative to the test file) on a fresh simulator and fail the test with the
    differences; returns the :class:`~herdr_sim.cassette.replay.ReplayReport`."""
    base = request.path.parent

    def run(
        path: str | Path,
        *,
        ignore: Sequence[str] = (),
        screen: ScreenRule = "lines",
        timeout: float = 10.0,
        pace: bool = True,
    ) -> ReplayReport:
        return replay_cassette(
            resolve(base, path), ignore=ignore, screen=screen, timeout=timeout, pace=pace
        )

    return run
