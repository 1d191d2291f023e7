"""The simulator's live side: the runtime (:mod:`.runtime`) and the services it owns — the
agent service, ``agent.start``'s launch phases, the event hub and its lifecycle builders,
the detection loop, metadata reports, each pane's process and the HOME panes see.

The core: it never imports a handler module (``herdr_sim.methods``), which builds on it.
"""
