import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { ValidationError } from '../../src/model/errors.js';
import type { Message, MessageInput, Part, TextPart } from '../../src/model/message.js';
import { fromOpenAI, isOpenAIMessage, toOpenAI } from '../../src/model/openai.js';
import { normalizeMessages } from '../../src/model/validation.js';

const text = (t: string): TextPart => ({ type: 'text', text: t });
const msg = (id: string, role: Message['role'], ...parts: Part[]): Message => ({ id, role, parts });

function throwsCode(fn: () => unknown, code: string, index: number): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ValidationError);
    assert.equal(e.code, code, e.message);
    assert.equal(e.index, index);
    return true;
  });
}

describe('toOpenAI', () => {
  test('maps system, user, assistant text and tool calls', () => {
    const out = toOpenAI([
      msg('1', 'system', text('be brief')),
      msg('2', 'user', text('weather?')),
      msg('3', 'assistant', {
        type: 'tool_call',
        callId: 'c1',
        name: 'get_weather',
        arguments: '{"city":"Oslo"}',
      }),
      msg('4', 'tool', { type: 'tool_result', callId: 'c1', name: 'get_weather', result: 'sunny' }),
      msg('5', 'assistant', text('It is sunny.')),
    ]);
    assert.deepEqual(out, [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      { role: 'assistant', content: 'It is sunny.' },
    ]);
  });

  test('several text parts become an array of text parts', () => {
    assert.deepEqual(toOpenAI([msg('1', 'user', text('a'), text('b'))]), [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
    ]);
  });

  test('a tool message with N results becomes N tool messages', () => {
    const out = toOpenAI([
      msg(
        't',
        'tool',
        { type: 'tool_result', callId: 'a', result: '1' },
        { type: 'tool_result', callId: 'b', result: '2', isError: true },
      ),
    ]);
    assert.deepEqual(out, [
      { role: 'tool', tool_call_id: 'a', content: '1' },
      { role: 'tool', tool_call_id: 'b', content: '2' },
    ]);
  });

  test('reasoning is not sent; a reasoning-only message is left out', () => {
    const out = toOpenAI([
      msg('r', 'assistant', { type: 'reasoning', text: 'thinking' }),
      msg('a', 'assistant', { type: 'reasoning', text: 'more' }, text('answer')),
    ]);
    assert.deepEqual(out, [{ role: 'assistant', content: 'answer' }]);
  });

  test('summary messages are emitted with their role; metadata.name becomes name', () => {
    const summary: Message = {
      ...msg('s', 'system', text('Summary: the user likes tea.')),
      metadata: { compaction: { kind: 'summary', strategy: 'summarization', replaces: ['1', '2'] } },
    };
    const named: Message = { ...msg('u', 'user', text('hi')), metadata: { name: 'ada' } };
    assert.deepEqual(toOpenAI([summary, named]), [
      { role: 'system', content: 'Summary: the user likes tea.' },
      { role: 'user', content: 'hi', name: 'ada' },
    ]);
  });
});

describe('fromOpenAI', () => {
  test('maps every supported role and field', () => {
    const input: ChatCompletionMessageParam[] = [
      { role: 'developer', content: 'rules' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
        name: 'ada',
      },
      {
        role: 'assistant',
        content: 'checking',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'done' },
    ];
    assert.deepEqual(fromOpenAI(input), [
      { role: 'system', parts: [text('rules')] },
      { role: 'user', parts: [text('a'), text('b')], metadata: { name: 'ada' } },
      {
        role: 'assistant',
        parts: [text('checking'), { type: 'tool_call', callId: 'c1', name: 'f', arguments: '{}' }],
      },
      { role: 'tool', parts: [{ type: 'tool_result', callId: 'c1', result: 'done' }] },
    ]);
  });

  test('ids: taken from the object when a string, from idPrefix when given, else left to normalizeMessages', () => {
    const input = [
      { role: 'user', content: 'a', id: 'x1' },
      { role: 'user', content: 'b' },
    ] as ChatCompletionMessageParam[];
    assert.deepEqual(
      fromOpenAI(input).map((m) => m.id),
      ['x1', undefined],
    );
    assert.deepEqual(
      fromOpenAI(input, { idPrefix: 'oa' }).map((m) => m.id),
      ['x1', 'oa1'],
    );
    assert.deepEqual(
      normalizeMessages(fromOpenAI(input)).map((m) => m.id),
      ['x1', 'm1'],
    );
  });

  test("a response's choices[0].message is accepted (refusal null, annotations ignored)", () => {
    const fromResponse = { role: 'assistant', content: 'hi', refusal: null, annotations: [] };
    const [m] = normalizeMessages(fromOpenAI([fromResponse as ChatCompletionMessageParam]));
    assert.deepEqual(m, { id: 'm0', role: 'assistant', parts: [text('hi')] });
  });

  test('a refusal is kept as text', () => {
    const [m] = fromOpenAI([{ role: 'assistant', content: null, refusal: 'I cannot help with that.' }]);
    assert.deepEqual(m!.parts, [text('I cannot help with that.')]);
  });

  test('an image part is rejected with invalid_part naming the message', () => {
    const input: ChatCompletionMessageParam[] = [
      { role: 'user', content: 'ok' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'https://x/y.png' } },
        ],
      },
    ];
    throwsCode(() => fromOpenAI(input), 'invalid_part', 1);
    assert.throws(() => fromOpenAI(input), /image_url/);
  });

  test('the legacy function role is rejected', () => {
    throwsCode(() => fromOpenAI([{ role: 'function', name: 'f', content: 'x' }]), 'invalid_part', 0);
  });

  test('custom tool calls are rejected', () => {
    const custom = { id: 'c', type: 'custom', custom: { name: 'f', input: 'x' } } as const;
    throwsCode(
      () => fromOpenAI([{ role: 'assistant', content: null, tool_calls: [custom] }]),
      'invalid_part',
      0,
    );
  });

  test('an unknown role is rejected', () => {
    throwsCode(() => fromOpenAI([{ role: 'robot', content: 'x' } as never]), 'unknown_role', 0);
  });

  test('a tool call without an id fails validation with missing_call_id', () => {
    const input = [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ type: 'function', function: { name: 'f', arguments: '' } }],
      },
    ];
    throwsCode(() => normalizeMessages(fromOpenAI(input as never)), 'missing_call_id', 0);
  });
});

describe('isOpenAIMessage', () => {
  test('tells the formats apart', () => {
    assert.equal(isOpenAIMessage({ role: 'user', parts: [text('x')] }), false);
    assert.equal(isOpenAIMessage({ role: 'assistant', content: null, tool_calls: [] }), true);
    assert.equal(isOpenAIMessage({ role: 'tool', tool_call_id: 'c', content: 'r' }), true);
    assert.equal(isOpenAIMessage({ role: 'user', content: [{ type: 'text', text: 'x' }] }), true);
    assert.equal(isOpenAIMessage({ role: 'user', content: 'x', name: 'ada' }), true);
    assert.equal(isOpenAIMessage({ role: 'function', name: 'f', content: 'x' }), true);
    assert.equal(isOpenAIMessage(null), false);
    assert.equal(isOpenAIMessage('hello'), false);
  });

  test('{ role, content: string } is valid in both formats and both paths give the same message', () => {
    const cases: Record<string, unknown>[] = [
      { role: 'user', content: 'hi' },
      { role: 'developer', content: 'rules' },
      { role: 'assistant', content: 'answer', id: 'a1' },
      { role: 'system', content: 'sys', id: 's1', createdAt: '2024-01-01T00:00:00Z', metadata: { k: 1 } },
    ];
    for (const c of cases) {
      assert.equal(isOpenAIMessage(c), false);
      const native = normalizeMessages([c as unknown as MessageInput]);
      const viaOpenAI = normalizeMessages(fromOpenAI([c as unknown as ChatCompletionMessageParam]));
      assert.deepEqual(viaOpenAI, native);
    }
  });
});

describe('round trips', () => {
  const conversation: Message[] = [
    msg('m0', 'system', text('be brief')),
    { ...msg('m1', 'user', text('a'), text('b')), metadata: { name: 'ada' } },
    msg('m2', 'assistant', text(''), { type: 'tool_call', callId: 'c1', name: 'f', arguments: '{"x":1}' }),
    msg('m3', 'tool', { type: 'tool_result', callId: 'c1', result: 'r' }),
    msg('m4', 'assistant', text('done')),
  ];

  test('fromOpenAI(toOpenAI(x)) gives back x', () => {
    assert.deepEqual(normalizeMessages(fromOpenAI(toOpenAI(conversation))), conversation);
  });

  test('toOpenAI(fromOpenAI(y)) gives back y', () => {
    const y = toOpenAI(conversation);
    assert.deepEqual(toOpenAI(normalizeMessages(fromOpenAI(y))), y);
  });

  // Text without NUL or lone surrogates (those are rejected by design), possibly empty.
  const str = fc.string({ unit: 'grapheme', maxLength: 12 });
  const nonEmpty = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 });
  const texts = fc.array(nonEmpty.map(text), { minLength: 1, maxLength: 3 });
  const call = fc
    .record({ callId: nonEmpty, name: nonEmpty, arguments: str })
    .map((c) => ({ type: 'tool_call' as const, ...c }));
  const name = fc.option(nonEmpty, { nil: undefined });
  const withName = (m: Omit<Message, 'id'>, n: string | undefined) =>
    n === undefined ? m : { ...m, metadata: { name: n } };
  const message: fc.Arbitrary<Omit<Message, 'id'>> = fc.oneof(
    fc
      .tuple(fc.constantFrom('system' as const, 'user' as const), texts, name)
      .map(([role, parts, n]) => withName({ role, parts }, n)),
    fc
      .tuple(fc.array(str.map(text), { maxLength: 2 }), fc.array(call, { maxLength: 3 }), name)
      .filter(([t, c]) => c.length > 0 || t.some((p) => p.text !== ''))
      .map(([t, c, n]) => withName({ role: 'assistant', parts: [...t, ...c] }, n)),
    fc
      .record({ callId: nonEmpty, result: str })
      .map((r) => ({ role: 'tool' as const, parts: [{ type: 'tool_result' as const, ...r }] })),
  );

  test('property: fromOpenAI ∘ toOpenAI is the identity on canonical messages', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), (list) => {
        const x = normalizeMessages(list as MessageInput[]);
        assert.deepEqual(normalizeMessages(fromOpenAI(toOpenAI(x))), x);
      }),
    );
  });

  test('property: toOpenAI ∘ fromOpenAI is the identity on supported OpenAI messages', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), (list) => {
        const y = toOpenAI(normalizeMessages(list as MessageInput[]));
        assert.deepEqual(toOpenAI(normalizeMessages(fromOpenAI(y))), y);
      }),
    );
  });
});
