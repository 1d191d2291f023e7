"""The operating system as the simulator uses it: ptys (:mod:`.pty`), ``/proc``
(:mod:`.procfs`), the panes' shell and working directories (:mod:`.shell`,
:mod:`.places`), key encoding (:mod:`.keys`), process marks (:mod:`.pane_marks`), git
(:mod:`.gitrepo`) and installing the simulated ``herdr`` CLI (:mod:`.cli_install`).

Helpers with no knowledge of the runtime: the services and handlers build on them.
"""
