/**
 * The embedding activity: embeds a thread's stored messages that have no vector of the worker's
 * embedding model yet (then the thread's user's memories likewise), many per request, and stores the
 * vectors. It reads bodies from the store (the workflow sends seqs only) and asks the store what is
 * missing, so a retry, a second run or a change of model does exactly the work left. Each batch is
 * stored as soon as it is embedded, unless the activity was cancelled (its thread is being deleted).
 */
import { Context, heartbeat } from '@temporalio/activity';
import { renderTranscript } from '../src/llm/transcript.js';
import type { Embedder } from '../src/llm/embeddings.js';
import { embeddingInput, MAX_EMBEDDING_INPUT_CHARS } from '../src/llm/embeddings.js';
import { toLlmFailure } from '../src/llm/failures.js';
import type { MemoryStore } from '../src/memories/memory-store.js';
import { textOf, type Message } from '../src/model/message.js';
import { characterCount, firstCharacters } from '../src/model/limits.js';
import type { ThreadStore } from '../src/store/thread-store.js';
import type { StoredMessage } from '../src/store/types.js';
import { embeddingsTotal } from '../src/observability/metrics.js';
import { throwIfCancelled } from './cancellation.js';
import { heartbeatEveryMs } from './llm-runtime.js';
import type { EmbedThreadInput, EmbedThreadResult } from './types.js';

/** Most texts in one embeddings request. */
export const EMBEDDING_BATCH_INPUTS = 64;
/** Most characters in one request (about 16k tokens: far below providers' per-request limits). */
export const EMBEDDING_BATCH_CHARS = 64_000;
/**
 * The shortest cut of a refused batch's texts: a model reads fewer tokens than MAX_EMBEDDING_INPUT_CHARS
 * characters of some scripts make (8,000 of Tamil are 10,701 tokens; OpenAI's read 8,192), so a 400
 * is answered by halving the texts' length, down to this, before it is a failure.
 */
const MIN_EMBEDDING_CUT_CHARS = 1000;
/** Most messages one activity embeds; the workflow runs it again while more are waiting. */
const MESSAGES_PER_RUN = 512;
/** Most memories one activity embeds. */
const MEMORIES_PER_RUN = 128;

/** Creates the `embedThread` activity. */
export function embedThreadActivity(deps: {
  store: ThreadStore;
  memories?: MemoryStore;
  embedder?: Embedder;
}) {
  return async function embedThread(input: EmbedThreadInput): Promise<EmbedThreadResult> {
    if (!deps.embedder)
      return { model: null, embeddedSeq: input.upToSeq, messages: 0, memories: 0, more: false };
    // A slow endpoint stays visibly alive, well within the heartbeat timeout.
    const beat = setInterval(() => heartbeat(), heartbeatEveryMs());
    try {
      return await run(deps.store, deps.embedder, deps.memories, input);
    } finally {
      clearInterval(beat);
    }
  };
}

async function run(
  store: ThreadStore,
  embedder: Embedder,
  memoryStore: MemoryStore | undefined,
  input: EmbedThreadInput,
): Promise<EmbedThreadResult> {
  {
    const model = embedder.model;
    const signal = Context.current().cancellationSignal;
    const embed = async (texts: string[]): Promise<number[][]> => {
      // The embedder cuts each text to MAX_EMBEDDING_INPUT_CHARS; a refusal cuts them shorter.
      let sent = texts;
      for (let max = MAX_EMBEDDING_INPUT_CHARS; ;) {
        heartbeat();
        try {
          return await embedder.embed(sent, signal);
        } catch (err) {
          throwIfCancelled(); // an aborted call is a cancellation, not an endpoint failure
          const failure = toLlmFailure(err);
          max = Math.floor(max / 2);
          // Texts no cut would shorten were refused for another reason: a bad model, a bad key.
          const shorter = texts.some((t) => characterCount(t) > max);
          if (failure.type !== 'LlmBadRequest' || max < MIN_EMBEDDING_CUT_CHARS || !shorter) throw failure;
          sent = texts.map((t) => firstCharacters(t, max));
        }
      }
    };

    // The same model as the workflow knows: only what came after its mark. Another: all history.
    const after = input.model === model ? input.afterSeq : 0;
    const missing = await store.unembedded(input.threadId, model, {
      after,
      upTo: input.upToSeq,
      limit: MESSAGES_PER_RUN + 1,
    });
    const more = missing.length > MESSAGES_PER_RUN;
    const seqs = missing.slice(0, MESSAGES_PER_RUN);
    let messages = 0;
    for (const batch of batches(await bodies(store, input.threadId, seqs), (m) => m.text)) {
      const vectors = await embed(batch.map((m) => m.text));
      throwIfCancelled();
      messages += await store.saveEmbeddings(
        input.threadId,
        model,
        batch.map((m, i) => ({ seq: m.seq, vector: vectors[i]! })),
      );
    }
    embeddingsTotal.inc({ kind: 'message' }, messages);

    let memories = 0;
    if (memoryStore && input.userId !== undefined) {
      const pending = await memoryStore.unembedded(input.userId, model, MEMORIES_PER_RUN);
      for (const batch of batches(pending, (m) => m.text)) {
        const vectors = await embed(batch.map((m) => m.text));
        throwIfCancelled();
        memories += await memoryStore.saveEmbeddings(
          model,
          batch.map((m, i) => ({ memoryId: m.id, vector: vectors[i]! })),
        );
      }
      embeddingsTotal.inc({ kind: 'memory' }, memories);
    }
    const embeddedSeq = more ? seqs.at(-1)! : input.upToSeq;
    return { model, embeddedSeq, messages, memories, more };
  }
}

/** The text embedded for each seq, read from the store in pages. */
async function bodies(
  store: ThreadStore,
  threadId: string,
  seqs: number[],
): Promise<{ seq: number; text: string }[]> {
  const wanted = new Set(seqs);
  const out: { seq: number; text: string }[] = [];
  let after = (seqs[0] ?? 1) - 1;
  const last = seqs.at(-1) ?? 0;
  while (after < last) {
    const page = await store.history(threadId, { after, limit: Math.min(500, last - after) });
    for (const m of page.messages) if (wanted.has(m.seq)) out.push({ seq: m.seq, text: textFor(m) });
    if (page.messages.length === 0) break;
    after = page.messages.at(-1)!.seq;
  }
  return out;
}

/** What a message is embedded as: its text, or its transcript line (tool calls and results). */
function textFor(stored: StoredMessage): string {
  const { seq: _s, tokens: _t, bytes: _b, excludedBy: _e, ...message } = stored;
  const text = textOf(message as Message).trim() || renderTranscript([message as Message]).trim();
  return embeddingInput(text || message.role); // an endpoint refuses empty input
}

/** Consecutive batches within {@link EMBEDDING_BATCH_INPUTS} texts and {@link EMBEDDING_BATCH_CHARS} characters. */
export function batches<T>(items: readonly T[], text: (item: T) => string): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let chars = 0;
  for (const item of items) {
    const n = Math.min(text(item).length, MAX_EMBEDDING_INPUT_CHARS);
    if (
      current.length > 0 &&
      (current.length >= EMBEDDING_BATCH_INPUTS || chars + n > EMBEDDING_BATCH_CHARS)
    ) {
      out.push(current);
      current = [];
      chars = 0;
    }
    current.push(item);
    chars += n;
  }
  if (current.length > 0) out.push(current);
  return out;
}
