/**
 * Summarization: send the oldest groups to a summarizer (an LLM behind an injected function) and put
 * one summary group in their place, linked to every id it replaces.
 *
 * Rules: system groups and the newest `minimumPreserved` non-system groups are never summarized;
 * tool calls go with their results and orphan results are never sent; the input is bounded by
 * `maxInputTokens` (a single oversized group is clipped, its longest parts first, and a warning says
 * so); an earlier summary in range is folded into the new one (passed as `previousSummary`); if the
 * summarizer throws or returns empty text, nothing changes and a warning says why. Trigger default
 * `always`; target default: the trigger no longer fires (groups are taken oldest first until the
 * target would hold).
 */
import type { Message } from '../../model/message.js';
import { textOf } from '../../model/message.js';
import { clipLongestParts, clippableLength } from '../../model/clip.js';
import { describeMessage } from '../message-meta.js';
import { isSendable, type GroupState } from '../group.js';
import type { Metrics } from '../metrics.js';
import { always, describe, evaluate, not, parseTrigger, type Trigger } from '../triggers.js';
import {
  beyondNewest,
  floor,
  positive,
  snapshot,
  type StrategyContext,
  type StrategyDefinition,
  type SummaryOutput,
} from '../strategy.js';
import { ValidationError } from '../../model/errors.js';

/** The default instructions: keep what a later turn will need. */
export const DEFAULT_SUMMARY_PROMPT =
  'Summarize the conversation so far for the assistant that will continue it. Keep every fact the user ' +
  'stated, steps made, user preferences, open questions and to-dos, and the outcome of each tool call ' +
  '(name and result). Fold in the previous summary if one is given. Be concise; write plain sentences; ' +
  'do not invent anything.';

/** Prefix of summary text in the view, so the model knows what it reads. */
export const SUMMARY_PREFIX = 'Summary of the earlier conversation:\n';

/** Options of {@link summarization}. */
export interface SummarizationOptions {
  trigger?: Trigger;
  target?: Trigger;
  /** Newest non-system groups never summarized. Default 4. */
  minimumPreserved?: number;
  /** Custom instructions. Default {@link DEFAULT_SUMMARY_PROMPT}. */
  prompt?: string;
  /** Upper bound of the summarizer's input, in tokens. Default 16,000. */
  maxInputTokens?: number;
  /**
   * How long the summary may be, in tokens: the summarizer is told, and groups are picked so that
   * the target holds with this much room left for the summary. Default 1,000.
   */
  maxSummaryTokens?: number;
}

/** A summarization strategy as data. */
export interface SummarizationSpec extends SummarizationOptions {
  type: 'summarization';
  trigger: Trigger;
  minimumPreserved: number;
  prompt: string;
  maxInputTokens: number;
  maxSummaryTokens: number;
}

/** Creates a summarization strategy (validated). */
export function summarization(options: SummarizationOptions = {}): SummarizationSpec {
  if (options.prompt !== undefined && (typeof options.prompt !== 'string' || !options.prompt.trim())) {
    throw new ValidationError('invalid_option', 'summarization.prompt: expected non-empty text');
  }
  const spec: SummarizationSpec = {
    type: 'summarization',
    trigger: parseTrigger(options.trigger ?? always()),
    minimumPreserved: floor('summarization.minimumPreserved', options.minimumPreserved, 4),
    prompt: options.prompt ?? DEFAULT_SUMMARY_PROMPT,
    maxInputTokens: positive('summarization.maxInputTokens', options.maxInputTokens ?? 16_000),
    maxSummaryTokens: positive('summarization.maxSummaryTokens', options.maxSummaryTokens ?? 1000),
  };
  if (options.target !== undefined) spec.target = parseTrigger(options.target);
  return spec;
}

/** Metrics as they would be with `groups` replaced by a summary of (at most) `summaryTokens`. */
function without(m: Metrics, groups: readonly GroupState[], summaryTokens: number): Metrics {
  const out = { ...m, includedTokens: m.includedTokens + summaryTokens };
  for (const g of groups) {
    out.includedTokens -= g.tokens;
    out.includedMessages -= g.messageIds.length;
    out.includedGroups--;
    out.includedNonSystemGroups--;
    if (g.kind === 'user') out.includedTurns--;
    if (g.kind === 'tool_call') out.includedToolCallGroups--;
  }
  return out;
}

/** Applies summarization. */
export async function applySummarization(spec: SummarizationSpec, ctx: StrategyContext): Promise<void> {
  const metrics = ctx.index.metrics;
  if (!evaluate(spec.trigger, metrics)) return;
  const target = spec.target ?? not(spec.trigger);
  const eligible = ctx.index.groups.filter((g) => g.kind !== 'system' && isSendable(g));
  const picked: GroupState[] = [];
  let inputTokens = 0;
  for (const g of beyondNewest(eligible, spec.minimumPreserved)) {
    if (picked.length > 0 && inputTokens + g.tokens > spec.maxInputTokens) break;
    if (picked.length > 0 && evaluate(target, without(metrics, picked, spec.maxSummaryTokens))) break;
    picked.push(g);
    inputTokens += g.tokens;
  }
  if (picked.length === 0 || (picked.length === 1 && picked[0]!.kind === 'summary')) return;
  if (!ctx.summarizer) {
    ctx.warnings.push({
      code: 'summarizer_missing',
      strategy: 'summarization',
      message: 'no summarizer given',
    });
    return;
  }
  const previous = picked.filter((g) => g.kind === 'summary').map((g) => ctx.message(g.id));
  const history = picked
    .filter((g) => g.kind !== 'summary')
    .flatMap((g) => g.messageIds.map((id) => ctx.message(id)));
  if ([...previous, ...history].some((m) => !m)) {
    // Without every body there is nothing faithful to send: leave the groups, and say so.
    ctx.warnings.push({
      code: 'bodies_unavailable',
      strategy: 'summarization',
      message: 'the bodies of some messages to summarize were not available',
    });
    return;
  }
  let messages = history as Message[];
  if (inputTokens > spec.maxInputTokens) {
    // Tokens are known per group, not per part: the characters that fit in the same proportion.
    const chars = messages.flatMap((m) => m.parts).reduce((n, p) => n + clippableLength(p), 0);
    messages = clipLongestParts(messages, Math.floor((chars * spec.maxInputTokens) / inputTokens));
    ctx.warnings.push({
      code: 'input_clipped',
      strategy: 'summarization',
      message: `summarizer input clipped from ~${inputTokens} to ~${spec.maxInputTokens} tokens`,
    });
  }
  const previousSummary = (previous as Message[])
    .map((m) => textOf(m).replace(SUMMARY_PREFIX, ''))
    .join('\n');
  let output: SummaryOutput;
  try {
    const reply = await ctx.summarizer({
      messages,
      previousSummary: previousSummary || undefined,
      prompt: spec.prompt,
      maxInputTokens: spec.maxInputTokens,
      maxSummaryTokens: spec.maxSummaryTokens,
    });
    output = typeof reply === 'string' ? { text: reply } : reply;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    ctx.warnings.push({
      code: 'summarizer_failed',
      strategy: 'summarization',
      message: `summarizer failed: ${message}`,
    });
    return;
  }
  if (!output || typeof output.text !== 'string' || !output.text.trim()) {
    ctx.warnings.push({
      code: 'summarizer_empty',
      strategy: 'summarization',
      message: 'summarizer returned no text',
    });
    return;
  }
  insert(spec, ctx, picked, { ...output, text: output.text.trim() });
}

/** Summarization, as registered in strategies/index.ts. */
export const summarizationDefinition: StrategyDefinition<SummarizationSpec> = {
  type: 'summarization',
  parse: (input) => summarization(input as SummarizationOptions), // the factory checks every field
  apply: applySummarization,
  fires: (spec, m) => evaluate(spec.trigger, m) && m.includedNonSystemGroups > spec.minimumPreserved,
  needsBodies: () => true, // the summarizer reads the messages and the summary is a new message
};

function insert(
  spec: SummarizationSpec,
  ctx: StrategyContext,
  picked: GroupState[],
  output: SummaryOutput,
): void {
  const replaces = picked.flatMap((g) => g.messageIds);
  const message: Message = {
    // Keyed by the covered range, so a retried summarization of the same range gets the same id.
    id: `summary:${origin(replaces[0]!)}..${replaces[replaces.length - 1]}`,
    role: 'user',
    parts: [{ type: 'text', text: SUMMARY_PREFIX + output.text }],
    metadata: {
      compaction: { kind: 'summary', strategy: 'summarization', replaces },
      ...(output.model
        ? {
            summarizer: {
              model: output.model,
              inputTokens: output.inputTokens,
              outputTokens: output.outputTokens,
            },
          }
        : {}),
    },
  };
  const meta = describeMessage(message, ctx.countTokens(message));
  const before = snapshot(ctx.index.metrics);
  ctx.created.set(message.id, message);
  ctx.index.insertSummary(meta, picked, {
    reason: 'summarized',
    strategy: 'summarization',
  });
  ctx.steps.push({
    strategy: 'summarization',
    action: 'summarize',
    reason: describe(spec.trigger),
    groupIds: picked.map((g) => g.id),
    messageIds: replaces,
    summary: meta,
    before,
    after: snapshot(ctx.index.metrics),
  });
}

/** The first history id a (possibly summary) id stands for. */
function origin(id: string): string {
  return id.startsWith('summary:') ? id.slice('summary:'.length).split('..')[0]! : id;
}
