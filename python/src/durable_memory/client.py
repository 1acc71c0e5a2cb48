"""Clients of the durable-memory HTTP API on httpx: :class:`Client` (blocking) and :class:`AsyncClient`.

Both offer the same operations with the same arguments; each operation is described once, as a
:class:`_Call` (method, path, query, body), which the two clients send. Ids are the caller's (the API
keeps tenants apart by the token). Failures raise :class:`~durable_memory.errors.DurableMemoryError`
subclasses carrying the API's ``code``, ``status``, ``message`` and ``field``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, cast
from urllib.parse import quote

import httpx

from .errors import DurableMemoryError, UnavailableError, error_from_answer
from .types import (
    AppendResult,
    CompactResult,
    ContextResult,
    ErasedUser,
    HistoryPage,
    ImportResult,
    MemoryRecord,
    MessageInput,
    ThreadConfig,
    ThreadExport,
    ThreadList,
    ThreadState,
)

#: Where the API is when neither an argument nor DURABLE_MEMORY_API_URL says (what `npm start` binds).
DEFAULT_URL = "http://127.0.0.1:8080"

#: Seconds one request may take; a compaction waiting for an LLM may take the API's own bound.
DEFAULT_TIMEOUT = 60.0


class _Unset:
    """Marks an argument not given (where ``None`` means something: ``strategy=None`` resets it)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


@dataclass
class _Call:
    """One request of an operation, and how its answer becomes the result."""

    method: str
    path: str
    params: dict[str, Any] = field(default_factory=dict)
    body: Any = None
    result: Callable[[Any], Any] = lambda answer: answer


def _seg(value: str) -> str:
    """An id as one path segment."""
    return quote(value, safe="")


def _query(**values: Any) -> dict[str, Any]:
    """Query parameters without the ones not given; booleans as the API spells them."""
    return {k: ("true" if v else "false") if isinstance(v, bool) else v for k, v in values.items() if v is not None}


def _owner(user_id: str | None, resource_id: str | None) -> dict[str, str]:
    out: dict[str, str] = {}
    if user_id is not None:
        out["userId"] = user_id
    if resource_id is not None:
        out["resourceId"] = resource_id
    return out


class _Operations:
    """Every operation of the API as a :class:`_Call`; the clients send them."""

    @staticmethod
    def list_threads(user_id: str | None, prefix: str | None, after: str | None, limit: int | None) -> _Call:
        return _Call("GET", "/v1/threads", _query(userId=user_id, prefix=prefix, after=after, limit=limit))

    @staticmethod
    def get_thread(thread_id: str, sync: bool) -> _Call:
        return _Call("GET", f"/v1/threads/{_seg(thread_id)}", _query(sync=sync or None))

    @staticmethod
    def configure_thread(thread_id: str, settings: dict[str, Any]) -> _Call:
        body = {k: v for k, v in settings.items() if v is not UNSET}
        return _Call("PATCH", f"/v1/threads/{_seg(thread_id)}", body=body)

    @staticmethod
    def delete_thread(thread_id: str) -> _Call:
        return _Call("DELETE", f"/v1/threads/{_seg(thread_id)}")

    @staticmethod
    def compact(thread_id: str) -> _Call:
        return _Call("POST", f"/v1/threads/{_seg(thread_id)}/compact")

    @staticmethod
    def append(
        thread_id: str,
        messages: MessageInput | list[MessageInput],
        user_id: str | None,
        resource_id: str | None,
    ) -> _Call:
        batch = {"messages": messages} if isinstance(messages, list) else {"message": messages}
        return _Call("POST", f"/v1/threads/{_seg(thread_id)}/messages", body={**batch, **_owner(user_id, resource_id)})

    @staticmethod
    def history(thread_id: str, after: int | None, limit: int | None) -> _Call:
        return _Call("GET", f"/v1/threads/{_seg(thread_id)}/messages", _query(after=after, limit=limit))

    @staticmethod
    def retract(thread_id: str, message_id: str, reason: str | None) -> _Call:
        body: dict[str, Any] = {"messageId": message_id}
        if reason is not None:
            body["reason"] = reason
        return _Call("POST", f"/v1/threads/{_seg(thread_id)}/retractions", body=body)

    @staticmethod
    def context(thread_id: str, budget: int | None, model: str | None) -> _Call:
        return _Call("GET", f"/v1/threads/{_seg(thread_id)}/context", _query(budget=budget, model=model))

    @staticmethod
    def thread_memories(thread_id: str, include_superseded: bool) -> _Call:
        path = f"/v1/threads/{_seg(thread_id)}/memories"
        return _Call("GET", path, _query(includeSuperseded=include_superseded), result=lambda a: a["memories"])

    @staticmethod
    def list_memories(user_id: str, include_superseded: bool) -> _Call:
        path = f"/v1/users/{_seg(user_id)}/memories"
        return _Call("GET", path, _query(includeSuperseded=include_superseded), result=lambda a: a["memories"])

    @staticmethod
    def remember(
        user_id: str,
        text: str,
        thread_id: str | None,
        message_ids: list[str] | None,
        tool_call_id: str | None,
        category: str | None,
    ) -> _Call:
        given = {"threadId": thread_id, "messageIds": message_ids, "toolCallId": tool_call_id, "category": category}
        body = {"text": text, **{k: v for k, v in given.items() if v is not None}}
        return _Call("POST", f"/v1/users/{_seg(user_id)}/memories", body=body)

    @staticmethod
    def get_memory(user_id: str, memory_id: str) -> _Call:
        return _Call("GET", f"/v1/users/{_seg(user_id)}/memories/{_seg(memory_id)}")

    @staticmethod
    def correct_memory(user_id: str, memory_id: str, text: str) -> _Call:
        return _Call("PATCH", f"/v1/users/{_seg(user_id)}/memories/{_seg(memory_id)}", body={"text": text})

    @staticmethod
    def delete_memory(user_id: str, memory_id: str) -> _Call:
        return _Call("DELETE", f"/v1/users/{_seg(user_id)}/memories/{_seg(memory_id)}")

    @staticmethod
    def delete_user(user_id: str) -> _Call:
        return _Call("DELETE", f"/v1/users/{_seg(user_id)}")

    @staticmethod
    def export_thread(thread_id: str) -> _Call:
        return _Call("GET", f"/v1/threads/{_seg(thread_id)}/export")

    @staticmethod
    def import_thread(data: ThreadExport, thread_id: str | None) -> _Call:
        return _Call("POST", "/v1/threads/import", _query(threadId=thread_id), body=data)


_OPS = _Operations


def _settings(
    budget: int | None,
    model: str | None,
    strategy: Any,
    idle_ms: int | None,
    extract_every_turns: int | None,
    memory_share: float | None,
    user_id: str | None,
    resource_id: str | None,
) -> dict[str, Any]:
    """The PATCH body of configure: the settings given, as the API names them."""
    given = {
        "budget": budget,
        "model": model,
        "idleMs": idle_ms,
        "extractEveryTurns": extract_every_turns,
        "memoryShare": memory_share,
        **_owner(user_id, resource_id),
    }
    out: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    out["strategy"] = strategy  # UNSET is dropped; None returns to the default strategy
    return out


def _answer(response: httpx.Response, call: _Call) -> Any:
    """The result of a 2xx answer, or the error of any other."""
    body: Any = None
    if response.content:
        try:
            body = response.json()
        except ValueError:
            body = response.text
    if response.is_success:
        return None if response.status_code == 204 else call.result(body)
    raise error_from_answer(response.status_code, body, response.headers.get("retry-after"))


def _unreachable(err: httpx.TransportError, call: _Call) -> DurableMemoryError:
    code = "timeout" if isinstance(err, httpx.TimeoutException) else "unreachable"
    return UnavailableError(code, f"{call.method} {call.path}: {type(err).__name__}: {err}")


def _options(base_url: str | None, token: str | None) -> tuple[str, dict[str, str]]:
    url = (base_url or os.environ.get("DURABLE_MEMORY_API_URL") or DEFAULT_URL).rstrip("/")
    token = token if token is not None else os.environ.get("DURABLE_MEMORY_API_TOKEN")
    headers = {"accept": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    return url, headers


class Client:
    """A blocking client of the HTTP API.

    Args:
        base_url: Where the API is (default: ``DURABLE_MEMORY_API_URL``, else ``http://127.0.0.1:8080``).
        token: A bearer token (default: ``DURABLE_MEMORY_API_TOKEN``; none for the open local API).
        timeout: Seconds one request may take.

    Example::

        with Client("http://127.0.0.1:8080", token) as dm:
            dm.append("support-42", {"id": "q1", "role": "user", "content": "My order is late"})
            messages = dm.context("support-42", budget=8000)["openai"]
    """

    def __init__(self, base_url: str | None = None, token: str | None = None, timeout: float = DEFAULT_TIMEOUT):
        url, headers = _options(base_url, token)
        self._http = httpx.Client(base_url=url, headers=headers, timeout=timeout)

    def _send(self, call: _Call) -> Any:
        try:
            response = self._http.request(call.method, call.path, params=call.params, json=call.body)
        except httpx.TransportError as err:
            raise _unreachable(err, call) from err
        return _answer(response, call)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Threads
    def list_threads(
        self,
        *,
        user_id: str | None = None,
        prefix: str | None = None,
        after: str | None = None,
        limit: int | None = None,
    ) -> ThreadList:
        """The tenant's threads by id (of one user, or whose ids start with ``prefix``), a page at a
        time (pass ``next`` as ``after``)."""
        return cast(ThreadList, self._send(_OPS.list_threads(user_id, prefix, after, limit)))

    def get_thread(self, thread_id: str, *, sync: bool = False) -> ThreadState:
        """A thread's state; with ``sync``, once everything appended so far is indexed."""
        return cast(ThreadState, self._send(_OPS.get_thread(thread_id, sync)))

    def configure_thread(
        self,
        thread_id: str,
        *,
        budget: int | None = None,
        model: str | None = None,
        strategy: Any = UNSET,
        idle_ms: int | None = None,
        extract_every_turns: int | None = None,
        memory_share: float | None = None,
        user_id: str | None = None,
        resource_id: str | None = None,
    ) -> ThreadConfig:
        """Sets the settings given (creating the thread); ``strategy=None`` returns to the default."""
        body = _settings(budget, model, strategy, idle_ms, extract_every_turns, memory_share, user_id, resource_id)
        return cast(ThreadConfig, self._send(_OPS.configure_thread(thread_id, body)))

    def delete_thread(self, thread_id: str) -> None:
        """Deletes a thread: history, summaries, workflow, and the memories learned only from it."""
        self._send(_OPS.delete_thread(thread_id))

    def compact(self, thread_id: str) -> CompactResult:
        """Runs the thread's strategy now."""
        return cast(CompactResult, self._send(_OPS.compact(thread_id)))

    # Messages
    def append(
        self,
        thread_id: str,
        messages: MessageInput | list[MessageInput],
        *,
        user_id: str | None = None,
        resource_id: str | None = None,
    ) -> AppendResult:
        """Appends one message or a list (ours or OpenAI's), idempotent by id; creates the thread."""
        return cast(AppendResult, self._send(_OPS.append(thread_id, messages, user_id, resource_id)))

    def history(self, thread_id: str, *, after: int | None = None, limit: int | None = None) -> HistoryPage:
        """Every message ever appended, in seq order, a page at a time (pass ``next`` as ``after``)."""
        return cast(HistoryPage, self._send(_OPS.history(thread_id, after, limit)))

    def retract(self, thread_id: str, message_id: str, *, reason: str | None = None) -> AppendResult:
        """Takes a message out of the context; history keeps it, with a marker naming it."""
        return cast(AppendResult, self._send(_OPS.retract(thread_id, message_id, reason)))

    def context(self, thread_id: str, *, budget: int | None = None, model: str | None = None) -> ContextResult:
        """The memory view for the next model call, within the budget (ours and OpenAI messages)."""
        return cast(ContextResult, self._send(_OPS.context(thread_id, budget, model)))

    # Memories and users
    def thread_memories(self, thread_id: str, *, include_superseded: bool = False) -> list[MemoryRecord]:
        """The long-term memories of the thread's user, newest first."""
        return cast(list[MemoryRecord], self._send(_OPS.thread_memories(thread_id, include_superseded)))

    def list_memories(self, user_id: str, *, include_superseded: bool = False) -> list[MemoryRecord]:
        """A user's long-term memories, newest first, with provenance."""
        return cast(list[MemoryRecord], self._send(_OPS.list_memories(user_id, include_superseded)))

    def remember(
        self,
        user_id: str,
        text: str,
        *,
        thread_id: str | None = None,
        message_ids: list[str] | None = None,
        tool_call_id: str | None = None,
        category: str | None = None,
    ) -> MemoryRecord:
        """Stores a fact the user confirmed (``confirmation: confirmed by user``) with where it came from;
        an equal live fact is returned instead of stored twice. The thread must be one of the user's."""
        call = _OPS.remember(user_id, text, thread_id, message_ids, tool_call_id, category)
        return cast(MemoryRecord, self._send(call))

    def get_memory(self, user_id: str, memory_id: str) -> MemoryRecord:
        return cast(MemoryRecord, self._send(_OPS.get_memory(user_id, memory_id)))

    def correct_memory(self, user_id: str, memory_id: str, text: str) -> MemoryRecord:
        """Supersedes the memory by a new one with ``text`` (returned); the old one is kept, marked."""
        return cast(MemoryRecord, self._send(_OPS.correct_memory(user_id, memory_id, text)))

    def delete_memory(self, user_id: str, memory_id: str) -> None:
        self._send(_OPS.delete_memory(user_id, memory_id))

    def delete_user(self, user_id: str) -> ErasedUser:
        """Erases everything of a user (threads, messages, summaries, memories); says how much went."""
        return cast(ErasedUser, self._send(_OPS.delete_user(user_id)))

    # Export and import
    def export_thread(self, thread_id: str) -> ThreadExport:
        """A whole thread as JSON, for :meth:`import_thread`."""
        return cast(ThreadExport, self._send(_OPS.export_thread(thread_id)))

    def import_thread(self, data: ThreadExport, *, thread_id: str | None = None) -> ImportResult:
        """Restores an export into ``thread_id`` (default: its own id), idempotently."""
        return cast(ImportResult, self._send(_OPS.import_thread(data, thread_id)))


class AsyncClient:
    """The same operations as :class:`Client`, for asyncio (``await dm.append(...)``)."""

    def __init__(self, base_url: str | None = None, token: str | None = None, timeout: float = DEFAULT_TIMEOUT):
        url, headers = _options(base_url, token)
        self._http = httpx.AsyncClient(base_url=url, headers=headers, timeout=timeout)

    async def _send(self, call: _Call) -> Any:
        try:
            response = await self._http.request(call.method, call.path, params=call.params, json=call.body)
        except httpx.TransportError as err:
            raise _unreachable(err, call) from err
        return _answer(response, call)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def list_threads(
        self,
        *,
        user_id: str | None = None,
        prefix: str | None = None,
        after: str | None = None,
        limit: int | None = None,
    ) -> ThreadList:
        return cast(ThreadList, await self._send(_OPS.list_threads(user_id, prefix, after, limit)))

    async def get_thread(self, thread_id: str, *, sync: bool = False) -> ThreadState:
        return cast(ThreadState, await self._send(_OPS.get_thread(thread_id, sync)))

    async def configure_thread(
        self,
        thread_id: str,
        *,
        budget: int | None = None,
        model: str | None = None,
        strategy: Any = UNSET,
        idle_ms: int | None = None,
        extract_every_turns: int | None = None,
        memory_share: float | None = None,
        user_id: str | None = None,
        resource_id: str | None = None,
    ) -> ThreadConfig:
        body = _settings(budget, model, strategy, idle_ms, extract_every_turns, memory_share, user_id, resource_id)
        return cast(ThreadConfig, await self._send(_OPS.configure_thread(thread_id, body)))

    async def delete_thread(self, thread_id: str) -> None:
        await self._send(_OPS.delete_thread(thread_id))

    async def compact(self, thread_id: str) -> CompactResult:
        return cast(CompactResult, await self._send(_OPS.compact(thread_id)))

    async def append(
        self,
        thread_id: str,
        messages: MessageInput | list[MessageInput],
        *,
        user_id: str | None = None,
        resource_id: str | None = None,
    ) -> AppendResult:
        return cast(AppendResult, await self._send(_OPS.append(thread_id, messages, user_id, resource_id)))

    async def history(self, thread_id: str, *, after: int | None = None, limit: int | None = None) -> HistoryPage:
        return cast(HistoryPage, await self._send(_OPS.history(thread_id, after, limit)))

    async def retract(self, thread_id: str, message_id: str, *, reason: str | None = None) -> AppendResult:
        return cast(AppendResult, await self._send(_OPS.retract(thread_id, message_id, reason)))

    async def context(
        self, thread_id: str, *, budget: int | None = None, model: str | None = None
    ) -> ContextResult:
        return cast(ContextResult, await self._send(_OPS.context(thread_id, budget, model)))

    async def thread_memories(self, thread_id: str, *, include_superseded: bool = False) -> list[MemoryRecord]:
        return cast(list[MemoryRecord], await self._send(_OPS.thread_memories(thread_id, include_superseded)))

    async def list_memories(self, user_id: str, *, include_superseded: bool = False) -> list[MemoryRecord]:
        return cast(list[MemoryRecord], await self._send(_OPS.list_memories(user_id, include_superseded)))

    async def remember(
        self,
        user_id: str,
        text: str,
        *,
        thread_id: str | None = None,
        message_ids: list[str] | None = None,
        tool_call_id: str | None = None,
        category: str | None = None,
    ) -> MemoryRecord:
        call = _OPS.remember(user_id, text, thread_id, message_ids, tool_call_id, category)
        return cast(MemoryRecord, await self._send(call))

    async def get_memory(self, user_id: str, memory_id: str) -> MemoryRecord:
        return cast(MemoryRecord, await self._send(_OPS.get_memory(user_id, memory_id)))

    async def correct_memory(self, user_id: str, memory_id: str, text: str) -> MemoryRecord:
        return cast(MemoryRecord, await self._send(_OPS.correct_memory(user_id, memory_id, text)))

    async def delete_memory(self, user_id: str, memory_id: str) -> None:
        await self._send(_OPS.delete_memory(user_id, memory_id))

    async def delete_user(self, user_id: str) -> ErasedUser:
        return cast(ErasedUser, await self._send(_OPS.delete_user(user_id)))

    async def export_thread(self, thread_id: str) -> ThreadExport:
        return cast(ThreadExport, await self._send(_OPS.export_thread(thread_id)))

    async def import_thread(self, data: ThreadExport, *, thread_id: str | None = None) -> ImportResult:
        return cast(ImportResult, await self._send(_OPS.import_thread(data, thread_id)))
