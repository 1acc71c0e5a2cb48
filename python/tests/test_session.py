"""The OpenAI Agents SDK session against the real `openai-agents` runner, the real API and the local
test server's Responses API: turns across process restarts, the item mapping, pop_item, clear_session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agents import Runner, function_tool, set_tracing_disabled
from agents.memory import Session, SessionSettings

from durable_memory import AsyncClient, Client, ValidationError
from durable_memory.agents import RESPONSES_ITEM_KEY, DurableMemorySession, chain_gone

from agent_turn import weather_agent

set_tracing_disabled(True)

HERE = Path(__file__).parent


def turn_in_new_process(thread_id: str, text: str) -> str:
    """Runs one agent turn in a fresh Python process: nothing survives in memory between turns."""
    done = subprocess.run(
        [sys.executable, str(HERE / "agent_turn.py"), thread_id, text],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def kinds(items: list[dict[str, Any]]) -> list[str]:
    return [i.get("type", "message") for i in items]


def test_is_a_session_of_the_sdk(aclient: AsyncClient) -> None:
    assert isinstance(DurableMemorySession(aclient, "t"), Session)


def test_turns_in_new_processes_see_the_earlier_ones_tool_calls_and_reasoning_included(
    llm: Any, client: Client, thread_id: str
) -> None:
    llm.script(
        {
            "reasoning": "I need the weather tool.",
            "toolCalls": [{"id": "call_paris", "name": "get_weather", "arguments": {"city": "Paris"}}],
        },
        {"reply": "Sunny in Paris, 18°C."},
        {"reply": "No umbrella needed."},
        {"reply": "You asked about Paris."},
    )
    assert turn_in_new_process(thread_id, "Weather in Paris?") == "Sunny in Paris, 18°C."
    assert turn_in_new_process(thread_id, "Umbrella?") == "No umbrella needed."
    assert turn_in_new_process(thread_id, "What did I ask first?") == "You asked about Paris."

    inputs = llm.inputs()
    second_turn = inputs[2]
    assert kinds(second_turn) == ["message", "reasoning", "function_call", "function_call_output", "message", "message"]
    assert second_turn[2]["call_id"] == "call_paris" and second_turn[3]["call_id"] == "call_paris"
    assert second_turn[3]["output"] == "Paris: sunny, 18°C"
    assert second_turn[1]["summary"] == [{"type": "summary_text", "text": "I need the weather tool."}]
    third = str(inputs[3])
    for said in ("Weather in Paris?", "Umbrella?", "No umbrella needed.", "What did I ask first?"):
        assert said in third

    # Each item is one message of the thread, with the parts the rest of durable-memory reads.
    history = client.history(thread_id)["messages"]
    assert [(m["role"], "+".join(p["type"] for p in m["parts"])) for m in history] == [
        ("user", "text"),
        ("assistant", "reasoning"),
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
        ("assistant", "text"),
        ("user", "text"),
        ("assistant", "text"),
        ("user", "text"),
        ("assistant", "text"),
    ]
    assert history[2]["id"] == "call:call_paris" and history[3]["id"] == "result:call_paris"
    assert history[1]["id"] == "item:rs_test_1"


async def test_items_come_back_exactly_as_added_and_limit_gives_the_newest(
    aclient: AsyncClient, thread_id: str
) -> None:
    items: list[Any] = [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "What is in this picture?"},
                {"type": "input_image", "image_url": "https://example.com/cat.png", "detail": "auto"},
            ],
        },
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA…"},
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "cats"}},
        {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": "{}", "status": "completed"},
        {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "done"}]},
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "A cat.", "annotations": []}],
        },
    ]
    session = DurableMemorySession(aclient, thread_id)
    assert await session.get_items() == []
    await session.add_items(items)
    await session.add_items(items[4:])  # ids from call ids and item ids: stored once
    assert await session.get_items() == items
    assert await DurableMemorySession(aclient, thread_id).get_items(2) == items[-2:]
    limited = DurableMemorySession(aclient, thread_id, session_settings=SessionSettings(limit=3))
    assert await limited.get_items() == items[-3:]

    history = (await aclient.history(thread_id))["messages"]
    assert len(history) == len(items)
    assert [m["parts"][0].get("text") for m in history[2:4]] == ["[reasoning]", "[web_search_call]"]
    assert history[5]["parts"] == [{"type": "tool_result", "callId": "c1", "result": "done"}]
    assert history[1]["metadata"][RESPONSES_ITEM_KEY] == items[1]


async def test_messages_from_elsewhere_become_items_from_their_parts(aclient: AsyncClient, thread_id: str) -> None:
    # As a chat-completions client, or the TypeScript adapter (its own item shape under agentsItem), writes them.
    await aclient.append(
        thread_id,
        [
            {"id": "u", "role": "user", "content": "Weather?"},
            {
                "id": "a",
                "role": "assistant",
                "parts": [
                    {"type": "reasoning", "text": "use the tool"},
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_call", "callId": "c9", "name": "get_weather", "arguments": '{"city":"Oslo"}'},
                ],
                "metadata": {"agentsItem": {"type": "function_call", "callId": "c9"}},
            },
            {"id": "t", "role": "tool", "tool_call_id": "c9", "content": "rain"},
        ],
    )
    items = await DurableMemorySession(aclient, thread_id).get_items()
    assert items == [
        {"role": "user", "content": "Weather?"},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "use the tool"}]},
        {"role": "assistant", "content": "Let me look."},
        {
            "type": "function_call",
            "call_id": "c9",
            "name": "get_weather",
            "arguments": '{"city":"Oslo"}',
            "status": "completed",
        },
        {"type": "function_call_output", "call_id": "c9", "output": "rain", "status": "completed"},
    ]


async def test_pop_item_records_a_retraction_the_next_request_leaves_it_out(
    aclient: AsyncClient, llm: Any, thread_id: str
) -> None:
    session = DurableMemorySession(aclient, thread_id)
    assert await session.pop_item() is None
    await session.add_items([{"role": "user", "content": "keep me"}, {"role": "user", "content": "take me back"}])
    assert await session.pop_item() == {"role": "user", "content": "take me back"}
    assert await session.get_items() == [{"role": "user", "content": "keep me"}]

    history = (await aclient.history(thread_id))["messages"]
    assert len(history) == 3, "nothing rewritten: the message and its retraction marker"
    assert history[2]["metadata"] == {"retracts": history[1]["id"], "reason": "popItem"}

    llm.script({"reply": "ok"})
    result = await Runner.run(weather_agent(), "next", session=DurableMemorySession(aclient, thread_id))
    assert result.final_output == "ok"
    sent = str(llm.inputs()[0])
    assert "take me back" not in sent and "keep me" in sent and "next" in sent


async def test_pop_item_never_takes_the_pinned_blocks_once_the_thread_is_popped_empty(
    aclient: AsyncClient, thread_id: str
) -> None:
    session = DurableMemorySession(aclient, thread_id, user_id="pop-blocks")
    await session.add_items([{"role": "user", "content": "I am vegetarian"}])
    await aclient.remember("pop-blocks", "I am vegetarian", thread_id=thread_id)
    await aclient.set_thread_working_memory(thread_id, "# Notes", 0)
    assert await session.pop_item() == {"role": "user", "content": "I am vegetarian"}
    assert [item["role"] for item in await session.get_items()] == ["system", "system"]  # the pinned blocks
    assert await session.pop_item() is None
    assert len((await aclient.history(thread_id))["messages"]) == 2, "the message and its retraction marker"


async def test_run_on_a_bound_thread_chains_marks_a_forgotten_response_lost_and_recovers(
    aclient: AsyncClient, llm: Any, thread_id: str
) -> None:
    session = DurableMemorySession(aclient, thread_id)
    await aclient.configure_thread(thread_id, service={"kind": "openai-responses"})
    agent = weather_agent()

    def bodies() -> list[dict[str, Any]]:
        return [r["body"] for r in llm.requests() if r["path"].endswith("/responses")]

    async def latest() -> Any:
        return (await aclient.get_thread(thread_id))["service"]

    # Turn 1: nothing recorded yet, so the whole context goes out; the runner chains its own second
    # call (after the tool); the last response id is recorded with the turn's items.
    llm.script(
        {"toolCalls": [{"id": "call_oslo", "name": "get_weather", "arguments": {"city": "Oslo"}}]},
        {"reply": "Sunny in Oslo."},
    )
    first = await session.run(agent, "Weather in Oslo?")
    assert first.final_output == "Sunny in Oslo."
    assert "previous_response_id" not in bodies()[0]
    service = await latest()
    assert service["response"]["responseId"] == first.last_response_id
    assert service["response"]["seq"] == 4, "user, call, output, reply: the id ends them"

    # Turn 2: chained; only what is new goes out (a note appended elsewhere, then the input).
    await aclient.append(thread_id, {"id": "note", "role": "user", "content": "I am in Oslo until Friday."})
    llm.script({"reply": "Take a jacket."})
    second = await session.run(agent, "Jacket?")
    assert second.final_output == "Take a jacket."
    assert bodies()[2]["previous_response_id"] == first.last_response_id
    assert [i["content"] for i in bodies()[2]["input"]] == ["I am in Oslo until Friday.", "Jacket?"]

    # The provider forgets: 404 for the chained call, the chain is marked lost, the run made again
    # with the full context; that call fails too (a 400 about something else: not a lost chain).
    llm.forget_responses()
    llm.script({"status": 400})
    with pytest.raises(Exception) as failed:
        await session.run(agent, "And tomorrow?")
    assert getattr(failed.value, "status_code", None) == 400
    assert bodies()[3]["previous_response_id"] == second.last_response_id
    assert "previous_response_id" not in bodies()[4]
    service = await latest()
    assert service["skipped"] == "lost"
    assert service["response"]["lost"]["reason"] == "provider answered 404 previous_response_not_found"

    # The next run sends the full context and starts a new chain.
    llm.script({"reply": "Rain tomorrow."})
    recovered = await session.run(agent, "And tomorrow?")
    assert recovered.final_output == "Rain tomorrow."
    assert "previous_response_id" not in bodies()[5]
    sent = str(bodies()[5]["input"])
    for said in ("Weather in Oslo?", "Sunny in Oslo.", "until Friday", "Take a jacket.", "And tomorrow?"):
        assert said in sent
    service = await latest()
    assert service["usable"] is True and service["response"]["responseId"] == recovered.last_response_id
    history = (await aclient.history(thread_id))["messages"]
    assert len(history) == 9, "the failed run stored nothing; no turn stored twice"


async def test_run_on_a_bound_thread_that_changes_the_working_memory_sends_it_pinned_next_turn(
    aclient: AsyncClient, llm: Any, thread_id: str
) -> None:
    session = DurableMemorySession(aclient, thread_id)
    await aclient.configure_thread(thread_id, service={"kind": "openai-responses"})

    @function_tool
    async def note_trip(content: str) -> str:
        """Replaces the thread's working memory."""
        written = await aclient.set_thread_working_memory(thread_id, content, 0)
        return f"working memory updated to version {written['version']}"

    agent = weather_agent().clone(tools=[note_trip])

    def bodies() -> list[dict[str, Any]]:
        return [r["body"] for r in llm.requests() if r["path"].endswith("/responses")]

    llm.script(
        {"toolCalls": [{"id": "call_wm", "name": "note_trip", "arguments": {"content": "# Trip\n- Paris in May"}}]},
        {"reply": "Noted."},
    )
    first = await session.run(agent, "I go to Paris in May.")
    assert first.final_output == "Noted."
    service = (await aclient.get_thread(thread_id))["service"]
    assert service["response"]["responseId"] == first.last_response_id
    assert service["response"]["lost"]["reason"] == f"working memory changed during the run (none to {thread_id} v1)"

    # The next turn's model gets the new working memory pinned: the chain is broken on purpose (its
    # conversation holds the tool call, not the pinned block), so the full context goes out.
    llm.script({"reply": "Paris in May."})
    second = await session.run(agent, "Where do I go?")
    sent = str(bodies()[2]["input"])
    assert "Working memory (version 1;" in sent and "Paris in May" in sent, sent
    assert "previous_response_id" not in bodies()[2]
    assert sent.index("I go to Paris in May.") < sent.index("Where do I go?")
    history = (await aclient.history(thread_id))["messages"]
    assert len(history) == 6, "user, call, output, reply; user, reply"

    assert second.final_output == "Paris in May."

    # Nothing changed it since: the next turn chains again, only its input going out.
    llm.script({"reply": "In May."})
    await session.run(agent, "When?")
    assert bodies()[3]["previous_response_id"] == second.last_response_id
    assert [i["content"] for i in bodies()[3]["input"]] == ["When?"]


async def test_run_on_a_bound_thread_whose_working_memory_changed_between_runs_sends_the_full_context(
    aclient: AsyncClient, llm: Any, thread_id: str
) -> None:
    session = DurableMemorySession(aclient, thread_id)
    await aclient.configure_thread(thread_id, service={"kind": "openai-responses"})
    await aclient.set_thread_working_memory(thread_id, "# Trip\n- Paris in May", 0)
    agent = weather_agent()

    def bodies() -> list[dict[str, Any]]:
        return [r["body"] for r in llm.requests() if r["path"].endswith("/responses")]

    llm.script({"reply": "Hello."}, {"reply": "Sure."})
    await session.run(agent, "Hi.")
    second = await session.run(agent, "Plan my trip.")
    assert bodies()[1]["previous_response_id"], "nothing changed: the second run chains"

    # Between runs, another client rewrites the working memory (HTTP, CLI, another agent).
    await aclient.set_thread_working_memory(thread_id, "# Trip\n- Rome in June", 1)
    llm.script({"reply": "Rome in June."})
    third = await session.run(agent, "Where do I go?")
    assert "previous_response_id" not in bodies()[2], "the full context went out"
    sent = str(bodies()[2]["input"])
    assert "Working memory (version 2;" in sent and "Rome in June" in sent and "Paris in May" not in sent, sent
    service = (await aclient.get_thread(thread_id))["service"]
    assert service["usable"] is True and service["response"]["responseId"] == third.last_response_id
    assert second.last_response_id != third.last_response_id


def test_chain_gone_only_for_a_404_or_400_naming_the_response() -> None:
    rid = "resp_abc"
    message = f"Previous response with id '{rid}' not found."
    gone = SimpleNamespace(status_code=404, code="previous_response_not_found", message=message)
    assert chain_gone(gone, rid) == "provider answered 404 previous_response_not_found"
    assert chain_gone(SimpleNamespace(status_code=400, param="previous_response_id"), rid) == "provider answered 400"
    assert chain_gone(SimpleNamespace(status_code=404, code="model_not_found", message="no such model"), rid) is None
    assert chain_gone(SimpleNamespace(status_code=500, message=rid), rid) is None
    assert chain_gone(RuntimeError(f"connection reset for {rid}"), rid) is None


async def test_run_on_an_unbound_thread_is_a_plain_session_run(aclient: AsyncClient, llm: Any, thread_id: str) -> None:
    llm.script({"reply": "hi"})
    session = DurableMemorySession(aclient, thread_id)
    assert (await session.run(weather_agent(), "hello")).final_output == "hi"
    assert "previous_response_id" not in llm.requests()[0]["body"]
    assert [i.get("role", i.get("type")) for i in await session.get_items()] == ["user", "assistant"]


async def test_clear_session_erases_the_thread(aclient: AsyncClient, thread_id: str) -> None:
    session = DurableMemorySession(aclient, thread_id, user_id="erin")
    await session.clear_session()  # nothing there yet: fine
    await session.add_items([{"role": "user", "content": "forget this"}])
    await session.clear_session()
    assert await session.get_items() == []
    await session.add_items([{"role": "user", "content": "a fresh start"}])
    assert [m["id"] for m in (await aclient.history(thread_id))["messages"]] != []
    assert await session.get_items() == [{"role": "user", "content": "a fresh start"}]


async def test_a_thread_for_the_typescript_adapter_to_read(aclient: AsyncClient) -> None:
    """Written here, read by the TypeScript adapter in python.test.ts: both languages agree."""
    session = DurableMemorySession(aclient, "py-cross-language")
    await session.clear_session()
    await session.add_items(
        [
            {"role": "user", "content": "Weather in Paris?"},
            {"type": "reasoning", "id": "rs_x", "summary": [{"type": "summary_text", "text": "tool time"}]},
            {"type": "function_call", "call_id": "cx", "name": "get_weather", "arguments": '{"city":"Paris"}'},
            {"type": "function_call_output", "call_id": "cx", "output": "sunny"},
            {"role": "assistant", "content": "Sunny."},
        ]
    )


async def append_ingrid_and_the_garden(aclient: AsyncClient, thread_id: str) -> None:
    """A fact far back, 60 messages about the garden, and a question about the fact as the newest turn."""
    fact = {"id": "fact", "role": "user", "content": "My sister Ingrid moved to Trondheim.", "createdAt": "2023-05-01"}
    filler = [
        {"id": f"f{i}", "role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} about the garden"}
        for i in range(60)
    ]
    await aclient.append(thread_id, [fact, *filler, {"id": "q", "role": "user", "content": "Where does Ingrid live?"}])


def recalls_ingrid(items: list[Any]) -> bool:
    return any("Trondheim" in str(item.get("content")) for item in items)


async def test_stable_recall_keeps_the_recalled_block_from_one_context_to_the_next(
    aclient: AsyncClient, thread_id: str
) -> None:
    await append_ingrid_and_the_garden(aclient, thread_id)
    topic = [{"role": "user", "content": "What about message 7 and the garden?"}]

    stable = DurableMemorySession(aclient, thread_id, budget=300, stable_recall={"minCover": 0})
    assert recalls_ingrid(await stable.get_items())
    await stable.add_items(topic)
    assert recalls_ingrid(await stable.get_items()), "the block stays in place for the next topic"
    fresh = DurableMemorySession(aclient, thread_id, budget=300)
    assert not recalls_ingrid(await fresh.get_items()), "without stable_recall it is built for the new topic"


async def test_stable_recall_is_kept_per_client_so_a_session_made_anew_each_turn_keeps_the_block(
    aclient: AsyncClient, thread_id: str
) -> None:
    """As the TypeScript adapters keep one store per client: a web handler makes a session per request."""
    await append_ingrid_and_the_garden(aclient, thread_id)

    first = DurableMemorySession(aclient, thread_id, budget=300, stable_recall={"minCover": 0})
    assert recalls_ingrid(await first.get_items())
    await first.add_items([{"role": "user", "content": "What about message 7 and the garden?"}])
    again = DurableMemorySession(aclient, thread_id, budget=300, stable_recall={"minCover": 0})
    assert recalls_ingrid(await again.get_items()), "a new session on the same client keeps the block"


def test_stable_recall_refuses_a_key_it_does_not_know(aclient: AsyncClient) -> None:
    """As the TypeScript adapters' `stableRecall` does: a misspelt key is refused, never ignored."""
    with pytest.raises(ValidationError) as refused:
        DurableMemorySession(aclient, "t", stable_recall={"mincover": 0})
    assert refused.value.code == "invalid_option"
    assert refused.value.field == "stable_recall"
    assert "minCover" in refused.value.message
    DurableMemorySession(aclient, "t", stable_recall={"minCover": 0})
    DurableMemorySession(aclient, "t", stable_recall=True)


async def test_run_recalls_for_the_input_a_plain_runner_run_for_the_previous_user_turn(
    aclient: AsyncClient, llm: Any, thread_id: str
) -> None:
    """The SDK reads the session before it adds the input: only ``session.run`` can ask recall about it."""

    async def seed(tid: str) -> None:
        filler = [
            {"id": f"f{i}", "role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} about the garden"}
            for i in range(60)
        ]
        filler[30] = {"id": "cat", "role": "user", "content": "My cat is called Mochi."}
        fact = {"id": "fact", "role": "user", "content": "My sister Ingrid moved to Trondheim."}
        asked = [
            {"id": "q", "role": "user", "content": "What is my cat called?"},
            {"id": "a", "role": "assistant", "content": "Mochi."},
        ]
        await aclient.append(tid, [fact, *filler, *asked])

    question = "Where does Ingrid live?"
    await seed(thread_id + "-plain")
    llm.script({"reply": "ok"})
    await Runner.run(weather_agent(), question, session=DurableMemorySession(aclient, thread_id + "-plain", budget=300))
    seen = str(llm.inputs()[0])
    assert "Where does Ingrid live?" in seen
    assert "My cat is called Mochi." in seen, "recall answered the previous user turn"
    assert "Ingrid moved to Trondheim" not in seen

    await seed(thread_id)
    llm.reset()
    llm.script({"reply": "In Trondheim."})
    await DurableMemorySession(aclient, thread_id, budget=300).run(weather_agent(), question)
    seen = str(llm.inputs()[0])
    assert "Ingrid moved to Trondheim" in seen, "recalled for the new question"
    assert "My cat is called Mochi." not in seen
