/**
 * Responses-API items of the OpenAI Agents SDK to our messages and back: each item one message that
 * passes our validation, the item returned exactly (ids, statuses, images, hosted calls), and
 * messages from elsewhere (summaries, tool calls appended through the client) turned into items.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentInputItem } from '@openai/agents';
import { protocol } from '@openai/agents';
import { chainGone, itemToMessage, messageToItems } from '../../src/adapters/openai-agents.js';
import { normalizeMessages } from '../../src/model/validation.js';

const items: AgentInputItem[] = [
  { role: 'system', content: 'be brief' },
  { role: 'user', content: 'weather in Paris?' },
  {
    role: 'user',
    content: [
      { type: 'input_text', text: 'and this picture?' },
      { type: 'input_image', image: 'https://example.com/p.png', detail: 'auto' },
    ],
  },
  { role: 'user', content: [{ type: 'input_image', image: 'https://example.com/only.png' }] },
  {
    type: 'reasoning',
    id: 'rs_1',
    content: [{ type: 'input_text', text: 'I should call the tool.' }],
    providerData: { encrypted_content: 'abc' },
  },
  {
    type: 'function_call',
    id: 'fc_1',
    callId: 'call_1',
    name: 'get_weather',
    arguments: '{"city":"Paris"}',
    status: 'completed',
  },
  {
    type: 'function_call_result',
    callId: 'call_1',
    name: 'get_weather',
    status: 'completed',
    output: { type: 'text', text: 'sunny' },
  },
  {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: 'Sunny in Paris.', providerData: { annotations: [] } }],
  },
  { type: 'hosted_tool_call', id: 'ws_1', name: 'web_search_call', status: 'completed' },
];

test('every item is a valid message of ours and comes back exactly', () => {
  for (const item of items) protocol.ModelItem.or(protocol.ReasoningItem).parse(item); // real SDK schema
  const messages = normalizeMessages(items.map(itemToMessage));
  assert.deepEqual(
    messages.map((m) => [m.role, m.parts.map((p) => p.type).join('+')]),
    [
      ['system', 'text'],
      ['user', 'text'],
      ['user', 'text'],
      ['user', 'text'],
      ['assistant', 'reasoning'],
      ['assistant', 'tool_call'],
      ['tool', 'tool_result'],
      ['assistant', 'text'],
      ['assistant', 'text'],
    ],
  );
  assert.deepEqual(messages[6]!.parts[0], {
    type: 'tool_result',
    callId: 'call_1',
    name: 'get_weather',
    result: 'sunny',
  });
  assert.deepEqual(
    messages.flatMap((m) => messageToItems(m)),
    items,
  );
});

test('ids: stable for calls, results and provider items; FAKE_ID and missing ids get fresh ones', () => {
  const call = items[5]!;
  assert.equal(itemToMessage(call).id, 'call:call_1');
  assert.equal(itemToMessage(items[6]!).id, 'result:call_1');
  assert.equal(itemToMessage(items[7]!).id, 'item:msg_1');
  const fake = { ...items[7]!, id: 'FAKE_ID' } as AgentInputItem;
  assert.notEqual(itemToMessage(fake).id, itemToMessage(fake).id);
  assert.notEqual(itemToMessage(items[1]!).id, itemToMessage(items[1]!).id);
});

test('messages from elsewhere become items from their parts', () => {
  const [summary, calling, result] = normalizeMessages([
    { id: 's', role: 'system', content: 'Summary: the user asked about Paris.' },
    {
      id: 'a',
      role: 'assistant',
      parts: [
        { type: 'reasoning', text: 'think' },
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_call', callId: 'c9', name: 'lookup', arguments: { q: 1 } },
      ],
    },
    { id: 'r', role: 'tool', parts: [{ type: 'tool_result', callId: 'c9', result: 'x', isError: true }] },
  ]);
  assert.deepEqual(messageToItems(summary!), [
    { role: 'system', content: 'Summary: the user asked about Paris.' },
  ]);
  assert.deepEqual(messageToItems(calling!), [
    { type: 'reasoning', content: [{ type: 'input_text', text: 'think' }] },
    { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Let me look.' }] },
    { type: 'function_call', callId: 'c9', name: 'lookup', arguments: '{"q":1}', status: 'completed' },
  ]);
  assert.deepEqual(messageToItems(result!), [
    { type: 'function_call_result', callId: 'c9', name: '', output: 'x', status: 'incomplete' },
  ]);
});

test('chainGone: only a 404 or 400 naming the chained response (or its parameter) drops the chain', () => {
  const id = 'resp_abc';
  const gone = {
    status: 404,
    code: 'previous_response_not_found',
    message: `Previous response with id '${id}' not found.`,
  };
  assert.equal(chainGone(gone, id), 'provider answered 404 previous_response_not_found');
  assert.equal(
    chainGone({ status: 400, param: 'previous_response_id', message: 'bad' }, id),
    'provider answered 400',
  );
  assert.equal(
    chainGone({ status: 404, code: 'model_not_found', message: 'The model x does not exist' }, id),
    undefined,
  );
  assert.equal(chainGone({ status: 400, message: 'Invalid temperature' }, id), undefined);
  assert.equal(chainGone({ ...gone, status: 500 }, id), undefined);
  assert.equal(chainGone(new Error(`fetch failed for ${id}`), id), undefined, 'no status: a network error');
  assert.equal(chainGone(undefined, id), undefined);
});
