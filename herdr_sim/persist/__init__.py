"""What the simulator keeps on disk: the session file (:mod:`.session`), the logs its
``herdr`` CLI and its server write (:mod:`.cli_refusals`, :mod:`.wire_log`), and the rule
that keeps secrets out of them (:mod:`.redaction`). Every file is private and read only
when it is ours (``orchestrator.client.file_trust``).
"""
