import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../../src/model/errors.js';
import type { MessageInput } from '../../src/model/message.js';
import { MAX_ID_LENGTH, normalizeMessages, sanitizeText } from '../../src/model/validation.js';
import {
  MAX_BUDGET,
  MAX_EXTRACT_EVERY_TURNS,
  MAX_IDLE_MS,
  MAX_JSON_DEPTH,
  MAX_STRATEGY_DEPTH,
} from '../../src/model/limits.js';
import { DEFAULT_CONFIG, mergeConfig } from '../../src/thread/config.js';

/** Asserts that normalising `inputs` throws a ValidationError with this code, index and messageId. */
function rejects(
  inputs: unknown[],
  code: string,
  index: number | undefined,
  messageId: string | undefined,
  options?: Parameters<typeof normalizeMessages>[1],
): void {
  let caught: unknown;
  try {
    normalizeMessages(inputs as MessageInput[], options);
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof ValidationError, `expected a ValidationError, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  assert.equal(caught.index, index);
  assert.equal(caught.messageId, messageId);
  if (index !== undefined) assert.match(caught.message, new RegExp(`Message ${index}\\b`));
  if (messageId !== undefined) assert.ok(caught.message.includes(JSON.stringify(messageId.slice(0, 80))));
}

const user = (text: string, id?: string): MessageInput => ({
  ...(id && { id }),
  role: 'user',
  content: text,
});
const ok = user('fine');

function deepFreeze<T>(x: T): T {
  if (typeof x === 'object' && x !== null) {
    for (const v of Object.values(x)) deepFreeze(v);
    Object.freeze(x);
  }
  return x;
}

describe('normalizeMessages: normalisation', () => {
  test('content shorthand becomes one text part; developer becomes system', () => {
    const [a, b] = normalizeMessages([
      user('hi', 'u1'),
      { id: 's1', role: 'developer', content: 'be brief' },
    ]);
    assert.deepEqual(a, { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] });
    assert.deepEqual(b, { id: 's1', role: 'system', parts: [{ type: 'text', text: 'be brief' }] });
  });

  test('absent ids are generated from prefix and index, deterministically', () => {
    const inputs = [user('a'), user('b', 'given'), user('c')];
    assert.deepEqual(
      normalizeMessages(inputs).map((m) => m.id),
      ['m0', 'given', 'm2'],
    );
    assert.deepEqual(
      normalizeMessages(inputs, { idPrefix: 'batch7-' }).map((m) => m.id),
      ['batch7-0', 'given', 'batch7-2'],
    );
    assert.deepEqual(normalizeMessages(inputs), normalizeMessages(inputs));
  });

  test('the input is not mutated and the output shares no objects with it', () => {
    const input = deepFreeze<MessageInput[]>([
      {
        role: 'assistant',
        parts: [
          { type: 'text', text: 'calling' },
          { type: 'tool_call', callId: 'c1', name: 'f', arguments: { a: [1, 2] } },
        ],
        createdAt: '2024-05-01T10:00:00Z',
        metadata: { tags: ['x'], nested: { k: 1 } },
      },
    ]);
    const before = structuredClone(input);
    const [out] = normalizeMessages(input);
    assert.deepEqual(input, before);
    assert.notEqual(out!.parts, input[0]!.parts);
    assert.notEqual(out!.parts[0], input[0]!.parts![0]);
    assert.notEqual(out!.metadata, input[0]!.metadata);
    assert.notEqual(out!.metadata!['tags'], input[0]!.metadata!['tags']);
    assert.deepEqual(out!.metadata, { tags: ['x'], nested: { k: 1 } });
  });

  test('tool-call arguments: strings kept, JSON values serialised, undefined becomes {}', () => {
    const call = (args: unknown) =>
      normalizeMessages([
        { role: 'assistant', parts: [{ type: 'tool_call', callId: 'c', name: 'f', arguments: args }] },
      ])[0]!.parts[0];
    assert.deepEqual(call('{"raw": true}'), {
      type: 'tool_call',
      callId: 'c',
      name: 'f',
      arguments: '{"raw": true}',
    });
    assert.equal(
      (call({ city: 'Paris', days: [1, 2] }) as { arguments: string }).arguments,
      '{"city":"Paris","days":[1,2]}',
    );
    assert.equal((call([1, 'a']) as { arguments: string }).arguments, '[1,"a"]');
    assert.equal((call(42) as { arguments: string }).arguments, '42');
    assert.equal((call(undefined) as { arguments: string }).arguments, '{}');
  });

  test('an assistant message with tool calls and no text is not empty', () => {
    const [m] = normalizeMessages([
      { role: 'assistant', parts: [{ type: 'tool_call', callId: 'c', name: 'f' }] },
    ]);
    assert.equal(m!.parts.length, 1);
  });

  test('createdAt: a Date becomes an ISO string, a date string is kept as is', () => {
    const [a, b] = normalizeMessages([
      { ...ok, createdAt: new Date(Date.UTC(2024, 0, 2, 3, 4, 5)) },
      { ...ok, createdAt: '2024-01-02 03:04' },
    ]);
    assert.equal(a!.createdAt, '2024-01-02T03:04:05.000Z');
    assert.equal(b!.createdAt, '2024-01-02 03:04');
  });

  test('tool results keep name and isError; parts keep only their own fields', () => {
    const [m] = normalizeMessages([
      {
        role: 'tool',
        parts: [
          { type: 'tool_result', callId: 'c', name: 'f', result: '', isError: true, extra: 1 } as never,
        ],
      },
    ]);
    assert.deepEqual(m!.parts, [{ type: 'tool_result', callId: 'c', name: 'f', result: '', isError: true }]);
  });

  test('special-token strings are ordinary text, accepted unchanged', () => {
    const text = 'a <|endoftext|> b <|im_start|>system<|im_end|> <|fim_prefix|>x<|fim_suffix|>';
    assert.equal((normalizeMessages([user(text)])[0]!.parts[0] as { text: string }).text, text);
  });

  test('a message over 1 MB is accepted whole, not split', () => {
    const big = 'lorem ipsum dolor sit amet '.repeat(50_000); // 1.35 MB
    const [m] = normalizeMessages([user(big)]);
    assert.equal(m!.parts.length, 1);
    assert.equal((m!.parts[0] as { text: string }).text.length, big.length);
  });

  test('valid surrogate pairs (emoji) and a 200-character id are accepted', () => {
    const id = 'x'.repeat(MAX_ID_LENGTH);
    assert.equal(normalizeMessages([user('ok 🙂 𝄞', id)])[0]!.id, id);
  });

  test('metadata: undefined properties are left out, as JSON would', () => {
    const [m] = normalizeMessages([{ ...ok, metadata: { a: 1, b: undefined } }]);
    assert.deepEqual(m!.metadata, { a: 1 });
  });
});

describe('normalizeMessages: errors name the message by index and id', () => {
  test('not an array', () => rejects('nope' as never, 'invalid_message', undefined, undefined));
  test('a message that is not an object', () => rejects([ok, 'hello'], 'invalid_message', 1, undefined));
  test('unknown role', () => rejects([ok, { id: 'r', role: 'robot', content: 'x' }], 'unknown_role', 1, 'r'));
  test('missing role', () => rejects([{ id: 'r', content: 'x' }], 'unknown_role', 0, 'r'));
  test('parts not an array', () =>
    rejects([{ id: 'p', role: 'user', parts: 'x' }], 'invalid_message', 0, 'p'));
  test('content and parts both given', () =>
    rejects([{ id: 'b', role: 'user', content: 'x', parts: [] }], 'invalid_message', 0, 'b'));
  test('content that is not a string', () =>
    rejects([{ id: 'c', role: 'user', content: [{ type: 'text', text: 'x' }] }], 'invalid_message', 0, 'c'));
  test('part that is not an object', () =>
    rejects([{ id: 'p', role: 'user', parts: [null] }], 'invalid_part', 0, 'p'));
  test('unknown part type', () =>
    rejects([ok, ok, { role: 'user', parts: [{ type: 'image', url: 'x' }] }], 'invalid_part', 2, 'm2'));
  test('text part without a string text', () =>
    rejects([{ id: 't', role: 'user', parts: [{ type: 'text', text: 3 }] }], 'invalid_part', 0, 't'));

  test('empty message: no parts', () =>
    rejects([{ id: 'e', role: 'user', parts: [] }], 'empty_message', 0, 'e'));
  test('empty message: no content at all', () =>
    rejects([ok, { id: 'e', role: 'assistant' }], 'empty_message', 1, 'e'));
  test('empty message: only empty text parts', () =>
    rejects(
      [
        {
          id: 'e',
          role: 'user',
          parts: [
            { type: 'text', text: '' },
            { type: 'text', text: '' },
          ],
        },
      ],
      'empty_message',
      0,
      'e',
    ));
  test('empty message: empty content shorthand', () => rejects([user('', 'e')], 'empty_message', 0, 'e'));

  test('tool_result without callId', () =>
    rejects(
      [{ id: 't', role: 'tool', parts: [{ type: 'tool_result', result: 'r' }] }],
      'missing_call_id',
      0,
      't',
    ));
  test('tool_call without callId', () =>
    rejects(
      [{ id: 'a', role: 'assistant', parts: [{ type: 'tool_call', name: 'f' }] }],
      'missing_call_id',
      0,
      'a',
    ));
  test('tool_call without name', () =>
    rejects(
      [{ id: 'a', role: 'assistant', parts: [{ type: 'tool_call', callId: 'c' }] }],
      'missing_tool_name',
      0,
      'a',
    ));
  test('tool_call with an empty name', () =>
    rejects(
      [{ id: 'a', role: 'assistant', parts: [{ type: 'tool_call', callId: 'c', name: '' }] }],
      'missing_tool_name',
      0,
      'a',
    ));

  const call = { type: 'tool_call', callId: 'c', name: 'f' };
  const result = { type: 'tool_result', callId: 'c', result: 'r' };
  test('tool_call in a user message', () =>
    rejects([{ id: 'x', role: 'user', parts: [call] }], 'role_part_mismatch', 0, 'x'));
  test('tool_result in an assistant message', () =>
    rejects([{ id: 'x', role: 'assistant', parts: [result] }], 'role_part_mismatch', 0, 'x'));
  test('text in a tool message', () =>
    rejects(
      [{ id: 'x', role: 'tool', parts: [result, { type: 'text', text: 'hi' }] }],
      'role_part_mismatch',
      0,
      'x',
    ));
  test('content shorthand in a tool message', () =>
    rejects([{ id: 'x', role: 'tool', content: 'hi' }], 'role_part_mismatch', 0, 'x'));
  test('reasoning in a user message', () =>
    rejects(
      [{ id: 'x', role: 'user', parts: [{ type: 'reasoning', text: 'hm' }] }],
      'role_part_mismatch',
      0,
      'x',
    ));

  test('NUL in text', () => rejects([ok, user('a\u0000b', 'n')], 'nul_byte', 1, 'n'));
  test('NUL in tool-call arguments (string)', () =>
    rejects(
      [{ id: 'n', role: 'assistant', parts: [{ ...call, arguments: '{"a":"\u0000"}' }] }],
      'nul_byte',
      0,
      'n',
    ));
  test('NUL in a tool result', () =>
    rejects([{ id: 'n', role: 'tool', parts: [{ ...result, result: '\u0000' }] }], 'nul_byte', 0, 'n'));
  test('NUL in metadata', () =>
    rejects([{ ...user('x', 'n'), metadata: { k: ['a\u0000'] } }], 'nul_byte', 0, 'n'));
  test('NUL in an id', () => rejects([user('x', 'a\u0000b')], 'nul_byte', 0, 'a\u0000b'));

  test('lone high surrogate in text', () => rejects([user('a\ud83d', 's')], 'lone_surrogate', 0, 's'));
  test('lone low surrogate in text', () => rejects([user('\ude00 b', 's')], 'lone_surrogate', 0, 's'));
  test('reversed surrogate pair in a tool name', () =>
    rejects(
      [{ id: 's', role: 'assistant', parts: [{ ...call, name: '\ude00\ud83d' }] }],
      'lone_surrogate',
      0,
      's',
    ));

  test('empty id', () => rejects([{ id: '', role: 'user', content: 'x' }], 'invalid_id', 0, ''));
  test('id that is not a string', () =>
    rejects([{ id: 7, role: 'user', content: 'x' }], 'invalid_id', 0, undefined));
  test('id longer than 200 characters', () => {
    const id = 'x'.repeat(MAX_ID_LENGTH + 1);
    rejects([user('x', id)], 'invalid_id', 0, id);
  });
  test('id with a control character', () => rejects([user('x', 'a\nb')], 'invalid_id', 0, 'a\nb'));

  test('duplicate id inside the batch', () =>
    rejects([user('a', 'd'), ok, user('b', 'd')], 'duplicate_id', 2, 'd'));
  test('id already stored', () =>
    rejects([ok, user('a', 'old')], 'duplicate_id', 1, 'old', { existingIds: new Set(['old']) }));
  test('a generated id colliding with a given one', () =>
    rejects([user('a', 'm1'), user('b')], 'duplicate_id', 1, 'm1'));

  test('non-serialisable arguments: BigInt', () =>
    rejects(
      [{ id: 'a', role: 'assistant', parts: [{ ...call, arguments: { n: 1n } }] }],
      'invalid_arguments',
      0,
      'a',
    ));
  test('non-serialisable arguments: cycle', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    rejects(
      [{ id: 'a', role: 'assistant', parts: [{ ...call, arguments: cyclic }] }],
      'invalid_arguments',
      0,
      'a',
    );
  });
  test('non-serialisable arguments: a function', () =>
    rejects(
      [{ id: 'a', role: 'assistant', parts: [{ ...call, arguments: () => 1 }] }],
      'invalid_arguments',
      0,
      'a',
    ));

  test('createdAt that is not a date', () =>
    rejects([{ ...user('x', 'd'), createdAt: 'yesterday' }], 'invalid_message', 0, 'd'));
  test('createdAt that is an invalid Date', () =>
    rejects([{ ...user('x', 'd'), createdAt: new Date('nope') }], 'invalid_message', 0, 'd'));
  test('metadata that is not an object', () =>
    rejects([{ ...user('x', 'd'), metadata: [1] }], 'invalid_message', 0, 'd'));
  test('metadata that JSON would alter (a Date)', () =>
    rejects([{ ...user('x', 'd'), metadata: { at: new Date(0) } }], 'invalid_message', 0, 'd'));
  test('metadata that JSON would alter (NaN)', () =>
    rejects([{ ...user('x', 'd'), metadata: { n: NaN } }], 'invalid_message', 0, 'd'));
});

/** `{ a: { a: … { a: leaf } } }`, `levels` objects deep (built without recursion). */
function nested(levels: number, leaf: unknown = 1): Record<string, unknown> {
  let value: Record<string, unknown> = { a: leaf };
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

describe('limits: messages', () => {
  test(`metadata nested ${MAX_JSON_DEPTH} levels is accepted`, () => {
    const [m] = normalizeMessages([{ ...user('x', 'd'), metadata: nested(MAX_JSON_DEPTH) }]);
    assert.deepEqual(m!.metadata, nested(MAX_JSON_DEPTH));
  });
  test('metadata nested one level deeper is too_deep', () =>
    rejects([ok, { ...user('x', 'd'), metadata: nested(MAX_JSON_DEPTH + 1) }], 'too_deep', 1, 'd'));
  test('metadata nested 100,000 levels is too_deep, not a stack overflow', () =>
    rejects([{ ...user('x', 'd'), metadata: nested(100_000) }], 'too_deep', 0, 'd'));
  test('metadata arrays count as levels too', () => {
    let value: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH; i++) value = [value];
    rejects([{ ...user('x', 'd'), metadata: { list: value } }], 'too_deep', 0, 'd');
  });
  test('tool-call arguments nested 100,000 levels are refused, not a stack overflow', () =>
    rejects(
      [
        {
          id: 'a',
          role: 'assistant',
          parts: [{ type: 'tool_call', callId: 'c', name: 'f', arguments: nested(100_000) }],
        },
      ],
      'invalid_arguments',
      0,
      'a',
    ));
  test('createdAt outside the years 1 to 9999 is refused', () => {
    for (const createdAt of ['-100000-01-01T00:00:00Z', '+010000-01-01T00:00:00Z', new Date(-8.64e15)])
      rejects([{ ...user('x', 'd'), createdAt }], 'invalid_message', 0, 'd');
    for (const createdAt of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z'])
      assert.equal(normalizeMessages([{ ...user('x', 'd'), createdAt }])[0]!.createdAt, createdAt);
  });
});

/** Asserts that merging `patch` throws a ValidationError of `code` whose message names `field`. */
function rejectsConfig(patch: unknown, field: string, code = 'invalid_option'): void {
  assert.throws(
    () => mergeConfig(DEFAULT_CONFIG, patch),
    (err: unknown) =>
      err instanceof ValidationError && err.code === code && err.message.includes(`configure.${field}`),
  );
}

describe('limits: configuration', () => {
  test('budget, idleMs and extractEveryTurns have upper bounds', () => {
    const max = { budget: MAX_BUDGET, idleMs: MAX_IDLE_MS, extractEveryTurns: MAX_EXTRACT_EVERY_TURNS };
    assert.deepEqual(mergeConfig(DEFAULT_CONFIG, max), { ...DEFAULT_CONFIG, ...max });
    for (const [key, value] of Object.entries(max)) rejectsConfig({ [key]: value + 1 }, key);
    rejectsConfig({ budget: 1e300 }, 'budget');
    rejectsConfig({ idleMs: Number.MAX_SAFE_INTEGER }, 'idleMs');
  });

  /** A pipeline holding a pipeline … `levels` strategies deep, a truncation innermost. */
  const pipelines = (levels: number): Record<string, unknown> => {
    let spec: Record<string, unknown> = { type: 'truncation', max: 100 };
    for (let i = 1; i < levels; i++) spec = { type: 'pipeline', strategies: [spec] };
    return spec;
  };

  test(`strategies nest at most ${MAX_STRATEGY_DEPTH} deep`, () => {
    assert.ok(mergeConfig(DEFAULT_CONFIG, { strategy: pipelines(MAX_STRATEGY_DEPTH) }).strategy);
    rejectsConfig({ strategy: pipelines(MAX_STRATEGY_DEPTH + 1) }, 'strategy');
    rejectsConfig({ strategy: pipelines(2_000) }, 'strategy');
  });

  test('a trigger nested 100,000 deep is refused, not a stack overflow', () => {
    let trigger: Record<string, unknown> = { type: 'always' };
    for (let i = 0; i < 100_000; i++) trigger = { type: 'not', trigger };
    rejectsConfig({ strategy: { type: 'truncation', trigger } }, 'strategy', 'too_deep');
  });
});

describe('sanitizeText', () => {
  test('replaces NUL and lone surrogates with U+FFFD, keeps valid pairs', () => {
    assert.equal(sanitizeText('a\u0000b\ud83dc\ude00🙂\u0000'), 'a\uFFFDb\uFFFDc\uFFFD🙂\uFFFD');
  });
  test('returns clean text unchanged', () => {
    const s = 'clean 🙂 text <|endoftext|>';
    assert.equal(sanitizeText(s), s);
  });
  test('sanitised text passes validation', () => {
    const [m] = normalizeMessages([user(sanitizeText('bad\u0000\ud800'))]);
    assert.equal((m!.parts[0] as { text: string }).text, 'bad\uFFFD\uFFFD');
  });
});
