"""Client regexes run in linear time, as Herdr's do: no pattern wedges the server.

Herdr compiles ``pane.wait_for_output`` and output-subscription patterns with Rust's
``regex`` crate (``src/api/wait.rs`` and ``src/api/subscriptions.rs``: ``Regex::new``), which
never backtracks. ``(a|a)+$`` against 34 ``a``s and a ``!`` is the textbook catastrophic
case for a backtracking engine: on Python's ``re`` it ran for minutes on the event loop and
every other client froze. These tests print that line and ask for the pattern while a second
client keeps pinging.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from pytest_herdr.client import HerdrClient
from tests.contract.helpers import Raw, enter, wait_line, wait_output
from tests.waits import SCALE

EVIL = "(a|a)+$"


def print_evil_line(herdr_client: HerdrClient, pane: str) -> None:
    """34 ``a``s then ``!``, printed by the shell (no ``!`` on the command line itself)."""
    enter(herdr_client, pane, r"printf 'a%.0s' $(seq 34); printf '\041\n'")
    wait_line(herdr_client, pane, rf"^{'a' * 34}!$")


def ping_time(herdr_client: HerdrClient) -> float:
    started = time.monotonic()
    assert herdr_client.call("ping")["type"] == "pong"
    return time.monotonic() - started


def test_a_catastrophic_pattern_times_out_on_time_while_others_are_served(
    herdr_client: HerdrClient, raw: Raw, pane: str
) -> None:
    print_evil_line(herdr_client, pane)
    timeout_ms = 1500
    with ThreadPoolExecutor(max_workers=1) as pool:
        started = time.monotonic()
        waiting = pool.submit(wait_output, raw, pane, regex=EVIL, timeout_ms=timeout_ms)
        pings: list[float] = []
        while not waiting.done() and len(pings) < 5:
            pings.append(ping_time(herdr_client))
        assert pings, "the wait answered before any ping"
        assert max(pings) < 1.0 * SCALE, pings
        reply = waiting.result(timeout=30 * SCALE)
        elapsed = time.monotonic() - started
    assert reply == {
        "id": "t",
        "error": {"code": "timeout", "message": "timed out waiting for output match"},
    }
    assert elapsed < timeout_ms / 1000 + 2 * SCALE


def test_the_same_pattern_still_matches_a_line_it_matches(
    herdr_client: HerdrClient, pane: str
) -> None:
    print_evil_line(herdr_client, pane)
    enter(herdr_client, pane, "printf 'a%.0s' $(seq 40); echo")
    assert wait_line(herdr_client, pane, EVIL) == "a" * 40


def test_an_output_subscription_with_it_keeps_the_server_serving(
    herdr_client: HerdrClient, pane: str
) -> None:
    print_evil_line(herdr_client, pane)
    sub = {
        "type": "pane.output_matched",
        "pane_id": pane,
        "source": "recent",
        "match": {"type": "regex", "value": EVIL},
    }
    with herdr_client.subscribe(sub) as stream:
        assert ping_time(herdr_client) < 1.0 * SCALE
        enter(herdr_client, pane, "printf 'a%.0s' $(seq 12); echo")
        event = stream.next(timeout=10 * SCALE)
    assert event["event"] == "pane.output_matched"
    assert event["data"]["matched_line"] == "a" * 12


def test_rust_unicode_classes_hold_in_a_wait(herdr_client: HerdrClient, pane: str) -> None:
    """Rust's ``\\w`` and ``\\d`` are Unicode (RE2's are ASCII: the translation spells them
    out); ``(?x)`` is Rust's verbose mode, which RE2 lacks."""
    enter(herdr_client, pane, "printf 'caf\\303\\251 \\331\\243%s\\n' $((2))")
    assert wait_line(herdr_client, pane, r"(?x) ^ \w{4} \s \d 2 $  # café ٣2") == "café ٣2"
