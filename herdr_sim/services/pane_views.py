"""What a pane output subscription's read depends on besides the pane's own output.

An ``events.subscribe`` stream with output or scroll subscriptions used to wake on every
``state_changed`` (every request fires it): fifty such streams woken by each
``pane.send_text`` were half of the event benchmark's wake-ups. Such a read changes only with
the pane's output (its own signal), with what its pane id names, or with the pane's size or
viewport offset. :class:`PaneViews` watches the last two at each state change and fires
:attr:`PaneViews.changed` only when one of them moved.
"""

from __future__ import annotations

from collections.abc import Mapping

from herdr_sim.model.session import Session

from .events import Signal
from .pane_process import PaneProcess

__all__ = ["PaneViews"]


class PaneViews:
    """The session's naming and every pane's view, as seen at the last state change."""

    def __init__(self, session: Session, processes: Mapping[int, PaneProcess]) -> None:
        self._session = session
        self._processes = processes
        #: fired when a pane id may name another pane, or a pane's size or viewport moved
        self.changed = Signal()
        #: changes whenever the naming does (:meth:`Session.naming`): a subscription that
        #: looked its pane id up under the same number would find the same pane again
        self.naming_generation = 0
        self._naming: tuple[object, ...] = ()
        self._views: tuple[tuple[int, int, int, int, int], ...] = ()

    def note(self) -> None:
        """At each state change: count a change of naming, and fire :attr:`changed` when
        the naming or any pane's terminal, size or viewport offset moved."""
        naming = self._session.naming()
        named = naming != self._naming
        if named:
            self._naming = naming
            self.naming_generation += 1
        views = tuple(
            (
                key,
                id(proc.terminal),
                proc.terminal.cols,
                proc.terminal.rows,
                proc.terminal.offset_from_bottom(),
            )
            for key, proc in self._processes.items()
        )
        if named or views != self._views:
            self._views = views
            self.changed.fire()
