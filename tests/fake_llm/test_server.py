"""The fake LLM server on the wire: routing, recording, matching, errors, delays, SSE framing.

These read the raw HTTP with the standard library; ``test_sdk_clients.py`` drives the same
server with the providers' own client libraries.
"""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from herdr_sim.fake_llm import FakeLLM, Match, Script


def post(llm: FakeLLM, path: str, body: dict[str, Any]) -> tuple[int, str, str]:
    """(status, content type, body text) of a POST."""
    request = urllib.request.Request(
        llm.url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read().decode()


def sse(text: str) -> list[tuple[str | None, str]]:
    """The (event, data) frames of a server-sent-events body."""
    frames = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        event = None
        data = []
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line[len("event: ") :]
            elif line.startswith("data: "):
                data.append(line[len("data: ") :])
        frames.append((event, "\n".join(data)))
    return frames


def chat(text: str, *, stream: bool = False, **extra: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "stream": stream,
        "messages": [{"role": "user", "content": text}],
        **extra,
    }


def test_listens_on_loopback_on_a_free_port(llm: FakeLLM) -> None:
    assert llm.url.startswith("http://127.0.0.1:")
    assert llm.port > 0
    assert llm.openai_base_url == llm.url + "/v1"


def test_turns_answer_in_order_and_every_request_is_recorded(llm: FakeLLM) -> None:
    llm.set_script(Script().reply("one").reply("two"))
    answers = [json.loads(post(llm, "/v1/chat/completions", chat(f"q{i}"))[2]) for i in (1, 2)]
    assert [a["choices"][0]["message"]["content"] for a in answers] == ["one", "two"]
    assert [(r.api, r.last_user_text, r.turn, r.status) for r in llm.requests] == [
        ("openai-chat", "q1", 0, 200),
        ("openai-chat", "q2", 1, 200),
    ]
    assert llm.requests[0].body["messages"][0]["content"] == "q1"


def test_a_request_no_turn_fits_gets_the_fallback_error_and_is_unmatched(llm: FakeLLM) -> None:
    llm.set_script(Script().reply("only for hello", when=Match(user_contains="hello")))
    status, _, body = post(llm, "/v1/chat/completions", chat("goodbye"))
    assert status == 500
    message = json.loads(body)["error"]["message"]
    assert "no scripted turn fits" in message and "'goodbye'" in message
    assert [r.index for r in llm.unmatched] == [0]


def test_matching_on_the_tool_result_after_the_last_user_message(llm: FakeLLM) -> None:
    llm.set_script(
        Script()
        .reply("after tool", when=Match(tool_result=True))
        .call_tool("bash", {"command": "echo hi"}, when=Match(user_contains="run"))
    )
    first = json.loads(post(llm, "/v1/chat/completions", chat("run it"))[2])
    call = first["choices"][0]["message"]["tool_calls"][0]
    assert first["choices"][0]["finish_reason"] == "tool_calls"
    assert call["function"] == {"name": "bash", "arguments": '{"command":"echo hi"}'}
    messages = [
        {"role": "user", "content": "run it"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "hi\n"},
    ]
    second = json.loads(post(llm, "/v1/chat/completions", {"model": "m", "messages": messages})[2])
    assert second["choices"][0]["message"]["content"] == "after tool"
    assert llm.requests[1].tool_results == ("hi\n",)
    assert llm.requests[1].digest is not None
    assert llm.requests[1].digest.tool_result_ids == (call["id"],)


def test_an_error_turn_answers_in_each_apis_error_format(llm: FakeLLM) -> None:
    llm.set_script(Script().fail(429, "slow down", repeat=True))
    status, kind, body = post(llm, "/v1/chat/completions", chat("x"))
    assert (status, kind) == (429, "application/json")
    assert json.loads(body)["error"] == {
        "message": "slow down", "type": "rate_limit_error", "param": None, "code": None
    }  # fmt: skip
    status, _, body = post(llm, "/v1/messages", chat("x", max_tokens=5))
    assert status == 429
    assert json.loads(body) == {
        "type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}
    }  # fmt: skip


def test_a_delay_holds_the_answer(llm: FakeLLM) -> None:
    llm.set_script(Script().reply("late", delay=0.3))
    started = time.monotonic()
    post(llm, "/v1/chat/completions", chat("x"))
    assert time.monotonic() - started >= 0.3


def test_a_chat_stream_is_sse_chunks_ending_in_done_with_a_usage_chunk(llm: FakeLLM) -> None:
    llm.set_script(Script().reply("a reply longer than one sixteen-character delta"))
    status, kind, body = post(
        llm, "/v1/chat/completions", chat("x", stream=True, stream_options={"include_usage": True})
    )
    assert (status, kind) == (200, "text/event-stream")
    frames = sse(body)
    assert frames[-1] == (None, "[DONE]")
    chunks = [json.loads(data) for _, data in frames[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text == "a reply longer than one sixteen-character delta"
    assert sum(1 for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")) > 1
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0


def test_responses_and_messages_streams_name_their_events(llm: FakeLLM) -> None:
    llm.set_script(Script().reply("hi", repeat=True))
    body = {"model": "m", "stream": True, "input": "x"}
    events = [e for e, _ in sse(post(llm, "/v1/responses", body)[2])]
    assert events[0] == "response.created" and events[-1] == "response.completed"
    assert "response.output_text.delta" in events
    events = [e for e, _ in sse(post(llm, "/v1/messages", chat("x", stream=True))[2])]
    assert events[0] == "message_start" and events[-1] == "message_stop"
    assert "content_block_delta" in events


def test_bad_requests_are_answered_and_recorded(llm: FakeLLM) -> None:
    assert post(llm, "/v1/nowhere", {})[0] == 404
    assert post(llm, "/v1/chat/completions", {"messages": "no"})[0] == 400
    request = urllib.request.Request(llm.url + "/v1/chat/completions", data=b"{", method="POST")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    caught.value.close()
    assert caught.value.code == 400
    assert [(r.status, r.turn) for r in llm.requests] == [(404, None), (400, None), (400, None)]


def test_wait_for_requests_is_bounded(llm: FakeLLM) -> None:
    with pytest.raises(TimeoutError, match="0 request"):
        llm.wait_for_requests(1, timeout=0.1)


def test_stop_closes_the_port() -> None:
    llm = FakeLLM().start()
    port = llm.port
    llm.stop()
    with (
        pytest.raises(ConnectionRefusedError),
        socket.create_connection(("127.0.0.1", port), timeout=1),
    ):
        pass
