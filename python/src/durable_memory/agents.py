"""OpenAI Agents SDK (Python) sessions on a durable thread, through the HTTP API.

``DurableMemorySession(client, thread_id)`` is a ``Session`` for ``Runner.run(agent, input,
session=session)``. It maps items the way the TypeScript adapter (``durable-memory/openai-agents``)
does, so both languages see the same conversation in a thread:

- each Responses-API item is one message: user, system and assistant messages by role and text,
  function calls as tool-call parts, function outputs as tool results, reasoning as reasoning parts,
  anything else as an assistant line naming it;
- the item itself rides along in ``metadata.responsesItem``, so ``get_items()`` returns exactly what
  was added (provider ids, statuses, images, hosted tool calls). The TypeScript adapter keeps its own
  item shape (camelCase) under ``metadata.agentsItem``; each language turns the other's messages
  (and summaries, the long-term memory block, messages appended by a client) into items from parts;
- message ids come from call ids (``call:<call_id>``, ``result:<call_id>``) and provider item ids
  (``item:<id>``), so adding an item again stores it once;
- ``get_items()`` is the thread's context (compacted within the budget, the working memory as a
  system item after the system prompt and the user's memories as one right before the newest user
  message, retracted items left out), ``get_items(limit)`` its newest ``limit`` items;
- ``pop_item()`` records a retraction (history is append-only: the item stays there, marked);
- ``clear_session()`` deletes the thread;
- ``run(agent, input)`` runs an agent on the thread with recall asking about ``input`` (the SDK's
  ``Runner.run`` reads the session before it adds the input, so its recall asks about the previous
  user turn); on a thread bound to OpenAI Responses
  (``configure_thread(…, service={"kind": "openai-responses"})``) it chains the run to the latest
  recorded response (``previous_response_id``: only the items since it go out), records the run's
  ``last_response_id`` with its items, and when the provider no longer holds that response marks the
  chain lost and sends the full context instead (docs/service-stored.md).

Only the session protocol's shape is used: this module imports nothing from ``agents`` (``run``
imports its ``Runner`` when no runner is given).
"""

from __future__ import annotations

import contextvars
import copy
import json
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .client import AsyncClient, MessageInput
from .errors import NotFoundError, ValidationError
from .types import Message

if TYPE_CHECKING:
    from agents import Agent, RunResult
    from agents.items import TResponseInputItem
    from agents.memory import SessionSettings

    from .types import ContextResult

#: Where a message keeps the item it was made from (the TypeScript adapter's is ``agentsItem``).
RESPONSES_ITEM_KEY = "responsesItem"

#: Where the message a recorded response ends keeps the working memory that response's provider
#: conversation was built with (``<scope> v<version>``, '' for none), so a later run can tell it is stale.
CHAINED_WORKING_MEMORY_KEY = "chainedWorkingMemory"

#: The id of the long-term memory block, right before the context's newest user message (never popped).
MEMORY_BLOCK_ID = "long-term-memory"

#: The id of the working memory block the context pins after the system prompt (never popped).
WORKING_MEMORY_BLOCK_ID = "working-memory"

#: Largest append the API takes.
MAX_BATCH = 1000

#: Ids that name no item: chat-completions models give every item one of these placeholders.
_FAKE_IDS = {"__fake_id__", "FAKE_ID"}

#: The relevance bar recall holds the newest user turn to (``recall.minMatch``'s default, src/recall/options.ts):
#: the input ``run`` passes as the query stands in for that turn, so it is held to the same bar.
DEFAULT_MIN_MATCH = 0.2

#: The user text of the input ``DurableMemorySession.run`` is running, per session, for the contexts the
#: runner reads meanwhile (the SDK reads the session before it adds the input).
_asking: contextvars.ContextVar[tuple[DurableMemorySession, str] | None] = contextvars.ContextVar(
    "durable_memory_agents_asking", default=None
)

#: Threads whose last context cache a client keeps for stable recall; the least recently used beyond.
STABLE_RECALL_THREADS = 1000

#: The last context cache of each thread, one store per client (as the TypeScript adapters keep one
#: per ``connect()``): a session made anew for every request still finds its thread's block.
_stable_caches: weakref.WeakKeyDictionary[AsyncClient, OrderedDict[str, dict[str, Any]]] = (
    weakref.WeakKeyDictionary()
)


class DurableMemorySession:
    """A session of the OpenAI Agents SDK whose items live in a durable-memory thread.

    Args:
        client: An :class:`~durable_memory.AsyncClient` (its token decides the tenant).
        thread_id: The thread behind the session (its ``session_id``).
        user_id: Whose long-term memories the thread reads and feeds.
        resource_id: Narrows the user's memories to one resource.
        budget: Token budget of ``get_items()`` (default: the thread's configured budget).
        model: Count tokens for this model (default: the thread's model).
        session_settings: The SDK's settings; its ``limit`` applies when ``get_items`` gets none.
        stable_recall: Keep the recalled block in place from one context to the next (the stable
            recalled block, for the provider's prompt cache): the session passes the thread's last
            context ``cache`` as ``previous``, kept per client (its last 1,000 threads), so a session
            made anew for every request keeps the block too. ``True``, or ``{"minCover": 0}`` to set
            how much of a new query the kept block must cover (another key is a ValidationError).
            Default False.
    """

    def __init__(
        self,
        client: AsyncClient,
        thread_id: str,
        *,
        user_id: str | None = None,
        resource_id: str | None = None,
        budget: int | None = None,
        model: str | None = None,
        session_settings: SessionSettings | None = None,
        stable_recall: bool | dict[str, float] = False,
    ) -> None:
        self.client = client
        self.session_id = thread_id
        self.user_id = user_id
        self.resource_id = resource_id
        self.budget = budget
        self.model = model
        self.session_settings = session_settings
        if isinstance(stable_recall, dict):
            unknown = sorted(set(stable_recall) - {"minCover"})
            if unknown:
                raise ValidationError(
                    "invalid_option",
                    f"stable_recall: unknown key {unknown[0]!r} (known: minCover)",
                    field="stable_recall",
                )
        self.stable_recall = stable_recall

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The thread's context as items; with ``limit``, its newest ``limit`` items. Recall asks about
        the input of the ``run()`` this is read for; otherwise (``Runner.run(agent, input, session=…)``
        reads the session before it adds the input) about the newest stored user turn."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        asking = _asking.get()
        query = asking[1] if asking is not None and asking[0] is self else None
        items = [item for message in await self._view(query) for item in message_to_items(message)]
        if limit is None:
            return items
        return items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Appends the items, one message each, in order."""
        await self._append(items, None)

    async def pop_item(self) -> TResponseInputItem | None:
        """Takes back the newest item of the view: records a retraction (the item leaves the context
        and ``get_items()``; history keeps it, with a marker naming it)."""
        view = [m for m in await self._view() if m["id"] not in (MEMORY_BLOCK_ID, WORKING_MEMORY_BLOCK_ID)]
        if not view:
            return None
        last = view[-1]
        await self.client.retract(self.session_id, last["id"], reason="popItem")
        return message_to_items(last)[-1]

    async def clear_session(self) -> None:
        """Erases the thread (history, summaries, workflow); the next item starts it afresh."""
        try:
            await self.client.delete_thread(self.session_id)
        except NotFoundError as err:
            if err.code != "unknown_thread":
                raise

    async def run(
        self,
        agent: Agent[Any],
        input: str | list[TResponseInputItem],
        *,
        runner: Any = None,
        **run_kwargs: Any,
    ) -> RunResult:
        """Runs ``agent`` on the thread (``runner``: the SDK's ``Runner`` unless given; ``run_kwargs``
        go to ``runner.run``, e.g. ``run_config``).

        On a thread not bound to a provider-stored conversation this is ``runner.run(agent, input,
        session=self)``. On one bound to OpenAI Responses, the run chains to the latest recorded
        response with ``previous_response_id`` and sends only the items since it (anything appended
        meanwhile, then ``input``); the turn's items are appended with the run's ``last_response_id``.
        Without a usable chain (none recorded yet, lost, expired, the model changed) the full context
        goes out and its response starts a new chain. When the provider answers 404 or 400 naming the
        chained response, the chain is marked lost (``service_lost``) and the run made again with the
        full context. When the working memory the context pins is not the one the chained response was
        recorded with (someone wrote it between runs), the chain is marked lost too and the full context
        goes out, the new working memory pinned. Either way recall asks about this input's user text,
        not the previous user turn.
        """
        if runner is None:
            from agents import Runner as runner  # noqa: N813 (the SDK's class, loaded only to run)
        query = _user_text_of(input)
        context = await self._context(service=True, query=query)
        if context is None or context.get("serviceSkipped") == "not_bound":
            token = _asking.set(None if query is None else (self, query))
            try:
                return await runner.run(agent, input, session=self, **run_kwargs)
            finally:
                _asking.reset(token)
        turn: list[Any] = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        # The working memory this run's context pins: its own report, else (none, or a share of 0) a read.
        report = context.get("workingMemory")
        pinned = _pinned_key(report) if report is not None else await self._pinned_working_memory()
        chain = context.get("service")
        if chain is not None:
            built_with = await self._chained_working_memory(chain["afterSeq"])
            if built_with is not None and built_with != pinned:
                change = f"{built_with or 'none'} to {pinned or 'none'}"
                reason = f"working memory changed since the chained response ({change})"
                await self.client.service_lost(self.session_id, reason)
                chain = None
        if chain is not None:
            previous = chain["previousResponseId"]
            try:
                # `input` of the chain is already in the Responses shape the SDK sends.
                chained = [*chain["input"], *turn]
                result = await runner.run(agent, chained, previous_response_id=previous, **run_kwargs)
            except Exception as err:
                reason = chain_gone(err, previous)
                if reason is None:
                    raise
                await self.client.service_lost(self.session_id, reason)
            else:
                return await self._record(turn, result, pinned)
        # The context read beside the chain is the full compacted one: the provider gets it all.
        full = [item for message in context["messages"] for item in message_to_items(message)]
        return await self._record(turn, await runner.run(agent, [*full, *turn], **run_kwargs), pinned)

    async def _record(self, turn: list[Any], result: RunResult, pinned: str) -> RunResult:
        """Appends a run's input and output, the provider's response id with them. Tool outputs after the
        last model call (a run that stops at a tool) are not in the provider's conversation: they are
        appended after the id, so the next turn sends them. When the working memory the context pins is
        no longer ``pinned`` (the one the run started with: a tool, or anyone, wrote it meanwhile), the
        chain is marked lost, so the next turn sends the full context with the new one pinned after the
        system prompt: a chained turn would leave the provider's conversation with the old one."""
        items = [*turn, *(item.to_input_item() for item in result.new_items)]
        covered = len(items)
        while covered > 0 and _is_tool_output(items[covered - 1]):
            covered -= 1
        await self._append(items[:covered], result.last_response_id, pinned)
        await self._append(items[covered:], None)
        if covered > 0 and result.last_response_id:
            now = await self._pinned_working_memory()
            if now != pinned:
                reason = f"working memory changed during the run ({pinned or 'none'} to {now or 'none'})"
                await self.client.service_lost(self.session_id, reason)
        return result

    async def _pinned_working_memory(self) -> str:
        """Which working memory the thread's context pins, as ``<scope> v<version>`` (the first written of
        the thread's own, its user's for its resource, its user's), or '' when none has been written."""
        user_id = (await self.client.get_thread(self.session_id)).get("userId", self.user_id)
        client, thread_id, resource_id = self.client, self.session_id, self.resource_id
        reads: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
            (thread_id, lambda: client.get_thread_working_memory(thread_id))
        ]
        if user_id is not None:
            if resource_id is not None:
                scope = f"{user_id}/{resource_id}"
                reads.append((scope, lambda: client.get_user_working_memory(user_id, resource_id=resource_id)))
            reads.append((user_id, lambda: client.get_user_working_memory(user_id)))
        for scope, read in reads:
            version = (await read())["version"]
            if version > 0:
                return f"{scope} v{version}"
        return ""

    async def _chained_working_memory(self, seq: int) -> str | None:
        """The working memory the chained response ending at ``seq`` was built with; None when its
        message does not say (recorded by another client)."""
        page = await self.client.history(self.session_id, after=seq - 1, limit=1)
        messages = [m for m in page["messages"] if m["seq"] == seq]
        mark = (messages[0].get("metadata") or {}).get(CHAINED_WORKING_MEMORY_KEY) if messages else None
        return mark if isinstance(mark, str) else None

    async def _append(self, items: list[Any], response_id: str | None, pinned: str = "") -> None:
        """Appends items in batches; the response id goes with the last one, which keeps ``pinned`` (the
        working memory the response's conversation was built with)."""
        messages = [item_to_message(item) for item in items]
        if response_id is not None and messages:
            last_message = messages[-1]
            last_message["metadata"] = {**last_message.get("metadata", {}), CHAINED_WORKING_MEMORY_KEY: pinned}
        for start in range(0, len(messages), MAX_BATCH):
            last = start + MAX_BATCH >= len(messages)
            await self.client.append(
                self.session_id,
                messages[start : start + MAX_BATCH],
                user_id=self.user_id,
                resource_id=self.resource_id,
                response_id=response_id if last else None,
                # Recorded under the session's model, the one its contexts ask for, so the next run chains.
                model=self.model if last and response_id is not None else None,
            )

    async def _view(self, query: str | None = None) -> list[Message]:
        """The context's messages; none for a thread that does not exist yet."""
        context = await self._context(query=query)
        return [] if context is None else context["messages"]

    async def _context(self, *, service: bool | None = None, query: str | None = None) -> ContextResult | None:
        """The thread's context (with its provider chain when asked); None for a thread not yet started.
        A ``query`` (the input being run) stands in for the newest user turn, held to the same bar."""
        extra: dict[str, Any] = {}
        if query is not None:
            extra["query"] = query
            extra["recall_min_match"] = DEFAULT_MIN_MATCH
        caches = _stable_caches.setdefault(self.client, OrderedDict()) if self.stable_recall else None
        if caches is not None:
            extra["previous"] = caches.get(self.session_id, {})  # {} before the first
            if isinstance(self.stable_recall, dict) and "minCover" in self.stable_recall:
                extra["recall_min_cover"] = self.stable_recall["minCover"]
        try:
            context = await self.client.context(
                self.session_id, budget=self.budget, model=self.model, service=service, **extra
            )
            if caches is not None:
                caches.pop(self.session_id, None)
                caches[self.session_id] = dict(context["cache"])
                if len(caches) > STABLE_RECALL_THREADS:
                    caches.popitem(last=False)
            return context
        except NotFoundError as err:
            if err.code == "unknown_thread":
                return None
            raise


def _pinned_key(report: Any) -> str:
    """A context's pinned working memory as ``<scope> v<version>`` (its owner ids joined by '/')."""
    if report.get("threadId") is not None:
        scope = report["threadId"]
    else:
        scope = "/".join(i for i in (report.get("userId"), report.get("resourceId")) if i is not None)
    return f"{scope} v{report['version']}"


def chain_gone(err: object, response_id: str) -> str | None:
    """Why the provider's error means the chained response is gone (the reason ``service_lost``
    records), or None for any other failure. Only a 404 or 400 naming the response (or the
    ``previous_response_id`` parameter) counts: a 404 for an unknown model must not drop the chain."""
    status = getattr(err, "status_code", None)
    if status not in (404, 400):
        return None
    message = getattr(err, "message", None)
    named = getattr(err, "param", None) == "previous_response_id" or (
        isinstance(message, str) and response_id in message
    )
    if not named:
        return None
    code = getattr(err, "code", None)
    return f"provider answered {status}" + (f" {code}" if isinstance(code, str) else "")


def _user_text_of(input: str | list[Any]) -> str | None:
    """The user text of a run's input (what recall asks about), or None when it has none."""
    if isinstance(input, str):
        texts = [input]
    else:
        texts = []
        for item in input:
            plain = _plain(item)
            if plain.get("type", "message") == "message" and plain.get("role") == "user":
                texts.extend(_texts_of(plain.get("content")))
    text = "\n".join(t for t in texts if t.strip() != "")
    return text or None


def _is_tool_output(item: Any) -> bool:
    """Items a tool's run produced (as opposed to what a model said)."""
    kind = item.get("type") if isinstance(item, dict) else getattr(item, "type", None)
    return isinstance(kind, str) and kind.endswith("_output")


def _plain(item: Any) -> dict[str, Any]:
    """The item as plain JSON (what the store keeps); pydantic models as the SDK would send them."""
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        item = dump(exclude_unset=True, mode="json")
    plain: dict[str, Any] = json.loads(json.dumps(item))
    return plain


def _texts_of(content: Any) -> list[str]:
    """Text of the text-like entries of an item's content (``input_text``, ``output_text``, ``refusal``, …)."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    out: list[str] = []
    for entry in content:
        if not isinstance(entry, dict):
            continue
        for key in ("text", "refusal", "transcript"):
            if isinstance(entry.get(key), str):
                out.append(entry[key])
                break
    return out


def _or_placeholder(texts: list[str], what: str) -> str:
    """Our parts' text, or a placeholder naming the item when it has none (images, encrypted reasoning)."""
    text = "\n".join(t for t in texts if t != "")
    return text if text != "" else f"[{what}]"


def _message_id_for(item: dict[str, Any]) -> str:
    """A message id for an item: stable where the item identifies itself, so re-adding stores it once."""
    kind = item.get("type")
    call_id = item.get("call_id")
    if kind == "function_call" and isinstance(call_id, str):
        return f"call:{call_id}"
    if kind == "function_call_output" and isinstance(call_id, str):
        return f"result:{call_id}"
    item_id = item.get("id")
    if isinstance(item_id, str) and item_id != "" and item_id not in _FAKE_IDS:
        return f"item:{item_id}"
    return str(uuid.uuid4())


def item_to_message(item: TResponseInputItem | dict[str, Any]) -> MessageInput:
    """One item as one message of ours, the item itself kept in metadata for a lossless return."""
    original = _plain(item)
    base: dict[str, Any] = {"id": _message_id_for(original), "metadata": {RESPONSES_ITEM_KEY: original}}
    kind = original.get("type", "message")
    if kind == "message":
        role = str(original.get("role"))
        text = _or_placeholder(_texts_of(original.get("content")), f"{role} message without text")
        return {**base, "role": role if role in ("assistant", "system") else "user", "content": text}
    if kind == "function_call":
        part = {
            "type": "tool_call",
            "callId": original.get("call_id"),
            "name": original.get("name"),
            "arguments": original.get("arguments"),
        }
        return {**base, "role": "assistant", "parts": [part]}
    if kind == "function_call_output":
        output = original.get("output")
        entries = output if isinstance(output, list) else [output]
        result = output if isinstance(output, str) else _or_placeholder(_texts_of(entries), "function output without text")
        part = {"type": "tool_result", "callId": original.get("call_id"), "result": result}
        if original.get("status") == "incomplete":
            part["isError"] = True
        return {**base, "role": "tool", "parts": [part]}
    if kind == "reasoning":
        texts = _texts_of(original.get("summary")) + _texts_of(original.get("content"))
        part = {"type": "reasoning", "text": _or_placeholder(texts, "reasoning")}
        return {**base, "role": "assistant", "parts": [part]}
    # Hosted tool calls, computer and shell calls, compaction and unknown items: kept whole in
    # metadata, with a line naming them as the text the thread's compaction and summaries see.
    name = f" {original['name']}" if isinstance(original.get("name"), str) else ""
    return {**base, "role": "assistant", "content": f"[{kind}{name}]"}


def message_to_items(message: Message) -> list[TResponseInputItem]:
    """A message as items: the original item when it has one, else one item per part."""
    original = (message.get("metadata") or {}).get(RESPONSES_ITEM_KEY)
    if isinstance(original, dict):
        return [copy.deepcopy(original)]  # type: ignore[list-item]
    parts = message["parts"]
    text = "\n".join(p["text"] for p in parts if p["type"] == "text")
    if message["role"] == "system":
        return [{"role": "system", "content": text}]
    if message["role"] == "user":
        return [{"role": "user", "content": text}]
    items: list[dict[str, Any]] = []
    for p in parts:
        if p["type"] == "reasoning":
            items.append({"type": "reasoning", "summary": [{"type": "summary_text", "text": p["text"]}]})
        elif p["type"] == "tool_call":
            items.append(
                {
                    "type": "function_call",
                    "call_id": p["callId"],
                    "name": p["name"],
                    "arguments": p["arguments"],
                    "status": "completed",
                }
            )
        elif p["type"] == "tool_result":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": p["callId"],
                    "output": p["result"],
                    "status": "incomplete" if p.get("isError") else "completed",
                }
            )
    if text != "":
        # Text before tool calls, as the model said it; after reasoning.
        at = next((i for i, item in enumerate(items) if item.get("type") != "reasoning"), len(items))
        items.insert(at, {"role": "assistant", "content": text})
    return items  # type: ignore[return-value]
