/**
 * The JSON the inspector reads from the HTTP API, as the page needs it. Declared here rather than
 * imported from the rest of `src` because these modules run in the browser and import only each
 * other; the fields mirror the store's and the client's types (a unit test checks that those stay
 * assignable to these), and fields the page does not read are left out.
 */

/** One part of a message: text, a tool call, a tool result or reasoning. */
export interface WirePart {
  type: string;
  text?: string;
  callId?: string;
  name?: string;
  arguments?: string;
  result?: string;
  isError?: boolean;
}

/** A message as the API returns it. */
export interface WireMessage {
  id: string;
  role: string;
  parts: WirePart[];
  createdAt?: string;
  metadata?: Record<string, unknown>;
}

/** A history message: `GET /v1/threads/{id}/messages`. */
export interface HistoryMessage extends WireMessage {
  seq: number;
  tokens: number;
  /** The compaction that excluded it from the view; absent while it is in the view. */
  excludedBy?: string;
}

/** A page of history. */
export interface HistoryPage {
  messages: HistoryMessage[];
  next?: number;
}

/** A summary inserted by a compaction. */
export interface WireSummary {
  message: WireMessage;
  tokens: number;
  positionSeq: number;
  model?: string;
}

/** A compaction decision, from the export. */
export interface WireCompaction {
  id: string;
  strategy: string;
  reason: string;
  excludedMessageIds: string[];
  supersededSummaryIds: string[];
  summaries: WireSummary[];
  createdAt?: string;
}

/** A summary with its lifecycle, from the export. */
export interface WireSummaryRecord extends WireSummary {
  compactionId: string;
  supersededBy?: string;
}

/** A thread's bookkeeping row: `GET /v1/threads` lists them. */
export interface WireThread {
  threadId: string;
  userId?: string;
  createdAt: string;
  updatedAt: string;
  messageCount: number;
}

/** `GET /v1/threads/{id}/export`. */
export interface WireExport {
  thread: WireThread;
  messages: HistoryMessage[];
  compactions: WireCompaction[];
  summaries: WireSummaryRecord[];
}

/** `GET /v1/threads/{id}/context`: the memory view. */
export interface WireContext {
  messages: WireMessage[];
  tokens: number;
  budget: number;
  droppedOnRead?: number;
  /** Where the stable prefix (what a provider's prompt cache keeps) ends. */
  cache?: { stableTokens: number; prefixHash: string };
  /** Long-term memories injected as one system block. */
  memories?: { id: string; text: string }[];
  /** History messages recalled as one system block, and why each is there. */
  recalled?: WireRecalled[];
  /** What recall did (the block's tokens among them); absent when it was off. */
  recall?: { query: string; scope: string; tokens: number; maxTokens: number };
}

/** One recalled message of a context. */
export interface WireRecalled {
  threadId: string;
  seq: number;
  id: string;
  createdAt: string;
  reason: 'hit' | 'neighbour' | 'tool_group';
  hitSeq: number;
  score: number;
  ranker: string;
}

/** What a compaction did (`POST /v1/threads/{id}/compact`, and `lastCompaction` in the state). */
export interface WireCompactionSummary {
  id: string;
  strategy: string;
  excludedGroups: number;
  summaries: number;
  includedTokensBefore: number;
  includedTokensAfter: number;
}

/** `GET /v1/threads/{id}`: the thread's state. */
export interface WireState {
  threadId: string;
  userId?: string;
  config: { budget: number; model: string };
  metrics: {
    includedTokens: number;
    includedMessages: number;
    totalTokens: number;
    totalMessages: number;
  };
  compactions: number;
  lastCompaction?: WireCompactionSummary;
  pending: string[];
  lastError?: string;
  llm?: string;
}

/** A long-term memory: `GET /v1/users/{userId}/memories`. */
export interface WireMemory {
  id: string;
  text: string;
  category?: string;
  sourceThreadId?: string;
  sourceMessageIds: string[];
  status: 'active' | 'superseded';
  supersededBy?: string;
  supersededAt?: string;
  supersededReason?: string;
  createdAt: string;
  extractionId?: string;
}
