/**
 * What a model reads of a conversation: the transcript's lines (src/llm/transcript.ts), and the
 * messages cut to fit a number of characters, longest parts first (src/model/clip.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderTranscript } from '../../src/llm/transcript.js';
import { clipLongestParts } from '../../src/model/clip.js';
import { normalizeMessages } from '../../src/model/validation.js';
import type { Message } from '../../src/model/message.js';

const chars = (messages: Message[]) =>
  messages
    .flatMap((m) => m.parts)
    .reduce(
      (n, p) =>
        n + (p.type === 'tool_call' ? p.arguments : p.type === 'tool_result' ? p.result : p.text).length,
      0,
    );

describe('renderTranscript', () => {
  it('writes one line per text, call and result, naming the tool, leaving reasoning out', () => {
    const messages = normalizeMessages([
      { id: 'u', role: 'user', content: 'weather in Oslo?' },
      {
        id: 'a',
        role: 'assistant',
        parts: [
          { type: 'reasoning', text: 'I should look it up' },
          { type: 'tool_call', callId: 'c', name: 'weather', arguments: '{"city":"Oslo"}' },
        ],
      },
      { id: 't', role: 'tool', parts: [{ type: 'tool_result', callId: 'c', result: 'sunny' }] },
    ]);
    assert.equal(
      renderTranscript(messages, { withIds: true }),
      '[u] user: weather in Oslo?\n[a] assistant called weather({"city":"Oslo"})\n[t] tool weather → sunny',
    );
  });
});

describe('clipLongestParts', () => {
  const messages = normalizeMessages([
    { id: 'u', role: 'user', content: 'short question' },
    {
      id: 'a',
      role: 'assistant',
      parts: [{ type: 'tool_call', callId: 'c', name: 'f', arguments: 'a'.repeat(3000) }],
    },
    { id: 't', role: 'tool', parts: [{ type: 'tool_result', callId: 'c', result: 'r'.repeat(9000) }] },
  ]);

  it('gives the messages as they are when they fit', () => {
    assert.deepEqual(clipLongestParts(messages, 20_000), messages);
  });

  it('cuts the longest parts to one length, the largest that fits, and keeps short ones whole', () => {
    const clipped = clipLongestParts(messages, 4_014);
    assert.ok(chars(clipped) <= 4_014, `${chars(clipped)}`);
    assert.ok(chars(clipped) >= 4_010, 'the room is used');
    assert.deepEqual(clipped[0], messages[0]);
    const [call, result] = [clipped[1]!.parts[0]!, clipped[2]!.parts[0]!];
    assert.ok(call.type === 'tool_call' && result.type === 'tool_result');
    assert.equal(call.arguments.length, 2000);
    assert.equal(result.result, `${'r'.repeat(1999)}…`);
    // Only the result is longer than an even share: the call stays whole.
    const wide = clipLongestParts(messages, 7_014);
    assert.equal((wide[1]!.parts[0] as { arguments: string }).arguments.length, 3000);
    assert.equal((wide[2]!.parts[0] as { result: string }).result.length, 4000);
  });

  it('never leaves half a surrogate pair', () => {
    const emoji = normalizeMessages([{ id: 'e', role: 'user', content: '👋'.repeat(100) }]);
    const [m] = clipLongestParts(emoji, 10);
    const text = (m!.parts[0] as { text: string }).text;
    assert.equal(text, `${'👋'.repeat(4)}…`);
  });
});
