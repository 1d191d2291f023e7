"""Package data: the TypeScript pi extension that makes a real pi a managed child (seed 002).

Not Python: ``herdr-managed-child.ts`` is loaded by pi from ``$PI_CODING_AGENT_DIR/extensions``
once :mod:`orchestrator.managed.extension_install` has put it there. Its header names its
Python twin for the simulator's fake pi, :mod:`.fake_pi`, which the fake loads from there."""
