/**
 * `npm run bench:cache` (issue 22): how much of each context a provider's prompt cache keeps. It
 * replays conversations turn by turn through `append` and `context({ budget })`, as an agent does (a
 * model call after each user message, its reply appended), and prints per configuration the share of
 * each prompt's tokens that is an exact prefix of the previous prompt plus the messages since, how
 * often the whole previous prompt is reused, the share between compactions, and the input cost per
 * call at published cached/uncached price ratios, beside a naive sliding window and truncation in
 * steps computed in the same run over the same turns and token counts (bench/prompt-cache.ts).
 *
 * Usage: npm run bench:cache -- [--dataset DIR] [--turns N] [--budget N] [--quick]
 *   --dataset: LoCoMo-format conversations (default ../shared/recall-dev when it exists)
 *   --turns: at most this many turns of each conversation (default all; --quick: 120)
 *   --variants: only the configurations whose name contains this ('stable block', 'recall off')
 *   --min-cover: recall.minCover of the stable-block rows (default: the default)
 *   --min-match: recall.minMatch of every row of ours (default: the default; src/recall/gate.ts)
 *   --details FILE: per call of ours, JSON lines: the query, the context's and recalled block's tokens,
 *     the best match outside the view (src/recall/gate.ts), the recalled items ([seq, hit seq, tokens]) and the full-text hits' raw BM25 scores ([seq, score])
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ThreadHandle } from '../src/client/thread-handle.js';
import { truncation } from '../src/compaction/strategies/truncation.js';
import { tokensBelow, tokensExceed } from '../src/compaction/triggers.js';
import type { StrategySpec } from '../src/compaction/strategy-spec.js';
import type { MessageInput } from '../src/model/message.js';
import { toOpenAI } from '../src/model/openai.js';
import { normalizeMessages } from '../src/model/validation.js';
import { LOW_WATER_MARK, viewBudget } from '../src/thread/config.js';
import { tokenizerForModel } from '../src/tokenizers/for-model.js';
import { MESSAGE_OVERHEAD } from '../src/tokenizers/tokenizer.js';
import { startPipeline, type TestPipeline } from '../test/support/pipeline.js';
import { PostgresThreadStore } from '../src/store/postgres/postgres-thread-store.js';
import { readDataset } from './locomo.js';
import { MEMORY_BLOCK_ID } from '../src/thread/memory-block.js';
import { RECALL_BLOCK_ID, RECALL_VOLATILE_ID } from '../src/recall/block.js';
import type { ContextResult } from '../src/client/context.js';
import { WORKING_MEMORY_BLOCK_ID } from '../src/thread/working-memory-block.js';
import {
  addParts,
  addReuse,
  costPerCall,
  NO_REUSE,
  prefixReuse,
  reusedMessages,
  slidingWindow,
  type PartTotals,
  type PromptPart,
  truncationInSteps,
  type PromptMessage,
  type ReuseTotals,
} from './prompt-cache.js';
import { recallConversation } from './recall-conversations.js';

const flag = (name: string) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
const QUICK = process.argv.includes('--quick');
const DATASET =
  flag('--dataset') ?? (existsSync('../shared/recall-dev') ? '../shared/recall-dev' : undefined);
const TURNS = Number(flag('--turns') ?? (QUICK ? 120 : Infinity));
const BUDGET = Number(flag('--budget') ?? 4000);
/** Only the configurations whose name contains this (e.g. 'recall on'). */
const ONLY = flag('--variants');
/** The recall share of the 'recall on' rows (default: the thread's default, 0.5). */
const RECALL_SHARE = Number(flag('--recall-share') ?? 0.5);
/** `recall.minCover` of the stable rows' calls (default: the default). */
const MIN_COVER = flag('--min-cover');
/** `recall.minMatch` of our calls (default: the default). */
const MIN_MATCH = flag('--min-match');
const DETAILS = flag('--details');
/** With `--details`: one JSON line per call of ours, and the store its searches read. */
const details: string[] = [];
let detailStore: PostgresThreadStore | undefined;
const COMMAND = `npm run bench:cache -- ${process.argv.slice(2).join(' ')}`.trim();
/** Published cached/uncached input price ratios: gpt-4o ($1.25 vs $2.50 per million), Anthropic cache reads. */
const RATIOS = { openai: 0.5, anthropic: 0.1 };

const log = (line: string) =>
  process.stderr.write(`[bench:cache ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

const tokenizer = tokenizerForModel('gpt-4o');
const promptMessage = (m: ChatCompletionMessageParam): PromptMessage => {
  const key = JSON.stringify(m);
  const text = typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '');
  return { key, tokens: tokenizer.count(text) + MESSAGE_OVERHEAD };
};
const asPrompt = (inputs: readonly MessageInput[]) => toOpenAI(normalizeMessages(inputs)).map(promptMessage);

interface Conversation {
  name: string;
  messages: MessageInput[];
}

/** One configuration of ours. */
interface Variant {
  name: string;
  recallShare: number;
  /** Summaries (the default strategy) or truncation alone, with the same trigger and target. */
  summaries: boolean;
  /** Each call passes the previous context's `cache` (`context({ previous })`): the stable recalled block. */
  stable?: boolean;
}

const VARIANTS: Variant[] = [
  { name: 'recall on, stable block, summaries', recallShare: RECALL_SHARE, summaries: true, stable: true },
  {
    name: 'recall on, stable block, no summaries',
    recallShare: RECALL_SHARE,
    summaries: false,
    stable: true,
  },
  { name: 'recall on, summaries', recallShare: RECALL_SHARE, summaries: true },
  { name: 'recall on, no summaries', recallShare: RECALL_SHARE, summaries: false },
  { name: 'recall off, summaries', recallShare: 0, summaries: true },
  { name: 'recall off, no summaries', recallShare: 0, summaries: false },
];

/** Sums over every call, and over the calls with no compaction since the previous one. */
interface Figures {
  all: ReuseTotals;
  between: ReuseTotals;
  /** Ours only: per part of the prompt, tokens sent and tokens missed (all calls). */
  parts?: PartTotals;
  /** Ours only: recalled items per call, and how many of them the previous call recalled too. */
  recalledItems?: number;
  recalledAgain?: number;
}

async function conversations(): Promise<Conversation[]> {
  const out: Conversation[] = [];
  if (DATASET) {
    for (const c of await readDataset(DATASET))
      out.push({ name: `dev ${c.name}`, messages: c.turns.map((t) => t.message).slice(0, TURNS) });
  }
  for (const seed of [1, 2]) {
    const c = recallConversation(seed);
    out.push({ name: `generated ${seed}`, messages: c.messages.slice(0, TURNS) });
  }
  return out;
}

function strategyFor(variant: Variant): StrategySpec | undefined {
  if (variant.summaries) return undefined; // the default for the budget
  // The default strategy's trigger and target: the view's budget, the budget less recall's share.
  const view = viewBudget({ budget: BUDGET, recallShare: variant.recallShare });
  const trigger = tokensExceed(view);
  const target = tokensBelow(Math.floor(view * LOW_WATER_MARK) + 1);
  return truncation({ trigger, target, minimumPreserved: 1 }) as StrategySpec;
}

/** Waits until the workflow has indexed every message and has no compaction pending. */
async function settled(thread: ThreadHandle): Promise<number> {
  let state = await thread.sync();
  while (state.pending.includes('compaction')) {
    await new Promise((r) => setTimeout(r, 20));
    state = await thread.state();
  }
  return state.compactions;
}

/** Replays one conversation through one configuration of ours. */
async function replay(pipeline: TestPipeline, c: Conversation, v: Variant, id: string): Promise<Figures> {
  const thread = pipeline.memory.thread(id);
  const strategy = strategyFor(v);
  await thread.configure({ budget: BUDGET, recallShare: v.recallShare, ...(strategy ? { strategy } : {}) });
  let figures: Figures = { all: NO_REUSE, between: NO_REUSE, parts: {}, recalledItems: 0, recalledAgain: 0 };
  let previous: PromptMessage[] | undefined;
  let cache: ContextResult['cache'] | undefined;
  let previousRecalled = new Set<string>();
  let since: MessageInput[] = [];
  let compactions = 0;
  for (const message of c.messages) {
    await thread.append(message);
    since.push(message);
    if (message.role !== 'user') continue;
    const now = await settled(thread);
    const ctx = await thread.context({
      budget: BUDGET,
      ...(v.stable ? { previous: cache ?? {} } : {}),
      ...(v.recallShare > 0 && (MIN_MATCH !== undefined || (v.stable && MIN_COVER !== undefined))
        ? {
            recall: {
              ...(v.stable && MIN_COVER !== undefined ? { minCover: Number(MIN_COVER) } : {}),
              ...(MIN_MATCH !== undefined ? { minMatch: Number(MIN_MATCH) } : {}),
            },
          }
        : {}),
    });
    cache = ctx.cache;
    if (v.stable && ctx.recall?.stable) {
      const s = ctx.recall.stable;
      stableCounts[s.kept ? 'kept' : s.why!] = (stableCounts[s.kept ? 'kept' : s.why!] ?? 0) + 1;
      if (s.cover !== undefined)
        covers[Math.round(s.cover * 10)] = (covers[Math.round(s.cover * 10)] ?? 0) + 1;
    }
    const prompt = ctx.openai.map(promptMessage);
    const sincePrompt = asPrompt(since);
    const reuse = prefixReuse(previous, sincePrompt, prompt);
    if (detailStore && ctx.recall) {
      const hits = await detailStore.search(ctx.recall.query, { scope: { threadId: id }, limit: 100 });
      details.push(
        JSON.stringify({
          conversation: c.name,
          variant: v.name,
          turn: message.id,
          query: ctx.recall.query,
          tokens: ctx.tokens,
          recallTokens: ctx.recall.tokens,
          match: ctx.recall.match,
          promptTokens: reuse.tokens,
          reused: previous ? reuse.reused : 0,
          compacted: now !== compactions,
          ...(ctx.recall.stable ? { stable: ctx.recall.stable } : {}),
          recalled: ctx.recalled.map((r) => [r.seq, r.hitSeq, r.tokens]),
          raw: hits.map((h) => [h.seq, Math.round(h.score * 1000) / 1000]),
        }),
      );
    }
    const recalledNow = new Set(ctx.recalled.map((r) => `${r.threadId}:${r.seq}`));
    if (v.stable && previous && ctx.recall?.stable?.kept) keptReuse = addReuse(keptReuse, reuse);
    if (previous) {
      const newest = new Set(since.map((m) => m.id));
      const summaries = new Set(ctx.messages.filter((m) => m.role === 'system').map((m) => m.id));
      const parts = ctx.messages.map((m): PromptPart => {
        if (m.id === RECALL_BLOCK_ID) return 'recalled';
        if (m.id === RECALL_VOLATILE_ID) return 'volatile';
        if (m.id === MEMORY_BLOCK_ID) return 'memories';
        if (m.id === WORKING_MEMORY_BLOCK_ID) return 'working';
        if (newest.has(m.id)) return 'newest';
        return summaries.has(m.id) ? 'summaries' : 'view';
      });
      figures = {
        all: addReuse(figures.all, reuse),
        between: now === compactions ? addReuse(figures.between, reuse) : figures.between,
        parts:
          parts.length === prompt.length
            ? addParts(figures.parts!, prompt, parts, reusedMessages(previous, sincePrompt, prompt))
            : figures.parts!,
        recalledItems: figures.recalledItems! + recalledNow.size,
        recalledAgain:
          figures.recalledAgain! + [...recalledNow].filter((k) => previousRecalled.has(k)).length,
      };
    }
    previousRecalled = recalledNow;
    compactions = now;
    previous = prompt;
    since = [];
  }
  return figures;
}

/** The baselines over the same turns: a naive sliding window and truncation in steps. */
function baselines(c: Conversation): { window: Figures; steps: Figures } {
  const history: PromptMessage[] = [];
  const out = { window: { all: NO_REUSE, between: NO_REUSE }, steps: { all: NO_REUSE, between: NO_REUSE } };
  let prevWindow: PromptMessage[] | undefined;
  let prevSteps: PromptMessage[] | undefined;
  let since: PromptMessage[] = [];
  let start = 0;
  for (const message of c.messages) {
    const [m] = asPrompt([message]);
    history.push(m!);
    since.push(m!);
    if (message.role !== 'user') continue;
    const window = slidingWindow(history, BUDGET);
    const moved = truncationInSteps(history, start, BUDGET);
    const steps = history.slice(moved);
    const w = prefixReuse(prevWindow, since, window);
    const s = prefixReuse(prevSteps, since, steps);
    if (prevWindow) {
      out.window = { all: addReuse(out.window.all, w), between: addReuse(out.window.between, w) };
      out.steps = {
        all: addReuse(out.steps.all, s),
        between: moved === start ? addReuse(out.steps.between, s) : out.steps.between,
      };
    }
    start = moved;
    prevWindow = window;
    prevSteps = steps;
    since = [];
  }
  return out;
}

const sumParts = (a: PartTotals = {}, b: PartTotals = {}): PartTotals => {
  const out: PartTotals = { ...a };
  for (const [k, v] of Object.entries(b) as [PromptPart, { tokens: number; missed: number }][]) {
    const t = out[k] ?? { tokens: 0, missed: 0 };
    out[k] = { tokens: t.tokens + v.tokens, missed: t.missed + v.missed };
  }
  return out;
};
const sum = (a: ReuseTotals, b: ReuseTotals): ReuseTotals => ({
  calls: a.calls + b.calls,
  tokens: a.tokens + b.tokens,
  reused: a.reused + b.reused,
  whole: a.whole + b.whole,
});
const pct = (n: number, d: number) => (d === 0 ? '–' : `${((100 * n) / d).toFixed(1)}%`);

function row(name: string, f: Figures): string {
  const { all, between } = f;
  return `| ${name} | ${pct(all.reused, all.tokens)} | ${pct(between.reused, between.tokens)} | ${pct(all.whole, all.calls)} | ${Math.round(all.tokens / Math.max(1, all.calls))} | ${Math.round(costPerCall(all, RATIOS.openai))} | ${Math.round(costPerCall(all, RATIOS.anthropic))} |`;
}

const PART_ORDER: PromptPart[] = [
  'system',
  'working',
  'summaries',
  'view',
  'memories',
  'recalled',
  'volatile',
  'newest',
];

/** Ours with a stable block: how often each call kept it, or why it built a new one. */
const stableCounts: Record<string, number> = {};
/** Ours with a stable block: the reuse of the calls that kept it in place. */
let keptReuse: ReuseTotals = NO_REUSE;
/** How many calls found each share (tenths) of their strong hits in the stable block. */
const covers: number[] = [];

/** Per part: "sent / missed" tokens per call. */
function breakdownRow(name: string, f: Figures): string {
  const calls = Math.max(1, f.all.calls);
  const cells = PART_ORDER.map((p) => {
    const t = f.parts![p];
    return t ? `${Math.round(t.tokens / calls)} / ${Math.round(t.missed / calls)}` : '–';
  });
  const items = `${(f.recalledItems! / calls).toFixed(1)} (${(f.recalledAgain! / calls).toFixed(1)})`;
  return `| ${name} | ${cells.join(' | ')} | ${items} |`;
}

async function main(): Promise<void> {
  const started = Date.now();
  const list = await conversations();
  log(
    `${list.length} conversations, ${list.reduce((n, c) => n + c.messages.length, 0)} messages, budget ${BUDGET}`,
  );
  const pipeline = await startPipeline({ embedder: null });
  if (DETAILS) detailStore = await PostgresThreadStore.connect(pipeline.stack.databaseUrl);
  const totals = new Map<string, Figures>();
  const add = (name: string, f: Figures) => {
    const t = totals.get(name) ?? { all: NO_REUSE, between: NO_REUSE };
    totals.set(name, {
      all: sum(t.all, f.all),
      between: sum(t.between, f.between),
      ...(f.parts
        ? {
            parts: sumParts(t.parts, f.parts),
            recalledItems: (t.recalledItems ?? 0) + f.recalledItems!,
            recalledAgain: (t.recalledAgain ?? 0) + f.recalledAgain!,
          }
        : {}),
    });
  };
  try {
    for (const [i, c] of list.entries()) {
      const b = baselines(c);
      add('naive sliding window (baseline)', b.window);
      add('truncation in steps to half (baseline)', b.steps);
      for (const [j, v] of VARIANTS.entries()) {
        if (ONLY && !v.name.includes(ONLY)) continue;
        log(`${c.name}: ${v.name}`);
        add(`ours, ${v.name}`, await replay(pipeline, c, v, `cache-${process.pid}-${i}-${j}`));
      }
    }
  } finally {
    await detailStore?.close();
    await pipeline.stop();
  }
  if (DETAILS) await writeFile(DETAILS, `${details.join('\n')}\n`);
  const lines = [
    `## Prompt cache (\`${COMMAND}\`)`,
    '',
    `Budget ${BUDGET} tokens; ${list.map((c) => `${c.name} (${c.messages.length} messages)`).join(', ')}; a model call after each user message.`,
    `Machine: ${os.cpus()[0]?.model ?? '?'}, ${os.cpus().length} cores; load average ${os.loadavg()[0]!.toFixed(2)} at the end; ${new Date().toISOString()}; ${Math.round((Date.now() - started) / 1000)} s.`,
    '',
    '| context | prefix reused (all calls) | prefix reused (between compactions) | whole previous prompt reused | tokens per call | input cost per call, gpt-4o (cached 0.5×) | input cost per call, Anthropic (cached 0.1×) |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...[...totals].map(([name, f]) => row(name, f)),
    '',
    'Cost is in full-price tokens per call. "Between compactions": calls with no compaction (ours) or window move (truncation in steps) since the previous call.',
    '',
    'Where the tokens go (ours, all calls): per part, its tokens per call and the tokens per call billed in full (not a reused prefix); the recalled items per call and how many the previous call recalled too.',
    '',
    `| context | ${PART_ORDER.join(' | ')} | recalled items per call (of them recalled the call before) |`,
    `| --- | ${PART_ORDER.map(() => '---').join(' | ')} | --- |`,
    ...[...totals].filter(([, f]) => f.parts).map(([name, f]) => breakdownRow(name, f)),
    '',
    `Stable recalled block, all calls of the stable rows: ${Object.entries(stableCounts)
      .map(([k, n]) => `${k} ${n}`)
      .join(
        ', ',
      )} (kept: in place; otherwise why it was built anew); prefix reused on the calls that kept it: ${pct(keptReuse.reused, keptReuse.tokens)}. Share of the strong hits in the previous block: ${covers
      .map((n, i) => `${i * 10}%: ${n ?? 0}`)
      .join(', ')}.`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
