import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import type { Message } from '../../src/model/message.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { loadBpeTable, mergeCountHeap, mergeCountSimple, utf8Binary } from '../../src/tokenizers/bpe.js';
import {
  CharacterEstimatorTokenizer,
  countMessagesTokens,
  countMessageTokens,
  encodingForModel,
  MESSAGE_OVERHEAD,
  TiktokenTokenizer,
  TOOL_CALL_OVERHEAD,
  tokenizerForModel,
  type Tokenizer,
} from '../../src/tokenizers/index.js';

const require = createRequire(import.meta.url);
const ENCODINGS = ['o200k_base', 'cl100k_base'] as const;
const ranks = (e: string) => require(`js-tiktoken/ranks/${e}`) as TiktokenBPE;
/** js-tiktoken's own encoder, the reference our counts must match. */
const reference = Object.fromEntries(ENCODINGS.map((e) => [e, new Tiktoken(ranks(e))])) as Record<
  string,
  Tiktoken
>;
const refCount = (e: string, s: string) => reference[e]!.encode(s, [], []).length;
const tiktoken = Object.fromEntries(ENCODINGS.map((e) => [e, new TiktokenTokenizer(e)])) as Record<
  string,
  Tokenizer
>;

const SAMPLES = [
  'hello world',
  "It's 18°C in Oslo; isn't it? I'll check—we've 3 options: 1234567 and 3.14159.",
  '  leading and trailing spaces   \n\n\tindented\r\nwindows line',
  '東京都は日本の首都です。我们今天讨论的是一个非常重要的问题',
  'Здравствуйте, мир! Γειά σου Κόσμε! مرحبا بالعالم',
  'emoji 🙂👍🏽🇳🇴 and 𝄞 and combining é',
  'function f(x) {\n  return x.map((y) => y * 2); // double\n}\n',
  '{"city":"Paris","days":[1,2,3],"nested":{"ok":true}}',
  'aGVsbG8gd29ybGQhIHRoaXMgaXMgYmFzZTY0IGVuY29kZWQgdGV4dA==',
  'a'.repeat(3000),
  'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.repeat(40),
];
/** Pieces whose count depends on merging the leftmost of equal-ranked pairs first (found by search). */
const TIE_SENSITIVE = [
  'nlsssbßeséoo',
  '東nnnosnoéonée',
  'l東snnnß',
  'béanlllsbé',
  'leéaeeebas',
  'éßßl東bllléeß',
];
const SPECIAL = [
  '<|endoftext|>',
  '<|endofprompt|>',
  '<|fim_prefix|>',
  '<|fim_middle|>',
  '<|fim_suffix|>',
  '<|im_start|>',
  '<|im_end|>',
];

describe('CharacterEstimatorTokenizer', () => {
  test('counts ceil(length / 4)', () => {
    const t = new CharacterEstimatorTokenizer();
    assert.equal(t.name, 'chars/4');
    assert.deepEqual(
      ['', 'a', 'abcd', 'abcde', 'x'.repeat(4001)].map((s) => t.count(s)),
      [0, 1, 1, 2, 1001],
    );
  });
});

describe('TiktokenTokenizer', () => {
  for (const e of ENCODINGS) {
    test(`${e}: counts known strings exactly like js-tiktoken`, () => {
      assert.equal(tiktoken[e]!.name, e);
      assert.equal(tiktoken[e]!.count(''), 0);
      assert.equal(tiktoken[e]!.count('hello world'), 2);
      for (const s of [...SAMPLES, ...TIE_SENSITIVE])
        assert.equal(tiktoken[e]!.count(s), refCount(e, s), JSON.stringify(s.slice(0, 40)));
    });

    test(`${e}: special-token strings are ordinary text, several tokens, never an error`, () => {
      for (const s of SPECIAL) {
        const n = tiktoken[e]!.count(s);
        assert.ok(n > 1, `${s} counted as ${n}`);
        assert.equal(n, refCount(e, s));
        // js-tiktoken's default call throws on the encoding's own special tokens; ours must not.
        if (s in ranks(e).special_tokens) assert.throws(() => reference[e]!.encode(s));
      }
      const mixed = `user says ${SPECIAL.join(' then ')} and stops`;
      assert.equal(tiktoken[e]!.count(mixed), refCount(e, mixed));
    });

    test(`${e}: property: equals js-tiktoken on random text`, () => {
      const alphabet = fc.constantFrom(
        'a',
        'b',
        'Z',
        'é',
        ' ',
        '  ',
        '\n',
        '1',
        '23',
        '.',
        "'s",
        '東',
        '🙂',
        '<|endoftext|>',
        '\ud800',
      );
      const text = fc.oneof(
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.array(alphabet, { maxLength: 60, size: 'max' }).map((a) => a.join('')),
      );
      fc.assert(
        fc.property(text, (s) => assert.equal(tiktoken[e]!.count(s), refCount(e, s))),
        { numRuns: 300 },
      );
    });
  }

  test('the heap merge (long pieces) gives the same count as the classic merge', () => {
    const table = loadBpeTable(ranks('o200k_base'));
    const letters = fc.constantFrom('a', 'b', 'n', 'e', 'l', 's', 'o', 'é', '東', 'ß');
    const piece = fc.oneof(
      fc.constantFrom(...TIE_SENSITIVE.map((t) => [...t])),
      fc.array(letters, { minLength: 1, maxLength: 200, size: 'max' }),
    );
    fc.assert(
      fc.property(piece, (chars) => {
        const bin = utf8Binary(chars.join(''));
        assert.equal(mergeCountHeap(table, bin), mergeCountSimple(table, bin));
      }),
      { numRuns: 300 },
    );
  });

  test('utf8Binary matches TextEncoder, lone surrogates included', () => {
    for (const s of ['ascii', 'é東🙂', 'x\ud800y', '\udc00']) {
      assert.equal(utf8Binary(s), String.fromCharCode(...new TextEncoder().encode(s)));
    }
  });

  test('a message over 1 MB is counted exactly, in one piece', () => {
    const unit = SAMPLES.slice(0, 9).join(' ');
    const big = unit.repeat(2_500); // 1.09 M characters, 1.37 MB of UTF-8
    assert.ok(big.length > 1_000_000);
    // The reference counts the repeats' seam from three short texts rather than all 1.37 MB (23 s of
    // the unit run): every repeat after the first adds what the second did, checked on the third.
    const one = refCount('o200k_base', unit);
    const seam = refCount('o200k_base', unit.repeat(2)) - one;
    assert.equal(refCount('o200k_base', unit.repeat(3)), one + 2 * seam);
    assert.equal(tiktoken['o200k_base']!.count(big), one + 2_499 * seam);
  });

  // js-tiktoken's merge loop is quadratic in a run without a space: it would take hours here, so the
  // test's timeout catches a return to it; a bound of a few seconds would fail on a busy machine.
  test(
    'a 1 MB run without a space is counted (js-tiktoken alone would not finish)',
    { timeout: 120_000 },
    () => {
      // A run of 'a' becomes 8-letter tokens: js-tiktoken gives 375 for 3,000 letters.
      assert.equal(refCount('o200k_base', 'a'.repeat(3000)), 375);
      assert.equal(tiktoken['o200k_base']!.count('a'.repeat(1_000_000)), 125_000);
    },
  );

  test('an unsupported encoding is refused', () => {
    assert.throws(() => new TiktokenTokenizer('p50k_base' as never), RangeError);
  });
});

describe('tokenizerForModel and encodingForModel', () => {
  const expected: [string | undefined, string | undefined][] = [
    ['gpt-4o', 'o200k_base'],
    ['gpt-4o-mini-2024-07-18', 'o200k_base'],
    ['chatgpt-4o-latest', 'o200k_base'],
    ['gpt-4.1-nano', 'o200k_base'],
    ['gpt-4.5-preview', 'o200k_base'],
    ['gpt-5-mini', 'o200k_base'],
    ['o1', 'o200k_base'],
    ['o3-mini', 'o200k_base'],
    ['o4-mini-2025-04-16', 'o200k_base'],
    ['openai/gpt-4o', 'o200k_base'],
    ['GPT-4O', 'o200k_base'],
    ['gpt-4', 'cl100k_base'],
    ['gpt-4-turbo', 'cl100k_base'],
    ['gpt-4-0613', 'cl100k_base'],
    ['gpt-3.5-turbo', 'cl100k_base'],
    ['azure/gpt-35-turbo', 'cl100k_base'],
    ['text-embedding-3-small', 'cl100k_base'],
    ['o10', undefined],
    ['claude-3-5-sonnet', undefined],
    ['meta-llama/llama-3-70b', undefined],
    ['', undefined],
    [undefined, undefined],
  ];
  for (const [model, encoding] of expected) {
    test(`${String(model)} → ${encoding ?? 'chars/4'}`, () => {
      assert.equal(encodingForModel(model), encoding);
      assert.equal(tokenizerForModel(model).name, encoding ?? 'chars/4');
    });
  }
});

describe('countMessageTokens', () => {
  /** One token per character: makes the formula's arithmetic visible. */
  const chars: Tokenizer = { name: 'chars', count: (s) => s.length };
  const one = (m: Omit<Message, 'id'>) => countMessageTokens(normalizeMessages([m])[0]!, chars);

  test('text: 3 + role + text', () => {
    assert.equal(one({ role: 'user', parts: [{ type: 'text', text: 'hello' }] }), MESSAGE_OVERHEAD + 4 + 5);
  });

  test('a name adds its tokens plus 1', () => {
    assert.equal(
      one({ role: 'user', parts: [{ type: 'text', text: 'hi' }], metadata: { name: 'ada' } }),
      3 + 4 + 2 + 3 + 1,
    );
  });

  test('tool calls: overhead + name + arguments per call; reasoning counted', () => {
    const m = one({
      role: 'assistant',
      parts: [
        { type: 'reasoning', text: 'hmm' },
        { type: 'tool_call', callId: 'c1', name: 'f', arguments: '{}' },
        { type: 'tool_call', callId: 'c2', name: 'gg', arguments: '{"a":1}' },
      ],
    });
    assert.equal(m, 3 + 9 + 3 + (TOOL_CALL_OVERHEAD + 1 + 2) + (TOOL_CALL_OVERHEAD + 2 + 7));
  });

  test('tool results: result + callId; each extra result costs a message overhead', () => {
    const single = one({ role: 'tool', parts: [{ type: 'tool_result', callId: 'c1', result: 'sunny' }] });
    assert.equal(single, 3 + 4 + 5 + 2);
    const double = one({
      role: 'tool',
      parts: [
        { type: 'tool_result', callId: 'c1', result: 'sunny' },
        { type: 'tool_result', callId: 'c2', result: 'rain', name: 'ignored' },
      ],
    });
    assert.equal(double, single + (3 + 4) + 4 + 2);
  });

  test('with tiktoken: consistent, special tokens and 1 MB included', () => {
    const t = tokenizerForModel('gpt-4o');
    const messages = normalizeMessages([
      { role: 'user', content: 'say <|endoftext|> please' },
      { role: 'assistant', content: 'lorem ipsum dolor '.repeat(60_000) },
    ]);
    const counts = messages.map((m) => countMessageTokens(m, t));
    assert.equal(counts[0], 3 + t.count('user') + t.count('say <|endoftext|> please'));
    assert.ok(counts[1]! > 100_000);
    assert.deepEqual(
      messages.map((m) => countMessageTokens(m, t)),
      counts,
    );
    assert.equal(countMessagesTokens(messages, t), counts[0]! + counts[1]!);
  });
});
