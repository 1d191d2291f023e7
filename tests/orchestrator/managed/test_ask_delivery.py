"""An agent's question reaches its owner before it is recorded as delivered (the
supervisor's ask delivery, no Herdr needed): when the owner cannot take it now (its pane is
busy or gone), the ask stays pending and is offered again on the next pass, never marked
delivered and lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.managed.mailbox import Box, Kind
from orchestrator.managed.projection import Evidence
from orchestrator.managed.results import ResultStore
from orchestrator.managed.store import Generation, ManagedStore
from orchestrator.managed.supervisor import Delivery, Observation, Supervisor
from tests.orchestrator.managed.test_service_store import generation


def _unreachable() -> object:
    raise AssertionError("delivering an ask must not need Herdr")


def test_an_ask_the_owner_could_not_take_is_not_recorded_and_is_offered_again(
    tmp_path: Path,
) -> None:
    """Planted-bug check: ``_deliver_ask`` recording the ask in ``delivered_asks`` before
    the owner's sink took it marks it delivered although the owner never saw it, and
    fails here on the first (refused) attempt."""
    store = ManagedStore(tmp_path)
    supervisor = Supervisor(store, _unreachable, "owner", ResultStore(tmp_path / "results"))  # type: ignore[arg-type]
    mailbox = supervisor.mailbox(generation(label="db"))
    task = mailbox.post(Kind.TASK, "Pick a database")
    record = store.save(generation(label="db", request_id=task.message_id))
    ask = mailbox.post(Kind.ASK, "Which database?", assignment_id=task.message_id)

    offered: list[str] = []

    def busy_owner(text: str) -> bool:
        offered.append(text)
        return False

    delivered: list[Delivery] = []
    after = supervisor._deliver_ask(record, mailbox, ask, delivered, busy_owner)
    assert len(offered) == 1 and "Which database?" in offered[0]
    assert ask.message_id not in after.delivered_asks, (
        "an ask the owner did not take must not be recorded as delivered "
        f"(delivered_asks={after.delivered_asks})"
    )
    assert ask.message_id not in store.load(record.run_id).delivered_asks, (
        "the stored record marks as delivered an ask its owner never received"
    )
    assert delivered == [], f"reported as delivered although refused: {delivered}"
    assert mailbox.pending(Box.TO_OWNER) == [ask], "the refused ask must stay pending"

    def idle_owner(text: str) -> bool:
        offered.append(text)
        return True

    after = supervisor._deliver_ask(after, mailbox, ask, delivered, idle_owner)
    assert len(offered) == 2, "the ask must be offered again on the next pass"
    assert [(d.kind, d.ask_id) for d in delivered] == [("ask", ask.message_id)]
    assert store.load(record.run_id).delivered_asks == (ask.message_id,)
    assert mailbox.pending(Box.TO_OWNER) == [], "a delivered ask is consumed"

    # a third pass delivers nothing more: exactly once
    supervisor._deliver_ask(after, mailbox, ask, delivered, idle_owner)
    assert len(offered) == 2 and len(delivered) == 1


def test_nothing_is_typed_to_a_delegating_owner_before_its_own_turn_end_has_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Herdr can call the owner idle before the owner's turn-end hook has run. A delivery
    typed then is marked ``delivering`` first, so that late turn end saw nothing owed and
    posted the owner's result a turn early (a delegation test failed on it under load).
    The owner's pane is offered only once its own state has left ``working``."""
    store = ManagedStore(tmp_path)
    supervisor = Supervisor(store, _unreachable, "owner", ResultStore(tmp_path / "results"))  # type: ignore[arg-type]
    owner = store.save(generation(label="boss", pane_id="w1:p2"))
    seen: dict[str, Evidence] = {}

    def observe(generation: Generation) -> Observation:
        return Observation(generation, seen["evidence"])

    monkeypatch.setattr(supervisor, "observe", observe)
    monkeypatch.setattr(supervisor, "_client_of", lambda: object())
    seen["evidence"] = Evidence("live", operation="working", herdr_status="idle")
    assert supervisor._owner_pane_sink(owner) is None, (
        "an owner Herdr calls idle whose own turn end has not run yet was offered a delivery"
    )
    for settled in ("idle", "asking"):
        seen["evidence"] = Evidence("live", operation=settled, herdr_status="idle")
        assert supervisor._owner_pane_sink(owner) is not None, settled
