/**
 * Our messages as LangChain messages (`toLangChain`) for messages that did not come through the
 * LangChain history: a tool call appended through the client keeps its arguments as the model wrote
 * them, which need not be a JSON object (a reply cut off by `max_tokens` leaves them truncated).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AIMessage } from '@langchain/core/messages';
import { toLangChain } from '../../src/adapters/langchain.js';
import type { Message } from '../../src/model/message.js';

const call = (callId: string, args: string): Message => ({
  id: `a-${callId}`,
  role: 'assistant',
  parts: [
    { type: 'text', text: 'Checking.' },
    { type: 'tool_call', callId, name: 'get_weather', arguments: args },
  ],
});

test('a tool call whose arguments are not a JSON object is an invalid tool call, not a thrown read', () => {
  for (const args of ['{"city": "Par', '["Paris"]', 'Paris']) {
    const [message] = toLangChain(call('c1', args));
    assert.ok(message instanceof AIMessage, args);
    assert.equal(message.content, 'Checking.');
    assert.deepEqual(message.tool_calls, [], args);
    assert.equal(message.invalid_tool_calls?.length, 1, args);
    const [invalid] = message.invalid_tool_calls!;
    assert.equal(invalid!.id, 'c1');
    assert.equal(invalid!.name, 'get_weather');
    assert.equal(invalid!.args, args);
    assert.match(invalid!.error ?? '', /JSON object/u);
  }
});

test('well-formed arguments stay a tool call beside an invalid one', () => {
  const message: Message = {
    id: 'a2',
    role: 'assistant',
    parts: [
      { type: 'tool_call', callId: 'ok', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'tool_call', callId: 'bad', name: 'get_weather', arguments: '{"city":' },
    ],
  };
  const [ai] = toLangChain(message) as [AIMessage];
  assert.deepEqual(
    ai.tool_calls?.map((c) => [c.id, c.args]),
    [['ok', { city: 'Paris' }]],
  );
  assert.deepEqual(
    ai.invalid_tool_calls?.map((c) => [c.id, c.args]),
    [['bad', '{"city":']],
  );
});
