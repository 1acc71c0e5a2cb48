/**
 * What every store does to an append before writing: check that the text can be kept by any backend,
 * copy the message so callers cannot mutate what was stored, stamp `createdAt`, and compute the
 * counts, shape and content hash that are stored beside the body.
 */
import { describeMessage, type MessageMeta } from '../../compaction/message-meta.js';
import { ValidationError } from '../../model/errors.js';
import type { Message } from '../../model/message.js';
import type { AppendEntry, Compaction, StoredSummary } from '../types.js';
import { contentHash } from './content-hash.js';

/** An append entry ready to be written. */
export interface PreparedEntry {
  /** A private copy with only the Message fields and an ISO `createdAt`. */
  message: Message & { createdAt: string };
  /** Body-free description (tokens, bytes, shape, call ids), without seq. */
  meta: MessageMeta;
  contentHash: string;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A JSON copy: drops `undefined` members exactly as every backend's serialization does. */
export function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Normalises a timestamp to ISO-8601 UTC with milliseconds (what every backend can round-trip). */
export function isoTime(value: string | Date | undefined, fallback: Date): string {
  const date = value === undefined ? fallback : new Date(value);
  if (Number.isNaN(date.getTime()))
    throw new ValidationError('invalid_message', `invalid timestamp '${String(value)}'`);
  return date.toISOString();
}

/**
 * Rejects strings that PostgreSQL's jsonb refuses (NUL, lone surrogates). Validation upstream
 * rejects them too; checking here gives every store the same clear error if one slips through.
 */
export function assertStorableText(value: unknown, where: { index?: number; messageId?: string }): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000'))
      throw new ValidationError('nul_byte', 'text contains a NUL byte (U+0000)', where);
    if (LONE_SURROGATE.test(value))
      throw new ValidationError('lone_surrogate', 'text contains a lone surrogate', where);
  } else if (Array.isArray(value)) {
    for (const item of value) assertStorableText(item, where);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      assertStorableText(key, where);
      assertStorableText(item, where);
    }
  }
}

/** Prepares a batch for writing; throws before anything is written if one entry is unusable. */
export function prepareEntries(entries: AppendEntry[], now: Date = new Date()): PreparedEntry[] {
  return entries.map((entry, index) => {
    const source = entry.message;
    const where = { index, messageId: source.id };
    if (!Number.isInteger(entry.tokens) || entry.tokens < 0) {
      throw new ValidationError('invalid_message', `token count must be a non-negative integer`, where);
    }
    // Only the Message fields: an imported StoredMessage also carries seq, tokens, bytes, excludedBy.
    const message: Message & { createdAt: string } = {
      id: source.id,
      role: source.role,
      parts: jsonCopy(source.parts),
      createdAt: isoTime(source.createdAt, now),
    };
    if (source.metadata !== undefined) message.metadata = jsonCopy(source.metadata);
    assertStorableText([message.id, message.parts, message.metadata ?? null], where);
    return { message, meta: describeMessage(message, entry.tokens), contentHash: contentHash(message) };
  });
}

/**
 * The body-free description of a summary, computed once when it is recorded and stored beside it
 * (as an appended message's is), so the view hands it out without describing the body again.
 */
export function summaryMeta(summary: StoredSummary): MessageMeta {
  return describeMessage(summary.message, summary.tokens);
}

/** A view meta from a stored one: without `seq` (see ViewEntry.meta). */
export function viewMeta(meta: MessageMeta): MessageMeta {
  const { seq: _seq, ...rest } = meta;
  return rest;
}

/** A private copy of a compaction record with `createdAt` stamped and its text checked. */
export function prepareRecord(
  record: Compaction,
  now: Date = new Date(),
): Compaction & { createdAt: string } {
  const copy = { ...jsonCopy(record), createdAt: isoTime(record.createdAt, now) };
  copy.summaries.forEach((summary, index) =>
    assertStorableText([summary.message, summary.model ?? null], { index, messageId: summary.message.id }),
  );
  assertStorableText([copy.id, copy.strategy, copy.reason, copy.steps, copy.warnings, copy.llm ?? null], {});
  return copy;
}
