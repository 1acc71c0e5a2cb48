/**
 * The MCP server's `instructions` (what a client shows its model before any tool is listed) name
 * every tool it registers: they once left out get_working_memory and update_working_memory, so a
 * model read of working memory only in the tools' own descriptions, if at all.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { DurableMemory } from '../../src/client/connect.js';
import { UNSCOPED } from '../../src/mcp/ids.js';
import { createMcpServer } from '../../src/mcp/server.js';

test('the instructions name every tool the server lists', async () => {
  // No tool is called: the connection is never used.
  const server = createMcpServer({ memory: {} as DurableMemory, scope: UNSCOPED });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'instructions-test', version: '1.0.0' });
  await server.connect(serverSide);
  await client.connect(clientSide);
  try {
    const instructions = client.getInstructions() ?? '';
    const { tools } = await client.listTools();
    assert.ok(tools.length >= 7, `${tools.length} tools`);
    const unnamed = tools
      .map((t) => t.name)
      .filter((name) => !new RegExp(`\\b${name}\\b`, 'u').test(instructions));
    assert.deepEqual(unnamed, [], `instructions: ${instructions}`);
  } finally {
    await client.close();
    await server.close();
  }
});
