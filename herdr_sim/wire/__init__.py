"""What goes over the simulator's socket: one request line decoded as Herdr's serde decodes
it (:mod:`.request_json`, :mod:`.request_shapes`, :mod:`.params`), the error codes and
messages (:mod:`.errors`), the wire shapes built from the model (:mod:`.views`) and the
request being served (:mod:`.request_context`).

Below the runtime and the handlers; the simulator's ``herdr`` CLI imports :mod:`.errors`
and :mod:`.rust_debug` too, so this package's root stays import-free.
"""
