/**
 * The memory-extraction activity (the context-provider pattern's "learn after the exchange"): reads
 * the thread's messages in (fromSeq, toSeq], asks the extractor for facts about the user given the
 * user's live memories, and applies them in one transaction, exactly once by extraction id.
 */
import { Context, heartbeat } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ThreadStore } from '../src/store/thread-store.js';
import type { MemoryStore } from '../src/memories/memory-store.js';
import { textOf, type Message } from '../src/model/message.js';
import type { ExistingMemory } from '../src/llm/memory-extractor.js';
import { MAX_MEMORY_SEARCH_LIMIT } from '../src/model/limits.js';
import { recallQuery } from '../src/recall/query.js';
import { toLlmFailure } from '../src/llm/failures.js';
import { clipLongestParts } from '../src/model/clip.js';
import { throwIfCancelled } from './cancellation.js';
import type { ExtractionSummary, ExtractMemoriesInput } from './types.js';
import { heartbeatEveryMs, type LlmRuntime } from './llm-runtime.js';

/** Most messages one extraction reads (the newest are kept when there are more). */
const MAX_MESSAGES = 200;

/**
 * Most of the user's memories the extractor is shown, and their characters (about 10,000 tokens of
 * the prompt): a user of months has thousands, which no model's window holds.
 */
const MAX_EXISTING = 200;
const MAX_EXISTING_CHARS = 40_000;

/** Characters of the new messages an extraction reads (about 12,000 tokens; the longest parts cut). */
const MAX_MESSAGE_CHARS = 48_000;

/** Creates the `extractMemories` activity. */
export function extractMemoriesActivity(deps: {
  store: ThreadStore;
  memories?: MemoryStore;
  llm: LlmRuntime;
}) {
  return async function extractMemories(
    input: ExtractMemoriesInput,
  ): Promise<ExtractionSummary & { llm: string }> {
    if (!deps.memories) {
      throw ApplicationFailure.nonRetryable('this worker has no memory store', 'NoMemoryStore');
    }
    const memories = deps.memories;
    const page = await deps.store.history(input.threadId, {
      after: Math.max(input.fromSeq, input.toSeq - MAX_MESSAGES),
      limit: MAX_MESSAGES,
    });
    const messages: Message[] = clipLongestParts(
      page.messages
        .filter((m) => m.seq <= input.toSeq)
        .map(({ seq: _s, tokens: _t, bytes: _b, excludedBy: _e, ...m }) => m),
      MAX_MESSAGE_CHARS,
    );
    const scope = input.resourceId === undefined ? {} : { resourceId: input.resourceId };
    const existing = await existingMemories(memories, input.userId, scope, messages);
    heartbeat();
    const beat = setInterval(() => heartbeat(), heartbeatEveryMs());
    let result;
    try {
      result =
        messages.length > 0
          ? await deps.llm.extractor(Context.current().cancellationSignal)({ messages, existing })
          : undefined;
    } catch (err) {
      throwIfCancelled(); // an aborted LLM call is a cancellation, not an LLM failure
      throw toLlmFailure(err);
    } finally {
      clearInterval(beat);
    }
    throwIfCancelled();
    const applied = await memories.applyExtraction({
      extractionId: input.extractionId,
      userId: input.userId,
      ...scope,
      threadId: input.threadId,
      fromSeq: input.fromSeq,
      toSeq: input.toSeq,
      model: result?.model ?? 'none',
      proposals: result?.proposals ?? [],
    });
    return {
      id: input.extractionId,
      fromSeq: input.fromSeq,
      toSeq: input.toSeq,
      added: applied.added.length,
      superseded: applied.superseded.length,
      duplicates: applied.duplicates.length,
      model: result?.model ?? 'none',
      llm: deps.llm.label,
    };
  };
}

/**
 * The user's live memories shown to the extractor: the ones the user's new turns are about (full text,
 * so the fact a turn changes is there to be superseded), then the newest, within MAX_EXISTING and
 * MAX_EXISTING_CHARS. A user with fewer is shown them all, as before.
 */
async function existingMemories(
  memories: MemoryStore,
  userId: string,
  scope: { resourceId?: string },
  messages: readonly Message[],
): Promise<ExistingMemory[]> {
  // The user's own words (the facts are about the user), newest first, cut as recall's query is.
  const said = messages.filter((m) => m.role === 'user').reverse();
  const query = recallQuery(said.map(textOf).join('\n'));
  const [relevant, newest] = await Promise.all([
    query.trim() === '' ? [] : memories.search(userId, query, { limit: MAX_MEMORY_SEARCH_LIMIT, ...scope }),
    memories.list(userId, { ...scope, limit: MAX_EXISTING }),
  ]);
  const shown = new Map<string, ExistingMemory>();
  let chars = 0;
  for (const m of [...relevant, ...newest]) {
    if (shown.size === MAX_EXISTING) break;
    if (shown.has(m.id) || chars + m.text.length > MAX_EXISTING_CHARS) continue;
    shown.set(m.id, { id: m.id, text: m.text });
    chars += m.text.length;
  }
  return [...shown.values()];
}
