"""The one poll loop, deadline and time-out error (``orchestrator.client.poll``), and the
plugin's public face of them (``pytest_herdr.wait_until`` / ``WaitTimeout``)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

import pytest_herdr
from orchestrator.client.poll import Deadline, WaitTimeout, wait_until


def test_the_first_truthy_value_is_returned_and_falsy_ones_mean_not_yet() -> None:
    answers: Iterator[object] = iter([None, False, [], 0, "ready"])
    assert wait_until(lambda: next(answers), timeout=5, interval=0) == "ready"


def test_a_timeout_names_what_was_awaited_and_the_last_value_seen() -> None:
    with pytest.raises(WaitTimeout, match=r"waiting for the counter; last value: \[\]") as info:
        wait_until(list, 0.05, 0.01, "the counter")
    assert isinstance(info.value, AssertionError)  # a test whose wait runs out fails
    assert not isinstance(info.value, OSError)  # `except OSError` around a wait never hides it


def test_without_what_the_probes_name_is_used() -> None:
    def pane_is_ready() -> None:
        return None

    with pytest.raises(WaitTimeout, match="waiting for pane_is_ready; last value: None"):
        wait_until(pane_is_ready, 0.02, 0.01)


def test_the_probe_is_asked_at_least_once_even_with_no_time() -> None:
    assert wait_until(lambda: "at once", timeout=0) == "at once"


def test_an_error_the_caller_retries_is_not_yet_and_is_named_at_the_end() -> None:
    calls = itertools.count()

    def flaky() -> str:
        if next(calls) < 2:
            raise ConnectionRefusedError("not listening yet")
        return "up"

    assert wait_until(flaky, 5, 0, retry=(ConnectionRefusedError,)) == "up"
    with pytest.raises(WaitTimeout, match=r"last error: ConnectionRefusedError\('down'\)"):
        wait_until(lambda: (_ for _ in ()).throw(ConnectionRefusedError("down")), 0.05, 0.01,
                   retry=(OSError,))  # fmt: skip


def test_an_error_not_retried_ends_the_wait_at_once() -> None:
    def broken() -> None:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        wait_until(broken, 60, retry=(OSError,))


def test_a_deadline_counts_down_and_expires() -> None:
    deadline = Deadline(60)
    assert not deadline.expired()
    assert 59 < deadline.left() <= 60
    assert deadline.remaining() == pytest.approx(deadline.left(), abs=1)
    past = Deadline(0)
    assert past.expired() and past.left() == 0.0


def test_an_unbounded_deadline_never_expires_and_has_no_left() -> None:
    deadline = Deadline(None)
    assert not deadline.expired()
    assert deadline.remaining() is None
    with pytest.raises(ValueError, match="unbounded"):
        deadline.left()


def test_the_plugins_face_is_the_same_family() -> None:
    assert pytest_herdr.WaitTimeout is WaitTimeout
    with pytest.raises(WaitTimeout, match="waiting for nothing"):
        pytest_herdr.wait_until(lambda: None, 0.02, 0.01, "nothing")
