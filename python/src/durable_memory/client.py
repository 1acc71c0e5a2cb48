"""Clients of the durable-memory HTTP API on httpx: :class:`Client` (blocking) and :class:`AsyncClient`.

Each operation is written once, in :class:`_Operations`: its signature, its documentation, and the
:class:`_Call` it makes (method, path, query, body, and how the answer becomes the result). The two
clients take their methods from there (:func:`_blocking`, :func:`_awaited`) and differ only in how a
call is sent. Ids are the caller's (the API keeps tenants apart by the token).

Return shapes follow one rule: an operation that pages (``list_threads``, ``history``,
``list_memories``) returns the API's page as it is, items and ``next`` (``{"threads": [...], "next"?}``),
because ``next`` is needed; an operation whose answer is one complete list (a thread's memories,
memory and history search hits) returns that list;
every other answer is the API's JSON object, typed by the TypedDict of its name (``types.py``,
generated from openapi.json); tests/test_shapes.py holds every operation to this. Failures raise
:class:`~durable_memory.errors.DurableMemoryError` subclasses carrying the API's ``code``, ``status``,
``message`` and ``field``.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Concatenate, Generic, Literal, ParamSpec, TypeVar, cast
from urllib.parse import quote

import httpx

from .errors import DurableMemoryError, UnavailableError, error_from_answer
from .types import (
    AppendResult,
    CompactResult,
    ContextResult,
    ErasedUser,
    ForkResult,
    HistoryPage,
    ImportResult,
    MemoryRecord,
    PromptCache,
    Retention,
    ScoredMemory,
    SearchHit,
    ServiceBinding,
    ServiceState,
    ThreadConfig,
    ThreadExport,
    ThreadList,
    UserMemoryList,
    ThreadState,
    WorkingMemory,
    WorkingMemoryVersions,
)

MessageInput = dict[str, Any]
"""A message to append: ours (``{"id", "role", "parts" | "content", "metadata"?}``) or an OpenAI
chat-completions message (``tool_calls``, ``tool_call_id``). Give ids: appends are idempotent by id.
A plain dict, so messages from other libraries pass as they are; the API checks them."""

#: Where `npm start` keeps its data when DURABLE_MEMORY_HOME does not say (relative to the working directory).
DEFAULT_HOME = ".durable-memory"

#: Seconds one request may take; a compaction waiting for an LLM may take the API's own bound.
DEFAULT_TIMEOUT = 60.0

T = TypeVar("T")
P = ParamSpec("P")


class _Unset:
    """Marks an argument not given (where ``None`` means something: ``strategy=None`` resets it)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


def _as_is(answer: Any) -> Any:
    return answer


@dataclass
class _Call(Generic[T]):
    """One request of an operation, and how its answer becomes the result (``T``)."""

    method: str
    path: str
    params: dict[str, Any] = field(default_factory=dict)
    body: Any = None
    result: Callable[[Any], T] = _as_is


def _seg(value: str) -> str:
    """An id as one path segment."""
    return quote(value, safe="")


def _query(**values: Any) -> dict[str, Any]:
    """Query parameters without the ones not given; booleans as the API spells them."""
    return {k: ("true" if v else "false") if isinstance(v, bool) else v for k, v in values.items() if v is not None}


def _given(**values: Any) -> dict[str, Any]:
    """Body fields without the ones not given (``None``, or ``UNSET`` where ``None`` means something)."""
    return {k: v for k, v in values.items() if v is not None and v is not UNSET}


def _hits(answer: Any) -> Any:
    """The hits of a history search."""
    return answer["hits"]


def _memories(answer: Any) -> Any:
    return answer["memories"]


def _working_memory_body(content: Any, version: int, format: str | None, schema: Any) -> dict[str, Any]:
    body = {"content": content, "version": version, **_given(format=format)}
    if schema is not UNSET:
        body["schema"] = schema  # None drops the schema in force
    return body


class _Operations:
    """Every operation of the API, as the :class:`_Call` it makes; the clients send them."""

    # Threads
    @staticmethod
    def list_threads(
        *,
        user_id: str | None = None,
        prefix: str | None = None,
        after: str | None = None,
        limit: int | None = None,
    ) -> _Call[ThreadList]:
        """The tenant's threads by id (of one user, or whose ids start with ``prefix``), a page at a
        time (pass ``next`` as ``after``)."""
        return _Call("GET", "/v1/threads", _query(userId=user_id, prefix=prefix, after=after, limit=limit))

    @staticmethod
    def get_thread(thread_id: str, *, sync: bool = False) -> _Call[ThreadState]:
        """A thread's state; with ``sync``, once everything appended so far is indexed."""
        return _Call("GET", f"/v1/threads/{_seg(thread_id)}", _query(sync=sync or None))

    @staticmethod
    def configure_thread(
        thread_id: str,
        *,
        budget: int | None = None,
        model: str | None = None,
        strategy: Any = UNSET,
        idle_ms: int | None = None,
        extract_every_turns: int | None = None,
        memory_share: float | None = None,
        working_memory_share: float | None = None,
        recall_share: float | None = None,
        user_id: str | None = None,
        resource_id: str | None = None,
        service: ServiceBinding | None | Any = UNSET,
        close_after_idle_ms: int | None | Any = UNSET,
        retention: Retention | None | Any = UNSET,
    ) -> _Call[ThreadConfig]:
        """Sets the settings given (creating the thread); ``strategy=None`` returns to the default;
        ``service={"kind": "openai-responses"}`` binds the thread to a provider-stored conversation,
        ``service=None`` unbinds it; ``close_after_idle_ms`` ends its workflow after that long idle and
        ``retention={"deleteAfterIdleMs": ms}`` erases it after that long idle (``None``: the worker's
        defaults)."""
        body = _given(
            budget=budget,
            model=model,
            idleMs=idle_ms,
            extractEveryTurns=extract_every_turns,
            memoryShare=memory_share,
            workingMemoryShare=working_memory_share,
            recallShare=recall_share,
            userId=user_id,
            resourceId=resource_id,
        )
        if strategy is not UNSET:
            body["strategy"] = strategy  # None returns to the default strategy
        if service is not UNSET:
            body["service"] = service  # None unbinds
        if close_after_idle_ms is not UNSET:
            body["closeAfterIdleMs"] = close_after_idle_ms  # None: the worker's default
        if retention is not UNSET:
            body["retention"] = retention  # None: the worker's default
        return _Call("PATCH", f"/v1/threads/{_seg(thread_id)}", body=body)

    @staticmethod
    def delete_thread(thread_id: str) -> _Call[None]:
        """Deletes a thread: history, summaries, workflow, and the memories learned only from it."""
        return _Call("DELETE", f"/v1/threads/{_seg(thread_id)}")

    @staticmethod
    def compact(thread_id: str) -> _Call[CompactResult]:
        """Runs the thread's strategy now."""
        return _Call("POST", f"/v1/threads/{_seg(thread_id)}/compact")

    @staticmethod
    def service_lost(thread_id: str, reason: str) -> _Call[ServiceState]:
        """The provider's stored conversation is unusable (404 or 400 for its id, ``store: false``, …):
        the next ``context(service=True)`` is the full compacted one, until a new ``response_id``."""
        return _Call("POST", f"/v1/threads/{_seg(thread_id)}/service-lost", body={"reason": reason})

    @staticmethod
    def fork_thread(thread_id: str, new_id: str, *, at: str | None = None) -> _Call[ForkResult]:
        """Forks the thread into ``new_id``: its history up to and including message ``at`` (default:
        the latest), copied with its configuration and the summaries of that part, then its own."""
        return _Call("POST", f"/v1/threads/{_seg(thread_id)}/fork", body={"id": new_id, **_given(at=at)})

    # Messages
    @staticmethod
    def append(
        thread_id: str,
        messages: MessageInput | list[MessageInput],
        *,
        user_id: str | None = None,
        resource_id: str | None = None,
        response_id: str | None = None,
        model: str | None = None,
    ) -> _Call[AppendResult]:
        """Appends one message or a list (ours or OpenAI's), idempotent by id; creates the thread.
        ``response_id``: the provider's response these messages end (a thread bound with ``service``);
        ``model``: the model that gave it (default: the thread's), as ``context(model=…)`` will name it."""
        batch: dict[str, Any] = {"messages": messages} if isinstance(messages, list) else {"message": messages}
        body = {**batch, **_given(userId=user_id, resourceId=resource_id, responseId=response_id, model=model)}
        return _Call("POST", f"/v1/threads/{_seg(thread_id)}/messages", body=body)

    @staticmethod
    def history(thread_id: str, *, after: int | None = None, limit: int | None = None) -> _Call[HistoryPage]:
        """Every message ever appended, in seq order, a page at a time (pass ``next`` as ``after``)."""
        return _Call("GET", f"/v1/threads/{_seg(thread_id)}/messages", _query(after=after, limit=limit))

    @staticmethod
    def retract(thread_id: str, message_id: str, *, reason: str | None = None) -> _Call[AppendResult]:
        """Takes a message out of the context; history keeps it, with a marker naming it."""
        body = _given(messageId=message_id, reason=reason)
        return _Call("POST", f"/v1/threads/{_seg(thread_id)}/retractions", body=body)

    @staticmethod
    def context(
        thread_id: str,
        *,
        budget: int | None = None,
        model: str | None = None,
        query: str | None = None,
        recall: bool | None = None,
        recall_scope: Literal["thread", "resource", "user"] | None = None,
        recall_range: int | None = None,
        recall_limit: int | None = None,
        recall_min_cover: float | None = None,
        recall_min_match: float | None = None,
        since: str | int | None = None,
        until: str | int | None = None,
        service: bool | None = None,
        previous: PromptCache | dict[str, Any] | None = None,
    ) -> _Call[ContextResult]:
        """The context for the next model call, within the budget (ours and OpenAI messages), with the
        history most relevant to ``query`` (default: the latest user turn) recalled; ``recall=False`` for none;
        ``since``/``until`` (ISO 8601 or epoch milliseconds; epoch seconds, as ``time.time()`` gives, are
        refused) recall only messages created within them.
        ``previous``: the previous context's ``cache`` (``{}`` the first time) keeps the recalled block in
        place for the provider's prompt cache (docs/memory-and-recall.md); sent as ``POST …/context``.
        ``recall_min_cover``: the share (0 to 1) of the query's strong hits the kept block must hold (default 0.4).
        ``recall_min_match``: recall only when an older message matches at least this share (0 to 1) of the query
        (default 0.2 for the default query, 0 for a given one)."""
        path = f"/v1/threads/{_seg(thread_id)}/context"
        options = dict(
            budget=budget,
            model=model,
            query=query,
            recall=recall,
            recallScope=recall_scope,
            recallRange=recall_range,
            recallLimit=recall_limit,
            recallMinCover=recall_min_cover,
            recallMinMatch=recall_min_match,
            since=since,
            until=until,
            service=service,
        )
        if previous is None:
            return _Call("GET", path, _query(**options))
        return _Call("POST", path, body={**_given(**options), "previous": previous})

    @staticmethod
    def search_history(
        thread_id: str,
        query: str,
        *,
        scope: Literal["thread", "resource", "user"] | None = None,
        limit: int | None = None,
        since: str | int | None = None,
        until: str | int | None = None,
    ) -> _Call[list[SearchHit]]:
        """The history messages most relevant to ``query``, best first (recall's ranking over the whole
        history); ``scope`` also searches the owner's other threads; at most ``limit`` (1–100, default 20);
        ``since``/``until`` (ISO 8601 or epoch milliseconds; epoch seconds are refused) only messages
        created within them."""
        params = _query(query=query, scope=scope, limit=limit, since=since, until=until)
        return _Call("GET", f"/v1/threads/{_seg(thread_id)}/search", params, result=_hits)

    # Memories and users
    @staticmethod
    def thread_memories(thread_id: str, *, include_superseded: bool = False) -> _Call[list[MemoryRecord]]:
        """The long-term memories of the thread's user, newest first."""
        path = f"/v1/threads/{_seg(thread_id)}/memories"
        return _Call("GET", path, _query(includeSuperseded=include_superseded), result=_memories)

    @staticmethod
    def list_memories(
        user_id: str, *, include_superseded: bool = False, after: str | None = None, limit: int | None = None
    ) -> _Call[UserMemoryList]:
        """A user's long-term memories, newest first, with provenance, a page at a time (``limit``
        1–50, default 50; pass ``next`` as ``after``)."""
        query = _query(includeSuperseded=include_superseded, after=after, limit=limit)
        return _Call("GET", f"/v1/users/{_seg(user_id)}/memories", query)

    @staticmethod
    def search_memories(user_id: str, query: str, *, limit: int | None = None) -> _Call[list[ScoredMemory]]:
        """A user's live memories sharing a word with ``query``, best first, each with its ``score``
        (as the MCP ``search`` tool ranks them); at most ``limit`` (1–50, default 10)."""
        params = _query(query=query, limit=limit)
        return _Call("GET", f"/v1/users/{_seg(user_id)}/memories", params, result=_memories)

    @staticmethod
    def remember(
        user_id: str,
        text: str,
        *,
        thread_id: str | None = None,
        message_ids: list[str] | None = None,
        tool_call_id: str | None = None,
        category: str | None = None,
        expires_at: str | None = None,
    ) -> _Call[MemoryRecord]:
        """Stores a fact the user confirmed (``confirmation: confirmed by user``) with where it came from;
        an equal live fact is returned instead of stored twice (one only learned is superseded by the
        user's word). The thread must be one of the user's.
        ``expires_at`` (ISO-8601 date and time, in the future; a past one is a ValidationError): no
        read returns it from then on."""
        body = _given(
            text=text,
            threadId=thread_id,
            messageIds=message_ids,
            toolCallId=tool_call_id,
            category=category,
            expiresAt=expires_at,
        )
        return _Call("POST", f"/v1/users/{_seg(user_id)}/memories", body=body)

    @staticmethod
    def get_memory(user_id: str, memory_id: str) -> _Call[MemoryRecord]:
        """One memory, live or superseded."""
        return _Call("GET", f"/v1/users/{_seg(user_id)}/memories/{_seg(memory_id)}")

    @staticmethod
    def correct_memory(user_id: str, memory_id: str, text: str) -> _Call[MemoryRecord]:
        """Supersedes the memory by a new one with ``text`` (returned); the old one is kept, marked."""
        return _Call("PATCH", f"/v1/users/{_seg(user_id)}/memories/{_seg(memory_id)}", body={"text": text})

    @staticmethod
    def forget_memory(user_id: str, memory_id: str, *, reason: str | None = None) -> _Call[MemoryRecord]:
        """Takes a live memory out of use without a replacement: it leaves the live memories and stays
        in history, superseded with when and ``reason`` (default ``forgotten by user``); returned as it
        is now. Not a delete (:meth:`delete_memory` is); a superseded one is a ConflictError."""
        path = f"/v1/users/{_seg(user_id)}/memories/{_seg(memory_id)}/forget"
        return _Call("POST", path, body=_given(reason=reason))

    @staticmethod
    def delete_memory(user_id: str, memory_id: str) -> _Call[None]:
        """Deletes one memory for good (memories it superseded stay superseded)."""
        return _Call("DELETE", f"/v1/users/{_seg(user_id)}/memories/{_seg(memory_id)}")

    @staticmethod
    def delete_user(user_id: str) -> _Call[ErasedUser]:
        """Erases everything of a user (threads, messages, summaries, memories); says how much went."""
        return _Call("DELETE", f"/v1/users/{_seg(user_id)}")

    # Working memory: a pinned block per user, resource or thread, replaced on the version read
    @staticmethod
    def get_user_working_memory(user_id: str, *, resource_id: str | None = None) -> _Call[WorkingMemory]:
        """A user's working memory (of one resource of theirs with ``resource_id``): its content, format,
        schema and ``version`` (0 before the first write)."""
        return _Call("GET", f"/v1/users/{_seg(user_id)}/working-memory", _query(resourceId=resource_id))

    @staticmethod
    def set_user_working_memory(
        user_id: str,
        content: Any,
        version: int,
        *,
        resource_id: str | None = None,
        format: Literal["markdown", "json"] | None = None,
        schema: dict[str, Any] | None | Any = UNSET,
    ) -> _Call[WorkingMemory]:
        """Replaces a user's working memory with ``content`` (text: Markdown; other JSON: JSON) on top of
        ``version``, the version read (0 for the first write). Raises ConflictError (``conflict``) when
        another write came first (nothing is written: read again and retry), ValidationError
        (``schema_mismatch``) for content that does not match the schema in force. ``schema`` sets a JSON
        Schema, ``None`` drops it."""
        path = f"/v1/users/{_seg(user_id)}/working-memory"
        body = _working_memory_body(content, version, format, schema)
        return _Call("PUT", path, _query(resourceId=resource_id), body=body)

    @staticmethod
    def user_working_memory_versions(
        user_id: str, *, resource_id: str | None = None, limit: int | None = None, before: int | None = None
    ) -> _Call[WorkingMemoryVersions]:
        """The versions of a user's working memory kept, newest first, a page as it is
        (``{"versions": [...], "next"?}``: pass ``next`` as ``before`` for the next page)."""
        params = _query(resourceId=resource_id, limit=limit, before=before)
        return _Call("GET", f"/v1/users/{_seg(user_id)}/working-memory/versions", params)

    @staticmethod
    def get_thread_working_memory(thread_id: str) -> _Call[WorkingMemory]:
        """A thread's own working memory (version 0 before the first write)."""
        return _Call("GET", f"/v1/threads/{_seg(thread_id)}/working-memory")

    @staticmethod
    def set_thread_working_memory(
        thread_id: str,
        content: Any,
        version: int,
        *,
        format: Literal["markdown", "json"] | None = None,
        schema: dict[str, Any] | None | Any = UNSET,
    ) -> _Call[WorkingMemory]:
        """Replaces a thread's own working memory, as :meth:`set_user_working_memory` does."""
        body = _working_memory_body(content, version, format, schema)
        return _Call("PUT", f"/v1/threads/{_seg(thread_id)}/working-memory", body=body)

    @staticmethod
    def thread_working_memory_versions(
        thread_id: str, *, limit: int | None = None, before: int | None = None
    ) -> _Call[WorkingMemoryVersions]:
        """The versions of a thread's working memory kept, newest first, a page as
        :meth:`user_working_memory_versions` answers it."""
        params = _query(limit=limit, before=before)
        return _Call("GET", f"/v1/threads/{_seg(thread_id)}/working-memory/versions", params)

    # Export and import
    @staticmethod
    def export_thread(thread_id: str) -> _Call[ThreadExport]:
        """A whole thread as JSON, for :meth:`import_thread`."""
        return _Call("GET", f"/v1/threads/{_seg(thread_id)}/export")

    @staticmethod
    def import_thread(data: ThreadExport, *, thread_id: str | None = None) -> _Call[ImportResult]:
        """Restores an export into ``thread_id`` (default: its own id), idempotently."""
        return _Call("POST", "/v1/threads/import", _query(threadId=thread_id), body=data)


_OPS = _Operations


def _as_method(method: Callable[..., Any], operation: Callable[..., Any]) -> None:
    """Gives a client's method the operation's name, documentation and signature (``self`` first)."""
    method.__name__ = method.__qualname__ = operation.__name__
    method.__doc__ = operation.__doc__
    signature = inspect.signature(operation)
    this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[this, *signature.parameters.values()],
        return_annotation=signature.return_annotation.removeprefix("_Call[").removesuffix("]"),
    )


def _blocking(operation: Callable[P, _Call[T]]) -> Callable[Concatenate[Client, P], T]:
    """The :class:`Client` method of an operation: it sends the call and returns the result."""

    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._send(operation(*args, **kwargs))

    _as_method(method, operation)
    return method


def _awaited(operation: Callable[P, _Call[T]]) -> Callable[Concatenate[AsyncClient, P], Awaitable[T]]:
    """The :class:`AsyncClient` method of an operation, to be awaited."""

    async def method(self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._send(operation(*args, **kwargs))

    _as_method(method, operation)
    return method


def _answer(response: httpx.Response, call: _Call[T]) -> T:
    """The result of a 2xx answer, or the error of any other."""
    body: Any = None
    if response.content:
        try:
            body = response.json()
        except ValueError:
            body = response.text
    if response.is_success:
        return cast(T, None) if response.status_code == 204 else call.result(body)
    raise error_from_answer(response.status_code, body, response.headers.get("retry-after"))


def _unreachable(err: httpx.TransportError, call: _Call[Any], base_url: httpx.URL) -> DurableMemoryError:
    """The error of a call that got no answer: it names the URL tried and where that address comes from."""
    code = "timeout" if isinstance(err, httpx.TimeoutException) else "unreachable"
    url = f"{str(base_url).rstrip('/')}{call.path}"
    return UnavailableError(
        code,
        f"{call.method} {url}: {type(err).__name__}: {err} (is the API running there? The address is "
        "the client's base_url, else DURABLE_MEMORY_API_URL, else the apiUrl of endpoints.json under "
        "DURABLE_MEMORY_HOME)",
    )


def _endpoints_api_url() -> str:
    """The ``apiUrl`` a running ``npm start`` wrote to ``endpoints.json`` under its home (as ``connect()``
    finds the stack): its port is 8080 only when that was free, so it is never assumed."""
    home = os.environ.get("DURABLE_MEMORY_HOME", "").strip() or DEFAULT_HOME
    path = os.path.join(os.path.abspath(home), "endpoints.json")
    try:
        with open(path, encoding="utf-8") as file:
            url = json.load(file).get("apiUrl")
    except FileNotFoundError:
        url = None
        why = f"no {path}"
    except (OSError, ValueError, AttributeError) as err:
        url = None
        why = f"{path} is unreadable ({err})"
    else:
        why = f"{path} names no apiUrl"
    if isinstance(url, str) and url:
        return url
    raise UnavailableError(
        "unreachable",
        f"where is the API? no base_url, no DURABLE_MEMORY_API_URL and {why}: pass base_url, set "
        "DURABLE_MEMORY_API_URL, or start the stack (npm start) there or point DURABLE_MEMORY_HOME at it",
    )


def _options(base_url: str | None, token: str | None) -> tuple[str, dict[str, str]]:
    url = (base_url or os.environ.get("DURABLE_MEMORY_API_URL") or _endpoints_api_url()).rstrip("/")
    token = token if token is not None else os.environ.get("DURABLE_MEMORY_API_TOKEN")
    headers = {"accept": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    return url, headers


class Client:
    """A blocking client of the HTTP API.

    Args:
        base_url: Where the API is (default: ``DURABLE_MEMORY_API_URL``, else ``apiUrl`` of the
            ``endpoints.json`` under ``DURABLE_MEMORY_HOME``, default ``./.durable-memory``).
        token: A bearer token (default: ``DURABLE_MEMORY_API_TOKEN``; none for the open local API).
        timeout: Seconds one request may take.

    Example::

        with Client() as dm:  # the API of `npm start`, from endpoints.json
            dm.append("support-42", {"id": "q1", "role": "user", "content": "My order is late"})
            messages = dm.context("support-42", budget=8000)["openai"]
    """

    def __init__(self, base_url: str | None = None, token: str | None = None, timeout: float = DEFAULT_TIMEOUT):
        url, headers = _options(base_url, token)
        self._http = httpx.Client(base_url=url, headers=headers, timeout=timeout)

    def _send(self, call: _Call[T]) -> T:
        try:
            response = self._http.request(call.method, call.path, params=call.params, json=call.body)
        except httpx.TransportError as err:
            raise _unreachable(err, call, self._http.base_url) from err
        return _answer(response, call)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    list_threads = _blocking(_OPS.list_threads)
    get_thread = _blocking(_OPS.get_thread)
    configure_thread = _blocking(_OPS.configure_thread)
    delete_thread = _blocking(_OPS.delete_thread)
    compact = _blocking(_OPS.compact)
    service_lost = _blocking(_OPS.service_lost)
    fork_thread = _blocking(_OPS.fork_thread)
    append = _blocking(_OPS.append)
    history = _blocking(_OPS.history)
    retract = _blocking(_OPS.retract)
    context = _blocking(_OPS.context)
    search_history = _blocking(_OPS.search_history)
    thread_memories = _blocking(_OPS.thread_memories)
    list_memories = _blocking(_OPS.list_memories)
    search_memories = _blocking(_OPS.search_memories)
    remember = _blocking(_OPS.remember)
    get_memory = _blocking(_OPS.get_memory)
    correct_memory = _blocking(_OPS.correct_memory)
    forget_memory = _blocking(_OPS.forget_memory)
    delete_memory = _blocking(_OPS.delete_memory)
    delete_user = _blocking(_OPS.delete_user)
    export_thread = _blocking(_OPS.export_thread)
    import_thread = _blocking(_OPS.import_thread)
    get_user_working_memory = _blocking(_OPS.get_user_working_memory)
    set_user_working_memory = _blocking(_OPS.set_user_working_memory)
    user_working_memory_versions = _blocking(_OPS.user_working_memory_versions)
    get_thread_working_memory = _blocking(_OPS.get_thread_working_memory)
    set_thread_working_memory = _blocking(_OPS.set_thread_working_memory)
    thread_working_memory_versions = _blocking(_OPS.thread_working_memory_versions)


class AsyncClient:
    """The same operations as :class:`Client`, for asyncio (``await dm.append(...)``)."""

    def __init__(self, base_url: str | None = None, token: str | None = None, timeout: float = DEFAULT_TIMEOUT):
        url, headers = _options(base_url, token)
        self._http = httpx.AsyncClient(base_url=url, headers=headers, timeout=timeout)

    async def _send(self, call: _Call[T]) -> T:
        try:
            response = await self._http.request(call.method, call.path, params=call.params, json=call.body)
        except httpx.TransportError as err:
            raise _unreachable(err, call, self._http.base_url) from err
        return _answer(response, call)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    list_threads = _awaited(_OPS.list_threads)
    get_thread = _awaited(_OPS.get_thread)
    configure_thread = _awaited(_OPS.configure_thread)
    delete_thread = _awaited(_OPS.delete_thread)
    compact = _awaited(_OPS.compact)
    service_lost = _awaited(_OPS.service_lost)
    fork_thread = _awaited(_OPS.fork_thread)
    append = _awaited(_OPS.append)
    history = _awaited(_OPS.history)
    retract = _awaited(_OPS.retract)
    context = _awaited(_OPS.context)
    search_history = _awaited(_OPS.search_history)
    thread_memories = _awaited(_OPS.thread_memories)
    list_memories = _awaited(_OPS.list_memories)
    search_memories = _awaited(_OPS.search_memories)
    remember = _awaited(_OPS.remember)
    get_memory = _awaited(_OPS.get_memory)
    correct_memory = _awaited(_OPS.correct_memory)
    forget_memory = _awaited(_OPS.forget_memory)
    delete_memory = _awaited(_OPS.delete_memory)
    delete_user = _awaited(_OPS.delete_user)
    export_thread = _awaited(_OPS.export_thread)
    import_thread = _awaited(_OPS.import_thread)
    get_user_working_memory = _awaited(_OPS.get_user_working_memory)
    set_user_working_memory = _awaited(_OPS.set_user_working_memory)
    user_working_memory_versions = _awaited(_OPS.user_working_memory_versions)
    get_thread_working_memory = _awaited(_OPS.get_thread_working_memory)
    set_thread_working_memory = _awaited(_OPS.set_thread_working_memory)
    thread_working_memory_versions = _awaited(_OPS.thread_working_memory_versions)
