/**
 * Polls a thread's state until a condition holds (background work is asynchronous by design), with a
 * deadline; the error shows the last state, so a failure says what the thread was doing.
 */
import type { ThreadHandle, ThreadState } from '../../src/client/thread-handle.js';

export async function waitForState(
  t: ThreadHandle,
  what: string,
  ok: (s: ThreadState) => boolean,
  timeoutMs = 30_000,
): Promise<ThreadState> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await t.state();
    if (ok(s)) return s;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
