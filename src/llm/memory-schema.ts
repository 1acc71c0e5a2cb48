/**
 * The structured output of memory extraction: the JSON schema sent with the request and a small
 * hand-written check of the reply against it. The check does not trust the server to have enforced
 * the schema: many OpenAI-compatible servers accept `response_format` and ignore it.
 */
import { firstCharacters } from '../model/limits.js';
import { LlmReplyError } from './reply.js';

/** Kinds of facts. `name`, `location`, `work` and `occupation` hold one value at a time. */
export const MEMORY_CATEGORIES = [
  'name',
  'location',
  'work',
  'occupation',
  'preference',
  'dislike',
  'allergy',
  'favorite',
  'identity',
  'circumstance',
  'plan',
  'other',
] as const;

/** One of {@link MEMORY_CATEGORIES}. */
export type MemoryCategory = (typeof MEMORY_CATEGORIES)[number];

/**
 * The JSON schema of the reply, in the form OpenAI's strict structured output accepts: every property
 * required, no additional properties, optional values as `null`.
 */
export const MEMORY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['facts'],
  properties: {
    facts: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['text', 'category', 'supersedes', 'reason', 'source_message_ids'],
        properties: {
          text: {
            type: 'string',
            description: 'The fact in one short third-person sentence about the user.',
          },
          category: { type: 'string', enum: [...MEMORY_CATEGORIES] },
          supersedes: {
            type: ['string', 'null'],
            description: 'Id of the existing memory this fact replaces, or null.',
          },
          reason: { type: ['string', 'null'], description: 'Why it replaces that memory, or null.' },
          source_message_ids: {
            type: 'array',
            items: { type: 'string' },
            description: 'Ids of the messages that state the fact.',
          },
        },
      },
    },
  },
} as const;

/** One fact exactly as the schema describes it. */
export interface RawFact {
  text: string;
  category: MemoryCategory;
  supersedes: string | null;
  reason: string | null;
  source_message_ids: string[];
}

/**
 * Parses and checks a reply against {@link MEMORY_SCHEMA}.
 * @param content The message content of the reply.
 * @throws LlmReplyError `invalid_json` when it does not parse, `schema_mismatch` naming the first
 *   offending path when it does not match.
 */
export function parseMemoryReply(content: string): RawFact[] {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch (err) {
    throw new LlmReplyError('invalid_json', `memory reply is not JSON: ${firstCharacters(content, 80)}`, {
      cause: err,
    });
  }
  const mismatch = (path: string, expected: string): never => {
    throw new LlmReplyError('schema_mismatch', `memory reply: ${path} should be ${expected}`);
  };
  if (!isRecord(value)) return mismatch('the reply', 'an object');
  onlyKeys(value, ['facts'], '', mismatch);
  if (!Array.isArray(value['facts'])) return mismatch('facts', 'an array');
  return value['facts'].map((fact: unknown, i): RawFact => {
    const at = `facts[${i}]`;
    if (!isRecord(fact)) return mismatch(at, 'an object');
    onlyKeys(fact, ['text', 'category', 'supersedes', 'reason', 'source_message_ids'], at, mismatch);
    const { text, category, supersedes, reason, source_message_ids: sources } = fact;
    if (typeof text !== 'string') mismatch(`${at}.text`, 'a string');
    if (!(MEMORY_CATEGORIES as readonly unknown[]).includes(category)) {
      mismatch(`${at}.category`, `one of ${MEMORY_CATEGORIES.join(', ')}`);
    }
    if (supersedes !== null && typeof supersedes !== 'string')
      mismatch(`${at}.supersedes`, 'a string or null');
    if (reason !== null && typeof reason !== 'string') mismatch(`${at}.reason`, 'a string or null');
    if (!Array.isArray(sources) || sources.some((s) => typeof s !== 'string')) {
      mismatch(`${at}.source_message_ids`, 'an array of strings');
    }
    return fact as unknown as RawFact;
  });
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** Strict schemas list every key as required and allow no others. */
function onlyKeys(
  value: Record<string, unknown>,
  keys: readonly string[],
  at: string,
  mismatch: (path: string, expected: string) => never,
): void {
  for (const key of keys) if (!(key in value)) mismatch(at ? `${at}.${key}` : key, 'present');
  for (const key of Object.keys(value)) {
    if (!keys.includes(key)) mismatch(at ? `${at}.${key}` : key, 'absent (not in the schema)');
  }
}
