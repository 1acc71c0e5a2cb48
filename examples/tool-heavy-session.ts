/**
 * A long, tool-heavy session: an agent that searches and reads files on every turn, on a small
 * budget, so that the thread's default strategy has work to do. Older tool results are collapsed to
 * one line each, the oldest turns are summarized (by the worker, in the background, with the LLM of
 * OPENAI_BASE_URL or the local extractive summarizer), and the view never exceeds the budget.
 * At the end it prints `durable-memory thread show`: history and view side by side.
 *
 * Against a local stack (`npm start` in another terminal):
 *   npx tsx examples/tool-heavy-session.ts
 * THREAD_ID names the thread (default `tool-heavy-demo`).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { connect } from 'durable-memory';

const threadId = process.env['THREAD_ID'] ?? 'tool-heavy-demo';
const memory = await connect();
const thread = memory.thread(threadId, { userId: 'bob' });
try {
  // The first append creates the thread. Then a small budget, so that twenty turns overflow the
  // view's half of it (recall keeps the other half) a few times over. The default strategy applies:
  // collapse older tool results, summarize the oldest groups, truncate as the last resort.
  await thread.append({ id: 'sys', role: 'system', content: 'You are a careful code assistant.' });
  await thread.configure({ budget: 2400 });

  const files = ['billing.ts', 'invoice.ts', 'ledger.ts', 'refunds.ts', 'tax.ts'];
  for (let turn = 1; turn <= 20; turn++) {
    const file = files[turn % files.length]!;
    const lines = Array.from(
      { length: 12 },
      (_, i) => `${i + 1}: export function step${turn}_${i}() { /* … */ }`,
    );
    await thread.append([
      { id: `u${turn}`, role: 'user', content: `Turn ${turn}: where is the rounding done in ${file}?` },
      {
        id: `call${turn}`,
        role: 'assistant',
        parts: [
          { type: 'tool_call', callId: `s${turn}`, name: 'search_code', arguments: { query: 'round', file } },
          { type: 'tool_call', callId: `r${turn}`, name: 'read_file', arguments: { path: `src/${file}` } },
        ],
      },
      {
        id: `res-s${turn}`,
        role: 'tool',
        parts: [{ type: 'tool_result', callId: `s${turn}`, result: `3 hits in ${file}: lines 4, 7, 9` }],
      },
      {
        id: `res-r${turn}`,
        role: 'tool',
        parts: [{ type: 'tool_result', callId: `r${turn}`, result: lines.join('\n') }],
      },
      {
        id: `a${turn}`,
        role: 'assistant',
        content:
          `In ${file}, rounding happens in step${turn}_4 (line 4): amounts are kept in cents, multiplied ` +
          `by the rate, and rounded half-even once per invoice line, never on the running total, so ` +
          `that the ledger and the tax report agree to the cent.`,
      },
    ]);
    const { tokens, budget } = await thread.context();
    console.log(`turn ${turn}: the view holds ${tokens} of ${budget} tokens`);
  }
  const compaction = await thread.compact(); // now, rather than on the next trigger or the idle timer
  console.log(
    compaction
      ? `compaction: ${compaction.excludedGroups} groups out, ${compaction.summaries} summaries in; ` +
          `${compaction.includedTokensBefore} → ${compaction.includedTokensAfter} tokens`
      : 'compaction: nothing to do',
  );
} finally {
  await memory.close();
}

// The package's command line sits beside its entry point (dist/src/index.js → dist/src/cli/main.js).
const cli = fileURLToPath(new URL('./cli/main.js', import.meta.resolve('durable-memory')));
const show = spawnSync(process.execPath, [cli, 'thread', 'show', threadId, '--width', '120'], {
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
});
console.log(show.stdout);
process.exitCode = show.status ?? 1;
