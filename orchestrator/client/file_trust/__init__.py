"""The project's one set of file-trust rules: what we read, write and run is ours alone.

Two modules, one rule. :mod:`.ownership` holds the rule itself (:func:`~.ownership.
ownership_problem`: "this file or directory is ours alone") and the primitives that open a
file of ours only (no-follow opens checked on the descriptor, a private append log); it is
import-light because the simulator's ``herdr`` CLI loads it on every command.
:mod:`.private_files` builds on it for files another party can tamper with: bounded reads,
link-checked directories, create-once publish and atomic replace, private directories.
:mod:`.locks` takes cross-process locks (``flock`` on a private lock file).
The simulator, its CLI and the orchestrator all use these; none keeps its own copy.
"""
