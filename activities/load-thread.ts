/**
 * What a new run of a thread's workflow starts from (not a continue-as-new, which carries its state):
 * the stored configuration, owner, extraction progress and when its last message came (and the counts its state shows of the work
 * done before it, with the worker's LLM and its embedding model's vectors of the thread), and, for a
 * thread that was compacted (imported, or whose workflow ended and started again), the index of its
 * stored view. Without the view the run would count every stored message as in the view, and compact
 * a view that is already within budget to no effect, for ever.
 */
import { reportOf } from '../src/compaction/compaction.js';
import { MessageIndex } from '../src/compaction/message-index.js';
import type { MemoryStore } from '../src/memories/memory-store.js';
import type { ThreadStore } from '../src/store/thread-store.js';
import type { StoredThread } from './types.js';
import type { ThreadDefaults } from '../src/thread/config.js';

/** Metas are read in pages of this many to count the history outside the view. */
const PAGE = 1000;

/** Creates the `loadThread` activity. */
export function loadThreadActivity(deps: {
  store: ThreadStore;
  memories?: MemoryStore;
  defaults?: ThreadDefaults;
  /** The label of the worker's summarizer and extractor (an LLM, or the local fallback). */
  llm?: string;
  /** The worker's embedding model, whose vectors of the thread's messages its state counts. */
  embeddingModel?: string;
}) {
  return async function loadThread({ threadId }: { threadId: string }): Promise<StoredThread> {
    const { store } = deps;
    const model = deps.embeddingModel;
    const [info, extractions, records, vectors] = await Promise.all([
      store.thread(threadId),
      deps.memories?.extractions(threadId),
      store.compactions(threadId),
      model === undefined ? 0 : store.countEmbeddings(threadId, model),
    ]);
    // A fork's shared messages are its parent's to learn from (their memories name the parent's
    // messages): its own extraction starts after them, so it learns nothing twice.
    const extractedSeq = Math.max(extractions?.upToSeq ?? 0, info?.forkedFrom?.seq ?? 0);
    const [newest] = info && info.lastSeq > 0 ? await store.messagesAt(threadId, [info.lastSeq]) : [];
    const lastAppendAt = newest ? Date.parse(newest.createdAt) : NaN;
    const stored: StoredThread = {
      config: info?.config,
      userId: info?.userId,
      resourceId: info?.resourceId,
      extractedSeq,
      lastSeq: info?.lastSeq ?? 0,
      defaults: deps.defaults ?? {},
      ...(extractions?.count ? { extractions: extractions.count } : {}),
      ...(extractions?.last ? { lastExtraction: extractions.last } : {}),
      ...(deps.llm === undefined ? {} : { llm: deps.llm }),
      ...(vectors > 0 ? { embeddedMessages: vectors } : {}),
      ...(Number.isFinite(lastAppendAt) ? { lastAppendAt } : {}),
    };
    if (!info || records.length === 0) return stored;

    // Read up to the seq known now; later messages come through the run's catch-up as usual.
    const lastSeq = info.lastSeq;
    const history = { lastSeq, messages: 0, tokens: 0, turns: 0 };
    let turnsSinceExtraction = 0;
    for (let after = 0; after < lastSeq;) {
      const page = await store.metas(threadId, { after, limit: PAGE });
      if (page.length === 0) break;
      for (const meta of page) {
        if (meta.seq > lastSeq) continue;
        history.messages++;
        history.tokens += meta.tokens;
        if (meta.shape === 'user') {
          history.turns++;
          if (meta.seq > extractedSeq) turnsSinceExtraction++;
        }
      }
      after = page[page.length - 1]!.seq;
    }
    const view = (await store.view(threadId))
      .filter((e) => e.seq <= lastSeq)
      .map((e) => ({ meta: e.meta, seq: e.seq }));
    return {
      ...stored,
      view: {
        index: MessageIndex.fromView(view, history).toJSON(),
        compactions: records.length,
        turnsSinceExtraction,
        lastCompaction: reportOf(records.at(-1)!),
      },
    };
  };
}
