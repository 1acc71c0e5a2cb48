/**
 * Tool-result collapse: replace each older tool-call group (the call and all its results) with one
 * short message such as `[Tool results: get_weather: sunny, 18°C; search_docs: 3 hits]`.
 *
 * Rules: user messages and assistant text are untouched; the newest `keepLastToolCallGroups`
 * tool-call groups stay whole (0: none), and so does the newest group of the view; each result is
 * cut to `maxResultChars` and the whole line to `maxLength`; running it again changes nothing (a
 * collapsed group is a summary, not a tool call).
 * Trigger default `always`; target default: the trigger no longer fires.
 */
import type { Message, ToolCallPart, ToolResultPart } from '../../model/message.js';
import { ValidationError } from '../../model/errors.js';
import { describeMessage } from '../message-meta.js';
import type { GroupState } from '../group.js';
import { always, describe, evaluate, not, parseTrigger, type Trigger } from '../triggers.js';
import {
  keepCount,
  olderToolGroups,
  positive,
  snapshot,
  type StrategyContext,
  type StrategyDefinition,
} from '../strategy.js';

/** One collapsed call, as handed to a custom formatter. */
export interface CollapsedCall {
  name: string;
  arguments: string;
  result: string;
  isError: boolean;
}

/** Options of {@link toolResultCollapse}. */
export interface ToolResultCollapseOptions {
  /** Newest tool-call groups kept whole. Default 2; 0: all collapse (never the newest group of the view). */
  keepLastToolCallGroups?: number;
  /** Characters kept of each result. Default 80. */
  maxResultChars?: number;
  /** Characters of the whole collapsed line. Default 600. */
  maxLength?: number;
  trigger?: Trigger;
  target?: Trigger;
  /**
   * Custom line format (ad-hoc use: a function does not survive serialisation, so a thread's stored
   * configuration uses the default format). Its output is still capped at `maxLength`.
   */
  format?: (calls: CollapsedCall[]) => string;
}

/** A tool-result-collapse strategy as data. */
export interface ToolResultCollapseSpec extends ToolResultCollapseOptions {
  type: 'toolResultCollapse';
  keepLastToolCallGroups: number;
  maxResultChars: number;
  maxLength: number;
  trigger: Trigger;
}

/** Creates a tool-result-collapse strategy (validated). */
export function toolResultCollapse(options: ToolResultCollapseOptions = {}): ToolResultCollapseSpec {
  const spec: ToolResultCollapseSpec = {
    type: 'toolResultCollapse',
    keepLastToolCallGroups: keepCount(
      'toolResultCollapse.keepLastToolCallGroups',
      options.keepLastToolCallGroups,
      2,
    ),
    maxResultChars: positive('toolResultCollapse.maxResultChars', options.maxResultChars ?? 80),
    maxLength: positive('toolResultCollapse.maxLength', options.maxLength ?? 600),
    trigger: parseTrigger(options.trigger ?? always()),
  };
  if (options.target !== undefined) spec.target = parseTrigger(options.target);
  if (options.format !== undefined) {
    if (typeof options.format !== 'function') {
      throw new ValidationError(
        'invalid_option',
        `toolResultCollapse.format: expected a function (calls) => string, got ${typeof options.format}`,
      );
    }
    spec.format = options.format;
  }
  return spec;
}

/** Cuts `text` to `max` characters, marking the cut, without splitting a surrogate pair. */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  let end = Math.max(0, max - 1);
  const c = flat.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return flat.slice(0, end) + '…';
}

/** The default line: `[Tool results: name: result; name: result]`. */
export function defaultCollapseFormat(calls: CollapsedCall[], maxResultChars: number): string {
  const items = calls.map((c) => `${c.name}: ${c.isError ? 'error: ' : ''}${clip(c.result, maxResultChars)}`);
  return `[Tool results: ${items.join('; ')}]`;
}

/** Applies the collapse. */
export function applyToolResultCollapse(spec: ToolResultCollapseSpec, ctx: StrategyContext): Promise<void> {
  if (!evaluate(spec.trigger, ctx.index.metrics)) return Promise.resolve();
  const target = spec.target ?? not(spec.trigger);
  for (const group of olderToolGroups(ctx.index, spec.keepLastToolCallGroups)) {
    if (evaluate(target, ctx.index.metrics)) break;
    const messages = group.messageIds.map((id) => ctx.message(id));
    if (messages.some((m) => !m)) continue; // bodies unavailable: leave the group as it is
    collapse(spec, ctx, group, messages as Message[]);
  }
  return Promise.resolve();
}

/** Tool-result collapse, as registered in strategies/index.ts. */
export const toolResultCollapseDefinition: StrategyDefinition<ToolResultCollapseSpec> = {
  type: 'toolResultCollapse',
  // The factory checks every field (a `format` function cannot arrive as JSON, and is checked too).
  parse: (input) => toolResultCollapse(input as ToolResultCollapseOptions),
  apply: applyToolResultCollapse,
  fires: (spec, m) => evaluate(spec.trigger, m) && m.includedToolCallGroups > spec.keepLastToolCallGroups,
  needsBodies: () => true, // it writes a collapsed line from the calls and results
};

function collapse(
  spec: ToolResultCollapseSpec,
  ctx: StrategyContext,
  group: GroupState,
  messages: Message[],
) {
  const calls = new Map<string, ToolCallPart>();
  const results: ToolResultPart[] = [];
  for (const m of messages) {
    for (const p of m.parts) {
      if (p.type === 'tool_call') calls.set(p.callId, p);
      else if (p.type === 'tool_result') results.push(p);
    }
  }
  const collapsed: CollapsedCall[] = results.map((r) => ({
    name: r.name ?? calls.get(r.callId)?.name ?? 'tool',
    arguments: calls.get(r.callId)?.arguments ?? '{}',
    result: r.result,
    isError: r.isError === true,
  }));
  const line = spec.format ? spec.format(collapsed) : defaultCollapseFormat(collapsed, spec.maxResultChars);
  const message: Message = {
    id: `collapse:${group.id}`,
    role: 'assistant',
    parts: [{ type: 'text', text: clip(line, spec.maxLength) }],
    metadata: {
      compaction: { kind: 'summary', strategy: 'toolResultCollapse', replaces: [...group.messageIds] },
    },
  };
  const meta = describeMessage(message, ctx.countTokens(message));
  const before = snapshot(ctx.index.metrics);
  ctx.created.set(message.id, message);
  ctx.index.insertSummary(meta, [group], {
    reason: 'collapsed',
    strategy: 'toolResultCollapse',
  });
  ctx.steps.push({
    strategy: 'toolResultCollapse',
    action: 'collapse',
    reason: describe(spec.trigger),
    groupIds: [group.id],
    messageIds: [...group.messageIds],
    summary: meta,
    before,
    after: snapshot(ctx.index.metrics),
  });
}
