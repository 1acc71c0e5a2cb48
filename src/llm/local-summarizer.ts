/**
 * The local fallback summarizer: what runs when no LLM is configured. It is extractive (it copies,
 * clipped, what was said; it writes nothing of its own) and says so in its first line and in its
 * `model`, so no reader mistakes it for an LLM's summary.
 *
 * Rules: deterministic (same input, same output); at most {@link LOCAL_SUMMARY_MAX_CHARS} characters;
 * keeps, in this order, the earlier summary (clipped), what the user said (the first
 * {@link USER_STATEMENT_CHARS} characters of each user message), each tool outcome (`name → result`,
 * clipped) and the last assistant reply (clipped). When user statements and tool outcomes do not all
 * fit, the newest are kept and a line says how many older ones were left out.
 */
import type { Message } from '../model/message.js';
import { textOf } from '../model/message.js';
import type { SummarizeRequest, SummaryOutput, Summarizer } from '../compaction/strategy.js';

/** The first line of every local summary. */
export const LOCAL_SUMMARY_LABEL = '[local extractive summary: no LLM configured]';

/** The `model` recorded with a local summary. */
export const LOCAL_SUMMARIZER_MODEL = 'local-extractive';

/** Upper bound of a local summary's length, in characters. */
export const LOCAL_SUMMARY_MAX_CHARS = 2_000;

/** How much of each user message is kept. */
export const USER_STATEMENT_CHARS = 200;

const PREVIOUS_CHARS = 600;
const TOOL_RESULT_CHARS = 120;
const LAST_REPLY_CHARS = 300;

/**
 * The labelled extractive summarizer (no LLM, no I/O). A `Summarizer` that always returns its model.
 * @example
 * compact(messages, summarization(), { summarizer: localSummarizer });
 */
export const localSummarizer = (async (request: SummarizeRequest): Promise<SummaryOutput> => ({
  text: localSummaryText(request),
  model: LOCAL_SUMMARIZER_MODEL,
})) satisfies Summarizer;

function localSummaryText(request: SummarizeRequest): string {
  const head: string[] = [LOCAL_SUMMARY_LABEL];
  // A folded local summary starts with the label too; one label is enough.
  const previous = (request.previousSummary ?? '').replace(LOCAL_SUMMARY_LABEL, '').trim();
  if (previous) head.push(`Earlier: ${clip(oneLine(previous), PREVIOUS_CHARS)}`);

  const items = extractItems(request.messages);
  const lastReply = lastAssistantText(request.messages);
  const tail = lastReply ? [`Last assistant reply: ${clip(oneLine(lastReply), LAST_REPLY_CHARS)}`] : [];

  // What is left for the items once the fixed parts are placed (+1 per line for the newline).
  const fixed = [...head, ...tail].reduce((n, line) => n + line.length + 1, 0);
  const omittedNote = 48; // room for "(N earlier statements and outcomes omitted)"
  // The strategy says how long the summary may be (tokens ≈ chars / 4); never more than the cap.
  const max = Math.min(LOCAL_SUMMARY_MAX_CHARS, (request.maxSummaryTokens ?? Infinity) * 4);
  let room = max - fixed - omittedNote;
  const kept: string[] = [];
  for (let i = items.length - 1; i >= 0; i--) {
    const line = items[i]!;
    if (line.length + 1 > room) break; // newest first: older items are the ones left out
    kept.unshift(line);
    room -= line.length + 1;
  }
  const omitted = items.length - kept.length;
  const body = omitted > 0 ? [`(${omitted} earlier statements and outcomes omitted)`, ...kept] : kept;
  return clip([...head, ...body, ...tail].join('\n'), max);
}

/** User statements and tool outcomes, one line each, in conversation order. */
function extractItems(messages: readonly Message[]): string[] {
  const toolNames = new Map<string, string>();
  const items: string[] = [];
  for (const m of messages) {
    if (m.role === 'user') {
      const text = oneLine(textOf(m));
      if (text) items.push(`User: ${clip(text, USER_STATEMENT_CHARS)}`);
    }
    for (const p of m.parts) {
      if (p.type === 'tool_call') toolNames.set(p.callId, p.name);
      if (p.type === 'tool_result') {
        const name = p.name ?? toolNames.get(p.callId) ?? p.callId;
        const result = clip(oneLine(p.result), TOOL_RESULT_CHARS);
        items.push(`Tool ${name} → ${p.isError ? 'error: ' : ''}${result}`);
      }
    }
  }
  return items;
}

function lastAssistantText(messages: readonly Message[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    const text = m.role === 'assistant' ? oneLine(textOf(m)) : '';
    if (text) return text;
  }
  return undefined;
}

/** Collapses whitespace so one statement stays on one line. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Cuts to `max` characters (ellipsis included), never leaving half a surrogate pair. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const c = text.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return text.slice(0, end) + '…';
}
