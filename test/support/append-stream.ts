/**
 * A stream of appends for fault tests, and the checks they end with: appenders that retry a refused
 * append with the same ids (what a careful caller does), a record of every acknowledgement, and
 * `assertIntact`, which proves nothing acknowledged was lost or stored twice.
 */
import assert from 'node:assert/strict';
import type { DurableMemory } from '../../src/client/connect.js';
import type { AppendInput, ThreadHandle } from '../../src/client/thread-handle.js';

/** The budget of the streamed threads: small, so compactions run during the stream. */
export const BUDGET = 300;

/** Polls `check` every 50 ms until it returns true; fails naming `what` after `timeoutMs`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Rejects with a TimeoutBound if `promise` does not settle within `ms`. */
export class TimeoutBound extends Error {}
export function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TimeoutBound(`${what} did not settle within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** The k-th turn of a thread: user text, an assistant tool call with its result, assistant text. */
export function turn(prefix: string, k: number): AppendInput[] {
  const id = `${prefix}-${k}`;
  switch (k % 3) {
    case 0:
      return [{ id, role: 'user', content: `question ${k}: what is the weather like in city number ${k}?` }];
    case 1:
      return [
        {
          id: `${id}-call`,
          role: 'assistant',
          parts: [{ type: 'tool_call', callId: `c${k}`, name: 'get_weather', arguments: `{"city":${k}}` }],
        },
        {
          id: `${id}-result`,
          role: 'tool',
          parts: [{ type: 'tool_result', callId: `c${k}`, result: `city ${k}: sunny, ${k % 30} degrees` }],
        },
      ];
    default:
      return [{ id, role: 'assistant', content: `In city ${k} it is sunny; take sunglasses.` }];
  }
}

export interface Ack {
  id: string;
  seq: number;
  duplicate: boolean;
  announced: boolean;
  /** Whether the append started and finished inside a window the test marked (e.g. server down). */
  inWindow: boolean;
}

export interface Rejection {
  thread: string;
  ms: number;
  error: unknown;
}

/**
 * Appenders, one per thread, taking turns from a shared count of `total` appends. Before the append
 * numbered k, an appender waits for every gate opened at or below k, so a test can stop the stream at
 * a point, break something, and let it go on. A rejected append is retried with the same ids (what a
 * careful caller does), each attempt bounded by `attemptMs`.
 */
export class Stream {
  readonly acks = new Map<string, Ack[]>();
  readonly attempted = new Map<string, Set<string>>();
  readonly rejections: Rejection[] = [];
  /** Appends that were acknowledged. */
  acked = 0;
  private next = 0;
  private readonly gates: { at: number; open: Promise<void>; release: () => void }[] = [];
  /** Set by the test around a fault; recorded per append. */
  window = false;
  readonly done: Promise<void>;

  constructor(
    readonly threads: ThreadHandle[],
    readonly total: number,
    options: { gates?: number[]; attemptMs?: number } = {},
  ) {
    for (const at of options.gates ?? []) {
      let release!: () => void;
      const open = new Promise<void>((r) => (release = r));
      this.gates.push({ at, open, release });
    }
    const attemptMs = options.attemptMs ?? 20_000;
    this.done = Promise.all(threads.map((t) => this.run(t, attemptMs))).then(() => undefined);
    // A failure surfaces through `done`; don't let it be reported as unhandled meanwhile.
    this.done.catch(() => undefined);
  }

  /** Lets appends numbered ≥ `at` go on. */
  open(at: number): void {
    const gate = this.gates.find((g) => g.at === at);
    if (!gate) throw new Error(`no gate at ${at}`);
    gate.release();
  }

  /** Resolves once `count` appends were acknowledged (bounded). */
  reached(count: number, timeoutMs = 60_000): Promise<void> {
    return until(`${count} acknowledged appends (have ${this.acked})`, () => this.acked >= count, timeoutMs);
  }

  private async run(thread: ThreadHandle, attemptMs: number): Promise<void> {
    // Each thread starts with its system message at seq 1 (see threadsFor).
    const system = `${thread.threadId}-system`;
    const acks: Ack[] = [{ id: system, seq: 1, duplicate: false, announced: true, inWindow: false }];
    const attempted = new Set<string>([system]);
    this.acks.set(thread.threadId, acks);
    this.attempted.set(thread.threadId, attempted);
    for (let k = 0; ; k++) {
      const n = this.next++;
      if (n >= this.total) return;
      for (const g of this.gates) if (g.at <= n) await g.open;
      const messages = turn(thread.threadId, k);
      for (const m of messages) attempted.add((m as { id: string }).id);
      for (let attempt = 1; ; attempt++) {
        const startedInWindow = this.window;
        const started = Date.now();
        try {
          const r = await bounded(thread.append(messages), attemptMs, `append to ${thread.threadId}`);
          for (const m of r.messages) {
            acks.push({
              id: m.id,
              seq: m.seq,
              duplicate: m.duplicate,
              announced: r.announced,
              inWindow: startedInWindow && this.window,
            });
          }
          this.acked++;
          break;
        } catch (error) {
          if (error instanceof TimeoutBound) throw error; // an append that hangs is a failure
          this.rejections.push({ thread: thread.threadId, ms: Date.now() - started, error });
          if (attempt > 200) throw error;
          await new Promise((r) => setTimeout(r, 200)); // back off, then retry with the same ids
        }
      }
    }
  }
}

/**
 * The checks every fault test ends with, per thread: history holds exactly the messages appended
 * (each once, seqs 1..n, each acknowledged id at the seq it was acknowledged with); `sync` reports all
 * of it indexed and counted once; the view is within budget with no orphan tool result; the next
 * append gets seq n + 1 and is announced.
 */
export async function assertIntact(stream: Stream, timeoutMs = 90_000): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  for (const thread of stream.threads) {
    const id = thread.threadId;
    const { messages } = await thread.history();
    const n = messages.length;
    assert.deepEqual(
      messages.map((m) => m.seq),
      Array.from({ length: n }, (_, i) => i + 1),
      `${id}: seqs 1..n without gaps`,
    );
    const ids = messages.map((m) => m.id);
    assert.equal(new Set(ids).size, n, `${id}: every message once`);
    assert.deepEqual(new Set(ids), stream.attempted.get(id), `${id}: exactly the messages appended`);
    const seqOf = new Map(messages.map((m) => [m.id, m.seq]));
    for (const ack of stream.acks.get(id)!) {
      assert.equal(seqOf.get(ack.id), ack.seq, `${id}: ${ack.id} at its acknowledged seq`);
    }

    const state = await bounded(thread.sync(), timeoutMs, `sync of ${id}`);
    assert.equal(state.indexedSeq, n, `${id}: indexed up to n`);
    assert.equal(state.buffered, 0);

    // Compaction goes on in the background after the fault: wait until nothing is pending.
    let s = state;
    await until(
      `${id}: compaction caught up (${JSON.stringify(s.pending)}, included ${s.metrics.includedTokens})`,
      async () => {
        s = await thread.state();
        return s.pending.length === 0;
      },
      timeoutMs,
    );
    // A thread whose history outgrew the budget was compacted (one that stalled may have taken too few
    // of the stream's appends to outgrow it: the stream hands each append to the first free thread).
    if (s.metrics.totalTokens > BUDGET * 1.5) assert.ok(s.compactions >= 1, `${id}: compacted`);
    // The index holds every history message once, plus the summaries compactions inserted.
    const inserted = (await thread.export()).summaries.length;
    assert.equal(s.metrics.totalMessages - inserted, n, `${id}: the workflow indexed each message once`);
    // Without recall: its block would take part of the budget from the view, which is then cut on read.
    const ctx = await thread.context({ recall: false });
    assert.ok(ctx.tokens <= BUDGET, `${id}: context ${ctx.tokens} tokens within ${BUDGET}`);
    // Within budget by the compactions recorded in the store, not by the read-time fallback.
    assert.equal(ctx.droppedOnRead, 0, `${id}: the stored view is compacted`);
    ctx.openai.forEach((m, i) => {
      if (m.role === 'tool') assert.equal(ctx.openai[i - 1]?.role, 'assistant', `${id}: no orphan result`);
    });

    const more = await thread.append({ id: `${id}-after`, role: 'user', content: 'still there?' });
    assert.equal(more.messages[0]!.seq, n + 1, `${id}: appending goes on`);
    assert.equal(more.announced, true);
    assert.equal((await bounded(thread.sync(), timeoutMs, `sync of ${id}`)).indexedSeq, n + 1);
    sizes.set(id, n);
  }
  return sizes;
}

/** Creates the threads with a small budget (so compaction activities run during the stream). */
export async function threadsFor(memory: DurableMemory, prefix: string, count = 3): Promise<ThreadHandle[]> {
  const threads = Array.from({ length: count }, (_, i) => memory.thread(`${prefix}-${i}`));
  for (const t of threads) {
    const r = await t.append({
      id: `${t.threadId}-system`,
      role: 'system',
      content: 'You are a weather bot.',
    });
    assert.equal(r.messages[0]!.seq, 1);
    await t.configure({ budget: BUDGET });
  }
  return threads;
}
