/**
 * An MCP client using the durable-memory MCP server over streamable HTTP, as an assistant would: it
 * lists the tools, reads a thread's context, remembers a fact the user confirmed (with where it came
 * from), finds it again, and forgets it (kept in history, superseded).
 *
 * Start the stack (`npm start` prints `api=…` on its ready line), then:
 *   npx tsx examples/mcp-client.ts
 * It finds the API in the stack's endpoints.json (or DURABLE_MEMORY_API_URL).
 * With tokens, add DURABLE_MEMORY_API_TOKEN=… (without one the local API serves loopback requests as
 * tenant `local`). THREAD_ID chooses the thread. Over stdio, spawn `durable-memory mcp` instead
 * (StdioClientTransport): the tools are the same.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { apiUrl } from './stack.js';

const api = apiUrl();
const token = process.env['DURABLE_MEMORY_API_TOKEN'];
const threadId = process.env['THREAD_ID'] ?? 'mcp-demo';
const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};

// A conversation to work with, appended through the HTTP API (an agent would have written it).
const appended = await fetch(`${api}/v1/threads/${threadId}/messages`, {
  method: 'POST',
  headers: { ...headers, 'content-type': 'application/json' },
  body: JSON.stringify({
    userId: 'alice',
    messages: [
      { id: 'u1', role: 'user', content: 'Book me a flight to Lisbon. I always take a window seat.' },
      { id: 'a1', role: 'assistant', content: 'Noted: a window seat. Shall I remember that for next time?' },
      { id: 'u2', role: 'user', content: 'Yes, remember it.' },
    ],
  }),
});
if (!appended.ok) throw new Error(`append failed: ${appended.status} ${await appended.text()}`);

const client = new Client({ name: 'durable-memory-example', version: '1.0.0' });
await client.connect(
  new StreamableHTTPClientTransport(new URL(`${api}/v1/mcp`), { requestInit: { headers } }),
);

/** Calls a tool and returns its structured answer (throws on an error result). */
async function call(name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

try {
  const { tools } = await client.listTools();
  console.log(`tools: ${tools.map((t) => t.name).join(', ')}`);

  const context = await call('context', { threadId });
  console.log(`context: ${context['messages'].length} messages, ${context['tokens']} tokens`);

  // The user confirmed it in message u2: record the fact with where it came from.
  const { memory } = await call('remember', {
    text: 'Alice always takes a window seat',
    threadId,
    messageIds: ['u1', 'u2'],
    toolCallId: 'call_remember_1',
  });
  console.log(
    `remembered ${memory.id}: ${memory.text} (${memory.confirmation}, from ${memory.sourceThreadId})`,
  );

  const found = await call('search', { query: 'window seat', threadId });
  console.log(`search: ${found['memories'].map((m: { text: string }) => m.text).join(' | ')}`);
  console.log(`in the thread: ${found['messages'].map((m: { id: string }) => m.id).join(', ')}`);

  const forgotten = await call('forget', {
    memoryId: memory.id,
    userId: 'alice',
    reason: 'prefers aisle now',
  });
  console.log(
    `forgot ${forgotten['memory'].id}: ${forgotten['memory'].status} (${forgotten['memory'].supersededReason})`,
  );

  const { threads } = await call('list_threads', { userId: 'alice' });
  console.log(`threads of alice: ${threads.map((t: { threadId: string }) => t.threadId).join(', ')}`);
} finally {
  await client.close();
}
