"""What the API answers, as TypedDicts: the JSON itself (field names as openapi.json spells them),
so nothing is lost or renamed between the API and the caller. openapi.json is the full description.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict, Union


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


class ToolCallPart(TypedDict):
    type: Literal["tool_call"]
    callId: str
    name: str
    arguments: str


class ToolResultPart(TypedDict):
    type: Literal["tool_result"]
    callId: str
    result: str
    name: NotRequired[str]
    isError: NotRequired[bool]


class ReasoningPart(TypedDict):
    type: Literal["reasoning"]
    text: str


Part = Union[TextPart, ToolCallPart, ToolResultPart, ReasoningPart]


class Message(TypedDict):
    """A message of a thread, as the context and history show it."""

    id: str
    role: Literal["system", "user", "assistant", "tool"]
    parts: list[Part]
    createdAt: NotRequired[str]
    metadata: NotRequired[dict[str, Any]]


class StoredMessage(Message):
    """A message of history: with its sequence number, counts, and the compaction that excluded it."""

    seq: int
    tokens: int
    bytes: int
    excludedBy: NotRequired[str]


MessageInput = dict[str, Any]
"""A message to append: ours (``{"id", "role", "parts" | "content", "metadata"?}``) or an OpenAI
chat-completions message (``tool_calls``, ``tool_call_id``). Give ids: appends are idempotent by id."""


class AppendedMessage(TypedDict):
    id: str
    seq: int
    tokens: int
    duplicate: bool
    """Already stored (an idempotent retry): nothing written."""


class AppendResult(TypedDict):
    messages: list[AppendedMessage]
    announced: bool
    """False when Temporal could not be told yet: the messages are stored, the thread catches up."""


class HistoryPage(TypedDict):
    messages: list[StoredMessage]
    next: NotRequired[int]
    """Pass as ``after`` for the next page."""


class ContextWarning(TypedDict):
    code: str
    strategy: str
    message: str


class InjectedMemory(TypedDict):
    id: str
    text: str


class PromptCache(TypedDict):
    stableTokens: int
    prefixHash: str


class ContextResult(TypedDict):
    """The memory view for the next model call, within the budget."""

    messages: list[Message]
    openai: list[dict[str, Any]]
    """The same as OpenAI chat-completions messages, ready for ``chat.completions.create``."""
    tokens: int
    budget: int
    droppedOnRead: int
    cache: PromptCache
    """Where the stable prefix ends (before the memories and recalled blocks), for a prompt cache."""
    warnings: list[ContextWarning]
    memories: list[InjectedMemory]
    recalled: list[RecalledMessage]
    """History the view leaves out, recalled for the query (chronological), and why each is there."""
    recall: NotRequired[RecallReport]


class RecalledMessage(TypedDict):
    threadId: str
    seq: int
    id: str
    createdAt: str
    tokens: int
    reason: Literal["hit", "neighbour", "tool_group"]
    hitSeq: int
    score: float
    ranker: str


class RecallReport(TypedDict):
    query: str
    scope: Literal["thread", "resource", "user"]
    range: int
    maxTokens: int
    tokens: int


class HistoryHit(TypedDict):
    """A history message a search found, best first."""

    threadId: str
    seq: int
    message: StoredMessage
    score: float
    """The fused (reciprocal-rank) score: comparable within one search."""
    ranker: str
    """``fulltext``, ``embedding`` or both joined by ``+``."""


class ThreadConfig(TypedDict):
    budget: int
    model: str
    idleMs: int
    extractEveryTurns: int
    memoryShare: float
    strategy: NotRequired[dict[str, Any]]


class ThreadInfo(TypedDict):
    threadId: str
    createdAt: str
    updatedAt: str
    lastSeq: int
    messageCount: int
    userId: NotRequired[str]
    resourceId: NotRequired[str]
    config: NotRequired[ThreadConfig]


class ThreadList(TypedDict):
    threads: list[ThreadInfo]
    next: NotRequired[str]
    """Pass as ``after`` for the next page."""


class ThreadState(TypedDict):
    """A thread's state: counts, tokens, indexed seq, compactions, pending work, configuration."""

    threadId: str
    createdAt: str
    updatedAt: str
    messageCount: int
    config: ThreadConfig
    metrics: dict[str, int]
    indexedSeq: int
    buffered: int
    run: dict[str, Any]
    compactions: dict[str, Any]
    pending: dict[str, Any]
    memory: dict[str, Any]
    userId: NotRequired[str]


class CompactResult(TypedDict):
    compaction: dict[str, Any] | None
    """What the strategy did; None if compaction failed (see the state)."""


class MemoryRecord(TypedDict):
    """A long-term fact about a user, with its provenance."""

    id: str
    userId: str
    text: str
    sourceMessageIds: list[str]
    status: Literal["active", "superseded"]
    createdAt: str
    updatedAt: str
    resourceId: NotRequired[str]
    category: NotRequired[str]
    sourceThreadId: NotRequired[str]
    supersededBy: NotRequired[str]
    supersededAt: NotRequired[str]
    supersededReason: NotRequired[str]
    extractionId: NotRequired[str]
    sourceToolCallId: NotRequired[str]
    confirmation: NotRequired[str]


class ScoredMemory(MemoryRecord):
    """A memory a search found: ``score`` is its relevance to the query, higher is better."""

    score: float


class ErasedUser(TypedDict):
    userId: str
    threads: int
    messages: int
    summaries: int
    memories: int


ThreadExport = dict[str, Any]
"""A whole thread as JSON (``version``, ``thread``, ``messages``, ``compactions``, ``summaries``):
what ``export_thread`` answers and ``import_thread`` takes."""


class ImportResult(TypedDict):
    threadId: str
    imported: int
    skipped: int
