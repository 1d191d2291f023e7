"""The fake LLM driven by parts nobody here wrote: the ``openai`` and ``anthropic`` client
libraries parse its answers, whole and streamed, so a wire-format mistake fails here."""

from __future__ import annotations

import json

import pytest

from herdr_sim.fake_llm import FakeLLM, Match, Script

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

TOOLS_CHAT = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]


def tool_script() -> Script:
    return (
        Script()
        .call_tool("bash", {"command": "echo hi"}, when=Match(tool_result=False))
        .reply("It printed hi.", when=Match(tool_result_contains="hi"))
    )


def test_openai_chat_completions_whole_with_a_tool_round_trip(llm: FakeLLM) -> None:
    llm.set_script(tool_script())
    client = openai.OpenAI(base_url=llm.openai_base_url, api_key="x", max_retries=0)
    messages: list[dict[str, object]] = [{"role": "user", "content": "run echo"}]
    first = client.chat.completions.create(model="fake", messages=messages, tools=TOOLS_CHAT)
    call = first.choices[0].message.tool_calls[0]
    assert first.choices[0].finish_reason == "tool_calls"
    assert (call.function.name, json.loads(call.function.arguments)) == (
        "bash", {"command": "echo hi"}
    )  # fmt: skip
    assert first.usage is not None and first.usage.total_tokens > 0
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "hi"},
    ]
    second = client.chat.completions.create(model="fake", messages=messages, tools=TOOLS_CHAT)
    assert second.choices[0].message.content == "It printed hi."
    assert llm.requests[1].tool_results == ("hi",)


def test_openai_chat_completions_streamed(llm: FakeLLM) -> None:
    llm.set_script(Script().reply("streamed text, more than one delta long").call_tool(
        "bash", {"command": "ls -la"}))  # fmt: skip
    client = openai.OpenAI(base_url=llm.openai_base_url, api_key="x", max_retries=0)
    chunks = list(client.chat.completions.create(
        model="fake", messages=[{"role": "user", "content": "hi"}], stream=True,
        stream_options={"include_usage": True},
    ))  # fmt: skip
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "streamed text, more than one delta long"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
    chunks = list(client.chat.completions.create(
        model="fake", messages=[{"role": "user", "content": "hi"}], stream=True
    ))  # fmt: skip
    arguments = "".join(
        c.choices[0].delta.tool_calls[0].function.arguments or ""
        for c in chunks
        if c.choices and c.choices[0].delta.tool_calls
    )
    assert json.loads(arguments) == {"command": "ls -la"}
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_openai_responses_whole_and_streamed(llm: FakeLLM) -> None:
    llm.set_script(tool_script())
    client = openai.OpenAI(base_url=llm.openai_base_url, api_key="x", max_retries=0)
    tools = [{"type": "function", "name": "bash", "parameters": {"type": "object"}}]
    first = client.responses.create(model="fake", input="run echo", tools=tools)
    call = first.output[0]
    assert (call.type, call.name, json.loads(call.arguments)) == (
        "function_call", "bash", {"command": "echo hi"}
    )  # fmt: skip
    assert first.usage is not None and first.usage.total_tokens > 0
    with client.responses.stream(
        model="fake",
        tools=tools,
        input=[
            {"role": "user", "content": "run echo"},
            {"type": "function_call", "call_id": call.call_id, "name": "bash",
             "arguments": call.arguments},
            {"type": "function_call_output", "call_id": call.call_id, "output": "hi"},
        ],
    ) as stream:  # fmt: skip
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == "It printed hi." == final.output_text
    assert llm.requests[1].tool_results == ("hi",)


def test_anthropic_messages_whole_and_streamed(llm: FakeLLM) -> None:
    llm.set_script(tool_script())
    client = anthropic.Anthropic(base_url=llm.url, api_key="x", max_retries=0)
    tools = [{"name": "bash", "input_schema": {"type": "object"}}]
    first = client.messages.create(
        model="fake", max_tokens=100, tools=tools,
        messages=[{"role": "user", "content": "run echo"}],
    )  # fmt: skip
    block = first.content[0]
    assert first.stop_reason == "tool_use"
    assert (block.type, block.name, block.input) == ("tool_use", "bash", {"command": "echo hi"})
    assert first.usage.output_tokens > 0
    with client.messages.stream(
        model="fake", max_tokens=100, tools=tools,
        messages=[
            {"role": "user", "content": "run echo"},
            {"role": "assistant", "content": [block.model_dump()]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": block.id, "content": "hi"}]},
        ],
    ) as stream:  # fmt: skip
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "It printed hi."
    assert final.stop_reason == "end_turn" and final.usage.output_tokens > 0
    assert llm.requests[1].tool_results == ("hi",)
    assert llm.requests[1].last_user_text == "run echo"


def test_errors_reach_the_clients_as_their_api_errors(llm: FakeLLM) -> None:
    llm.set_script(Script().fail(429, "slow down", repeat=True))
    client = openai.OpenAI(base_url=llm.openai_base_url, api_key="x", max_retries=0)
    with pytest.raises(openai.RateLimitError, match="slow down"):
        client.chat.completions.create(model="f", messages=[{"role": "user", "content": "x"}])
    other = anthropic.Anthropic(base_url=llm.url, api_key="x", max_retries=0)
    with pytest.raises(anthropic.RateLimitError, match="slow down"):
        other.messages.create(model="f", max_tokens=5, messages=[{"role": "user", "content": "x"}])
