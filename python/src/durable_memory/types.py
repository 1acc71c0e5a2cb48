"""What the API answers, as TypedDicts: the JSON itself (field names as openapi.json spells them),
so nothing is lost or renamed between the API and the caller.

Generated from openapi.json by scripts/python-types.ts (`npm run gen:python-types`): do not edit.
Each type comes after the types it uses, so the annotations are evaluated (`NotRequired` included).
"""

from typing import Any, Literal, NotRequired, TypedDict


class ErrorDetail(TypedDict):
    code: str
    """Machine-readable, stable: decide by it, never by the message."""
    message: str
    field: NotRequired[str]
    """The offending input, e.g. `messages[3]`, `budget`, `id`."""


class Error(TypedDict):
    error: ErrorDetail


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


class ToolCallPart(TypedDict):
    type: Literal["tool_call"]
    callId: str
    name: str
    arguments: str
    """JSON text."""


class ToolResultPart(TypedDict):
    type: Literal["tool_result"]
    callId: str
    name: NotRequired[str]
    result: str
    isError: NotRequired[bool]


class ReasoningPart(TypedDict):
    type: Literal["reasoning"]
    text: str


Part = TextPart | ToolCallPart | ToolResultPart | ReasoningPart


class Message(TypedDict):
    id: str
    role: Literal["system", "user", "assistant", "tool"]
    parts: list[Part]
    createdAt: NotRequired[str]
    metadata: NotRequired[dict[str, Any]]
    """Free-form metadata, kept as given (OpenAI `name` lands in `metadata.name`)."""


class StoredMessage(TypedDict):
    id: str
    role: Literal["system", "user", "assistant", "tool"]
    parts: list[Part]
    createdAt: str
    """ISO-8601; the time it was stored when the caller gave none."""
    metadata: NotRequired[dict[str, Any]]
    """Free-form metadata, kept as given (OpenAI `name` lands in `metadata.name`)."""
    seq: int
    """Position in the history, 1-based, gap-free."""
    tokens: int
    """Counted once, at append, with the thread's model."""
    bytes: int
    excludedBy: NotRequired[str]
    """The compaction that excluded it from the view; absent while included."""


class ServiceBinding(TypedDict):
    kind: Literal["openai-responses"]
    """`openai-responses`: OpenAI Responses with `store: true` and `previous_response_id`."""
    maxAgeMs: NotRequired[int]
    """A response older than this is not chained to (default: 29 days)."""


class Retention(TypedDict):
    deleteAfterIdleMs: int
    """Erase the thread (as delete does) after this long idle; 0: keep it for ever."""


class ThreadConfig(TypedDict):
    budget: int
    """Tokens of the context: summaries, view and blocks."""
    model: str
    """Picks the tokenizer."""
    strategy: NotRequired[dict[str, Any]]
    """A compaction strategy as data (see the README: truncation, slidingWindow, pipeline, …)."""
    idleMs: int
    """Background work after this long without a message (0: off)."""
    extractEveryTurns: int
    """Memory extraction after this many new user turns (0: off)."""
    memoryShare: float
    workingMemoryShare: NotRequired[float]
    """Share of the budget the pinned working memory may take (over it, it is cut)."""
    recallShare: NotRequired[float]
    """Share of the budget recalled history may take in the context (unused share goes to the
    view)."""
    service: NotRequired[ServiceBinding]
    closeAfterIdleMs: NotRequired[int]
    """The thread's workflow ends after this long without an append or a command (0: never;
    absent: the worker's default)."""
    retention: NotRequired[Retention]


class ForkedFrom(TypedDict):
    """The thread and message this thread was forked from."""

    threadId: str
    """The thread it was forked from."""
    messageId: str
    """The last message it shares with that thread."""
    seq: int
    """That message’s seq, in both threads."""


class ThreadInfo(TypedDict):
    threadId: str
    userId: NotRequired[str]
    resourceId: NotRequired[str]
    createdAt: str
    updatedAt: str
    """Last append or configuration change."""
    lastSeq: int
    messageCount: int
    config: NotRequired[dict[str, Any]]
    forkedFrom: NotRequired[ForkedFrom]
    """The thread and message this thread was forked from."""
    open: NotRequired[bool]
    """In thread lists: whether the thread's workflow runs (false: closed after idling, started
    again by the next append or command). Absent when Temporal did not answer."""


class Compaction(TypedDict):
    id: str
    strategy: str
    excludedGroups: int
    summaries: int
    includedTokensBefore: int
    includedTokensAfter: int
    upToSeq: int
    warnings: list[str]


class MemoryRecord(TypedDict):
    id: str
    """Opaque; use it as given in the memory routes."""
    userId: str
    resourceId: NotRequired[str]
    text: str
    category: NotRequired[str]
    sourceThreadId: NotRequired[str]
    """The thread it was learned in."""
    sourceMessageIds: list[str]
    status: Literal["active", "superseded"]
    supersededBy: NotRequired[str]
    supersededAt: NotRequired[str]
    supersededReason: NotRequired[str]
    createdAt: str
    updatedAt: str
    extractionId: NotRequired[str]
    """`user` for what the user said: a correction or a remembered fact."""
    sourceToolCallId: NotRequired[str]
    """The tool call that recorded it."""
    confirmation: NotRequired[str]
    """`confirmed by user` for a remembered fact; absent for extracted ones."""
    expiresAt: NotRequired[str]
    """When it expires (absent: never); no read returns it from then on."""


class ScoredMemory(TypedDict):
    id: str
    """Opaque; use it as given in the memory routes."""
    userId: str
    resourceId: NotRequired[str]
    text: str
    category: NotRequired[str]
    sourceThreadId: NotRequired[str]
    """The thread it was learned in."""
    sourceMessageIds: list[str]
    status: Literal["active", "superseded"]
    supersededBy: NotRequired[str]
    supersededAt: NotRequired[str]
    supersededReason: NotRequired[str]
    createdAt: str
    updatedAt: str
    extractionId: NotRequired[str]
    """`user` for what the user said: a correction or a remembered fact."""
    sourceToolCallId: NotRequired[str]
    """The tool call that recorded it."""
    confirmation: NotRequired[str]
    """`confirmed by user` for a remembered fact; absent for extracted ones."""
    expiresAt: NotRequired[str]
    """When it expires (absent: never); no read returns it from then on."""
    score: NotRequired[float]
    """Relevance to the `query`, higher is better; only in a search."""


class IncludedCounts(TypedDict):
    includedTokens: int
    includedMessages: int
    includedGroups: int


class CompactionStep(TypedDict):
    strategy: str
    action: Literal["exclude", "summarize", "collapse"]
    reason: str
    groupIds: list[str]
    messageIds: list[str]
    summary: NotRequired[Any]
    """The body-free meta of the summary it inserted."""
    before: IncludedCounts
    after: IncludedCounts


class CompactionWarning(TypedDict):
    code: str
    strategy: str
    message: str


class StoredSummary(TypedDict):
    message: Message
    tokens: int
    positionSeq: int
    model: NotRequired[str]
    inputTokens: NotRequired[int]
    outputTokens: NotRequired[int]


class StoredCompaction(TypedDict):
    id: str
    threadId: str
    strategy: str
    reason: str
    steps: list[CompactionStep]
    warnings: list[CompactionWarning]
    upToSeq: int
    includedTokensBefore: int
    includedTokensAfter: int
    excludedMessageIds: list[str]
    supersededSummaryIds: list[str]
    summaries: list[StoredSummary]
    llm: NotRequired[str]
    createdAt: NotRequired[str]


class SummaryRecord(TypedDict):
    message: Message
    tokens: int
    positionSeq: int
    model: NotRequired[str]
    inputTokens: NotRequired[int]
    outputTokens: NotRequired[int]
    compactionId: str
    supersededBy: NotRequired[str]


class ExportedWorkingMemory(TypedDict):
    """The thread's working memory, its latest version (absent: none, or an export made before
    working memories were exported). Import restores it as the thread's version 1 unless the
    thread has one already."""

    format: Literal["markdown", "json"]
    content: Any
    """Markdown text, or the JSON value."""
    schema: NotRequired[dict[str, Any]]
    """The JSON Schema the content matches."""
    version: int
    """Its version in the exported thread."""
    updatedAt: NotRequired[str]
    """When that version was written."""


class ThreadExport(TypedDict):
    version: Literal[1]
    thread: ThreadInfo
    messages: list[StoredMessage]
    compactions: list[StoredCompaction]
    summaries: list[SummaryRecord]
    memories: NotRequired[list[Any]]
    """Ignored on import; never exported."""
    workingMemory: NotRequired[ExportedWorkingMemory]
    """The thread's working memory, its latest version (absent: none, or an export made before
    working memories were exported). Import restores it as the thread's version 1 unless the
    thread has one already."""


class AppendedMessage(TypedDict):
    id: str
    seq: int
    tokens: int
    duplicate: bool
    """Already stored (an idempotent retry): nothing written."""


class AppendResult(TypedDict):
    """Stored (or already there): one entry per message, in input order."""

    messages: list[AppendedMessage]
    announced: bool
    """False when Temporal could not be told yet: the messages are stored, the thread catches
    up."""


class HistoryPage(TypedDict):
    """A page of history, in seq order."""

    messages: list[StoredMessage]
    next: NotRequired[int]
    """Pass as `after` for the next page."""


class BudgetSplit(TypedDict):
    """How the budget splits: tokens of each part of the context."""

    system: int
    """The system prompt (leading system messages)."""
    working: int
    """The pinned working memory."""
    summaries: int
    """Summaries standing for older history."""
    memories: int
    """The long-term memories block."""
    recalled: int
    """The recalled-history block: only the room the view leaves, its `recallShare` at most."""
    recent: int
    """The view's recent messages."""
    free: int
    """Budget left unused (0 when over it)."""


class PromptCache(TypedDict):
    """Where the stable prefix ends, for a provider's prompt cache."""

    stableTokens: int
    """Tokens of the stable prefix (where a cache breakpoint belongs)."""
    prefixHash: str
    """SHA-256 of the stable prefix’s messages: equal between two calls when the prefix is."""
    recall: NotRequired[dict[str, Any]]
    """The stable recalled block, for the next context (`previous`): opaque, pass it back as it
    came."""


class ContextWarning(TypedDict):
    code: str
    strategy: str
    message: str


class InjectedMemory(TypedDict):
    id: str
    text: str


class RecalledMessage(TypedDict):
    threadId: str
    seq: int
    id: str
    createdAt: str
    tokens: int
    reason: Literal["hit", "neighbour", "tool_group"]
    """A hit of the search, a neighbour of one, or a member of a hit’s tool-call group."""
    hitSeq: int
    """The hit that brought it (its own seq for a hit)."""
    score: float
    """The hit's fused (reciprocal-rank) score."""
    ranker: str
    """Which ranker found the hit: `fulltext`, `embedding`, or both joined by `+`."""
    rankers: list[str]
    kept: NotRequired[bool]
    """In the stable recalled block that the previous context built, kept in place."""


class StableRecallReport(TypedDict):
    """The stable recalled block (with `previous`)."""

    kept: bool
    """The previous context's recalled block was kept in place."""
    why: NotRequired[Literal["none", "budget", "moved", "gone", "over", "query", "stale"]]
    """Why it was built anew."""
    cover: NotRequired[float]
    """Share of the query's strong hits in the previous block."""
    tokens: int
    """Tokens of the stable block; the volatile block has the rest."""


class RecallReport(TypedDict):
    """What recall did; absent when it was off."""

    query: str
    scope: str
    range: int
    maxTokens: int
    """Tokens the recalled block could take."""
    tokens: int
    """Tokens it took."""
    match: NotRequired[float]
    """How much of the query the best full-text hit outside the view matches (0 for none): below
    `recall.minMatch` nothing is recalled."""
    stable: NotRequired[StableRecallReport]
    """The stable recalled block (with `previous`)."""


class ServiceContext(TypedDict):
    previousResponseId: str
    """Send as `previous_response_id`."""
    input: list[dict[str, Any]]
    """The messages since that response, as Responses API input items."""
    afterSeq: int
    """Seq of the last message the response covers."""


class WorkingMemoryReport(TypedDict):
    """The working memory pinned right after the system prompt: the thread's own, else its
    user's for its resource, else its user's."""

    userId: NotRequired[str]
    resourceId: NotRequired[str]
    threadId: NotRequired[str]
    version: int
    format: Literal["markdown", "json"]
    tokens: int
    """Tokens it took (0 when not even its start fit)."""
    maxTokens: int
    """Its share of the budget (`workingMemoryShare`)."""
    truncated: bool
    """Cut to fit its share (a marker at its end says so)."""


class ContextResult(TypedDict):
    """The context within the budget."""

    messages: list[Message]
    openai: list[dict[str, Any]]
    tokens: int
    budget: int
    split: BudgetSplit
    """How the budget splits: tokens of each part of the context."""
    droppedOnRead: int
    """Groups dropped on read because compaction had not caught up."""
    cache: PromptCache
    """Where the stable prefix ends, for a provider's prompt cache."""
    warnings: list[ContextWarning]
    memories: list[InjectedMemory]
    """Long-term memories injected, most relevant first."""
    recalled: list[RecalledMessage]
    """History messages recalled into the context (one block after the memories, right before
    the newest user message), chronological."""
    recall: NotRequired[RecallReport]
    """What recall did; absent when it was off."""
    service: NotRequired[ServiceContext]
    serviceSkipped: NotRequired[Literal["not_bound", "no_response", "lost", "expired", "model_changed", "working_memory_changed"]]
    """Why `service` is absent: `not_bound`, `no_response` (none recorded yet), `lost`
    (`serviceLost`), `expired` (older than `maxAgeMs`), `model_changed` (the model of the
    context, else of the thread, is not the one the response was appended for),
    `working_memory_changed` (the working memory the context pins was written since the response
    was recorded: the full context pins the new one)."""
    workingMemory: NotRequired[WorkingMemoryReport]
    """The working memory pinned right after the system prompt: the thread's own, else its
    user's for its resource, else its user's."""


class SearchHit(TypedDict):
    threadId: str
    seq: int
    message: StoredMessage
    score: float
    """The fused (reciprocal-rank) score: comparable within one search."""
    ranker: str
    """Which ranker found it: `fulltext`, `embedding`, or both joined by `+`."""


class SearchResult(TypedDict):
    """History messages, best first."""

    hits: list[SearchHit]


class ThreadList(TypedDict):
    """A page of threads, ordered by id."""

    threads: list[ThreadInfo]
    next: NotRequired[str]
    """Pass as `after` for the next page."""


class ThreadMetrics(TypedDict):
    includedTokens: int
    includedMessages: int
    includedGroups: int
    includedTurns: int
    includedToolCallGroups: int
    includedNonSystemGroups: int
    totalTokens: int
    totalMessages: int
    totalGroups: int
    totalTurns: int
    totalToolCallGroups: int


class ExtractionSummary(TypedDict):
    id: str
    fromSeq: int
    toSeq: int
    added: int
    superseded: int
    duplicates: int
    model: str


class ExtractionProgress(TypedDict):
    """How far memory extraction got: reading the thread for long-term memories."""

    extractedSeq: int
    turnsSince: int
    lastAppendAt: float
    """When the last message was appended (ms since the epoch; a run opened again starts from
    the newest stored message; 0: none yet)"""
    extractions: int
    failedAt: NotRequired[int]
    lastExtraction: NotRequired[ExtractionSummary]


class EmbeddingProgress(TypedDict):
    """The embedding lane (recall by meaning), when an embedding model is configured."""

    model: NotRequired[str]
    """The worker's embedding model (absent: embeddings off)."""
    embeddedSeq: int
    """Every message up to this seq has a vector of the model."""
    runs: int
    messages: int
    memories: int
    failedAt: NotRequired[int]


class ServiceLostMark(TypedDict):
    reason: str
    at: str


class ServiceResponse(TypedDict):
    seq: int
    responseId: str
    model: str
    recordedAt: str
    lost: NotRequired[ServiceLostMark]


class ServiceState(TypedDict):
    kind: Literal["openai-responses"]
    response: NotRequired[ServiceResponse]
    usable: bool
    """Whether the next `context?service=true` chains to it."""
    skipped: NotRequired[Literal["not_bound", "no_response", "lost", "expired", "model_changed", "working_memory_changed"]]
    """Why `service` is absent: `not_bound`, `no_response` (none recorded yet), `lost`
    (`serviceLost`), `expired` (older than `maxAgeMs`), `model_changed` (the model of the
    context, else of the thread, is not the one the response was appended for),
    `working_memory_changed` (the working memory the context pins was written since the response
    was recorded: the full context pins the new one)."""


class ActivityRetry(TypedDict):
    """Background work that failed and that Temporal is retrying (not yet an error)."""

    lane: str
    """`compaction`, `extraction`, `embedding`, `catch-up`, `config`, …"""
    activity: str
    """The activity, e.g. `compactThread`."""
    attempt: int
    """The attempt running or next to run."""
    maximumAttempts: NotRequired[int]
    lastError: str
    """Why the previous attempt failed."""
    nextAttemptAt: NotRequired[str]
    """When the next attempt starts; absent while one runs."""


class ThreadState(TypedDict):
    """The thread's state."""

    threadId: str
    userId: NotRequired[str]
    createdAt: str
    updatedAt: str
    messageCount: int
    config: ThreadConfig
    metrics: ThreadMetrics
    indexedSeq: int
    """Every message up to this seq is indexed by the workflow."""
    buffered: int
    run: int
    """Continue-as-new generation."""
    compactions: int
    lastCompaction: NotRequired[Compaction]
    pending: list[str]
    """`compaction`, `catch-up`, `extraction`, `embedding`."""
    lastError: NotRequired[str]
    extraction: ExtractionProgress
    """How far memory extraction got: reading the thread for long-term memories."""
    llm: NotRequired[str]
    """The summarizer in use (an LLM or the local fallback)."""
    embedding: NotRequired[EmbeddingProgress]
    """The embedding lane (recall by meaning), when an embedding model is configured."""
    open: NotRequired[bool]
    """Whether the thread's workflow runs; false: it closed after idling (the next append or
    command starts it again)."""
    service: NotRequired[ServiceState]
    forkedFrom: NotRequired[ForkedFrom]
    """The thread and message this thread was forked from."""
    retrying: NotRequired[list[ActivityRetry]]
    """Work being retried right now; absent when none is."""


class CompactResult(TypedDict):
    """Compaction ran."""

    compaction: Compaction | None
    """What the strategy did; null if compaction failed (see the state)."""


class ForkResult(TypedDict):
    """Forked; the new thread’s workflow has indexed the shared part."""

    threadId: str
    """The new thread."""
    forkedFrom: ForkedFrom
    """The thread and message this thread was forked from."""


class MemoryList(TypedDict):
    """Memories, newest first."""

    memories: list[MemoryRecord]


class ImportResult(TypedDict):
    """Imported; the thread has caught up."""

    threadId: str
    imported: int
    """Messages newly stored."""
    skipped: int
    """Messages already there (same id and content)."""


class UserMemoryList(TypedDict):
    """Memories, newest first, a page at a time; with `query`, best first, each with its
    `score`."""

    memories: list[ScoredMemory]
    next: NotRequired[str]
    """Pass as `after` for the next page (a list only: a search does not page). An opaque token
    holding the last memory’s place, so paging goes on if that memory is deleted in between."""


class ErasedUser(TypedDict):
    """Counts of what was erased; all 0 when nothing of the user existed."""

    userId: str
    threads: int
    messages: int
    summaries: int
    """Summaries of those threads, live or superseded."""
    memories: int
    """Long-term memories, live or superseded."""


class WorkingMemory(TypedDict):
    """One version of a working memory."""

    userId: NotRequired[str]
    resourceId: NotRequired[str]
    threadId: NotRequired[str]
    format: Literal["markdown", "json"]
    content: Any
    """Markdown text, or the JSON value."""
    schema: NotRequired[dict[str, Any]]
    """The JSON Schema the content matches."""
    version: int
    """Give it back as `version` to replace this version; 0 before the first write."""
    updatedAt: NotRequired[str]
    """When this version was written (absent for 0)."""


class WorkingMemoryVersions(TypedDict):
    """Versions, newest first, a page at a time."""

    versions: list[WorkingMemory]
    next: NotRequired[int]
    """Pass as `before` for the next page (absent on the last page)."""
