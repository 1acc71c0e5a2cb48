/**
 * Runs Lua scripts by SHA (EVALSHA) so each call sends a 40-byte digest instead of the script; after a
 * server restart or SCRIPT FLUSH the cache is empty, and the first call falls back to EVAL, which
 * caches it again.
 */
import { createHash } from 'node:crypto';
import type { createClient } from 'redis';

/** The client type that `createClient()` returns, without modules. */
export type RedisClient = ReturnType<typeof createClient>;

/** One script with its digest. */
export class LuaScript {
  /** SHA-1 of the source, as Redis names cached scripts. */
  readonly sha: string;
  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** Runs the script atomically on the server. */
  async run(client: RedisClient, keys: string[], args: string[]): Promise<unknown> {
    try {
      return await client.evalSha(this.sha, { keys, arguments: args });
    } catch (err) {
      if (!(err instanceof Error && err.message.startsWith('NOSCRIPT'))) throw err;
      return client.eval(this.source, { keys, arguments: args });
    }
  }
}
