/**
 * Content hashes make idempotent appends safe: a retried id is a duplicate only when its content is
 * the same. The hash is taken over canonical JSON (sorted keys) because PostgreSQL's jsonb and other
 * backends do not keep key order, and a message read back and re-imported must hash the same.
 */
import { createHash } from 'node:crypto';
import type { Message } from '../../model/message.js';

/** JSON with object keys sorted at every level; `undefined` members are dropped, as JSON does. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return `{${members.join(',')}}`;
}

/**
 * SHA-256 (hex) of what makes a message that message: role, parts and metadata. The id is the key,
 * and `createdAt` is left out on purpose: a client retrying an append may stamp a fresh time.
 */
export function contentHash(message: Message): string {
  const content = canonicalJson({
    role: message.role,
    parts: message.parts,
    metadata: message.metadata ?? null,
  });
  return createHash('sha256').update(content).digest('hex');
}
