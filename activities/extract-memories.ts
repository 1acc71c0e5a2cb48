/**
 * The memory-extraction activity (the context-provider pattern's "learn after the exchange"): reads
 * the thread's messages in (fromSeq, toSeq], asks the extractor for facts about the user given the
 * user's live memories, and applies them in one transaction, exactly once by extraction id.
 */
import { Context, heartbeat } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ThreadStore } from '../src/store/thread-store.js';
import type { MemoryStore } from '../src/memories/memory-store.js';
import type { Message } from '../src/model/message.js';
import { toLlmFailure } from '../src/llm/failures.js';
import { throwIfCancelled } from './cancellation.js';
import type { ExtractionSummary, ExtractMemoriesInput } from './types.js';
import { heartbeatEveryMs, type LlmRuntime } from './llm-runtime.js';

/** Most messages one extraction reads (the newest are kept when there are more). */
const MAX_MESSAGES = 200;

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
    const messages: Message[] = page.messages
      .filter((m) => m.seq <= input.toSeq)
      .map(({ seq: _s, tokens: _t, bytes: _b, excludedBy: _e, ...m }) => m);
    const scope = input.resourceId === undefined ? {} : { resourceId: input.resourceId };
    const existing = (await memories.list(input.userId, scope)).map((m) => ({ id: m.id, text: m.text }));
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
