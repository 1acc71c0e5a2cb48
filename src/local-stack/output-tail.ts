/**
 * The output of a local service (the Temporal CLI, PostgreSQL) kept for error messages: an error about
 * a process that failed to start quotes what it said first (a Go panic names its reason on its first
 * line, then prints pages of goroutines) and what it said last. The stack's own lines go through
 * `RuntimeLog` (src/observability/log.ts).
 */

/**
 * Keeps the first `headLimit` and the last `limit` characters of a process's output, without holding
 * all its output in memory.
 */
export class OutputTail {
  private head = '';
  private text = '';
  private dropped = false;

  /**
   * @param limit - how many trailing characters to keep (default 4,000)
   * @param headLimit - how many leading characters to keep (default 1,000)
   */
  constructor(
    private readonly limit = 4000,
    private readonly headLimit = 1000,
  ) {}

  /** Appends a chunk of output. */
  push(chunk: string | Buffer): void {
    let text = chunk.toString();
    if (this.head.length < this.headLimit) {
      const take = this.headLimit - this.head.length;
      this.head += text.slice(0, take);
      text = text.slice(take);
    }
    this.text += text;
    if (this.text.length > this.limit * 2) {
      this.text = this.text.slice(-this.limit);
      this.dropped = true;
    }
  }

  /** The kept output: the head, then (after a marker when some was left out) the tail; trimmed. */
  toString(): string {
    const tail = this.text.slice(-this.limit);
    const skipped = this.dropped || this.text.length > this.limit;
    return (skipped ? `${this.head}\n[…]\n${tail}` : this.head + tail).trim();
  }
}
