/**
 * Recall by meaning on the read path: the query is embedded with the same model the worker's
 * embedding lane uses, and the store ranks stored vectors by cosine similarity within the scope.
 * Off (an empty ranking) when no embedding model is configured, for a blank query, or when the
 * endpoint fails: messages are then still found by full text, and a read never fails because the
 * embeddings endpoint is down. The full-text ranker's results and these are fused by `fuse`
 * (src/recall/fuse.ts); the memories' by reciprocal rank (`fuseItems`).
 */
import type { Embedder } from '../llm/embeddings.js';
import type { MemoryStore, ScoredMemory } from '../memories/memory-store.js';
import type { ThreadStore } from '../store/thread-store.js';
import type { SearchHit, SearchScope, TimeRange } from '../store/types.js';

/** Hits asked for when no limit is given. */
export const DEFAULT_EMBEDDING_HITS = 20;

/** What the ranker reads from. */
export interface EmbeddingSources {
  store: ThreadStore;
  memories?: MemoryStore;
  /** The embedding model; undefined: embeddings are off. */
  embedder?: Embedder;
}

/** Options of {@link rankByEmbedding}. */
export interface RankByEmbeddingOptions {
  /** A thread, or a user's threads (narrowed to a resource); never another user's. */
  scope: SearchScope;
  /** The text to find messages like (a question, the latest user turn). */
  query: string;
  /** At most this many hits (1 to 1,000; default {@link DEFAULT_EMBEDDING_HITS}). */
  limit?: number;
  /** Aborts the query's embedding request. */
  signal?: AbortSignal;
  /** Only messages created within it. */
  range?: TimeRange;
}

/** A message found by meaning, with the ranker that found it. */
export type EmbeddingRanked = SearchHit & { ranker: 'embedding' };

/**
 * Messages closest in meaning to `query`, best first.
 * @returns [] when embeddings are off, the query is blank or the endpoint failed.
 * @throws ValidationError `invalid_option` for a bad limit.
 */
export async function rankByEmbedding(
  sources: EmbeddingSources,
  options: RankByEmbeddingOptions,
): Promise<EmbeddingRanked[]> {
  const vector = await queryVector(sources.embedder, options.query, options.signal);
  if (!vector) return [];
  const limit = options.limit ?? DEFAULT_EMBEDDING_HITS;
  const { scope, range } = options;
  const hits = await sources.store.searchByEmbedding(scope, sources.embedder!.model, vector, limit, range);
  return hits.map((h) => ({ ...h, ranker: 'embedding' as const }));
}

/**
 * Live memories of a user closest in meaning to `query`, best first (`resourceId` as in
 * MemoryStore.search).
 * @returns [] when embeddings are off, there is no memory store, the query is blank or the endpoint failed.
 */
export async function rankMemoriesByEmbedding(
  sources: EmbeddingSources,
  options: { userId: string; resourceId?: string; query: string; limit?: number; signal?: AbortSignal },
): Promise<ScoredMemory[]> {
  if (!sources.memories) return [];
  const vector = await queryVector(sources.embedder, options.query, options.signal);
  if (!vector) return [];
  return sources.memories.searchByEmbedding(options.userId, sources.embedder!.model, vector, {
    ...(options.resourceId === undefined ? {} : { resourceId: options.resourceId }),
    limit: options.limit ?? DEFAULT_EMBEDDING_HITS,
  });
}

async function queryVector(
  embedder: Embedder | undefined,
  query: string,
  signal?: AbortSignal,
): Promise<number[] | undefined> {
  if (!embedder || query.trim() === '') return undefined;
  try {
    return (await embedder.embed([query], signal))[0];
  } catch {
    // Counted in durable_memory_embedding_requests_total{result="error"}; full text still ranks.
    return undefined;
  }
}
