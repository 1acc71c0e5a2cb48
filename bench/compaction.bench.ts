/**
 * `npm run bench:compaction`: the compaction engine on seeded synthetic conversations of 10,000 and
 * 100,000 messages (issue 2, "Benchmark"). Prints markdown tables to stdout, headed by the command,
 * the machine, the Node version and the date, so that they can be pasted into BENCHMARKS.md as is.
 *
 * What is measured, and how:
 * - Counting: `countMessageTokens` over every message, exact (`tokenizerForModel('gpt-4o')`, i.e.
 *   o200k_base) and with the chars/4 estimator, as tokens per second.
 * - Grouping: `MessageIndex.from(metas)` with metas precounted by `describeMessage`, so it measures
 *   grouping alone.
 * - Strategies: `compactIndex` on an index grouped beforehand (a fresh one per run, grouping not
 *   timed), and `compact()` end to end (validation, counting, grouping, strategy, projection).
 * - LangChain JS `trimMessages` on the same conversation, against our token window.
 * - Incremental append: one message onto an index of 100 messages and of 100,000.
 *
 * Every figure is the median of several runs after a warm-up run. A run that would take many seconds
 * (judged from the 10,000-message figure) is run once, in a child process with a time limit, so that
 * one quadratic step cannot stall the whole benchmark; the table then says "> N s (stopped)".
 */
import { fork } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  trimMessages,
  type BaseMessage,
} from '@langchain/core/messages';
import type { Message } from '../src/model/message.js';
import { textOf } from '../src/model/message.js';
import { countMessageTokens, type Tokenizer } from '../src/tokenizers/tokenizer.js';
import { CharacterEstimatorTokenizer } from '../src/tokenizers/estimator.js';
import { tokenizerForModel } from '../src/tokenizers/for-model.js';
import { describeMessage, type MessageMeta } from '../src/compaction/message-meta.js';
import { MessageIndex } from '../src/compaction/message-index.js';
import { compact } from '../src/chat-memory/compact.js';
import { compactIndex } from '../src/compaction/compact-index.js';
import type { Summarizer } from '../src/compaction/strategy.js';
import type { StrategySpec } from '../src/compaction/strategy-spec.js';
import { tokensExceed } from '../src/compaction/triggers.js';
import { truncation } from '../src/compaction/strategies/truncation.js';
import { slidingWindow } from '../src/compaction/strategies/sliding-window.js';
import { toolResultCollapse } from '../src/compaction/strategies/tool-result-collapse.js';
import { selectiveToolCall } from '../src/compaction/strategies/selective-tool-call.js';
import { summarization } from '../src/compaction/strategies/summarization.js';
import { pipeline } from '../src/compaction/strategies/pipeline.js';
import { tokenBudget } from '../src/compaction/strategies/token-budget.js';
import { messageWindow, tokenWindow } from '../src/compaction/strategies/windows.js';
import { syntheticConversation, syntheticStats } from './synthetic-conversation.js';

/** Conversation sizes, in messages. */
const SIZES = [10_000, 100_000] as const;
/** PRNG seed of the synthetic conversations. */
const SEED = 42;
/** Token budget of every budgeted strategy and of the LangChain trim: a GPT-4o context window. */
const BUDGET = 128_000;
/** A run predicted (linearly, from the 10,000-message figure) to take longer than this goes to a child. */
const SLOW_RUN_MS = 2_000;
/** Time limit of a run in a child process. */
const CHILD_LIMIT_MS = 8_000;
/** Measured runs per figure (after one warm-up run), unless {@link RUN_BUDGET_MS} is spent first. */
const RUNS = 5;
/** Stop adding runs to a figure once its measured runs took this long (at least one run is kept). */
const RUN_BUDGET_MS = 3_000;
/** Appends timed one by one in the incremental-append benchmark, per index size. */
const APPENDS = 10_000;

/** A trivial local summarizer: no LLM, so the figure is the strategy's own cost. */
const summarizer: Summarizer = (request) =>
  Promise.resolve(
    `${request.messages.length} messages, starting: ${textOf(request.messages[0]!).slice(0, 200)}`,
  );

/** One strategy under test: a row label and its spec. */
interface StrategyCase {
  name: string;
  label: string;
  spec: StrategySpec;
}

/** The strategies, with the parameters printed in their labels. Built on demand (child processes too). */
function strategyCases(): StrategyCase[] {
  const over = tokensExceed(BUDGET);
  return [
    { name: 'truncation', label: 'truncation({ max: B })', spec: truncation({ max: BUDGET }) },
    {
      name: 'slidingTurns',
      label: 'slidingWindow({ keepTurns: 20 })',
      spec: slidingWindow({ keepTurns: 20 }),
    },
    {
      name: 'slidingGroups',
      label: 'slidingWindow({ keepGroups: 100 })',
      spec: slidingWindow({ keepGroups: 100 }),
    },
    { name: 'collapse', label: 'toolResultCollapse()', spec: toolResultCollapse() },
    { name: 'selective', label: 'selectiveToolCall()', spec: selectiveToolCall() },
    {
      name: 'summarization',
      label: 'summarization({ trigger: tokensExceed(B) })',
      spec: summarization({ trigger: over }),
    },
    {
      name: 'pipeline',
      label: 'pipeline(toolResultCollapse, summarization, truncation), each tokensExceed(B)',
      spec: pipeline(
        toolResultCollapse({ trigger: over }),
        summarization({ trigger: over }),
        truncation({ max: BUDGET }),
      ),
    },
    {
      name: 'tokenBudget',
      label: 'tokenBudget({ budget: B, strategies: [selectiveToolCall] }) + fallback',
      spec: tokenBudget({ budget: BUDGET, strategies: [selectiveToolCall({ trigger: over })] }),
    },
    { name: 'messageWindow', label: 'messageWindow(1000)', spec: messageWindow(1000) },
    { name: 'tokenWindow', label: 'tokenWindow(B)', spec: tokenWindow(BUDGET) },
  ];
}

// ---------------------------------------------------------------------------------------------------
// Measuring

/** A figure: the median of `runs` measured runs, or a run stopped at a time limit. */
interface Figure {
  ms: number;
  runs: number;
  /** Set when the run was stopped at this limit (ms is then the limit). */
  stoppedAt?: number;
  /** Set when the step was not run; says why. */
  skipped?: string;
  /** What the last run returned (e.g. what stayed in the view), when known. */
  last?: unknown;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

/**
 * Times `run` after an untimed `setup` (e.g. a fresh index), with one warm-up run first. A warm-up
 * slower than a second counts as a measured run: JIT warm-up is noise at that scale, and repeating a
 * slow step would blow the time budget.
 */
async function measure<S>(
  setup: () => S,
  run: (state: S) => unknown,
  runs = RUNS,
  budgetMs = RUN_BUDGET_MS,
): Promise<Figure> {
  const times: number[] = [];
  let spent = 0;
  let last: unknown;
  for (let i = 0; i <= runs; i++) {
    const state = setup();
    const start = performance.now();
    last = await run(state);
    const ms = performance.now() - start;
    if (i > 0 || ms > 1_000) {
      times.push(ms);
      spent += ms;
    }
    if (spent > budgetMs && times.length > 0) break;
  }
  return { ms: median(times), runs: times.length, last };
}

/** Builds the body-free metas from precomputed counts (what a workflow carries). */
function metasOf(messages: readonly Message[], counts: ArrayLike<number>): MessageMeta[] {
  return messages.map((m, i) => describeMessage(m, counts[i]!));
}

function bodiesOf(messages: readonly Message[]): Map<string, Message> {
  return new Map(messages.map((m) => [m.id, m]));
}

/** Runs a strategy on a grouped index; returns what stayed in the view. */
async function runStrategy(index: MessageIndex, spec: StrategySpec, bodies: Map<string, Message>) {
  await compactIndex(index, spec, {
    bodies,
    tokenized: true,
    countTokens: (m) => countMessageTokens(m, ESTIMATOR),
    summarizer,
  });
  const m = index.metrics;
  return { messages: m.includedMessages, tokens: m.includedTokens };
}

const ESTIMATOR = new CharacterEstimatorTokenizer();

// ---------------------------------------------------------------------------------------------------
// LangChain

/**
 * Our messages as LangChain messages: system → SystemMessage, user → HumanMessage, assistant →
 * AIMessage (tool calls in `tool_calls`, reasoning in `additional_kwargs.reasoning_content`), tool →
 * ToolMessage. Ids are kept, so a counter can look up a precomputed count by id.
 */
function toLangChain(messages: readonly Message[]): BaseMessage[] {
  return messages.map((m) => {
    const text = m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
    switch (m.role) {
      case 'system':
        return new SystemMessage({ id: m.id, content: text });
      case 'user':
        return new HumanMessage({ id: m.id, content: text });
      case 'tool': {
        const part = m.parts[0]!;
        if (part.type !== 'tool_result') throw new Error(`${m.id}: expected a tool result`);
        return new ToolMessage({
          id: m.id,
          content: part.result,
          tool_call_id: part.callId,
          name: part.name,
        });
      }
      case 'assistant': {
        const reasoning = m.parts.flatMap((p) => (p.type === 'reasoning' ? [p.text] : [])).join('\n');
        return new AIMessage({
          id: m.id,
          content: text,
          tool_calls: m.parts.flatMap((p) =>
            p.type === 'tool_call'
              ? [{ id: p.callId, name: p.name, args: JSON.parse(p.arguments) as Record<string, unknown> }]
              : [],
          ),
          additional_kwargs: reasoning ? { reasoning_content: reasoning } : {},
        });
      }
    }
  });
}

/** A LangChain token counter summing counts computed beforehand (so both sides time trimming only). */
function precountedCounter(messages: readonly Message[], counts: ArrayLike<number>) {
  const byId = new Map(messages.map((m, i) => [m.id, counts[i]!]));
  return (list: BaseMessage[]): number => {
    let sum = 0;
    for (const m of list) sum += byId.get(m.id!)!;
    return sum;
  };
}

/** A LangChain token counter estimating chars/4 on each call, as one would write it without counts. */
function charsCounter(list: BaseMessage[]): number {
  let sum = 0;
  for (const m of list) {
    let chars = typeof m.content === 'string' ? m.content.length : JSON.stringify(m.content).length;
    if (m instanceof AIMessage) {
      for (const call of m.tool_calls ?? []) chars += call.name.length + JSON.stringify(call.args).length;
    }
    sum += 3 + Math.ceil(chars / 4); // 3: the per-message overhead our counting adds too
  }
  return sum;
}

/** The LangChain equivalent of `tokenWindow(B)`: keep the newest B tokens, the system prompt, whole turns. */
async function langChainTrim(lc: BaseMessage[], counter: (list: BaseMessage[]) => number) {
  const out = await trimMessages(lc, {
    maxTokens: BUDGET,
    strategy: 'last',
    tokenCounter: counter,
    includeSystem: true,
    startOn: 'human',
  });
  return { messages: out.length };
}

// ---------------------------------------------------------------------------------------------------
// Child processes: one slow run with a time limit

/** What a child process is asked to time. */
type ChildJob =
  | { kind: 'strategy'; name: string }
  | { kind: 'compact'; name: string }
  | { kind: 'langchain'; counter: 'precounted' | 'chars/4' };

interface ChildRequest {
  job: ChildJob;
  messages: Message[];
  counts: number[];
}

/**
 * Runs one job in this process and returns its time (the child side of {@link inChild}). `ready` is
 * called after the untimed setup, right before the timed part, so the parent's limit bounds the run.
 */
async function runJob(
  { job, messages, counts }: ChildRequest,
  ready: () => void,
): Promise<{ ms: number; result: unknown }> {
  let run: () => Promise<unknown>;
  if (job.kind === 'langchain') {
    const lc = toLangChain(messages);
    const counter = job.counter === 'precounted' ? precountedCounter(messages, counts) : charsCounter;
    run = () => langChainTrim(lc, counter);
  } else {
    const spec = strategyCases().find((c) => c.name === job.name)!.spec;
    if (job.kind === 'compact') {
      run = async () => ({
        messages: (await compact(messages, spec, { tokenizer: ESTIMATOR, summarizer })).messages.length,
      });
    } else {
      const index = MessageIndex.from(metasOf(messages, counts));
      const bodies = bodiesOf(messages);
      run = () => runStrategy(index, spec, bodies);
    }
  }
  ready();
  const start = performance.now();
  const result = await run();
  return { ms: performance.now() - start, result };
}

/** Times one run of `job` in a child process, stopping it after {@link CHILD_LIMIT_MS}. */
function inChild(job: ChildJob, messages: Message[], counts: number[]): Promise<Figure> {
  return new Promise((resolve, reject) => {
    // `advanced` serialisation: structured clone, much faster than JSON for 100,000 messages.
    const child = fork(fileURLToPath(import.meta.url), ['--child'], {
      execArgv: process.execArgv,
      serialization: 'advanced',
    });
    let timer: NodeJS.Timeout | undefined;
    child.on('message', (raw) => {
      const message = raw as { ready?: true; ms: number; result: unknown };
      if (message.ready) {
        timer = setTimeout(() => {
          child.kill();
          resolve({ ms: CHILD_LIMIT_MS, runs: 1, stoppedAt: CHILD_LIMIT_MS, last: undefined });
        }, CHILD_LIMIT_MS);
        return;
      }
      clearTimeout(timer);
      child.kill();
      resolve({ ms: message.ms, runs: 1, last: message.result });
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code !== 0 && signal === null) reject(new Error(`bench child exited with code ${code}`));
    });
    child.send({ job, messages, counts } satisfies ChildRequest);
  });
}

// ---------------------------------------------------------------------------------------------------
// Output

function fmtMs(f: Figure): string {
  if (f.skipped) return `not run (${f.skipped})`;
  if (f.stoppedAt !== undefined) return `> ${f.stoppedAt / 1000} s (stopped)`;
  const ms = f.ms >= 100 ? f.ms.toFixed(0) : f.ms >= 10 ? f.ms.toFixed(1) : f.ms.toFixed(2);
  return `${ms} ms${f.runs >= 3 ? '' : f.runs === 1 ? ' (1 run)' : ` (${f.runs} runs)`}`;
}

function fmtInt(n: number): string {
  return n.toLocaleString('en-US');
}

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The exact command that produced the output (npm sets npm_lifecycle_event when run as a script). */
function command(): string {
  const script = process.env['npm_lifecycle_event'];
  return script
    ? `npm run ${script}`
    : `node ${process.execArgv.join(' ')} ${process.argv.slice(1).join(' ')}`;
}

// ---------------------------------------------------------------------------------------------------
// The benchmark

interface SizeResults {
  n: number;
  /** The metas (exact counts), reused by the append benchmark. */
  metas: MessageMeta[];
  stats: string;
  count: { exact: Figure & { tokens: number }; estimate: Figure & { tokens: number } };
  group: Figure;
  groupAndTruncate: Figure;
  strategies: Map<string, { index: Figure; compact: Figure; view: string }>;
  exactCompact: Figure;
  langchain: { precounted: Figure; chars: Figure; kept: string };
  ours: { window: Figure; groupAndWindow: Figure; compactChars: Figure; kept: string };
}

async function benchSize(n: number, previous: SizeResults | undefined): Promise<SizeResults> {
  // Predicts the time at this size from the previous size, linearly (the best case for us).
  const slow = (f: Figure | undefined) =>
    previous !== undefined &&
    (f === undefined ||
      f.stoppedAt !== undefined ||
      f.skipped !== undefined ||
      (f.ms * n) / previous.n > SLOW_RUN_MS);

  const messages = syntheticConversation({ messages: n, seed: SEED });
  const s = syntheticStats(messages);

  // Counting. The exact counts are kept: they feed the metas, as in production.
  const exact = tokenizerForModel('gpt-4o');
  let counts: number[] = [];
  const countWith = (tokenizer: Tokenizer) => {
    let tokens = 0;
    counts = messages.map((m) => {
      const c = countMessageTokens(m, tokenizer);
      tokens += c;
      return c;
    });
    return tokens;
  };
  // At 100,000 messages an exact pass takes seconds, so its warm-up counts as a run (see measure):
  // three runs, past the time budget, because this figure varies by a second from run to run.
  const big = n > 10_000;
  const exactFig = await measure(
    () => undefined,
    () => countWith(exact),
    big ? 2 : RUNS,
    big ? Infinity : RUN_BUDGET_MS,
  );
  const exactCounts = counts;
  const estimateFig = await measure(
    () => undefined,
    () => countWith(ESTIMATOR),
  );
  counts = exactCounts;
  const exactTokens = exactFig.last as number;

  const metas = metasOf(messages, counts);
  const bodies = bodiesOf(messages);
  const group = await measure(
    () => undefined,
    () => MessageIndex.from(metas),
  );
  const grouped = MessageIndex.from(metas);
  const inTools = grouped.groups
    .filter((g) => g.kind === 'tool_call')
    .reduce((sum, g) => sum + g.messageIds.length, 0);
  const stats =
    `${fmtInt(s.messages)} messages, ${fmtInt(s.characters)} characters, ${fmtInt(exactTokens)} o200k tokens; ` +
    `${fmtInt(grouped.groups.length)} groups, ${fmtInt(grouped.metrics.totalTurns)} turns; ` +
    `${((100 * inTools) / n).toFixed(1)}% of messages in tool-call groups ` +
    `(${fmtInt(s.toolCallMessages)} call messages, ${fmtInt(s.toolResultMessages)} results, ` +
    `${fmtInt(s.reasoningMessages)} reasoning)`;

  const truncate = strategyCases()[0]!.spec;
  const groupAndTruncate = await measure(
    () => undefined,
    () => runStrategy(MessageIndex.from(metas), truncate, bodies),
  );

  const strategies = new Map<string, { index: Figure; compact: Figure; view: string }>();
  for (const c of strategyCases()) {
    const before = previous?.strategies.get(c.name);
    const index = slow(before?.index)
      ? await inChild({ kind: 'strategy', name: c.name }, messages, counts)
      : await measure(
          () => MessageIndex.from(metas),
          (index) => runStrategy(index, c.spec, bodies),
        );
    const kept = index.last as { messages: number; tokens: number } | undefined;
    let compacted: Figure;
    if (index.stoppedAt !== undefined) {
      compacted = { ms: 0, runs: 0, skipped: 'its strategy alone was stopped' };
    } else if (slow(before?.compact)) {
      compacted = await inChild({ kind: 'compact', name: c.name }, messages, counts);
    } else {
      compacted = await measure(
        () => undefined,
        () => compact(messages, c.spec, { tokenizer: ESTIMATOR, summarizer }),
        3,
      );
    }
    const view = kept ? `${fmtInt(kept.messages)} msgs / ${fmtInt(kept.tokens)} tok` : '—';
    strategies.set(c.name, { index, compact: compacted, view });
  }
  const exactCompact = await measure(
    () => undefined,
    () => compact(messages, tokenWindow(BUDGET), { tokenizer: exact }),
    big ? 1 : 3,
    big ? Infinity : RUN_BUDGET_MS,
  );

  // LangChain against our token window, on the same messages and the same counts.
  const lc = toLangChain(messages);
  const byCount = precountedCounter(messages, counts);
  const lcPre = slow(previous?.langchain.precounted)
    ? await inChild({ kind: 'langchain', counter: 'precounted' }, messages, counts)
    : await measure(
        () => undefined,
        () => langChainTrim(lc, byCount),
        3,
      );
  const lcChars = slow(previous?.langchain.chars)
    ? await inChild({ kind: 'langchain', counter: 'chars/4' }, messages, counts)
    : await measure(
        () => undefined,
        () => langChainTrim(lc, charsCounter),
        3,
      );
  const window = strategies.get('tokenWindow')!.index;
  const groupAndWindow = await measure(
    () => undefined,
    () => runStrategy(MessageIndex.from(metas), tokenWindow(BUDGET), bodies),
  );
  const compactChars = strategies.get('tokenWindow')!.compact;
  const lcKept = (lcPre.last as { messages: number } | undefined)?.messages;
  const ourKept = (window.last as { messages: number } | undefined)?.messages;

  return {
    n,
    metas,
    stats,
    count: {
      exact: { ...exactFig, tokens: exactTokens },
      estimate: { ...estimateFig, tokens: estimateFig.last as number },
    },
    group,
    groupAndTruncate,
    strategies,
    exactCompact,
    langchain: { precounted: lcPre, chars: lcChars, kept: lcKept === undefined ? '—' : fmtInt(lcKept) },
    ours: { window, groupAndWindow, compactChars, kept: ourKept === undefined ? '—' : fmtInt(ourKept) },
  };
}

/**
 * Per-append times (ns) of `stream` onto an index that starts with the first `base` of `metas`. With
 * `reset`, the index is rebuilt from `base` messages every ~`base` appends, so it stays that small.
 */
function appendTimes(
  metas: readonly MessageMeta[],
  base: number,
  stream: readonly MessageMeta[],
  reset: boolean,
) {
  const fresh = () => MessageIndex.from(metas.slice(0, base));
  let index = fresh();
  // Work counted from here: building the base index is not part of any append.
  let counted = index.examined;
  let appended = 0;
  let examined = 0;
  const times: number[] = [];
  for (const meta of stream) {
    // Restart at a turn boundary, so that no tool result is separated from its call by a reset.
    if (reset && appended >= base && meta.shape === 'user') {
      examined += index.examined - counted;
      index = fresh();
      counted = index.examined;
      appended = 0;
    }
    const start = process.hrtime.bigint();
    index.append(meta);
    times.push(Number(process.hrtime.bigint() - start));
    appended++;
  }
  examined += index.examined - counted;
  return { times, examinedPerAppend: examined / stream.length };
}

/** Appending one message to a 100-message index and to a 100,000-message index. */
function benchAppend(metas: readonly MessageMeta[]): string {
  // The appended stream is another seeded conversation, its ids (and call ids) renamed so that they
  // are new to the index; it is appended in order, as a live thread would.
  const stream = syntheticConversation({ messages: APPENDS, seed: SEED + 1 }).map((m) => {
    const meta = describeMessage(m, countMessageTokens(m, ESTIMATOR));
    return {
      ...meta,
      id: `x${meta.id}`,
      ...(meta.callIds ? { callIds: meta.callIds.map((c) => `x${c}`) } : {}),
    };
  });
  // Timer cost: a pair of hrtime calls around nothing.
  const empty: number[] = [];
  for (let i = 0; i < APPENDS; i++) {
    const start = process.hrtime.bigint();
    empty.push(Number(process.hrtime.bigint() - start));
  }
  // A first round of small and big warms the JIT and is discarded. 10,000 shows the trend between.
  appendTimes(metas, 100, stream, true);
  appendTimes(metas, 100_000, stream, false);
  const small = appendTimes(metas, 100, stream, true);
  const middle = appendTimes(metas, 10_000, stream, false);
  const big = appendTimes(metas, 100_000, stream, false);
  const row = (label: string, r: ReturnType<typeof appendTimes>) => [
    label,
    `${fmtInt(median(r.times))} ns`,
    `${fmtInt(quantile(r.times, 0.99))} ns`,
    r.examinedPerAppend.toFixed(2),
  ];
  const ratio = median(big.times) / median(small.times);
  return [
    table(
      ['index size before each append', 'median', 'p99', 'messages + groups examined per append'],
      [
        row('100 (rebuilt every ~100 appends)', small),
        row('10,000 (grows to 20,000)', middle),
        row('100,000 (grows to 110,000)', big),
      ],
    ),
    '',
    `${fmtInt(APPENDS)} appends each, every append timed on its own with process.hrtime; the timer's own ` +
      `cost (two hrtime calls around nothing, median ${fmtInt(median(empty))} ns) is included above. ` +
      `Median ratio 100,000 : 100 = ${ratio.toFixed(2)}.`,
  ].join('\n');
}

async function main(): Promise<void> {
  const started = performance.now();
  const cpus = os.cpus();
  const print = (s = '') => console.log(s);
  print(`### \`${command()}\``);
  print();
  print(
    `Machine: ${cpus[0]?.model ?? 'unknown CPU'}, nproc ${os.availableParallelism()}, ` +
      `${os.type()} ${os.release()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; Node ${process.version}; ` +
      `${new Date().toISOString()}.`,
  );
  print(
    `Seeded synthetic conversations (seed ${SEED}); B = ${fmtInt(BUDGET)} tokens. Figures are medians of ` +
      `up to ${RUNS} runs after a warm-up run; "(1 run)", "(2 runs)" mark fewer.`,
  );

  const results: SizeResults[] = [];
  for (const n of SIZES) {
    const r = await benchSize(n, results[results.length - 1]);
    results.push(r);
    process.stderr.write(
      `… ${fmtInt(n)} messages done (${((performance.now() - started) / 1000).toFixed(0)} s)\n`,
    );
  }
  const cols = results.map((r) => `${fmtInt(r.n)} messages`);

  print();
  for (const r of results) print(`- ${r.stats}`);
  print();
  print('**Counting and grouping**');
  print();
  const rate = (f: Figure & { tokens: number }) =>
    `${(((f.tokens / f.ms) * 1000) / 1e6).toFixed(2)} M tok/s (${fmtMs(f)})`;
  print(
    table(
      ['step', ...cols],
      [
        [
          "count tokens, o200k_base: `countMessageTokens` × `tokenizerForModel('gpt-4o')`",
          ...results.map((r) => rate(r.count.exact)),
        ],
        ['count tokens, chars/4 estimator', ...results.map((r) => rate(r.count.estimate))],
        ['group: `MessageIndex.from(metas)`, metas precounted', ...results.map((r) => fmtMs(r.group))],
        [
          'group + `truncation({ max: B })` (target: 100,000 well under 1 s)',
          ...results.map((r) => fmtMs(r.groupAndTruncate)),
        ],
      ],
    ),
  );
  print();
  print(
    '**Strategies.** `compactIndex`: the strategy alone, on an index grouped beforehand (fresh per run). ' +
      '`compact()`: end to end on the messages with the chars/4 tokenizer (validation, counting, grouping, ' +
      'strategy, projection, groups copy). View: what stays, at the largest size measured.',
  );
  print();
  const last = results[results.length - 1]!;
  print(
    table(
      [
        'strategy',
        ...results.flatMap((r) => [`${fmtInt(r.n)}: compactIndex`, `${fmtInt(r.n)}: compact()`]),
        'view after',
      ],
      [
        ...strategyCases().map((c) => [
          `\`${c.label}\``,
          ...results.flatMap((r) => [
            fmtMs(r.strategies.get(c.name)!.index),
            fmtMs(r.strategies.get(c.name)!.compact),
          ]),
          last.strategies.get(c.name)!.view !== '—'
            ? last.strategies.get(c.name)!.view
            : results[0]!.strategies.get(c.name)!.view + ` (at ${fmtInt(results[0]!.n)})`,
        ]),
        [
          '`tokenWindow(B)`, `compact()` with o200k_base (exact counting included)',
          ...results.flatMap((r) => ['', fmtMs(r.exactCompact)]),
          '',
        ],
      ],
    ),
  );
  print();
  print(
    '**LangChain JS `trimMessages` vs our token window** (same conversation, same budget B). LangChain: ' +
      "`strategy: 'last'`, `includeSystem: true`, `startOn: 'human'` (keep the system prompt, never start " +
      'on a tool result: what our window guarantees), conversion to LangChain messages not timed. ' +
      '"precounted": its `tokenCounter` sums our o200k counts looked up by id, so the row times trimming, not ' +
      'tokenising; "chars/4": its counter estimates chars/4 on every call, as one writes it without counts.',
  );
  print();
  print(
    table(
      ['row', ...cols, `messages kept (${fmtInt(results[0]!.n)})`],
      [
        [
          'LangChain `trimMessages`, precounted',
          ...results.map((r) => fmtMs(r.langchain.precounted)),
          results[0]!.langchain.kept,
        ],
        ['LangChain `trimMessages`, chars/4 counter', ...results.map((r) => fmtMs(r.langchain.chars)), ''],
        [
          'ours: `tokenWindow(B)` on a grouped index (`compactIndex`)',
          ...results.map((r) => fmtMs(r.ours.window)),
          results[0]!.ours.kept,
        ],
        [
          "ours: group precounted metas + `tokenWindow(B)` (LangChain's starting point)",
          ...results.map((r) => fmtMs(r.ours.groupAndWindow)),
          '',
        ],
        [
          'ours: `compact(messages, tokenWindow(B))`, chars/4, end to end',
          ...results.map((r) => fmtMs(r.ours.compactChars)),
          '',
        ],
      ],
    ),
  );
  print();
  print('**Incremental append** (`MessageIndex.append`, one message)');
  print();
  print(benchAppend(results.find((r) => r.n === 100_000)!.metas));
  print();
  print(`Total benchmark time: ${((performance.now() - started) / 1000).toFixed(0)} s.`);
}

if (process.argv[2] === '--child') {
  // Child side of inChild(): announce readiness once the input has arrived, time the job, report.
  process.once('message', (request) => {
    void runJob(request as ChildRequest, () => process.send!({ ready: true })).then((r) => process.send!(r));
  });
} else {
  await main();
}
