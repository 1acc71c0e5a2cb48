/**
 * The real-conversation section of `npm run bench:recall -- --dataset DIR` (issue 21): evidence
 * recall of ours on LoCoMo conversations (locomo.ts) beside the hand-built baselines
 * (retrieval-baselines.ts), built in the same run from the same turns and token counts.
 *
 * A question counts when the text of every evidence turn is in the context: for ours, verbatim in
 * the OpenAI messages `context({ budget, query: question })` returns; for a baseline, the turn is one
 * of those it packed. Baselines pay each turn's message tokens with our tokenizer (gpt-4o, the
 * threads' model), and nothing for dates or a header, which ours pays: an edge to the baselines.
 */
import type { ContextResult } from '../src/client/context.js';
import type { RecallOptions } from '../src/recall/options.js';
import type { DurableMemory } from '../src/client/connect.js';
import type { ThreadHandle } from '../src/client/thread-handle.js';
import type { Embedder } from '../src/llm/embeddings.js';
import type { MessageInput } from '../src/model/message.js';
import { writeFile } from 'node:fs/promises';
import { textOf } from '../src/model/message.js';
import { normalizeMessages } from '../src/model/validation.js';
import { countMessageTokens } from '../src/tokenizers/tokenizer.js';
import { tokenizerForModel } from '../src/tokenizers/for-model.js';
import type { TestPipeline } from '../test/support/pipeline.js';
import { readDataset, type LocomoConversation } from './locomo.js';
import { Bm25, packContext, rankByCosine, rrf } from './retrieval-baselines.js';
import { PostgresThreadStore } from '../src/store/postgres/postgres-thread-store.js';
import { fuse } from '../src/recall/fuse.js';

const BATCH = 50;
const EMBED_BATCH = 64;

export const log = (line: string) =>
  process.stderr.write(`[bench:recall ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

/**
 * Appends `messages` in batches of `batch` (the real conversations: one turn at a time, as an agent
 * appends them), each once the workflow has indexed and compacted the one before, then waits until
 * it has indexed, compacted and embedded them all. Waiting after each batch makes a replay
 * reproducible: appended back to back, how many appends each signal announced depended on timing,
 * so where compaction cut the view and summarized did too, and evidence recall moved by up to 8 of
 * 1,017 questions between runs of the same code (BENCHMARKS.md, "Replays that give the same figures").
 */
export async function fill(
  thread: ThreadHandle,
  messages: readonly MessageInput[],
  batch = BATCH,
): Promise<void> {
  for (let i = 0; i < messages.length; i += batch) {
    await thread.append(messages.slice(i, i + batch));
    // Indexed is not enough: a compaction still running when the next turn comes would see a
    // timing-dependent view when it ends and decides whether to go on.
    for (let state = await thread.sync(); state.pending.length > 0; state = await thread.state())
      await new Promise((r) => setTimeout(r, 5));
  }
  // Indexed, compacted and embedded (the embedding lane runs in the background).
  for (
    let state = await thread.sync();
    state.pending.length > 0 || state.embedding.embeddedSeq < state.indexedSeq;
    state = await thread.state()
  ) {
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every text the model would read: the content strings of the OpenAI messages. */
export function contextText(ctx: ContextResult): string {
  return ctx.openai
    .map((m) =>
      typeof m.content === 'string'
        ? m.content
        : Array.isArray(m.content)
          ? m.content.map((p) => ('text' in p ? p.text : '')).join('\n')
          : '',
    )
    .join('\n');
}

/** Where the section's embeddings come from. */
export interface DatasetEmbeddings {
  /** The embedder the dense baseline uses (the same model as the worker's and the hybrid client's). */
  embedder: Embedder;
  /** True for the real model; false for the test server's hashed vectors (the fallback). */
  real: boolean;
  /** How rows name it: `all-MiniLM-L6-v2` or `test-server hashed vectors, fallback`. */
  label: string;
}

export interface DatasetOptions {
  dir: string;
  quick: boolean;
  budgets: readonly number[];
  embeddings: DatasetEmbeddings;
  /** A file to write one JSON line per question and budget to (what each row found, and why ours did not). */
  details?: string;
  /** Only these conversations (by name), to iterate quickly; the report says which were asked. */
  conversations?: readonly string[];
  /** Only these of our rows (`fulltext`, `hybrid`); the others print as not run. */
  ours?: readonly string[];
  /** Recall options for our rows' `context()` (default: none, the defaults), to compare settings. */
  recall?: RecallOptions;
  /** The threads' `recallShare` (default: the default), to measure what a smaller share costs. */
  recallShare?: number;
  /**
   * Each of our calls passes the previous call's `cache` of the same row and budget (`context({
   * previous })`): the questions of a conversation are asked in order, as one caller per budget would,
   * so a question's context may keep the stable recalled block an earlier question's built.
   */
  stable?: boolean;
  /**
   * Each question is asked in a chat instead of at the end of the conversation: our rows append it as
   * a user message to their own fork of the conversation (one per row and budget), query it, and
   * append a short assistant reply. With `stable`, each question is then a new turn, as for a chat
   * agent, and the kept block meets questions on other topics (what `minCover` is for).
   */
  chat?: boolean;
  /**
   * The hybrid row also asks each question without the day lift (src/recall/fuse.ts DAY_LIFT, through
   * DURABLE_MEMORY_RECALL_NO_DAY_LIFT=1), right after, in this process: the report adds that row and
   * the questions each way found that the other did not.
   */
  againstNoDayLift?: boolean;
}

/** The rows, in print order: the baselines, then ours. */
const ROWS = ['newest', 'bm25', 'dense', 'rrf', 'fulltext', 'hybrid'] as const;
type Row = (typeof ROWS)[number];

/** One conversation ready to be asked: its thread, turn tokens and texts, baseline indexes. */
interface Loaded {
  conversation: LocomoConversation;
  thread: ThreadHandle;
  hybrid: ThreadHandle;
  tokens: number[];
  texts: string[];
  index: Map<string, number>;
  bm25: Bm25;
  vectors: number[][];
}

async function embedAll(embedder: Embedder, texts: readonly string[]): Promise<number[][]> {
  const out: number[][] = [];
  for (let i = 0; i < texts.length; i += EMBED_BATCH)
    out.push(...(await embedder.embed(texts.slice(i, i + EMBED_BATCH))));
  return out;
}

/** Replays the dataset, asks every question of every row at every budget; returns the report. */
export async function datasetRecall(
  pipeline: TestPipeline,
  hybridClient: DurableMemory,
  options: DatasetOptions,
): Promise<string[]> {
  const { budgets, embeddings } = options;
  let conversations = await readDataset(options.dir);
  if (options.conversations)
    conversations = conversations.filter((c) => options.conversations!.includes(c.name));
  if (options.quick) {
    // One conversation, its first 40 questions: checks the section, the figures mean nothing.
    conversations = conversations.slice(0, 1).map((c) => ({ ...c, questions: c.questions.slice(0, 40) }));
  }
  const tokenizer = tokenizerForModel('gpt-4o');
  const loaded: Loaded[] = [];
  for (const conversation of conversations) {
    const thread = pipeline.memory.thread(`locomo-${conversation.name}`);
    if (options.recallShare !== undefined) await thread.configure({ recallShare: options.recallShare });
    const messages = conversation.turns.map((t) => t.message);
    await fill(thread, messages, 1);
    const normalized = normalizeMessages(messages);
    const texts = normalized.map((m) => textOf(m));
    loaded.push({
      conversation,
      thread,
      hybrid: hybridClient.thread(thread.threadId),
      tokens: normalized.map((m) => countMessageTokens(m, tokenizer)),
      texts,
      index: new Map(normalized.map((m, i) => [m.id, i])),
      bm25: new Bm25(texts),
      vectors: await embedAll(embeddings.embedder, texts),
    });
    log(`LoCoMo ${conversation.name}: ${messages.length} turns appended, indexed and embedded`);
  }

  // found[row][budget][category | 'all']: questions whose evidence is all in the context.
  const found = new Map<string, number>();
  const add = (row: Row, budget: number, category: string) => {
    for (const k of [`${row}/${budget}/all`, `${row}/${budget}/${category}`])
      found.set(k, (found.get(k) ?? 0) + 1);
  };
  const asked = new Map<string, number>();
  /** With againstNoDayLift, per budget: `without/B` found without it, `won/B` / `lost/B` with it. */
  const compared = new Map<string, number>();
  const details: string[] | undefined = options.details ? [] : undefined;
  // With details: where each evidence turn ranks in each of our rankers and their fusion (up to 1,000).
  const store = options.details ? await PostgresThreadStore.connect(pipeline.stack.databaseUrl) : undefined;
  for (const l of loaded) {
    /** Per row and budget: the previous context's cache (with `stable`), and the chat's fork (with `chat`). */
    const previous = new Map<string, ContextResult['cache']>();
    const chats = new Map<string, ThreadHandle>();
    const questionVectors = await embedAll(
      embeddings.embedder,
      l.conversation.questions.map((q) => q.question),
    );
    const seqOf = new Map<string, number>();
    if (store) {
      const { messages } = await store.history(l.thread.threadId, { limit: 100_000 });
      for (const m of messages) seqOf.set(m.id, m.seq);
    }
    for (const [qi, q] of l.conversation.questions.entries()) {
      for (const k of ['all', q.category]) asked.set(k, (asked.get(k) ?? 0) + 1);
      const evidence = q.evidence.map((id) => l.index.get(id)!);
      let ourRanks: Record<string, number[]> | undefined;
      /** With details: the full-text hits' raw BM25 scores, best first (seq, score), up to 100. */
      let raw: [number, number][] | undefined;
      if (store) {
        const scope = { threadId: l.thread.threadId };
        const ft = await store.search(q.question, { scope, limit: 1000 });
        const emb = await store.searchByEmbedding(
          scope,
          embeddings.embedder.model,
          questionVectors[qi]!,
          1000,
        );
        raw = ft.slice(0, 100).map((h) => [h.seq, Math.round(h.score * 1000) / 1000]);
        const fusedFt = fuse([{ ranker: 'fulltext', hits: ft }]);
        const fused = fuse([
          { ranker: 'fulltext', hits: ft },
          { ranker: 'embedding', hits: emb },
        ]);
        const rankIn = (hits: readonly { seq: number }[]) =>
          q.evidence.map((id) => hits.findIndex((h) => h.seq === seqOf.get(id)));
        ourRanks = {
          fulltext: rankIn(fusedFt),
          embedding: rankIn(emb),
          fused: rankIn(fused),
          seq: q.evidence.map((id) => seqOf.get(id) ?? -1),
        };
      }
      const byBm25 = l.bm25.rank(q.question);
      const byDense = rankByCosine(questionVectors[qi]!, l.vectors);
      const ranked: Partial<Record<Row, number[]>> = {
        bm25: byBm25,
        dense: byDense,
        rrf: rrf([byBm25, byDense]),
      };
      for (const budget of budgets) {
        for (const row of ['newest', 'bm25', 'dense', 'rrf'] as const) {
          const packed = packContext(l.tokens, budget, ranked[row]);
          if (evidence.every((i) => packed.has(i))) add(row, budget, q.category);
        }
        const detail: Record<string, unknown> = {
          conversation: l.conversation.name,
          question: q.question,
          category: q.category,
          budget,
          evidence: q.evidence,
          rrfRanks: evidence.map((i) => ranked.rrf!.indexOf(i)),
          ...(ourRanks ? { ourRanks } : {}),
          ...(raw ? { raw } : {}),
        };
        for (const row of ['newest', 'bm25', 'dense', 'rrf'] as const) {
          const packed = packContext(l.tokens, budget, ranked[row]);
          detail[row] = evidence.every((i) => packed.has(i));
        }
        const ours: [Row, ThreadHandle][] = [
          ['fulltext', l.thread],
          ['hybrid', l.hybrid],
        ];
        for (const [row, conversationThread] of ours) {
          if (options.ours && !options.ours.includes(row)) continue;
          const last = previous.get(`${row}/${budget}`);
          let thread = conversationThread;
          if (options.chat) {
            const key = `${row}/${budget}`;
            if (!chats.has(key))
              chats.set(key, await thread.fork(`${thread.threadId}-chat-${row}-${budget}`));
            thread = chats.get(key)!;
            await thread.append({ id: `chat-q${qi}`, role: 'user', content: q.question });
          }
          const ctx = await thread.context({
            budget,
            // As a chat turn the question is the newest user turn, the default query (as the adapters
            // ask); else it is given, as a caller asking about the past does.
            ...(options.chat ? {} : { query: q.question }),
            ...(options.recall ? { recall: options.recall } : {}),
            ...(options.stable ? { previous: last ?? {} } : {}),
          });
          previous.set(`${row}/${budget}`, ctx.cache);
          if (options.chat)
            await thread.append({ id: `chat-a${qi}`, role: 'assistant', content: 'Let me think.' });
          if (ctx.recall?.stable) {
            const key = `stable/${budget}/${ctx.recall.stable.kept ? 'kept' : ctx.recall.stable.why!}`;
            found.set(key, (found.get(key) ?? 0) + 1);
          }
          if (ctx.tokens > budget) throw new Error(`context over budget: ${ctx.tokens} > ${budget}`);
          const seen = contextText(ctx);
          const ok = evidence.every((i) => seen.includes(l.texts[i]!));
          if (ok) add(row, budget, q.category);
          const mine: Record<string, unknown> = {
            found: ok,
            missing: q.evidence.filter((_, k) => !seen.includes(l.texts[evidence[k]!]!)),
            tokens: ctx.tokens,
            recallMax: ctx.recall?.maxTokens,
            recallTokens: ctx.recall?.tokens,
            match: ctx.recall?.match,
            memories: ctx.memories.length,
            recalled: ctx.recalled.map((r) => [r.id, r.reason, r.tokens, r.seq - r.hitSeq, r.hitSeq]),
          };
          // Lost where the hand-built hybrid found it: was it ranked at all (ranking or packing)?
          if (!ok && detail['rrf'] === true && options.details) {
            const hits = await thread.searchHistory(q.question, { limit: 100 });
            mine['ourRanks'] = q.evidence.map((id) => hits.findIndex((h) => h.message.id === id));
          }
          detail[row] = mine;
          if (options.againstNoDayLift && row === 'hybrid' && !options.chat && !options.stable) {
            process.env['DURABLE_MEMORY_RECALL_NO_DAY_LIFT'] = '1';
            try {
              const without = await thread.context({
                budget,
                query: q.question,
                ...(options.recall ? { recall: options.recall } : {}),
              });
              const seenWithout = contextText(without);
              const okWithout = evidence.every((i) => seenWithout.includes(l.texts[i]!));
              if (okWithout) compared.set(`without/${budget}`, (compared.get(`without/${budget}`) ?? 0) + 1);
              if (ok !== okWithout) {
                const k = `${ok ? 'won' : 'lost'}/${budget}`;
                compared.set(k, (compared.get(k) ?? 0) + 1);
              }
              mine['foundWithoutDayLift'] = okWithout;
            } finally {
              delete process.env['DURABLE_MEMORY_RECALL_NO_DAY_LIFT'];
            }
          }
        }
        if (details) details.push(JSON.stringify(detail));
      }
    }
    log(`LoCoMo ${l.conversation.name}: ${l.conversation.questions.length} questions asked`);
    if (details && options.details) await writeFile(options.details, `${details.join('\n')}\n`);
  }
  await store?.close();

  const questions = asked.get('all')!;
  const rate = (row: Row, budget: number, category = 'all') =>
    (found.get(`${row}/${budget}/${category}`) ?? 0) / Math.max(1, asked.get(category) ?? 0);
  const p = (x: number) => `${(100 * x).toFixed(1)}%`;
  const model = embeddings.real ? embeddings.label : `${embeddings.label}: the real model was not reachable`;
  const labels: Record<Row, string> = {
    newest: 'newest turns only',
    bm25: 'BM25 + newest turns',
    dense: `dense (${embeddings.label}) + newest turns`,
    rrf: `RRF of BM25 and dense + newest turns (hand-built hybrid)`,
    fulltext: '**ours, full text** (`context({ budget, query })`)',
    hybrid: `**ours, full text + embeddings** (${embeddings.label})`,
  };
  const met = (ok: boolean) => (ok ? 'MET' : 'MISSED');
  const [b4, b8] = [budgets[1]!, budgets[2]!];
  const targets: Partial<Record<Row, string>> = {
    fulltext: `≥ 82% at 4k: ${met(rate('fulltext', b4) >= 0.82)}; ≥ 86% at 8k: ${met(rate('fulltext', b8) >= 0.86)}`,
    hybrid: embeddings.real
      ? `≥ 88% at 4k: ${met(rate('hybrid', b4) >= 0.88)}; ≥ 93% at 8k: ${met(rate('hybrid', b8) >= 0.93)}; ` +
        `≥ 8 points above RRF: ${budgets
          .map((b) => `${b / 1000}k ${met(rate('hybrid', b) - rate('rrf', b) >= 0.08 - 1e-9)}`)
          .join(', ')}`
      : 'not checked: fallback vectors, not the real model',
  };
  const turns = loaded.reduce((n, l) => n + l.tokens.length, 0);
  const tokens = loaded.reduce((n, l) => n + l.tokens.reduce((a, t) => a + t, 0), 0);
  const skipped = conversations.reduce((n, c) => n + c.skipped, 0);
  const categories = [...new Set(loaded.flatMap((l) => l.conversation.questions.map((q) => q.category)))];
  const order = ['multi-hop', 'temporal', 'open-domain', 'single-hop', 'adversarial'];
  categories.sort((a, b) => order.indexOf(a) - order.indexOf(b));
  return [
    `### Evidence recall on real conversations (LoCoMo ${conversations.map((c) => c.name).join(', ')}: ` +
      `${questions} questions, ${turns} turns, ${Math.round(tokens / loaded.length)} tokens per conversation on average; ` +
      `embeddings: ${model})`,
    '',
    `Questions left out: ${skipped} (no evidence, or evidence naming a turn the conversation lacks).`,
    '',
    `| context | ${budgets.map((b) => `${b.toLocaleString('en')} tokens`).join(' | ')} | target (issue 21) |`,
    `| --- | ${budgets.map(() => '---').join(' | ')} | --- |`,
    ...ROWS.map(
      (row) =>
        `| ${labels[row]} | ${budgets.map((b) => p(rate(row, b))).join(' | ')} | ${targets[row] ?? ''} |`,
    ),
    '',
    `By category at ${b4.toLocaleString('en')} tokens (the rows above, in their order):`,
    '',
    `| category | questions | ${ROWS.map((r) => r).join(' | ')} |`,
    `| --- | --- | ${ROWS.map(() => '---').join(' | ')} |`,
    ...categories.map(
      (c) => `| ${c} | ${asked.get(c)} | ${ROWS.map((r) => p(rate(r, b4, c))).join(' | ')} |`,
    ),
    '',
    ...(options.againstNoDayLift
      ? [
          `Against the same row without the day lift, asked right after each question (\`--against-no-day-lift\`): ${budgets
            .map(
              (b) =>
                `${b}: ${p(rate('hybrid', b))} with, ${p((compared.get(`without/${b}`) ?? 0) / Math.max(1, questions))} without (questions won / lost: ${compared.get(`won/${b}`) ?? 0} / ${compared.get(`lost/${b}`) ?? 0})`,
            )
            .join('; ')}.`,
          '',
        ]
      : []),
    ...(options.stable
      ? [
          `Stable recalled block (\`--stable\`: each call passes the previous call's \`cache\` at its budget${options.chat ? '; `--chat`: each question a new turn of a chat' : ''}), per budget: ${budgets
            .map(
              (b) =>
                `${b}: ${[...found]
                  .filter(([k]) => k.startsWith(`stable/${b}/`))
                  .map(([k, n]) => `${k.split('/')[2]} ${n}`)
                  .join(', ')}`,
            )
            .join('; ')}.`,
          '',
        ]
      : []),
  ];
}
