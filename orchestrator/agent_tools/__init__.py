"""Pure foundations of the nine ``herdr_*`` agent tools (seed 000).

Each module here does one job without talking to Herdr (transcripts, inbox, task envelopes,
worktrees, …), so the tool handlers built later on the Herdr client stay thin and these
pieces can be tested on plain files and git repositories. Import the submodules directly;
this package imports nothing on purpose.
"""
