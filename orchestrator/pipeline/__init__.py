"""The one path every tool call takes: declarations, the registry, the runner, the audit.

Above the three tool families: each family's tools are declared once and registered here
(:mod:`.registry`), and :mod:`.call_guard` takes every call through the same steps. No
family imports this package, so a family can never call a handler around it. Import the
submodules directly; this package imports nothing on purpose.
"""
