/**
 * The model each thread counts tokens for, as this process last learned it: from a `configure`, or
 * from an append the store refused because the thread's model had changed (configured through
 * another handle or process). An append counts for it without reading the thread first, and the
 * store checks it in the append statement itself (AppendOptions.model): a stale entry costs one more
 * round trip, once, never a wrong count.
 */
import { DEFAULT_CONFIG } from '../thread/config.js';

/** Threads remembered at most (each a short string); the oldest are forgotten first. */
const MAX_REMEMBERED = 10_000;

/** Models by thread; a thread not remembered is assumed to use the default model. */
export class ThreadModels {
  private readonly models = new Map<string, string>();

  constructor(private readonly max = MAX_REMEMBERED) {}

  /** The model the thread's appends are counted for. */
  get(threadId: string): string {
    return this.models.get(threadId) ?? DEFAULT_CONFIG.model;
  }

  /** Remembers the thread's model (the default one needs no entry). */
  set(threadId: string, model: string): void {
    this.models.delete(threadId);
    if (model === DEFAULT_CONFIG.model) return;
    this.models.set(threadId, model);
    if (this.models.size > this.max) this.models.delete(this.models.keys().next().value!);
  }
}
