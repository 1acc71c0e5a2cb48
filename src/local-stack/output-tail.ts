/**
 * The tail of a local service's output (the Temporal CLI, PostgreSQL): an error about a process that
 * failed to start quotes what it said last. The stack's own lines go through `RuntimeLog`
 * (src/observability/log.ts).
 */

/**
 * Keeps the last `limit` characters of a process's output, so that an error about a process that
 * failed to start can quote what it said last without holding all its output in memory.
 */
export class OutputTail {
  private text = '';

  /** @param limit - how many trailing characters to keep (default 4,000) */
  constructor(private readonly limit = 4000) {}

  /** Appends a chunk of output. */
  push(chunk: string | Buffer): void {
    this.text += chunk.toString();
    if (this.text.length > this.limit * 2) this.text = this.text.slice(-this.limit);
  }

  /** The kept output, at most `limit` characters, trimmed. */
  toString(): string {
    return this.text.slice(-this.limit).trim();
  }
}
