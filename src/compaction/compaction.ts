/**
 * One compaction, whole: what the engine did (its steps, in order), what that changed in the view
 * (history messages excluded, summaries superseded and inserted) and why. It is stored and exported
 * as is; `state()` and `compact()` report it in numbers with {@link reportOf}.
 */
import type { Message } from '../model/message.js';
import type { CompactionStep, CompactionWarning } from './strategy.js';

/** A summary message that a compaction inserts into the view. */
export interface StoredSummary {
  /** The summary; `metadata.compaction` = `{ kind: 'summary', strategy, replaces }`. */
  message: Message;
  tokens: number;
  /** Seq of the first history message it stands for; orders it in the view (before that message). */
  positionSeq: number;
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
}

/** One compaction of a thread's view: what left it, what entered it, why and by which strategy. */
export interface Compaction {
  /** Chosen by the caller, deterministic; recording the same id twice is a no-op (exactly once). */
  id: string;
  threadId: string;
  /** The strategies that acted, joined by `+` (the configured strategy's type when none did). */
  strategy: string;
  /** Human-readable reason, e.g. `truncation: tokensExceed(8000)`. */
  reason: string;
  /** What the engine did, in order (body-free: a summary step carries its summary's meta). */
  steps: CompactionStep[];
  /** What could not be done as asked (budget unmet, summarizer failed, …). */
  warnings: CompactionWarning[];
  /** Only messages up to this seq were considered. */
  upToSeq: number;
  /** Tokens the view included before and after. */
  includedTokensBefore: number;
  includedTokensAfter: number;
  /** History messages now excluded from the view. */
  excludedMessageIds: string[];
  /** Earlier summaries folded into a new one or removed from the view. */
  supersededSummaryIds: string[];
  /** New summary messages inserted into the view. */
  summaries: StoredSummary[];
  /** The summarizer the worker had (an LLM model, or the labelled local fallback). */
  llm?: string;
  /** When it was recorded (ISO-8601); set by the store when absent. */
  createdAt?: string;
}

/**
 * A compaction in numbers, as `state()` and `compact()` report it: no ids or bodies, and a size that
 * does not grow with the history (it travels through workflow history). Pure; reads the steps only,
 * so it also reports a compaction whose summaries' bodies stayed in the store.
 */
export function reportOf(compaction: Omit<Compaction, 'summaries'>) {
  const { steps } = compaction;
  // A summary created and folded into another within the same run is not in the view.
  const folded = new Set(steps.flatMap((s) => s.messageIds));
  return {
    id: compaction.id,
    // Each strategy once, in order: a collapse of 5,000 tool groups names its strategy 5,000 times.
    strategy: [...new Set(compaction.strategy.split('+'))].join('+'),
    excludedGroups: steps.reduce((n, s) => n + s.groupIds.length, 0),
    summaries: steps.filter((s) => s.summary && !folded.has(s.summary.id)).length,
    includedTokensBefore: compaction.includedTokensBefore,
    includedTokensAfter: compaction.includedTokensAfter,
    upToSeq: compaction.upToSeq,
    warnings: compaction.warnings.map((w) => `${w.code}: ${w.message}`),
  };
}
