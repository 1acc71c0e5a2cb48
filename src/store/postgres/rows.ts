/**
 * Row shapes of the PostgreSQL store and their conversion to the store's records. bigint columns come
 * back from node-postgres as strings (they may exceed 2^53); seqs and counts never do, so Number().
 * Absent optional fields stay absent (not null), exactly as the other stores return them.
 */
import type { MessageMeta, MessageShape } from '../../compaction/message-meta.js';
import type { Message, Part, Role } from '../../model/message.js';
import type { Compaction, ForkedFrom, StoredMessage, StoredSummary, ThreadInfo } from '../types.js';

/** Columns every message query selects. */
export interface MessageRow {
  seq: string;
  id: string;
  role: Role;
  parts: Part[];
  metadata: Record<string, unknown> | null;
  tokens: number;
  bytes: number;
  created_at: Date;
  excluded_by: string | null;
}

export const MESSAGE_COLUMNS = 'seq, id, role, parts, metadata, tokens, bytes, created_at, excluded_by';

/** The message body of a row. */
export function toMessage(row: MessageRow): Message {
  const message: Message = {
    id: row.id,
    role: row.role,
    parts: row.parts,
    createdAt: row.created_at.toISOString(),
  };
  if (row.metadata !== null) message.metadata = row.metadata;
  return message;
}

export function toStoredMessage(row: MessageRow): StoredMessage {
  const stored = {
    ...toMessage(row),
    seq: Number(row.seq),
    tokens: row.tokens,
    bytes: row.bytes,
  } as StoredMessage;
  if (row.excluded_by !== null) stored.excludedBy = row.excluded_by;
  return stored;
}

export interface MetaRow {
  seq: string;
  id: string;
  role: Role;
  shape: MessageShape;
  call_ids: string[] | null;
  tokens: number;
  bytes: number;
}

export function toMeta(row: MetaRow): MessageMeta & { seq: number } {
  const meta: MessageMeta & { seq: number } = {
    id: row.id,
    role: row.role,
    shape: row.shape,
    tokens: row.tokens,
    bytes: row.bytes,
    seq: Number(row.seq),
  };
  if (row.call_ids !== null) meta.callIds = row.call_ids;
  return meta;
}

export interface ThreadRow {
  thread_id: string;
  user_id: string | null;
  resource_id: string | null;
  last_seq: string;
  message_count: string;
  config: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  forked_from: ForkedFrom | null;
}

export function toThreadInfo(row: ThreadRow): ThreadInfo {
  const info: ThreadInfo = {
    threadId: row.thread_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    lastSeq: Number(row.last_seq),
    messageCount: Number(row.message_count),
  };
  if (row.user_id !== null) info.userId = row.user_id;
  if (row.resource_id !== null) info.resourceId = row.resource_id;
  if (row.config !== null) info.config = row.config;
  if (row.forked_from !== null) info.forkedFrom = row.forked_from;
  return info;
}

export interface SummaryRow {
  compaction_id: string;
  message: Message;
  tokens: number;
  position_seq: string;
  model: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
}

export function toSummary(row: SummaryRow): StoredSummary {
  const summary: StoredSummary = {
    message: row.message,
    tokens: row.tokens,
    positionSeq: Number(row.position_seq),
  };
  if (row.model !== null) summary.model = row.model;
  if (row.input_tokens !== null) summary.inputTokens = row.input_tokens;
  if (row.output_tokens !== null) summary.outputTokens = row.output_tokens;
  return summary;
}

export interface CompactionRow {
  thread_id: string;
  id: string;
  strategy: string;
  reason: string;
  excluded_message_ids: string[];
  superseded_summary_ids: string[];
  /** The compaction's engine fields (migration 011). */
  details: Pick<
    Compaction,
    'steps' | 'warnings' | 'upToSeq' | 'includedTokensBefore' | 'includedTokensAfter' | 'llm'
  >;
  created_at: Date;
}

export function toCompaction(row: CompactionRow, summaries: StoredSummary[]): Compaction {
  return {
    id: row.id,
    threadId: row.thread_id,
    strategy: row.strategy,
    reason: row.reason,
    ...row.details,
    excludedMessageIds: row.excluded_message_ids,
    supersededSummaryIds: row.superseded_summary_ids,
    summaries,
    createdAt: row.created_at.toISOString(),
  };
}
