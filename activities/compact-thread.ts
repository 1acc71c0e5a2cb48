/**
 * The compaction activity: loads the thread's current view from the store (up to the workflow's
 * indexed seq), runs the strategy with the engine, and records the decision in one store transaction,
 * exactly once by id. Answers the compaction in numbers and what it changed in the view: the answer
 * travels through workflow history, so it is bounded by the view left, never by the history read
 * (the steps, which name each message taken out, stay in the stored compaction).
 */
import { Context, heartbeat } from '@temporalio/activity';
import { compactIndex } from '../src/compaction/compact-index.js';
import { withViewCap } from '../src/thread/config.js';
import { MessageIndex } from '../src/compaction/message-index.js';
import type { Summarizer } from '../src/compaction/strategy.js';
import { compactionMarkOf, type Message } from '../src/model/message.js';
import type { ThreadStore } from '../src/store/thread-store.js';
import { reportOf, type Compaction, type StoredSummary } from '../src/compaction/compaction.js';
import { viewChangeOf } from '../src/compaction/view-change.js';
import { tokenizerForModel } from '../src/tokenizers/for-model.js';
import { countMessageTokens } from '../src/tokenizers/tokenizer.js';
import type { CompactThreadInput, CompactThreadResult } from './types.js';
import { heartbeatEveryMs, type LlmRuntime } from './llm-runtime.js';
import { toLlmFailure } from '../src/llm/failures.js';
import { throwIfCancelled } from './cancellation.js';

/** Dependencies of the compaction activity. */
export interface CompactDeps {
  store: ThreadStore;
  llm: LlmRuntime;
}

/** Creates the `compactThread` activity. */
export function compactThreadActivity(deps: CompactDeps) {
  return async function compactThread(input: CompactThreadInput): Promise<CompactThreadResult> {
    const { store } = deps;

    const entries = (await store.view(input.threadId)).filter((e) => e.seq <= input.upToSeq);
    const bodies = new Map<string, Message>();
    const seqOf = new Map<string, number>();
    const index = new MessageIndex();
    for (const e of entries) {
      bodies.set(e.message.id, e.message);
      seqOf.set(e.message.id, e.seq);
      index.append(e.meta); // as stored at append: no body is described again
    }
    const before = index.metrics.includedTokens;
    const tokenizer = tokenizerForModel(input.model);
    // The engine turns a summarizer error into a warning and goes on; here a retryable LLM error must
    // reach Temporal instead (so the call is retried with backoff), so it is kept and rethrown.
    let llmError: unknown;
    const { cancellationSignal } = Context.current();
    const summarize = deps.llm.summarizer(cancellationSignal);
    const summarizer: Summarizer = async (req) => {
      heartbeat();
      try {
        return await summarize(req);
      } catch (err) {
        llmError = err;
        throw err;
      }
    };
    // A long summarizer call stays visibly alive, well within the heartbeat timeout.
    const beat = setInterval(() => heartbeat(), heartbeatEveryMs());
    let outcome;
    try {
      outcome = await compactIndex(index, withViewCap(input.strategy), {
        bodies,
        tokenized: true,
        countTokens: (m) => countMessageTokens(m, tokenizer), // summaries, as appends are counted
        summarizer,
      });
    } finally {
      clearInterval(beat);
    }
    throwIfCancelled(); // an aborted LLM call is a cancellation, not an LLM failure
    if (llmError !== undefined) {
      const failure = toLlmFailure(llmError);
      // Non-retryable (a bad request): go on with the rest of the strategy (the fallback) and say so.
      if (!failure.nonRetryable) throw failure;
    }
    const { steps, warnings } = outcome;

    const excludedMessageIds: string[] = [];
    const supersededSummaryIds: string[] = [];
    const summaries: StoredSummary[] = [];
    for (const step of steps) {
      for (const id of step.messageIds) {
        const m = bodies.get(id);
        if (m && compactionMarkOf(m)) supersededSummaryIds.push(id);
        else excludedMessageIds.push(id);
      }
      if (step.summary) {
        const message = bodies.get(step.summary.id)!; // compactIndex adds the bodies it created
        const positionSeq = seqOf.get(step.messageIds[0]!) ?? input.upToSeq;
        seqOf.set(message.id, positionSeq);
        const by = message.metadata?.['summarizer'] as
          { model?: string; inputTokens?: number; outputTokens?: number } | undefined;
        summaries.push({
          message,
          tokens: step.summary.tokens,
          positionSeq,
          model: by?.model ?? (step.strategy === 'summarization' ? deps.llm.label : undefined),
          inputTokens: by?.inputTokens,
          outputTokens: by?.outputTokens,
        });
      }
    }
    // A summary created and superseded within this run never reaches the store.
    const created = new Set(summaries.map((s) => s.message.id));
    const compaction: Compaction = {
      id: input.compactionId,
      threadId: input.threadId,
      strategy: steps.map((step) => step.strategy).join('+') || input.strategy.type,
      reason: steps.map((step) => `${step.strategy}: ${step.reason}`).join('; ') || 'nothing to do',
      steps,
      warnings,
      upToSeq: input.upToSeq,
      includedTokensBefore: before,
      includedTokensAfter: index.metrics.includedTokens,
      excludedMessageIds,
      supersededSummaryIds: supersededSummaryIds.filter((id) => !created.has(id)),
      summaries: summaries.filter((s) => !supersededSummaryIds.includes(s.message.id)),
      llm: deps.llm.label,
    };
    // A retry after the commit (the first attempt's answer was lost): what it recorded is what
    // happened; this attempt's, computed on the already-compacted view, is dropped. Looking the
    // record up only here keeps the common path from reading every earlier record.
    const recorded = (await store.recordCompaction(compaction))
      ? compaction
      : (await store.compactions(input.threadId)).find((c) => c.id === input.compactionId)!;
    // The change is read back from the store: a retry's too, and it leaves the workflow's index as
    // the stored view is (summaries made and folded within the run never enter it).
    const change =
      recorded.steps.length === 0
        ? { removed: [], inserted: [] }
        : viewChangeOf(
            await store.view(input.threadId),
            new Set(recorded.summaries.map((s) => s.message.id)),
            input.upToSeq,
          );
    return {
      report: reportOf(recorded),
      change,
      ...(recorded.llm === undefined ? {} : { llm: recorded.llm }),
    };
  };
}
