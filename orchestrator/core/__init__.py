"""What every tool family stands on: the tool type, the configuration, the policy and gates,
the low-level result shape, the text rules and the safe file access (``safe_fs``).

Below the three tool families (:mod:`orchestrator.tools`, :mod:`orchestrator.agent_tools`,
:mod:`orchestrator.managed`) and above :mod:`orchestrator.client`: nothing here imports a
family, so every family may use it and none needs another to know the rules. Import the
submodules directly; this package imports nothing on purpose.
"""
