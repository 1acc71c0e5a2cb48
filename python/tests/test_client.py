"""The client against the real API: a round trip, errors as exceptions, tenants kept apart, memories."""

from __future__ import annotations

import time

import pytest

from durable_memory import (
    AsyncClient,
    Client,
    ConflictError,
    DurableMemoryError,
    NotFoundError,
    UnauthorizedError,
    UnavailableError,
    ValidationError,
)


def conversation() -> list[dict]:
    """Ours and OpenAI chat messages, a tool call with its result among them."""
    return [
        {"id": "u1", "role": "user", "content": "Where does rounding happen?"},
        {
            "id": "a1",
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call-1", "type": "function", "function": {"name": "search", "arguments": '{"q":"round"}'}}
            ],
        },
        {"id": "t1", "role": "tool", "tool_call_id": "call-1", "content": "billing/round.ts"},
        {"id": "a2", "role": "assistant", "parts": [{"type": "text", "text": "In billing/round.ts."}]},
    ]


def test_round_trip_append_context_history_export_import(client: Client, thread_id: str) -> None:
    appended = client.append(thread_id, conversation(), user_id="carol")
    assert [m["seq"] for m in appended["messages"]] == [1, 2, 3, 4]
    assert not any(m["duplicate"] for m in appended["messages"])
    again = client.append(thread_id, conversation()[0])
    assert again["messages"][0]["duplicate"] is True, "a retried append stores nothing twice"

    context = client.context(thread_id, budget=2000)
    assert [m["role"] for m in context["openai"]] == ["user", "assistant", "tool", "assistant"]
    assert context["openai"][1]["tool_calls"][0]["id"] == "call-1"
    assert context["tokens"] <= context["budget"] == 2000
    assert [m["id"] for m in context["messages"]] == ["u1", "a1", "t1", "a2"]

    page = client.history(thread_id, limit=3)
    assert [m["id"] for m in page["messages"]] == ["u1", "a1", "t1"]
    rest = client.history(thread_id, after=page["next"])
    assert [(m["id"], m["seq"]) for m in rest["messages"]] == [("a2", 4)]
    assert rest["messages"][0]["parts"] == [{"type": "text", "text": "In billing/round.ts."}]

    config = client.configure_thread(thread_id, budget=5000)
    assert config["budget"] == 5000
    state = client.get_thread(thread_id, sync=True)
    assert state["messageCount"] == 4 and state["indexedSeq"] == 4 and state["userId"] == "carol"
    listed = client.list_threads(user_id="carol")
    assert thread_id in [t["threadId"] for t in listed["threads"]]
    assert [t["threadId"] for t in client.list_threads(prefix=thread_id)["threads"]] == [thread_id]

    exported = client.export_thread(thread_id)
    copy = thread_id + "-copy"
    imported = client.import_thread(exported, thread_id=copy)
    assert (imported["threadId"], imported["imported"], imported["skipped"]) == (copy, 4, 0)
    assert client.import_thread(exported, thread_id=copy)["skipped"] == 4, "importing again is idempotent"
    copied = client.history(copy)["messages"]
    original = client.history(thread_id)["messages"]
    assert [(m["id"], m["role"], m["parts"]) for m in copied] == [(m["id"], m["role"], m["parts"]) for m in original]

    client.delete_thread(copy)
    with pytest.raises(NotFoundError):
        client.get_thread(copy)


async def test_the_async_client_does_the_same(aclient: AsyncClient, thread_id: str) -> None:
    await aclient.append(thread_id, [{"id": "x1", "role": "user", "content": "hello"}])
    context = await aclient.context(thread_id)
    assert context["openai"] == [{"role": "user", "content": "hello"}]
    retracted = await aclient.retract(thread_id, "x1", reason="test")
    assert retracted["messages"][0]["id"] == "retraction:x1"
    assert (await aclient.context(thread_id))["messages"] == []
    history = (await aclient.history(thread_id))["messages"]
    assert [m["id"] for m in history] == ["x1", "retraction:x1"], "history keeps both"
    await aclient.delete_thread(thread_id)
    with pytest.raises(NotFoundError):
        await aclient.history(thread_id)


def test_errors_are_exceptions_with_code_status_message_and_field(
    api_url: str, client: Client, thread_id: str
) -> None:
    with Client(api_url, "dm_" + "A" * 43) as stranger, pytest.raises(UnauthorizedError) as unknown:
        stranger.list_threads()
    assert (unknown.value.status, unknown.value.code) == (401, "invalid_token")
    with Client(api_url, "") as anonymous, pytest.raises(UnauthorizedError) as missing:
        anonymous.list_threads()
    assert missing.value.code == "missing_token"

    with pytest.raises(NotFoundError) as nothing:
        client.context(thread_id)
    assert (nothing.value.status, nothing.value.code, nothing.value.field) == (404, "unknown_thread", "id")
    assert thread_id in nothing.value.message

    with pytest.raises(ValidationError) as bad:
        client.configure_thread(thread_id, budget=0)
    assert (bad.value.status, bad.value.code, bad.value.field) == (400, "invalid_field", "budget")
    with pytest.raises(ValidationError) as bad_message:
        client.append(thread_id, [{"id": "ok", "role": "user", "content": "fine"}, {"id": "no", "role": "robot"}])
    assert bad_message.value.field is not None and bad_message.value.field.startswith("messages[1]")
    with pytest.raises(NotFoundError):
        client.history(thread_id)  # nothing of the refused batch was stored

    client.append(thread_id, {"id": "m1", "role": "user", "content": "one"})
    with pytest.raises(ConflictError) as conflict:
        client.append(thread_id, {"id": "m1", "role": "user", "content": "other"})
    assert (conflict.value.status, conflict.value.code, conflict.value.field) == (409, "id_conflict", "message")
    with pytest.raises(ValidationError) as unknown_message:
        client.retract(thread_id, "nope")
    assert (unknown_message.value.code, unknown_message.value.field) == ("invalid_id", "messageId")
    assert isinstance(unknown_message.value, DurableMemoryError)

    with Client("http://127.0.0.1:9", timeout=5) as nowhere, pytest.raises(UnavailableError) as down:
        nowhere.list_threads()
    assert (down.value.code, down.value.status) == ("unreachable", None)
    # The error names the URL it tried and where that address came from.
    assert "GET http://127.0.0.1:9/v1/threads" in str(down.value)
    assert "DURABLE_MEMORY_API_URL" in str(down.value)


async def test_the_async_client_names_the_url_it_could_not_reach() -> None:
    async with AsyncClient("http://127.0.0.1:9/", timeout=5) as nowhere:
        with pytest.raises(UnavailableError) as down:
            await nowhere.get_thread("t1")
    assert (down.value.code, down.value.status) == ("unreachable", None)
    assert "GET http://127.0.0.1:9/v1/threads/t1" in str(down.value)


def test_another_tenant_cannot_read_or_touch_the_thread(
    client: Client, other_tenant: Client, thread_id: str
) -> None:
    client.append(thread_id, [{"id": "s1", "role": "user", "content": "a secret of acme"}], user_id="dora")
    for call in (
        lambda: other_tenant.context(thread_id),
        lambda: other_tenant.history(thread_id),
        lambda: other_tenant.get_thread(thread_id),
        lambda: other_tenant.export_thread(thread_id),
        lambda: other_tenant.delete_thread(thread_id),
        lambda: other_tenant.retract(thread_id, "s1"),
    ):
        with pytest.raises(NotFoundError) as refused:
            call()
        assert refused.value.code == "unknown_thread"
        assert "acme" not in refused.value.message
    assert thread_id not in [t["threadId"] for t in other_tenant.list_threads()["threads"]]
    with pytest.raises(NotFoundError) as no_user:
        other_tenant.list_memories("dora")
    assert no_user.value.code == "unknown_user"
    # The other tenant's writes land in its own namespace: acme's thread is as it was.
    other_tenant.append(thread_id, {"id": "s1", "role": "user", "content": "beta's own"})
    assert [m["parts"][0]["text"] for m in client.history(thread_id)["messages"]] == ["a secret of acme"]
    other_tenant.delete_thread(thread_id)
    assert client.history(thread_id)["messages"][0]["id"] == "s1"


def test_fork_a_thread_at_a_message_and_go_on_apart(client: Client, thread_id: str) -> None:
    client.append(thread_id, conversation(), user_id="fern")
    fork_id = thread_id + "-fork"
    forked = client.fork_thread(thread_id, fork_id, at="t1")
    assert forked == {"threadId": fork_id, "forkedFrom": {"threadId": thread_id, "messageId": "t1", "seq": 3}}
    client.append(fork_id, {"id": "f1", "role": "user", "content": "only in the fork"})
    assert [m["id"] for m in client.history(fork_id)["messages"]] == ["u1", "a1", "t1", "f1"]
    assert len(client.history(thread_id)["messages"]) == 4
    state = client.get_thread(fork_id)
    assert state["forkedFrom"] == forked["forkedFrom"] and state["userId"] == "fern"

    with pytest.raises(ConflictError) as taken:
        client.fork_thread(thread_id, fork_id, at="a1")
    assert (taken.value.status, taken.value.code, taken.value.field) == (409, "conflict", "id")
    with pytest.raises(ValidationError) as unknown:
        client.fork_thread(thread_id, thread_id + "-other", at="nope")
    assert (unknown.value.code, unknown.value.field) == ("invalid_id", "at")
    with pytest.raises(NotFoundError):
        client.get_thread(thread_id + "-other")


async def test_the_async_client_forks(aclient: AsyncClient, thread_id: str) -> None:
    await aclient.append(thread_id, conversation())
    forked = await aclient.fork_thread(thread_id, thread_id + "-fork")
    assert forked["forkedFrom"]["messageId"] == "a2"


def test_memories_list_correct_delete_and_user_erasure(client: Client, thread_id: str) -> None:
    user = thread_id + "-user"
    client.append(thread_id, {"id": "f0", "role": "user", "content": "Hello there."}, user_id=user)
    assert client.list_memories(user) == {"memories": []}
    client.configure_thread(thread_id, extract_every_turns=1)
    client.append(thread_id, {"id": "f1", "role": "user", "content": "I live in Oslo."})
    deadline = time.monotonic() + 60
    while not (memories := client.list_memories(user)["memories"]) and time.monotonic() < deadline:
        time.sleep(0.2)  # the worker extracts in the background
    assert [m["text"] for m in memories] == ["User lives in Oslo"]
    assert memories[0]["sourceMessageIds"] == ["f1"] and memories[0]["sourceThreadId"] == thread_id
    assert client.thread_memories(thread_id) == memories
    assert client.get_memory(user, memories[0]["id"]) == memories[0]

    corrected = client.correct_memory(user, memories[0]["id"], "User lives in Bergen")
    assert corrected["text"] == "User lives in Bergen"
    old = client.get_memory(user, memories[0]["id"])
    assert old["status"] == "superseded", "the old fact is kept, marked"
    with pytest.raises(ConflictError) as superseded:
        client.correct_memory(user, old["id"], "again")
    assert superseded.value.code == "memory_superseded"
    assert [m["text"] for m in client.list_memories(user)["memories"]] == ["User lives in Bergen"]
    assert len(client.list_memories(user, include_superseded=True)["memories"]) == 2

    forgotten = client.forget_memory(user, corrected["id"], reason="User moved away")
    assert (forgotten["status"], forgotten["supersededReason"]) == ("superseded", "User moved away")
    assert "supersededBy" not in forgotten, "forgotten: superseded without a replacement"
    assert client.list_memories(user)["memories"] == []
    assert len(client.list_memories(user, include_superseded=True)["memories"]) == 2, "kept in history"
    with pytest.raises(ConflictError) as again:
        client.forget_memory(user, corrected["id"])
    assert again.value.code == "memory_superseded"
    with pytest.raises(NotFoundError) as unknown:
        client.forget_memory(user, "no-such-memory")
    assert (unknown.value.code, unknown.value.field) == ("unknown_memory", "memoryId")

    client.delete_memory(user, corrected["id"])
    with pytest.raises(NotFoundError) as gone:
        client.get_memory(user, corrected["id"])
    assert gone.value.code == "unknown_memory"

    erased = client.delete_user(user)
    assert erased["userId"] == user and erased["threads"] == 1 and erased["messages"] >= 2
    with pytest.raises(NotFoundError):
        client.history(thread_id)


def test_remember_a_confirmed_fact_with_provenance(client: Client, thread_id: str) -> None:
    user = thread_id + "-rem"
    client.append(thread_id, {"id": "r1", "role": "user", "content": "I always want a window seat."}, user_id=user)
    fact = "User wants a window seat"
    memory = client.remember(user, fact, thread_id=thread_id, message_ids=["r1"], tool_call_id="c1")
    assert memory["confirmation"] == "confirmed by user" and memory["extractionId"] == "user"
    assert memory["sourceThreadId"] == thread_id and memory["sourceMessageIds"] == ["r1"]
    assert memory["sourceToolCallId"] == "c1"
    assert client.remember(user, "user wants a WINDOW seat.")["id"] == memory["id"], "not stored twice"
    with pytest.raises(ValidationError) as empty:
        client.remember(user, "   ")
    assert empty.value.code == "empty_message" and empty.value.field == "text"
    with pytest.raises(NotFoundError) as unknown:
        client.remember(user, "x", thread_id=thread_id + "-none")
    assert unknown.value.code == "unknown_thread"
    assert [m["text"] for m in client.list_memories(user)["memories"]] == ["User wants a window seat"]


def test_remember_until_and_thread_lifetimes(client: Client, thread_id: str) -> None:
    user = thread_id + "-exp"
    kept = client.remember(user, "User is in Rome this week", expires_at="2999-01-01T00:00:00Z")
    assert kept["expiresAt"] == "2999-01-01T00:00:00.000Z"
    with pytest.raises(ValidationError) as past:  # it would be hidden at once
        client.remember(user, "User had a cold", expires_at="2001-01-01T00:00:00Z")
    assert past.value.field == "expiresAt"
    assert [m["id"] for m in client.list_memories(user)["memories"]] == [kept["id"]]
    with pytest.raises(ValidationError) as bad:
        client.remember(user, "x", expires_at="next week")
    assert bad.value.field == "expiresAt"
    config = client.configure_thread(thread_id, close_after_idle_ms=0, retention={"deleteAfterIdleMs": 0})
    assert config["closeAfterIdleMs"] == 0 and config["retention"] == {"deleteAfterIdleMs": 0}
    back = client.configure_thread(thread_id, close_after_idle_ms=None, retention=None)
    assert "closeAfterIdleMs" not in back and "retention" not in back
    assert client.get_thread(thread_id)["open"] is True


def test_search_memories_ranks_live_memories_by_relevance(client: Client, other_tenant: Client, thread_id: str) -> None:
    user = thread_id + "-search"
    client.append(thread_id, {"id": "s1", "role": "user", "content": "Some facts."}, user_id=user)
    allergy = client.remember(user, "User is allergic to peanuts", thread_id=thread_id)
    chocolate = client.remember(user, "User buys peanut-free chocolate for the peanut allergy")
    client.remember(user, "User lives in Oslo")

    found = client.search_memories(user, "peanut allergy")
    assert [m["id"] for m in found] == [chocolate["id"], allergy["id"]], "best first, only matches"
    assert all(m["score"] > 0 for m in found) and found[0]["score"] >= found[1]["score"]
    assert found[1]["sourceThreadId"] == thread_id
    assert [m["id"] for m in client.search_memories(user, "peanut allergy", limit=1)] == [chocolate["id"]]
    assert client.search_memories(user, "kangaroo") == []
    # A page at a time, as list_threads: pass `next` as `after`; the last page has no `next`.
    everything = client.list_memories(user)
    assert len(everything["memories"]) == 3 and "next" not in everything
    page = client.list_memories(user, limit=2)
    assert page["memories"] == everything["memories"][:2] and page["next"].startswith("~")
    assert client.list_memories(user, limit=2, after=page["next"]) == {"memories": everything["memories"][2:]}

    client.correct_memory(user, allergy["id"], "User is allergic to cashews")
    assert [m["text"] for m in client.search_memories(user, "allergic")] == ["User is allergic to cashews"]

    with pytest.raises(ValidationError) as nul:
        client.search_memories(user, "peanut\x00")
    assert (nul.value.status, nul.value.code, nul.value.field) == (400, "nul_byte", "query")
    with pytest.raises(ValidationError) as blank:
        client.search_memories(user, "  ")
    assert blank.value.field == "query"
    with pytest.raises(ValidationError) as too_many:
        client.search_memories(user, "peanut", limit=51)
    assert (too_many.value.code, too_many.value.field) == ("invalid_field", "limit")
    with pytest.raises(NotFoundError) as stranger:
        other_tenant.search_memories(user, "peanut")
    assert stranger.value.code == "unknown_user", "another tenant's user is not there"


async def test_the_async_client_remembers_searches_lists_and_deletes_memories(
    aclient: AsyncClient, thread_id: str
) -> None:
    user = thread_id + "-amem"
    await aclient.append(thread_id, {"id": "a1", "role": "user", "content": "I take the night train."}, user_id=user)
    memory = await aclient.remember(user, "User takes the night train", thread_id=thread_id, message_ids=["a1"])
    assert memory["confirmation"] == "confirmed by user" and memory["sourceMessageIds"] == ["a1"]
    assert [m["id"] for m in (await aclient.list_memories(user))["memories"]] == [memory["id"]]
    found = await aclient.search_memories(user, "night train")
    assert [m["id"] for m in found] == [memory["id"]] and found[0]["score"] > 0
    assert (await aclient.get_memory(user, memory["id"]))["text"] == "User takes the night train"
    forgotten = await aclient.forget_memory(user, memory["id"])
    assert forgotten["supersededReason"] == "forgotten by user"
    assert await aclient.list_memories(user) == {"memories": []}
    assert await aclient.delete_memory(user, memory["id"]) is None
    assert await aclient.list_memories(user) == {"memories": []}
    with pytest.raises(NotFoundError) as gone:
        await aclient.delete_memory(user, memory["id"])
    assert gone.value.code == "unknown_memory"


def recall_conversation() -> list[dict]:
    """An old fact with its date, then filler that pushes it out of a small context."""
    old = "2023-05-01T10:00:00.000Z"
    fact = {"id": "fact", "role": "user", "content": "My sister Ingrid moved to Trondheim.", "createdAt": old}
    filler = [
        {"id": f"f{i}", "role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} about the garden"}
        for i in range(60)
    ]
    return [fact, *filler]


def test_context_with_previous_keeps_the_recalled_block_in_place(client: Client, thread_id: str) -> None:
    client.append(thread_id, recall_conversation())
    first = client.context(thread_id, budget=300, query="where does Ingrid live?", previous={})
    assert first["recall"]["stable"] == {"kept": False, "why": "none", "tokens": first["recall"]["stable"]["tokens"]}
    assert any(i["threadId"] == thread_id for i in first["cache"]["recall"]["items"])
    since = 1682899200000  # 2023-05-01, as epoch milliseconds: the body carries it as the query does
    same_turn = client.context(thread_id, budget=300, query="Ingrid Trondheim", since=since, previous=first["cache"])
    assert same_turn["recall"]["stable"]["why"] == "query"  # another question at the same turn: its own block
    client.append(thread_id, [{"id": "next", "role": "user", "content": "And then?"}])
    second = client.context(thread_id, budget=300, query="Ingrid Trondheim", since=since, previous=first["cache"])
    assert second["recall"]["stable"]["kept"] is True
    assert second["cache"]["recall"] == first["cache"]["recall"]
    assert any(r["id"] == "fact" and r.get("kept") for r in second["recalled"])
    stale = client.context(thread_id, budget=300, previous={"recall": {"anchor": "elsewhere"}})
    assert stale["recall"]["stable"]["kept"] is False
    with pytest.raises(ValidationError) as bad:
        client.context(thread_id, previous={"recall": "not an object"})
    assert (bad.value.code, bad.value.field) == ("invalid_field", "previous.recall")
    # Another topic: the default minCover builds the block anew, recall_min_cover=0 keeps it.
    garden = "message 7 about the garden"
    rebuilt = client.context(thread_id, budget=300, query=garden, previous=first["cache"])
    assert rebuilt["recall"]["stable"]["kept"] is False
    kept = client.context(thread_id, budget=300, query=garden, previous=first["cache"], recall_min_cover=0)
    assert kept["recall"]["stable"]["kept"] is True


def test_context_recalls_old_history_for_a_query_and_search_history_finds_it(client: Client, thread_id: str) -> None:
    client.append(thread_id, recall_conversation())
    context = client.context(thread_id, budget=300, query="where does Ingrid live?")
    assert context["tokens"] <= 300
    hit = next(r for r in context["recalled"] if r["reason"] == "hit")
    assert (hit["id"], hit["seq"], hit["ranker"]) == ("fact", 1, "fulltext")
    assert context["recall"]["query"] == "where does Ingrid live?"
    assert any("Trondheim" in str(m["content"]) for m in context["openai"])
    off = client.context(thread_id, budget=300, query="Ingrid", recall=False)
    assert off["recalled"] == [] and "recall" not in off
    alone = client.context(thread_id, budget=300, query="Ingrid", recall_range=0)
    assert [r["id"] for r in alone["recalled"]] == ["fact"]

    hits = client.search_history(thread_id, "Ingrid Trondheim", limit=5)
    assert [(h["message"]["id"], h["seq"], h["threadId"], h["ranker"]) for h in hits] == [
        ("fact", 1, thread_id, "fulltext")
    ]
    assert hits[0]["message"]["createdAt"] == "2023-05-01T10:00:00.000Z"
    assert client.search_history(thread_id, "zeppelin") == []
    with pytest.raises(ValidationError) as bad:
        client.search_history(thread_id, "x", scope="tenant")  # type: ignore[arg-type]
    assert bad.value.field == "scope"
    with pytest.raises(ValidationError):
        client.context(thread_id, recall_range=11)

    # since/until: the fact (May 2023) is found inside its dates and not outside them.
    assert [h["message"]["id"] for h in client.search_history(thread_id, "Ingrid", since="2023-04-01")] == ["fact"]
    assert client.search_history(thread_id, "Ingrid", since="2023-06-01T00:00:00Z") == []
    assert client.search_history(thread_id, "Ingrid", until=1672531200000) == []  # 2023-01-01, epoch ms
    inside = client.context(thread_id, budget=300, query="Ingrid", since="2023-05-01", until="2023-05-02")
    assert [r["id"] for r in inside["recalled"] if r["reason"] == "hit"] == ["fact"]
    outside = client.context(thread_id, budget=300, query="Ingrid", until="2023-04-30")
    assert [r for r in outside["recalled"] if r["reason"] == "hit"] == []
    with pytest.raises(ValidationError) as bad_date:
        client.search_history(thread_id, "Ingrid", since="last tuesday")
    assert bad_date.value.field == "since"


async def test_the_async_client_searches_history(aclient: AsyncClient, thread_id: str) -> None:
    await aclient.append(thread_id, recall_conversation())
    hits = await aclient.search_history(thread_id, "Ingrid")
    assert [h["message"]["id"] for h in hits] == ["fact"]


def test_working_memory_versions_conflicts_schema_and_context(client: Client, thread_id: str) -> None:
    user = thread_id + "-wm"
    client.append(thread_id, {"id": "w1", "role": "user", "content": "Plan my trip."}, user_id=user)
    assert client.get_user_working_memory(user)["version"] == 0
    first = client.set_user_working_memory(user, "# Trip\n- window seat", 0)
    assert (first["version"], first["format"]) == (1, "markdown")
    with pytest.raises(ConflictError) as stale:
        client.set_user_working_memory(user, "lost?", 0)
    assert stale.value.code == "conflict" and stale.value.field == "version"
    assert client.get_user_working_memory(user) == first, "a refused write changes nothing"

    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    own = client.set_thread_working_memory(thread_id, {"city": "Kyoto"}, 0, schema=schema)
    assert (own["format"], own["content"], own["schema"]) == ("json", {"city": "Kyoto"}, schema)
    with pytest.raises(ValidationError) as mismatch:
        client.set_thread_working_memory(thread_id, {"town": "Kyoto"}, 1)
    assert mismatch.value.code == "schema_mismatch" and mismatch.value.field == "content"
    assert [v["version"] for v in client.thread_working_memory_versions(thread_id)["versions"]] == [1]
    assert [v["version"] for v in client.user_working_memory_versions(user, limit=5)["versions"]] == [1]

    context = client.context(thread_id)
    assert [m["id"] for m in context["messages"]] == ["working-memory", "w1"]
    assert context["workingMemory"]["threadId"] == thread_id and context["workingMemory"]["version"] == 1
    assert client.get_user_working_memory(user, resource_id="trip")["version"] == 0
