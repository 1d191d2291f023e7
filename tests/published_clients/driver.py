"""Drive a Herdr server through Herdr clients published on PyPI that nobody here wrote.

This script runs under the Python 3.13 virtualenv that ``.ci/install-published-clients`` builds
(both clients need a newer Python than the project's own 3.11), never inside the project's
interpreter: the tests in this folder start it once and talk to it over stdin/stdout, one JSON
object a line each way, so the published clients' own code does every socket exchange and
every parse. What it reports back is what a user of those clients would see:

* ``{"ok": true, "class": ..., "type": ..., "data": ..., "extra": [...]}`` — the result parsed
  by the client (``herdr-python-sdk`` validates it against its pydantic models of protocol 22;
  ``extra`` lists fields the models do not know, kept in ``model_extra``);
* ``{"api_error": {"code": ..., "message": ...}}`` — the server answered an error envelope;
* ``{"protocol_error": ..., "cause": ...}`` — the client could not parse the answer: a
  fidelity bug when the server is the simulator;
* ``{"exception": ...}`` — anything else the client raised.

Requests: ``{"op": "call", "lib": L, "socket": S, "method": M, "params": {...}}`` and
``{"op": "subscribe", "lib": L, "socket": S, "subscriptions": [...], "count": N}``; a subscribe
answers ``{"ack": ...}`` once the server acknowledged it, then waits for one ``{"go": true}``
line (the test makes its events happen in between) and answers ``{"events": [...]}`` with the
first ``count`` events. ``L`` is ``sdk``, ``sdk_async``, ``client`` or ``client_async``;
``{"op": "methods"}`` answers the protocol methods each library declares.
"""

from __future__ import annotations

import asyncio
import json
import sys
import traceback
from pathlib import Path
from typing import Any


def _extras(value: Any, path: str = "$") -> list[str]:
    """Paths of the fields a pydantic model kept in ``model_extra`` (unknown to the schema)."""
    from pydantic import BaseModel, RootModel

    found: list[str] = []
    if isinstance(value, RootModel):
        return _extras(value.root, path)
    if isinstance(value, BaseModel):
        found += [f"{path}.{key}" for key in (value.model_extra or {})]
        for key in type(value).model_fields:
            found += _extras(getattr(value, key), f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found += _extras(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            found += _extras(item, f"{path}.{key}")
    return found


def _sdk_answer(result: Any) -> dict[str, Any]:
    return {
        "ok": True,
        "class": type(result).__name__,
        "type": getattr(result, "type", None),
        "data": result.model_dump(mode="json", by_alias=True),
        "extra": _extras(result),
    }


def _errors(error: BaseException) -> dict[str, Any]:
    import herdr_client
    import herdr_sdk

    if isinstance(error, herdr_sdk.HerdrAPIError | herdr_client.HerdrApiError):
        return {"api_error": {"code": error.code, "message": error.message}}
    if isinstance(error, herdr_sdk.HerdrProtocolError):
        return {"protocol_error": str(error), "cause": str(error.__cause__ or "")}
    return {"exception": f"{type(error).__name__}: {error}", "trace": traceback.format_exc()}


# -- herdr-python-sdk ---------------------------------------------------------------------------


def _sdk_params(method: str, params: dict[str, Any]) -> Any:
    from herdr_sdk import GraphicsStreamParams
    from herdr_sdk._schema import PARAMETERS  # the SDK's own table: method → params model

    model = GraphicsStreamParams if method == "pane.graphics.stream" else PARAMETERS[method]
    return model.model_validate(params)


def _sdk_call(request: dict[str, Any]) -> dict[str, Any]:
    from herdr_sdk import HerdrClient

    method = request["method"]
    with HerdrClient(socket_path=request["socket"], timeout=request.get("timeout", 30)) as client:
        named = getattr(client, method.replace(".", "_"))
        return _sdk_answer(named(_sdk_params(method, request.get("params", {}))))


async def _sdk_call_async(request: dict[str, Any]) -> dict[str, Any]:
    from herdr_sdk import AsyncHerdrClient

    method = request["method"]
    timeout = request.get("timeout", 30)
    async with AsyncHerdrClient(socket_path=request["socket"], timeout=timeout) as client:
        named = getattr(client, method.replace(".", "_"))
        return _sdk_answer(await named(_sdk_params(method, request.get("params", {}))))


def _sdk_subscribe(request: dict[str, Any]) -> None:
    from herdr_sdk import HerdrClient, models

    params = models.EventsSubscribeParams.model_validate(
        {"subscriptions": request["subscriptions"]}
    )
    timeout = request.get("timeout", 30)
    with (
        HerdrClient(socket_path=request["socket"], timeout=timeout) as client,
        client.events_subscribe(params, timeout=timeout) as events,
    ):
        _say({"ack": events.ack.model_dump(mode="json")})
        _await_go()
        got: list[dict[str, Any]] = []
        for event in events:
            got.append(
                {
                    "class": type(event).__name__,
                    "event": getattr(event.event, "value", event.event),
                    "data": event.model_dump(mode="json", by_alias=True),
                    "extra": _extras(event),
                }
            )
            if len(got) >= request["count"]:
                break
        _say({"events": got})


# -- herdr-client -------------------------------------------------------------------------------

#: the convenience wrappers herdr-client has, and how a request's params map to their arguments
_WRAPPED = {
    "ping": (),
    "workspace.list": (),
    "tab.list": ("workspace_id",),
    "pane.list": ("workspace_id",),
    "pane.send_text": ("pane_id", "text"),
    "pane.send_keys": ("pane_id", "keys"),
    "pane.send_input": ("pane_id", "text", "keys"),
    "pane.read": ("pane_id", "source", "lines", "strip_ansi", "format"),
    "pane.wait_for_output": ("pane_id", "match", "source", "lines", "timeout_ms", "strip_ansi"),
}


def _client_args(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    names = _WRAPPED.get(method)
    if names is None or not set(params) <= set(names):
        return None
    return dict(params)


def _client_call(request: dict[str, Any]) -> dict[str, Any]:
    from herdr_client import HerdrClient

    method, params = request["method"], request.get("params", {})
    client = HerdrClient(socket_path=Path(request["socket"]), timeout=request.get("timeout", 30))
    args = _client_args(method, params)
    if args is None:
        result = client.request(method, params)
    else:
        result = getattr(client, method.replace(".", "_"))(**args)
    return {"ok": True, "type": result.get("type"), "data": result}


async def _client_call_async(request: dict[str, Any]) -> dict[str, Any]:
    from herdr_client import AsyncHerdrClient

    method, params = request["method"], request.get("params", {})
    client = AsyncHerdrClient(
        socket_path=Path(request["socket"]), timeout=request.get("timeout", 30)
    )
    args = _client_args(method, params)
    if args is None:
        result = await client.request(method, params)
    else:
        result = await getattr(client, method.replace(".", "_"))(**args)
    return {"ok": True, "type": result.get("type"), "data": result}


def _client_subscribe(request: dict[str, Any]) -> None:
    from herdr_client import HerdrClient

    client = HerdrClient(socket_path=Path(request["socket"]), timeout=request.get("timeout", 30))
    with client.subscribe(request["subscriptions"]) as stream:
        _say({"ack": stream.ack})
        _await_go()
        got: list[dict[str, Any]] = []
        for event in stream.events():
            got.append({"event": event.get("event"), "data": event})
            if len(got) >= request["count"]:
                break
        _say({"events": got})


# -- the loop -----------------------------------------------------------------------------------


def _methods() -> dict[str, Any]:
    from herdr_client.protocol import CANONICAL_METHODS
    from herdr_sdk._schema import PARAMETERS

    return {
        "sdk": sorted(PARAMETERS),
        "client": sorted(CANONICAL_METHODS),
        "client_wrapped": sorted(_WRAPPED),
    }


def _say(answer: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


def _await_go() -> None:
    line = sys.stdin.readline()
    if not line or not json.loads(line).get("go"):
        raise RuntimeError("expected a go line after the acknowledgement")


def _serve_one(request: dict[str, Any]) -> None:
    op, lib = request.get("op"), request.get("lib")
    if op == "methods":
        _say(_methods())
    elif op == "call":
        calls = {
            "sdk": lambda: _sdk_call(request),
            "sdk_async": lambda: asyncio.run(_sdk_call_async(request)),
            "client": lambda: _client_call(request),
            "client_async": lambda: asyncio.run(_client_call_async(request)),
        }
        _say(calls[str(lib)]())
    elif op == "subscribe":
        (_sdk_subscribe if lib == "sdk" else _client_subscribe)(request)
    else:
        raise ValueError(f"unknown op {op!r}")


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            _serve_one(json.loads(line))
        except Exception as error:  # every failure is an answer, the loop goes on
            _say(_errors(error))


if __name__ == "__main__":
    main()
