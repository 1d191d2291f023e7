"""Scripted client sessions recorded through ``herdr-sim record``: the acceptance session
(workspace, split, a command run and waited for, list, get, a subscription) and two clients
interleaved (one blocks in a wait that the other's input satisfies).

Used by the tests and by ``python -m tests.cassette.record_corpus``, which records the
committed corpus under ``tests/cassette/corpus``. Every pane runs in ``/``, so the answers'
``cwd`` is the same on every machine.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from herdr_sim.client import Subscription, call

#: the subscription the acceptance session holds while it works
EVENTS = [{"type": "workspace.created"}, {"type": "pane.created"}, {"type": "pane.closed"}]
TIMEOUT = 20.0


def wait_output(
    path: Path, pane: str, text: str, request_id: str, timeout_ms: int
) -> dict[str, Any]:
    """``pane.wait_for_output`` until recent output holds ``text``; its result."""
    params = {
        "pane_id": pane,
        "source": "recent",
        "match": {"type": "substring", "value": text},
        "timeout_ms": timeout_ms,
    }
    return call(path, "pane.wait_for_output", params, request_id=request_id, timeout=TIMEOUT)


def basic_session(path: Path) -> dict[str, Any]:
    """The acceptance session against the socket at ``path``; the created ids."""
    with Subscription(path, EVENTS, timeout=TIMEOUT, request_id="sub") as sub:
        created = call(path, "workspace.create", {"label": "alpha", "cwd": "/"}, request_id="1")
        workspace = created["workspace"]["workspace_id"]
        root = created["root_pane"]["pane_id"]
        sub.next(TIMEOUT)  # workspace_created
        sub.next(TIMEOUT)  # pane_created: the root pane
        split = call(
            path,
            "pane.split",
            {"target_pane_id": root, "direction": "right", "cwd": "/"},
            request_id="2",
        )
        pane = split["pane"]["pane_id"]
        sub.next(TIMEOUT)  # pane_created: the split
        call(
            path, "pane.send_text", {"pane_id": pane, "text": "echo rec-$((6*7))\n"}, request_id="3"
        )
        wait_output(path, pane, "rec-42", "4", 10_000)
        call(path, "workspace.list", request_id="5")
        call(path, "pane.list", {"workspace_id": workspace}, request_id="6")
        call(path, "pane.get", {"pane_id": pane}, request_id="7")
        call(path, "pane.close", {"pane_id": pane}, request_id="8")
        sub.next(TIMEOUT)  # pane_closed
    return {"workspace": workspace, "root": root, "pane": pane}


def interleaved_session(path: Path, wait_started: Callable[[], object]) -> None:
    """Two clients at once: A's ``pane.wait_for_output`` is open on its connection
    (``wait_started`` returns once the server holds it) while B types what it waits for, so
    the cassette has A's request, then B's whole exchange, then A's answer."""
    created = call(path, "workspace.create", {"label": "two", "cwd": "/"}, request_id="c1")
    pane = created["root_pane"]["pane_id"]
    answer: dict[str, Any] = {}

    def client_a() -> None:
        answer["a"] = wait_output(path, pane, "both-9", "a1", 15_000)

    waiter = threading.Thread(target=client_a)
    waiter.start()
    wait_started()
    call(path, "pane.send_text", {"pane_id": pane, "text": "echo both-$((3*3))\n"}, request_id="b1")
    waiter.join(TIMEOUT)
    assert "a" in answer, "client A's wait never answered"
    call(path, "pane.get", {"pane_id": pane}, request_id="b2")
