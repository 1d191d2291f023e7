"""Saved machines for tests: the endpoint catalog the ``herdr`` CLI's ``--machine`` reads
(:mod:`.endpoints`), and the throwaway SSH hosts that front a simulator (:mod:`.host`,
:mod:`.ssh_servers`, :mod:`.inprocess_ssh`).
"""
