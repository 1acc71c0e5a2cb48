/**
 * Resuming after an outage: the whole local stack (Temporal, PostgreSQL, worker, API) stops in the
 * middle of a conversation and starts again; the same thread goes on where it was.
 *
 * The example runs `durable-memory start` itself, on its own DURABLE_MEMORY_HOME (a temporary one
 * unless set), so it can stop it like a crash of the machine's services would:
 *   1. two turns are appended;
 *   2. the stack stops: the next append fails with a typed error (nothing half-written);
 *   3. the stack starts again on the same home; the agent retries the same message (same id, so a
 *      retry can never duplicate it) and the conversation continues.
 *
 *   npx tsx examples/resume-after-outage.ts
 * An OpenAI-compatible endpoint (OPENAI_BASE_URL) is optional: without one, fixed replies are used.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { BackendUnavailableError, connect, type DurableMemory } from 'durable-memory';

// The package's command line sits beside its entry point (dist/src/index.js → dist/src/cli/main.js).
const cli = fileURLToPath(new URL('./cli/main.js', import.meta.resolve('durable-memory')));
const ownHome = !process.env['DURABLE_MEMORY_HOME'];
const home = process.env['DURABLE_MEMORY_HOME'] ?? (await mkdtemp(path.join(os.tmpdir(), 'dm-resume-')));
await chmod(home, 0o755); // run as root, the embedded PostgreSQL's own user must reach its data

/** Starts `durable-memory start` and resolves once it prints its ready line. */
async function startStack(): Promise<ChildProcess> {
  const env = { ...process.env, DURABLE_MEMORY_HOME: home, TEMPORAL_ADDRESS: '', DATABASE_URL: '' };
  const child = spawn(process.execPath, [cli, 'start'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line.includes('ready')) {
      console.log(`stack: ${line}`);
      return child;
    }
  }
  throw new Error('durable-memory start exited before it was ready');
}

/** Ctrl-C for the stack, and wait until everything it started is down. */
async function stopStack(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return; // already down
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await exited;
}

const llm = process.env['OPENAI_BASE_URL']
  ? new OpenAI({ apiKey: process.env['OPENAI_API_KEY'] ?? 'not-needed-locally' })
  : undefined;

/** Appends a user message and the model's answer (both with ids, so retries are safe). */
async function turn(memory: DurableMemory, n: number, text: string): Promise<void> {
  const thread = memory.thread('resume-demo', { userId: 'alice' });
  await thread.append({ id: `u${n}`, role: 'user', content: text });
  const { openai: messages } = await thread.context({ budget: 4000 });
  const answer = llm
    ? ((await llm.chat.completions.create({ model: 'gpt-4o-mini', messages })).choices[0]!.message.content ??
      '')
    : `(answer ${n})`;
  await thread.append({ id: `a${n}`, role: 'assistant', content: answer });
  console.log(`turn ${n}: ${text} → ${answer}`);
}

let stack = await startStack();
try {
  let memory = await connect({ home });
  await turn(memory, 1, 'I am planning a trip to Lisbon in May.');
  await turn(memory, 2, 'I prefer small hotels near the river.');

  console.log('outage: stopping the whole stack mid-conversation');
  await stopStack(stack);
  try {
    await memory.thread('resume-demo').append({ id: 'u3', role: 'user', content: 'Any restaurant tips?' });
    throw new Error('the append should have failed while PostgreSQL was down');
  } catch (err) {
    if (!(err instanceof BackendUnavailableError)) throw err;
    console.log(`append during the outage: ${err.name} (${err.backend}); the agent will retry it`);
  }
  await memory.close();

  stack = await startStack();
  memory = await connect({ home });
  await turn(memory, 3, 'Any restaurant tips?'); // the retried message, same id u3
  const thread = memory.thread('resume-demo');
  const { messages } = await thread.history();
  console.log(`history after the restart: ${messages.map((m) => m.id).join(' ')}`);
  console.log(`indexed up to seq ${(await thread.sync()).indexedSeq} of ${messages.length}`);
  await memory.close();
} finally {
  await stopStack(stack);
  if (ownHome) await rm(home, { recursive: true, force: true });
}
