"""The nine ``herdr_*`` agent tools (seed 000) and their foundations.

The tools (listed in :mod:`.tools`, documented in docs/orchestrator/agent-tools.md) delegate
a task to another coding agent and answer an AgentResult (:mod:`.contract`). Their handlers
(:mod:`.spawn`, :mod:`.harvest`, :mod:`.control`, :mod:`.fleet`, :mod:`.inbox_tool`,
:mod:`.transcript_tool`, :mod:`.doctor_tool`) stay thin on top of modules that each do one
job without talking to Herdr (transcripts, inbox, task envelopes, worktrees, aliases, …), so
those can be tested on plain files and git repositories. Import the submodules directly;
this package imports nothing on purpose.
"""
