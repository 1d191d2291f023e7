"""What each configuration gate answers, exactly: the code, the message a caller reads and
the argument it names (``tools.gates``, no Herdr needed: the pane reads are scripted). The
tool-level tests (test_gates.py) prove nothing reaches Herdr on a refusal; these pin the words
and the field of every refusal, including the fail-closed paths a simulator never produces
(a pane whose directory Herdr does not report, a pane read that fails)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from orchestrator.client.errors import ClientError
from orchestrator.core.config import Config
from orchestrator.core.gates import (
    Refusal,
    Refused,
    agent_pane_cwd_allowed,
    allowed_cwd,
    inherited_cwd,
    pane_cwd_allowed,
    require_enabled,
)

PANE = "w1:p1"


class _Panes:
    """A client whose ``pane_get`` answers one scripted pane (or raises)."""

    def __init__(self, cwd: str | None = None, foreground: str | None = None) -> None:
        self.pane = SimpleNamespace(cwd=cwd, raw={"foreground_cwd": foreground})
        self.error: ClientError | None = None

    def pane_get(self, pane_id: str) -> Any:
        assert pane_id == PANE
        if self.error is not None:
            raise self.error
        return self.pane


def _refusal(call: Any, *args: Any) -> Refusal:
    with pytest.raises(Refused) as caught:
        call(*args)
    return caught.value.refusal


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    allowed, outside = (tmp_path / "allowed").resolve(), (tmp_path / "outside").resolve()
    allowed.mkdir()
    outside.mkdir()
    return allowed, outside


def test_the_kill_switch_refuses_as_disabled_naming_no_argument() -> None:
    refusal = _refusal(require_enabled, Config(enabled=False))
    assert (refusal.code, refusal.field, refusal.agent_code) == ("disabled", None, "DISABLED")
    assert refusal.message.startswith("agent tools are disabled by configuration")
    require_enabled(Config())  # enabled: nothing raised


def test_a_directory_outside_allow_cwd_is_refused_naming_cwd(roots: tuple[Path, Path]) -> None:
    allowed, outside = roots
    refusal = _refusal(allowed_cwd, Config(allow_cwd=(allowed,)), str(outside))
    assert (refusal.code, refusal.field) == ("cwd_not_allowed", "cwd")
    assert refusal.message == f"cwd {str(outside)!r} is outside allowCwd ({allowed})"
    assert allowed_cwd(Config(), str(outside)) == str(outside)  # no allowCwd: unchanged


def test_a_split_inherits_the_checked_directory_and_fails_closed_without_one(
    roots: tuple[Path, Path],
) -> None:
    allowed, outside = roots
    config = Config(allow_cwd=(allowed,))
    client = cast(Any, _Panes(cwd=str(allowed)))
    assert inherited_cwd(config, client, PANE) == str(allowed)
    assert inherited_cwd(Config(), client, PANE) is None  # Herdr follows the pane itself
    refusal = _refusal(inherited_cwd, config, cast(Any, _Panes(cwd=None)), PANE)
    assert refusal == Refusal(
        "cwd_unknown",
        f"Herdr does not report pane {PANE}'s directory: pass cwd explicitly",
        "cwd",
    )
    outside_pane = _refusal(inherited_cwd, config, cast(Any, _Panes(cwd=str(outside))), PANE)
    assert (outside_pane.code, outside_pane.field) == ("cwd_not_allowed", "cwd")


def test_a_pane_is_checked_by_its_shell_and_foreground_directories(
    roots: tuple[Path, Path],
) -> None:
    allowed, outside = roots
    config = Config(allow_cwd=(allowed,))
    pane_cwd_allowed(config, cast(Any, _Panes(str(allowed), str(allowed / "."))), PANE)
    pane_cwd_allowed(Config(), cast(Any, _Panes(None, None)), PANE)  # nothing to check
    for shell, foreground in ((str(outside), None), (str(allowed), str(outside))):
        refusal = _refusal(pane_cwd_allowed, config, cast(Any, _Panes(shell, foreground)), PANE)
        assert (refusal.code, refusal.field) == ("cwd_not_allowed", "pane")
        assert refusal.message == (
            f"pane {PANE}: cwd {str(outside)!r} is outside allowCwd ({allowed})"
        ), (shell, foreground)


def test_a_pane_whose_directory_cannot_be_read_is_refused_not_trusted(
    roots: tuple[Path, Path],
) -> None:
    allowed, _ = roots
    config = Config(allow_cwd=(allowed,))
    unknown = _refusal(pane_cwd_allowed, config, cast(Any, _Panes(None, "")), PANE)
    assert unknown == Refusal(
        "cwd_unknown",
        f"Herdr does not report pane {PANE}'s directory, so allowCwd cannot be checked",
        "pane",
    )
    failing = _Panes(str(allowed))
    failing.error = ClientError("socket closed")
    for check in (pane_cwd_allowed, inherited_cwd):
        refusal = _refusal(check, config, cast(Any, failing), PANE)
        assert refusal == Refusal(
            "cwd_unknown", f"cannot read pane {PANE}'s directory: socket closed", "pane"
        )


class _Agents(_Panes):
    """A client that knows one agent, ``impl``, in :data:`PANE` (or raises for any other)."""

    def agent_get(self, agent: str) -> Any:
        if agent != "impl":
            raise ClientError(f"agent {agent} not found")
        return SimpleNamespace(pane_id=PANE)


def test_an_agent_herdr_cannot_find_is_refused_naming_the_agent(
    roots: tuple[Path, Path],
) -> None:
    allowed, outside = roots
    config = Config(allow_cwd=(allowed,))
    with pytest.raises(Refused) as caught:
        agent_pane_cwd_allowed(config, cast(Any, _Agents(str(allowed))), "ghost")
    assert caught.value.refusal == Refusal(
        "cwd_unknown", "cannot find agent ghost's pane: agent ghost not found", "agent"
    )
    assert str(caught.value) == caught.value.refusal.message  # the exception reads the same
    # a known agent is checked by its pane's directories
    agent_pane_cwd_allowed(config, cast(Any, _Agents(str(allowed))), "impl")
    refusal = _refusal(agent_pane_cwd_allowed, config, cast(Any, _Agents(str(outside))), "impl")
    assert (refusal.code, refusal.field) == ("cwd_not_allowed", "pane")
    agent_pane_cwd_allowed(Config(), cast(Any, _Agents(str(outside))), "ghost")  # no allowCwd
