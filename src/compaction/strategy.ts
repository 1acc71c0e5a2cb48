/**
 * What every strategy shares: the context it works in, the steps it records, the warnings it
 * reports, and the summarizer it may be handed. Strategies never delete history: they mark groups
 * excluded or insert summaries, and say so in a {@link CompactionStep}.
 */
import { ValidationError } from '../model/errors.js';
import type { Message } from '../model/message.js';
import type { MessageMeta } from './message-meta.js';
import { isSendable, type GroupState } from './group.js';
import type { MessageIndex } from './message-index.js';
import type { Metrics } from './metrics.js';

/** One thing a strategy did. Together, the steps explain the view. */
export interface CompactionStep {
  /** The strategy that decided (`truncation`, `summarization`, `tokenBudget.fallback`, …). */
  strategy: string;
  action: 'exclude' | 'summarize' | 'collapse';
  /** Why: the trigger that fired, e.g. `tokensExceed(8000)`. */
  reason: string;
  /** Groups taken out of the view, oldest first. */
  groupIds: string[];
  /** Every message id those groups hold (history messages and replaced summaries). */
  messageIds: string[];
  /**
   * For `summarize` and `collapse`: the body-free meta of the message that now stands in their place
   * (its tokens counted by the edge's countTokens); its body is in the run's `created` messages.
   */
  summary?: MessageMeta;
  /** Metrics before and after this decision. */
  before: Pick<Metrics, 'includedTokens' | 'includedMessages' | 'includedGroups'>;
  after: Pick<Metrics, 'includedTokens' | 'includedMessages' | 'includedGroups'>;
}

/** Something a caller should know: the budget could not be met, the summarizer failed, … */
export interface CompactionWarning {
  code:
    | 'budget_unmet'
    | 'summarizer_failed'
    | 'summarizer_empty'
    | 'summarizer_missing'
    | 'input_clipped'
    | 'bodies_unavailable';
  strategy: string;
  message: string;
}

/** What a summarizer is asked. The input is already bounded by the strategy's `maxInputTokens`. */
export interface SummarizeRequest {
  /** The messages to summarize, oldest first; tool calls always with their results. */
  messages: Message[];
  /** The text of an earlier summary that this one must fold in. */
  previousSummary?: string;
  /** The instructions (the strategy's default or custom prompt). */
  prompt: string;
  maxInputTokens: number;
  /** How long the summary may be, in tokens (the strategy reserves this much room for it). */
  maxSummaryTokens?: number;
}

/** A summary with its provenance (what a real LLM reports). */
export interface SummaryOutput {
  text: string;
  /** The model that wrote it (`local-extractive` for the local fallback). */
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
}

/**
 * Produces a summary: its text, or the text with its provenance. Throwing or returning empty text
 * leaves the view unchanged.
 */
export type Summarizer = (request: SummarizeRequest) => Promise<string | SummaryOutput>;

/** The world a strategy works in. */
export interface StrategyContext {
  readonly index: MessageIndex;
  /** True when the counts are exact (truncation's `max` then measures tokens, else messages). */
  readonly tokenized: boolean;
  /** The body of a message in the index (needed by collapse and summarization only). */
  message(id: string): Message | undefined;
  /** Counts a message produced by compaction, as the edge that runs the engine counts the others. */
  countTokens(message: Message): number;
  readonly summarizer?: Summarizer;
  /** Runs a child strategy (used by pipeline and tokenBudget). */
  run(spec: unknown): Promise<void>;
  /** Bodies of the messages this run created (summaries, collapsed lines), by id. */
  readonly created: Map<string, Message>;
  steps: CompactionStep[];
  warnings: CompactionWarning[];
}

/**
 * One strategy, whole: what a file in strategies/ exports and strategies/index.ts registers. Every
 * entry point (parseStrategy, runStrategy, needsBodies, strategyFires) dispatches to it by `type`.
 * A strategy holding others (pipeline, tokenBudget) keeps them as `unknown` data and reaches them
 * through the callbacks, which go back through the registry.
 */
export interface StrategyDefinition<S extends { type: string }> {
  /** The spec's `type`: its name in configurations, steps and docs. */
  readonly type: S['type'];
  /**
   * Validates a spec that arrived as data (JSON) and returns it complete, defaults filled in.
   * Throws a ValidationError (`invalid_option`) naming the bad field.
   */
  parse(input: Record<string, unknown>, parseChild: (child: unknown) => unknown): S;
  /** Runs the strategy over `ctx.index` (children through `ctx.run`). */
  apply(spec: S, ctx: StrategyContext): Promise<void>;
  /**
   * Would running it change the view given `metrics`? The workflow asks after each batch of appends
   * to decide whether to schedule a compaction. Pure and cheap; it may say yes when the strategy
   * then finds nothing to do, never no when it would act.
   */
  fires(spec: S, metrics: Metrics, firesChild: (child: unknown) => boolean): boolean;
  /** True if running it may create messages, so needs bodies and `countTokens`. Default false. */
  needsBodies?(spec: S, needsBodiesChild: (child: unknown) => boolean): boolean;
}

/** Metrics snapshot used in steps. */
export function snapshot(m: Metrics): CompactionStep['before'] {
  return {
    includedTokens: m.includedTokens,
    includedMessages: m.includedMessages,
    includedGroups: m.includedGroups,
  };
}

/**
 * Groups not excluded and not system, in view order. Unsendable ones (a call waiting for results,
 * reasoning waiting for its reply) are among them: {@link beyondNewest} keeps those it protects.
 */
export function includedNonSystem(index: MessageIndex): GroupState[] {
  return index.groups.filter((g) => !g.excluded && g.kind !== 'system');
}

/**
 * Excludes `candidates` oldest first until `done()` holds, and records one decision.
 * Returns how many groups it excluded and whether `done()` holds at the end.
 */
export function excludeOldest(
  ctx: StrategyContext,
  opts: {
    strategy: string;
    reason: string;
    exclusionReason: string;
    candidates: readonly GroupState[];
    done: () => boolean;
  },
): { excluded: number; met: boolean } {
  const before = snapshot(ctx.index.metrics);
  const taken: GroupState[] = [];
  for (const group of opts.candidates) {
    if (opts.done()) break;
    ctx.index.exclude(group, { reason: opts.exclusionReason, strategy: opts.strategy });
    taken.push(group);
  }
  if (taken.length > 0) {
    ctx.steps.push({
      strategy: opts.strategy,
      action: 'exclude',
      reason: opts.reason,
      groupIds: taken.map((g) => g.id),
      messageIds: taken.flatMap((g) => g.messageIds),
      before,
      after: snapshot(ctx.index.metrics),
    });
  }
  return { excluded: taken.length, met: opts.done() };
}

/** Records a `budget_unmet` warning. */
export function warnUnmet(ctx: StrategyContext, strategy: string, what: string): void {
  const m = ctx.index.metrics;
  ctx.warnings.push({
    code: 'budget_unmet',
    strategy,
    message: `${strategy}: ${what} could not be met without excluding protected groups (included: ${m.includedTokens} tokens, ${m.includedMessages} messages, ${m.includedGroups} groups)`,
  });
}

/** Validates a "keep at least N" floor: a whole number ≥ 1 (the newest group always stays). */
export function floor(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1) {
    throw new RangeErrorOption(name, v, 'a whole number ≥ 1 (the newest group always stays)');
  }
  return v;
}

/** Validates a "keep N" option where 0 means none: a whole number ≥ 0. */
export function keepCount(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 0) throw new RangeErrorOption(name, v, 'a whole number ≥ 0');
  return v;
}

/** Validates a positive whole-number option (budgets, window sizes). */
export function positive(name: string, value: number | undefined): number {
  if (value === undefined || !Number.isInteger(value) || value < 1) {
    throw new RangeErrorOption(name, value, 'a whole number ≥ 1');
  }
  return value;
}

/**
 * Validates a yes/no option. Specs arrive as JSON too, where `"false"` is a truthy string: only real
 * booleans are accepted, so a quoted value cannot silently turn an option on.
 */
export function flag(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new RangeErrorOption(name, JSON.stringify(value), 'true or false');
  return value;
}

class RangeErrorOption extends ValidationError {
  constructor(name: string, value: unknown, expected: string) {
    super('invalid_option', `${name}: expected ${expected}, got ${String(value)}`);
  }
}

/**
 * `groups` (in view order) minus the protected tail: the newest `keep` sendable groups that `counts`
 * accepts (non-system by default) and, always, the newest sendable group of all. Oldest first.
 *
 * Only sendable groups count toward a floor: a tool call still waiting for its result or a
 * reasoning-only group is never sent, so letting it be "the newest group that stays" could leave a
 * view with nothing but the system message. Such groups inside the protected tail stay too (a late
 * result must find its call included), but they do not use up the floor.
 */
export function beyondNewest(
  groups: readonly GroupState[],
  keep: number,
  counts: (g: GroupState) => boolean = (g) => g.kind !== 'system',
): GroupState[] {
  const out: GroupState[] = [];
  let left = keep;
  let anchored = false; // the newest sendable group has been seen (and kept)
  for (let i = groups.length - 1; i >= 0; i--) {
    const g = groups[i]!;
    const protecting = left > 0 || !anchored;
    if (!isSendable(g)) {
      if (!protecting) out.push(g);
      continue;
    }
    if (!anchored || (left > 0 && counts(g))) {
      anchored = true;
      if (counts(g)) left--;
      continue;
    }
    out.push(g);
  }
  return out.reverse();
}

/**
 * The included tool-call groups with all their results that a tool strategy may take, oldest first:
 * all but the newest `keep` of them (0: all), and never the newest sendable group of the view (when
 * the model has yet to read a tool round, that round is what it must read).
 */
export function olderToolGroups(index: MessageIndex, keep: number): GroupState[] {
  const isToolCall = (g: GroupState) => g.kind === 'tool_call';
  const included = index.groups.filter((g) => !g.excluded);
  return beyondNewest(included, keep, isToolCall).filter((g) => isToolCall(g) && isSendable(g));
}
