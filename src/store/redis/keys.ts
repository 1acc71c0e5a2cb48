/**
 * Key layout of the Redis store, all under one configurable prefix. Per thread (`<p>thread:<id>:`):
 * `info` (hash: createdAt, updatedAt, lastSeq, userId, resourceId, config, summaryOrd, forkedFrom), `ids`
 * (message id → "seq:tokens:hash"), `bodies` and `metas` (seq → JSON), `included` (zset of seqs),
 * `excluded` (seq → compaction id), `summaries` (id → JSON), `superseded` (id → compaction id),
 * `live` (zset of summary ids by recording order), `compactions` (id → JSON), `compactionOrder`
 * (list), `embeddings` (`<seq>:<model>` → vector as JSON) and `responses` (seq → provider response
 * record as JSON, src/store/redis/service.ts). Global: `<p>threads` and `<p>user:<userId>:threads` (zsets, ordered by id, for listing).
 * A suffix never contains ':', so no two thread ids can share a key. Scripts touch the global indexes
 * too, so a Redis Cluster is not supported (one instance, or a primary with replicas).
 */

/** The keys of one thread. */
export interface ThreadKeys {
  info: string;
  ids: string;
  bodies: string;
  metas: string;
  included: string;
  excluded: string;
  summaries: string;
  superseded: string;
  live: string;
  compactions: string;
  compactionOrder: string;
  embeddings: string;
  responses: string;
}

/** Builds key names under a prefix. */
export class RedisKeys {
  constructor(readonly prefix: string) {}

  /** Zset of every thread id. */
  threads(): string {
    return `${this.prefix}threads`;
  }

  /** Zset of the thread ids of one user. */
  user(userId: string): string {
    return `${this.prefix}user:${userId}:threads`;
  }

  /** Every key of one thread. */
  thread(threadId: string): ThreadKeys {
    const base = `${this.prefix}thread:${threadId}:`;
    return {
      info: `${base}info`,
      ids: `${base}ids`,
      bodies: `${base}bodies`,
      metas: `${base}metas`,
      included: `${base}included`,
      excluded: `${base}excluded`,
      summaries: `${base}summaries`,
      superseded: `${base}superseded`,
      live: `${base}live`,
      compactions: `${base}compactions`,
      compactionOrder: `${base}compactionOrder`,
      embeddings: `${base}embeddings`,
      responses: `${base}responses`,
    };
  }
}
