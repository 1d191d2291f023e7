"""What the server knows about the request being served, for code deep below a handler.

Two context variables the socket server sets per connection and per request. They live in
this import-free module so that the agent engine, handlers and the server can all read
them without importing each other (``tests/test_import_graph.py`` forbids the circle).
"""

from __future__ import annotations

import contextvars

__all__ = ["current_peer_pid", "current_request_id"]

#: The id of the request a handler is answering (set by the server around each handler;
#: Herdr uses it as e.g. a plugin action's ``correlation_id``).
current_request_id: contextvars.ContextVar[str] = contextvars.ContextVar(
    "current_request_id", default=""
)

#: the pid of the process at the other end of the connection being served (Linux peer
#: credentials, read when the connection is accepted), or None: an in-process wire tap reads
#: it to attribute a request to the pane whose process sent it
#: (:meth:`herdr_sim.services.runtime.Runtime.pane_of_process`); Herdr itself does not look at it
current_peer_pid: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "current_peer_pid", default=None
)
