/**
 * The check of a thread export before anything of it is written. An import carries messages,
 * compaction records and a configuration that no append or configure has validated, and whatever the
 * store or the thread's workflow would fail on later (a stack overflow on deep JSON, an integer
 * column overflowing, an index entry too large, a configuration the workflow refuses) must be a
 * ValidationError naming the field now. The rules are an append's and a configure's, from the same
 * places (src/model/validation.ts, src/model/limits.ts, src/thread/config.ts).
 */
import { ValidationError } from '../model/errors.js';
import {
  MAX_ID_LENGTH,
  MAX_JSON_DEPTH,
  MAX_RECORD_ID_LENGTH,
  MAX_SEQ,
  MAX_TOKEN_COUNT,
  characterCount,
} from '../model/limits.js';
import type { MessageInput } from '../model/message.js';
import {
  assertJsonDepth,
  assertTimestamp,
  assertWholeNumber,
  normalizeMessages,
} from '../model/validation.js';
import type { ThreadExport } from '../store/types.js';
import { prepareVersion, type WorkingMemoryContent } from '../memories/working-memory.js';
import { assertStorableText } from '../store/internal/prepare.js';
import { DEFAULT_CONFIG, mergeConfig } from '../thread/config.js';

/**
 * Longest summary id: a summary is named after the first and last message it replaces
 * (`summary:<id>..<id>`, see summarization.ts), so two message ids and a little more.
 */
const MAX_SUMMARY_ID_LENGTH = 2 * MAX_ID_LENGTH + 32;

function isObject(x: unknown): x is Record<string, unknown> & object {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/**
 * How deep a whole export may nest: the deepest field it holds (a summary's metadata, seven levels
 * down) with its own limit. Checked last, it catches deep JSON in fields the import ignores or copies
 * unread (an unknown field of a part or a record), which would overflow the stack of that copy.
 */
const MAX_EXPORT_DEPTH = MAX_JSON_DEPTH + 8;

/** Runs `check`; a ValidationError it throws is thrown again naming `field`. */
function within(field: string, check: () => void): void {
  try {
    check();
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    const detail = err.message.replace(/^Message \d+(?: \(id .*?\))?: /u, '');
    throw new ValidationError(err.code, detail.startsWith(field) ? detail : `${field}: ${detail}`, {
      field,
    });
  }
}

/** Throws `invalid_id` naming `field` unless `value` is 1 to `max` characters of storable text. */
function checkId(value: unknown, field: string, max = MAX_RECORD_ID_LENGTH): void {
  if (typeof value !== 'string' || value.length === 0 || characterCount(value) > max)
    throw new ValidationError('invalid_id', `${field}: expected 1–${max} characters`, { field });
  within(field, () => assertStorableText(value, {}));
}

/** A thread's configuration, as configure would accept it. */
function checkConfig(config: Record<string, unknown>): void {
  assertJsonDepth(config, 'thread.config');
  try {
    mergeConfig(DEFAULT_CONFIG, config);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    const key = /^configure\.(\w+)/u.exec(err.message)?.[1];
    const message = err.message.replace(/^configure\./u, 'thread.config.');
    throw new ValidationError(err.code, message, { field: key ? `thread.config.${key}` : 'thread.config' });
  }
}

/**
 * Checks a thread export entirely, before anything is written.
 * @returns its working memory as a write would store it, when it has one (the import writes it).
 * @throws ValidationError naming the offending field (`messages[3].tokens`, `thread.config.budget`,
 *   `compactions[0].steps`, …); `out_of_range` for a message whose seq does not exceed the one before it.
 */
export async function checkThreadExport(data: ThreadExport): Promise<WorkingMemoryContent | undefined> {
  // Not an export at all: the store refuses it with its own error (InvalidRecordError).
  if (!isObject(data) || !isObject(data.thread) || !Array.isArray(data.messages)) return;
  if (!Array.isArray(data.compactions)) return;
  const { thread } = data;
  if (thread.userId !== undefined) checkId(thread.userId, 'thread.userId');
  if (thread.resourceId !== undefined) checkId(thread.resourceId, 'thread.resourceId');
  if (thread.config !== undefined) checkConfig(thread.config);
  data.messages.forEach((m, i) => {
    const field = `messages[${i}]`;
    // As an append checks it: id, role, parts, metadata (depth included), createdAt.
    within(field, () => normalizeMessages([m as MessageInput]));
    assertWholeNumber(m.seq, `${field}.seq`, 1, MAX_SEQ);
    // The file's order is the history's, and its seqs must agree with it: sorting by them could put a
    // tool result before its call. Gaps are fine (the thread assigns its own seqs).
    const previous = i > 0 ? data.messages[i - 1]!.seq : 0;
    if (m.seq <= previous)
      throw new ValidationError(
        'out_of_range',
        `${field}.seq: ${m.seq} comes after ${previous} (messages[${i - 1}].seq); seqs must increase in the file's order, which is the history's (gaps are fine)`,
        { field: `${field}.seq` },
      );
    assertWholeNumber(m.tokens, `${field}.tokens`, 0, MAX_TOKEN_COUNT);
    if (m.excludedBy !== undefined) checkId(m.excludedBy, `${field}.excludedBy`);
  });
  data.compactions.forEach((record, j) => {
    const field = `compactions[${j}]`;
    if (!isObject(record) || !Array.isArray(record.summaries))
      throw new ValidationError('invalid_message', `${field}: not a compaction`, { field });
    checkId(record.id, `${field}.id`);
    if (record.createdAt !== undefined) assertTimestamp(record.createdAt, `${field}.createdAt`);
    for (const key of ['steps', 'warnings'] as const) {
      if (!Array.isArray(record[key]))
        throw new ValidationError('invalid_message', `${field}.${key}: not a list`, {
          field: `${field}.${key}`,
        });
      assertJsonDepth(record[key], `${field}.${key}`);
    }
    assertWholeNumber(record.upToSeq, `${field}.upToSeq`, 0, MAX_SEQ);
    for (const key of ['includedTokensBefore', 'includedTokensAfter'] as const)
      assertWholeNumber(record[key], `${field}.${key}`, 0, Number.MAX_SAFE_INTEGER);
    within(field, () =>
      assertStorableText(
        [record.strategy, record.reason, record.steps, record.warnings, record.llm ?? null],
        {},
      ),
    );
    record.excludedMessageIds.forEach((id, k) =>
      checkId(id, `${field}.excludedMessageIds[${k}]`, MAX_ID_LENGTH),
    );
    record.supersededSummaryIds.forEach((id, k) =>
      checkId(id, `${field}.supersededSummaryIds[${k}]`, MAX_SUMMARY_ID_LENGTH),
    );
    record.summaries.forEach((summary, k) => {
      const where = `${field}.summaries[${k}]`;
      if (!isObject(summary) || !isObject(summary.message))
        throw new ValidationError('invalid_message', `${where}: not a summary`, { field: where });
      // A summary's id is longer than a message's may be; the rest is checked as a message.
      checkId(summary.message.id, `${where}.message.id`, MAX_SUMMARY_ID_LENGTH);
      within(`${where}.message`, () =>
        normalizeMessages([{ ...summary.message, id: 'summary' } as MessageInput]),
      );
      assertWholeNumber(summary.tokens, `${where}.tokens`, 0, MAX_TOKEN_COUNT);
      assertWholeNumber(summary.positionSeq, `${where}.positionSeq`, 0, MAX_SEQ);
      for (const key of ['inputTokens', 'outputTokens'] as const)
        if (summary[key] !== undefined)
          assertWholeNumber(summary[key], `${where}.${key}`, 0, MAX_TOKEN_COUNT);
    });
  });
  const workingMemory = await exportedWorkingMemory(data);
  assertJsonDepth(data, 'body', MAX_EXPORT_DEPTH);
  return workingMemory;
}

/**
 * An export's working memory as a write would store it (format, content and schema checked by the
 * rules of a write, src/memories/working-memory.ts), or undefined when it has none.
 * @throws ValidationError naming the field (`workingMemory.content`, `workingMemory.schema`, …).
 */
async function exportedWorkingMemory(data: ThreadExport): Promise<WorkingMemoryContent | undefined> {
  const notes: unknown = data.workingMemory;
  if (notes === undefined) return undefined;
  if (!isObject(notes))
    throw new ValidationError('invalid_option', 'workingMemory: expected its format and content', {
      field: 'workingMemory',
    });
  assertWholeNumber(notes['version'], 'workingMemory.version', 1, Number.MAX_SAFE_INTEGER);
  if (notes['updatedAt'] !== undefined) assertTimestamp(notes['updatedAt'], 'workingMemory.updatedAt');
  const { format, content, schema } = notes;
  try {
    return await prepareVersion(undefined, content, {
      version: 0,
      format: format as WorkingMemoryContent['format'],
      ...(schema === undefined ? {} : { schema: schema as WorkingMemoryContent['schema'] }),
    });
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    const field = err.field
      ? `workingMemory.${err.field}`
      : err.code === 'invalid_schema'
        ? 'workingMemory.schema'
        : 'workingMemory';
    // A write's message begins with its field (`content does not match …`, `schema: …`): named once,
    // in full, so that the HTTP API (which prefixes a message not starting with its field) adds nothing.
    const inner = err.field ?? field.replace(/^workingMemory\.?/u, '');
    const message =
      inner && err.message.startsWith(inner) ? `workingMemory.${err.message}` : `${field}: ${err.message}`;
    throw new ValidationError(err.code, message, { field });
  }
}
