"""The three wire formats the fake LLM speaks: reading a request, writing an answer.

* ``openai-chat``: OpenAI chat completions (``POST /v1/chat/completions``), the format of
  every "OpenAI-compatible" provider (pi's ``openai-completions``, opencode);
* ``openai-responses``: OpenAI Responses (``POST /v1/responses``, Codex);
* ``anthropic``: Anthropic messages (``POST /v1/messages``, Claude Code).

Each is answered whole (JSON) or streamed as server-sent events, as the request's
``stream`` asks, with tool calls and usage in that API's own shape. A request is reduced to
what scripts match on: the last user message's text and the tool results that came after it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .script import Turn

__all__ = ["API_PATHS", "Answer", "Digest", "digest", "error_body", "render", "stream"]

#: request path (without a ``/v1`` prefix) → API name
API_PATHS = {
    "/chat/completions": "openai-chat",
    "/responses": "openai-responses",
    "/messages": "anthropic",
}


@dataclass(frozen=True)
class Digest:
    """What a request says, reduced to what scripts match on."""

    model: str
    stream: bool
    last_user_text: str
    #: texts of the tool results after the last user message, oldest first
    tool_results: tuple[str, ...]
    #: ids of those tool results' calls
    tool_result_ids: tuple[str, ...]
    #: names of the tools the request offers
    tools: tuple[str, ...]
    #: OpenAI chat: the client asked for a usage chunk at the end of the stream
    include_usage: bool = False


@dataclass(frozen=True)
class Answer:
    """A turn made concrete for one request: ids filled in, token counts decided."""

    turn: Turn
    model: str
    response_id: str
    call_ids: tuple[str, ...]
    input_tokens: int
    output_tokens: int


def _text_of(content: Any) -> str:
    """The text of a message content: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif "content" in part:  # Anthropic tool_result blocks nest content
                    parts.append(_text_of(part["content"]))
                elif isinstance(part.get("output"), str):
                    parts.append(part["output"])
        return "\n".join(parts)
    return ""


def digest(api: str, body: Mapping[str, Any]) -> Digest:
    """Reduce a request body of ``api`` to a :class:`Digest` (raises ``TypeError`` if the
    body is not that API's request)."""
    model = str(body.get("model", ""))
    stream = bool(body.get("stream", False))
    if api == "openai-responses":
        return _digest_responses(body, model, stream)
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise TypeError("`messages` must be a list")
    last_user = ""
    results: list[tuple[str, str]] = []
    for message in messages:
        if not isinstance(message, dict):
            raise TypeError("every message must be an object")
        role = message.get("role")
        content = message.get("content")
        if api == "openai-chat":
            if role == "user":
                last_user, results = _text_of(content), []
            elif role == "tool":
                results.append((str(message.get("tool_call_id", "")), _text_of(content)))
        elif role == "user":  # anthropic: tool results are blocks of a user message
            blocks = content if isinstance(content, list) else []
            tool_blocks = [
                b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"
            ]
            if tool_blocks:
                for block in tool_blocks:
                    results.append(
                        (str(block.get("tool_use_id", "")), _text_of(block.get("content")))
                    )
            else:
                last_user, results = _text_of(content), []
    tools = tuple(
        str(t.get("function", t).get("name", ""))
        for t in body.get("tools") or []
        if isinstance(t, dict)
    )
    options = body.get("stream_options")
    include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
    return Digest(
        model, stream, last_user, tuple(r for _, r in results), tuple(i for i, _ in results), tools,
        include_usage,
    )  # fmt: skip


def _digest_responses(body: Mapping[str, Any], model: str, stream: bool) -> Digest:
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list):
        raise TypeError("`input` must be a string or a list")
    last_user = ""
    results: list[tuple[str, str]] = []
    for item in items:
        if not isinstance(item, dict):
            raise TypeError("every input item must be an object")
        if item.get("type") == "function_call_output":
            output = item.get("output")
            results.append((str(item.get("call_id", "")), _text_of(output)))
        elif item.get("role") == "user":
            last_user, results = _text_of(item.get("content")), []
    tools = tuple(str(t.get("name", "")) for t in body.get("tools") or [] if isinstance(t, dict))
    return Digest(
        model, stream, last_user, tuple(r for _, r in results), tuple(i for i, _ in results), tools
    )


# -- answers ------------------------------------------------------------------------------


def _arguments(answer: Answer, index: int) -> str:
    return json.dumps(dict(answer.turn.tool_calls[index].arguments), separators=(",", ":"))


def _pieces(text: str, size: int = 16) -> list[str]:
    """``text`` cut into a few deltas, so clients really assemble a stream."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def error_body(api: str, status: int, message: str) -> dict[str, Any]:
    """An error in ``api``'s format."""
    kind = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
            429: "rate_limit_error"}.get(status, "api_error")  # fmt: skip
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def render(api: str, answer: Answer) -> dict[str, Any]:
    """The whole (non-streamed) response body of ``api`` for ``answer``."""
    if api == "openai-chat":
        return _chat_completion(answer)
    if api == "openai-responses":
        return _response(answer, "completed")
    return _anthropic_message(answer, final=True)


def _chat_usage(answer: Answer) -> dict[str, int]:
    return {
        "prompt_tokens": answer.input_tokens,
        "completion_tokens": answer.output_tokens,
        "total_tokens": answer.input_tokens + answer.output_tokens,
    }


def _chat_completion(answer: Answer) -> dict[str, Any]:
    turn = answer.turn
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if turn.tool_calls:
        message["tool_calls"] = [
            {"id": answer.call_ids[i], "type": "function",
             "function": {"name": call.name, "arguments": _arguments(answer, i)}}
            for i, call in enumerate(turn.tool_calls)
        ]  # fmt: skip
    return {
        "id": answer.response_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": answer.model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": turn.finish, "logprobs": None}
        ],
        "usage": _chat_usage(answer),
    }


def _responses_items(answer: Answer) -> list[dict[str, Any]]:
    turn = answer.turn
    items: list[dict[str, Any]] = []
    if turn.text:
        items.append({
            "type": "message", "id": f"msg_{answer.response_id}", "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
        })  # fmt: skip
    for i, call in enumerate(turn.tool_calls):
        items.append({
            "type": "function_call", "id": f"fc_{answer.call_ids[i]}",
            "call_id": answer.call_ids[i], "name": call.name,
            "arguments": _arguments(answer, i), "status": "completed",
        })  # fmt: skip
    return items


def _response(
    answer: Answer, status: str, output: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    done = status == "completed"
    return {
        "id": answer.response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": answer.model,
        "output": _responses_items(answer) if output is None else output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "usage": {
            "input_tokens": answer.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": answer.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": answer.input_tokens + answer.output_tokens,
        }
        if done
        else None,
    }


def _anthropic_message(answer: Answer, *, final: bool) -> dict[str, Any]:
    turn = answer.turn
    content: list[dict[str, Any]] = []
    if final:
        if turn.text:
            content.append({"type": "text", "text": turn.text})
        for i, call in enumerate(turn.tool_calls):
            content.append({"type": "tool_use", "id": answer.call_ids[i], "name": call.name,
                            "input": dict(call.arguments)})  # fmt: skip
    return {
        "id": answer.response_id,
        "type": "message",
        "role": "assistant",
        "model": answer.model,
        "content": content,
        "stop_reason": ("tool_use" if turn.tool_calls else "end_turn") if final else None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": answer.input_tokens,
            "output_tokens": answer.output_tokens if final else 1,
        },
    }


Event = tuple[str | None, dict[str, Any] | str]  # (SSE event name, data)


def stream(api: str, answer: Answer, digest_: Digest) -> Iterator[Event]:
    """The server-sent events of ``api`` streaming ``answer``."""
    if api == "openai-chat":
        yield from _chat_stream(answer, digest_.include_usage)
    elif api == "openai-responses":
        yield from _responses_stream(answer)
    else:
        yield from _anthropic_stream(answer)


def _chat_stream(answer: Answer, include_usage: bool) -> Iterator[Event]:
    turn = answer.turn
    base = {"id": answer.response_id, "object": "chat.completion.chunk",
            "created": int(time.time()), "model": answer.model}  # fmt: skip

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Event:
        return None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    if turn.text:
        for piece in _pieces(turn.text):
            yield chunk({"content": piece})
    for i, call in enumerate(turn.tool_calls):
        head = {"name": call.name, "arguments": ""}
        yield chunk(
            {
                "tool_calls": [
                    {"index": i, "id": answer.call_ids[i], "type": "function", "function": head}
                ]
            }
        )
        for piece in _pieces(_arguments(answer, i)):
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    yield chunk({}, turn.finish)
    if include_usage:
        yield None, {**base, "choices": [], "usage": _chat_usage(answer)}
    yield None, "[DONE]"


def _responses_stream(answer: Answer) -> Iterator[Event]:
    numbers = iter(range(1_000_000))

    def event(kind: str, **data: Any) -> Event:
        return kind, {"type": kind, "sequence_number": next(numbers), **data}

    yield event("response.created", response=_response(answer, "in_progress", []))
    yield event("response.in_progress", response=_response(answer, "in_progress", []))
    for index, item in enumerate(_responses_items(answer)):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            yield event("response.output_item.added", output_index=index,
                        item={**item, "status": "in_progress", "content": []})  # fmt: skip
            part = {"type": "output_text", "text": "", "annotations": []}
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            yield event("response.content_part.added", **where, part=part)
            for piece in _pieces(text):
                yield event("response.output_text.delta", **where, delta=piece, logprobs=[])
            yield event("response.output_text.done", **where, text=text, logprobs=[])
            yield event("response.content_part.done", **where, part={**part, "text": text})
        else:
            yield event("response.output_item.added", output_index=index,
                        item={**item, "status": "in_progress", "arguments": ""})  # fmt: skip
            where = {"item_id": item["id"], "output_index": index}
            for piece in _pieces(item["arguments"]):
                yield event("response.function_call_arguments.delta", **where, delta=piece)
            yield event("response.function_call_arguments.done", **where,
                        arguments=item["arguments"], name=item["name"])  # fmt: skip
        yield event("response.output_item.done", output_index=index, item=item)
    yield event("response.completed", response=_response(answer, "completed"))


def _anthropic_stream(answer: Answer) -> Iterator[Event]:
    turn = answer.turn

    def event(kind: str, **data: Any) -> Event:
        return kind, {"type": kind, **data}

    yield event("message_start", message=_anthropic_message(answer, final=False))
    index = 0
    if turn.text:
        yield event("content_block_start", index=index, content_block={"type": "text", "text": ""})
        for piece in _pieces(turn.text):
            yield event("content_block_delta", index=index,
                        delta={"type": "text_delta", "text": piece})  # fmt: skip
        yield event("content_block_stop", index=index)
        index += 1
    for i, call in enumerate(turn.tool_calls):
        block = {"type": "tool_use", "id": answer.call_ids[i], "name": call.name, "input": {}}
        yield event("content_block_start", index=index, content_block=block)
        for piece in _pieces(_arguments(answer, i)):
            yield event("content_block_delta", index=index,
                        delta={"type": "input_json_delta", "partial_json": piece})  # fmt: skip
        yield event("content_block_stop", index=index)
        index += 1
    yield event(
        "message_delta",
        delta={"stop_reason": "tool_use" if turn.tool_calls else "end_turn", "stop_sequence": None},
        usage={"output_tokens": answer.output_tokens},
    )
    yield event("message_stop")
