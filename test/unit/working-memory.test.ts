/**
 * Working memory's pure rules: what a version may hold (format, schema, limits), the block the
 * context pins (cut to its share with a marker) and where the builder places it (the stable part).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ValidationError } from '../../src/model/errors.js';
import { parseScope, prepareVersion } from '../../src/memories/working-memory.js';
import { MAX_WORKING_MEMORY_LENGTH } from '../../src/model/limits.js';
import { TOOLS } from '../../src/mcp/tools.js';
import { z } from 'zod';
import { buildContext, type ContextEntry } from '../../src/thread/build-context.js';
import { workingMemoryBlock, WORKING_MEMORY_BLOCK_ID } from '../../src/thread/working-memory-block.js';
import { describeMessage } from '../../src/compaction/message-meta.js';
import { textOf, type Message } from '../../src/model/message.js';
import { conversation } from '../support/conversation.js';

const refusedWith = (code: string, pattern?: RegExp) => (err: unknown) =>
  err instanceof ValidationError && err.code === code && (!pattern || pattern.test(err.message));

/** A token per 4 characters of text, as the estimator counts. */
const count = (m: Message) => Math.ceil(textOf(m).length / 4);

const schema = {
  type: 'object',
  properties: { name: { type: 'string' }, trips: { type: 'array', items: { type: 'string' } } },
  required: ['name'],
  additionalProperties: false,
};

describe('working memory length: characters are Unicode code points, as the docs and the HTTP schema count', () => {
  const max = MAX_WORKING_MEMORY_LENGTH;
  const emoji = '😀'; // one character, two UTF-16 code units
  it(`takes ${max} non-BMP characters and refuses one more, saying the limit in characters`, async () => {
    assert.equal(
      (await prepareVersion(undefined, emoji.repeat(max), { version: 0 })).content,
      emoji.repeat(max),
    );
    await assert.rejects(
      async () => prepareVersion(undefined, emoji.repeat(max + 1), { version: 0 }),
      (err: unknown) =>
        err instanceof ValidationError &&
        err.code === 'too_long' &&
        err.message ===
          `content: ${(max + 1).toLocaleString('en-US')} characters, more than ${max.toLocaleString('en-US')}`,
    );
  });
  it('counts JSON the same way: its text as JSON.stringify writes it', async () => {
    const value = { n: emoji.repeat(max - '{"n":""}'.length) };
    assert.deepEqual((await prepareVersion(undefined, value, { version: 0 })).content, value);
    await assert.rejects(
      async () => prepareVersion(undefined, { n: value.n + emoji }, { version: 0 }),
      refusedWith('too_long', /^content: its JSON is 100,001 characters, more than 100,000$/u),
    );
  });
  it('the MCP update_working_memory tool takes what the library takes', () => {
    const update = TOOLS.find((t) => t.name === 'update_working_memory')!;
    const input = z.object(update.input);
    assert.ok(input.safeParse({ content: emoji.repeat(max), version: 0 }).success);
    assert.ok(!input.safeParse({ content: emoji.repeat(max + 1), version: 0 }).success);
  });
});

describe('prepareVersion', () => {
  it('text is Markdown, anything else JSON; a schema makes it JSON and stays in force', async () => {
    assert.deepEqual(await prepareVersion(undefined, '# Notes', { version: 0 }), {
      format: 'markdown',
      content: '# Notes',
    });
    assert.deepEqual(await prepareVersion(undefined, { a: 1 }, { version: 0 }), {
      format: 'json',
      content: { a: 1 },
    });
    const first = await prepareVersion(undefined, { name: 'Ada' }, { version: 0, schema });
    assert.deepEqual(first, { format: 'json', content: { name: 'Ada' }, schema });
    // Absent: the previous schema still holds; null drops it.
    await assert.rejects(
      async () => prepareVersion(first, { nam: 'typo' }, { version: 1 }),
      refusedWith('schema_mismatch'),
    );
    assert.deepEqual(await prepareVersion(first, 'free text', { version: 1, schema: null }), {
      format: 'markdown',
      content: 'free text',
    });
  });

  it('content that does not match the schema is refused, saying where and why', async () => {
    await assert.rejects(
      async () => prepareVersion(undefined, { name: 'Ada', trips: [3] }, { version: 0, schema }),
      refusedWith('schema_mismatch', /\/trips\/0 must be string/u),
    );
    await assert.rejects(
      async () => prepareVersion(undefined, { trips: [] }, { version: 0, schema }),
      refusedWith('schema_mismatch', /name/u),
    );
  });

  it('a schema that is not a JSON Schema is refused before the content is looked at', async () => {
    for (const bad of [{ type: 'strin' }, { type: 5 }, { minimum: 'x' }, { $schema: 'urn:nothing' }, []])
      await assert.rejects(
        async () => prepareVersion(undefined, {}, { version: 0, schema: bad as never }),
        refusedWith('invalid_schema'),
        JSON.stringify(bad),
      );
    await assert.doesNotReject(async () =>
      prepareVersion(
        undefined,
        {},
        {
          version: 0,
          schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' },
        },
      ),
    );
  });

  it('a schema of draft-04 or older is refused: the validator reads it by draft-07 rules', async () => {
    // It was taken, and checked as draft-07: draft-04's `exclusiveMaximum: true` (a boolean there)
    // was ignored, so { n: 5 } passed a schema that says n < 5.
    for (const draft of [
      'http://json-schema.org/draft-04/schema#',
      'http://json-schema.org/draft-03/schema#',
    ]) {
      const schema = {
        $schema: draft,
        type: 'object',
        properties: { n: { type: 'number', maximum: 5, exclusiveMaximum: true } },
      };
      await assert.rejects(
        async () => prepareVersion(undefined, { n: 5 }, { version: 0, schema }),
        (err: unknown) =>
          refusedWith('invalid_schema')(err) && /draft-07, 2019-09 or 2020-12/u.test((err as Error).message),
        draft,
      );
    }
    await assert.rejects(
      async () =>
        prepareVersion(
          undefined,
          { n: 5 },
          {
            version: 0,
            schema: {
              $schema: 'http://json-schema.org/draft-06/schema#',
              properties: { n: { exclusiveMaximum: 5 } },
            },
          },
        ),
      refusedWith('schema_mismatch'),
    );
  });

  it('a $ref the schema cannot resolve is an invalid_schema naming it; refs within the schema work', async () => {
    // It was taken, and every content then failed with `/ schema is false` (schema_mismatch): a ref
    // to elsewhere is never fetched, and a missing definition matched nothing.
    for (const [bad, ref] of [
      [{ $ref: 'https://example.com/trip.json' }, 'https://example.com/trip.json'],
      [{ $ref: '#/definitions/missing' }, '#/definitions/missing'],
      [{ type: 'object', properties: { x: { $ref: 'other.json' } } }, 'other.json'],
    ] as const)
      await assert.rejects(
        async () => prepareVersion(undefined, {}, { version: 0, schema: bad as never }),
        (err: unknown) =>
          refusedWith('invalid_schema')(err) &&
          (err as Error).message.includes(`$ref ${JSON.stringify(ref)}`),
        JSON.stringify(bad),
      );
    for (const good of [
      { $ref: '#/definitions/a', definitions: { a: { type: 'object' } } },
      {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $ref: '#/$defs/a',
        $defs: { a: { type: 'object' } },
      },
      { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#' } } } },
    ])
      await assert.doesNotReject(
        async () => prepareVersion(undefined, {}, { version: 0, schema: good }),
        JSON.stringify(good),
      );
  });

  it('matches patterns in linear time: a pattern that backtracks cannot hold the process', async () => {
    // V8 matched a schema's `pattern` by backtracking: `^(a+)+$` against 60 a's and a '!' ran for
    // ages, in the API server every tenant shares. Content of 100,000 characters, answered at once.
    const evil = { type: 'object', properties: { name: { type: 'string', pattern: '^(a+)+$' } } };
    await assert.rejects(
      prepareVersion(undefined, { name: `${'a'.repeat(60)}!` }, { version: 0, schema: evil }),
      refusedWith('schema_mismatch', /\/name must match pattern "\^\(a\+\)\+\$"/u),
    );
    await assert.rejects(
      prepareVersion(undefined, { name: `${'a'.repeat(99_000)}!` }, { version: 0, schema: evil }),
      refusedWith('schema_mismatch'),
    );
    const ok = await prepareVersion(undefined, { name: 'aaa' }, { version: 0, schema: evil });
    assert.deepEqual(ok.content, { name: 'aaa' });
    // JavaScript's \u escapes, Unicode classes, a property named `pattern` and data holding one.
    const rich = {
      type: 'object',
      properties: {
        city: { type: 'string', pattern: '^\\p{Lu}[\\p{L} ]+$' },
        accent: { type: 'string', pattern: '^caf\\u00e9$' },
        pattern: { type: 'string', enum: ['^(a+)+$'] },
      },
      default: { pattern: 'x' },
    };
    const fine = { city: 'Évora', accent: 'café', pattern: '^(a+)+$' };
    assert.deepEqual((await prepareVersion(undefined, fine, { version: 0, schema: rich })).content, fine);
    await assert.rejects(
      prepareVersion(undefined, { ...fine, city: 'évora' }, { version: 0, schema: rich }),
      refusedWith('schema_mismatch', /\/city/u),
    );
  });

  it('refuses a schema whose check takes too long, and the next check still runs', async () => {
    // Each of 14 $defs offers 3 anyOf branches leading to the next: a check of a value 14 arrays deep
    // tries 3^14 paths, minutes in the process that checks the write.
    const defs: Record<string, unknown> = { a14: { type: 'integer' } };
    for (let i = 0; i < 14; i++)
      defs[`a${i}`] = {
        anyOf: [0, 1, 2].map((k) => ({ type: 'array', minItems: k, items: { $ref: `#/$defs/a${i + 1}` } })),
      };
    let deep: unknown = 'x';
    for (let i = 0; i < 14; i++) deep = [deep];
    // A check behind it in the same worker is asked again of the next one, not failed.
    const [slow, behind] = await Promise.allSettled([
      prepareVersion(undefined, deep, { version: 0, schema: { $defs: defs, $ref: '#/$defs/a0' } }),
      prepareVersion(undefined, { name: 'Grace' }, { version: 0, schema }),
    ]);
    assert.ok(slow.status === 'rejected' && refusedWith('invalid_schema', /took over 2000 ms/u)(slow.reason));
    assert.deepEqual(behind.status === 'fulfilled' && behind.value.content, { name: 'Grace' });
    // Without a type to stop at, the validator's own check of the schema (against null) took as long.
    const untyped: Record<string, unknown> = { a14: { type: 'integer' } };
    for (let i = 0; i < 14; i++)
      untyped[`a${i}`] = {
        anyOf: [0, 1, 2].map((k) => ({ minLength: k, allOf: [{ $ref: `#/$defs/a${i + 1}` }] })),
      };
    await assert.rejects(
      prepareVersion(undefined, 'x', { version: 0, schema: { $defs: untyped, $ref: '#/$defs/a0' } }),
      refusedWith('invalid_schema', /^schema: checking it took over 2000 ms/u),
    );
    const ok = await prepareVersion(undefined, { name: 'Ada' }, { version: 0, schema });
    assert.deepEqual(ok.content, { name: 'Ada' });
  });

  it('refuses patterns only backtracking can match, and patternProperties, saying why', async () => {
    const lookahead = { type: 'string', pattern: '^(?=.*\\d).+$' };
    await assert.rejects(
      prepareVersion(undefined, 'a1', { version: 0, schema: lookahead }),
      refusedWith('invalid_schema', /pattern "\^\(\?=\.\*\\\\d\)\.\+\$".*lookaround/u),
    );
    const keyed = { type: 'object', patternProperties: { '^(a+)+$': { type: 'string' } } };
    await assert.rejects(
      prepareVersion(undefined, {}, { version: 0, schema: keyed }),
      refusedWith('invalid_schema', /patternProperties/u),
    );
    // A property named patternProperties is no keyword.
    const named = { type: 'object', properties: { patternProperties: { type: 'string' } } };
    await prepareVersion(undefined, { patternProperties: 'x' }, { version: 0, schema: named });
  });

  it('refuses what does not fit: a format against the content, a bad version, too long, NUL', async () => {
    await assert.rejects(
      async () => prepareVersion(undefined, { a: 1 }, { version: 0, format: 'markdown' }),
      refusedWith('invalid_option'),
    );
    await assert.rejects(
      async () => prepareVersion(undefined, 'x', { version: 0, format: 'markdown', schema }),
      refusedWith('invalid_option', /schema needs format json/u),
    );
    for (const version of [-1, 1.5, '1', undefined])
      await assert.rejects(
        async () => prepareVersion(undefined, 'x', { version: version as never }),
        refusedWith('invalid_option'),
      );
    await assert.rejects(
      async () => prepareVersion(undefined, 'x'.repeat(MAX_WORKING_MEMORY_LENGTH + 1), { version: 0 }),
      refusedWith('too_long'),
    );
    await assert.rejects(
      async () => prepareVersion(undefined, 'a\u0000b', { version: 0 }),
      refusedWith('nul_byte'),
    );
    await assert.rejects(
      async () => prepareVersion(undefined, { k: 'a\u0000b' }, { version: 0 }),
      refusedWith('nul_byte'),
    );
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = [deep];
    await assert.rejects(
      async () => prepareVersion(undefined, deep, { version: 0 }),
      refusedWith('too_deep'),
    );
    await assert.rejects(
      async () => prepareVersion(undefined, () => 1, { version: 0 }),
      refusedWith('invalid_option'),
    );
  });
});

describe('parseScope', () => {
  it('takes a user, a user and resource, or a thread, nothing else', () => {
    assert.deepEqual(parseScope({ userId: 'u' }), { userId: 'u' });
    assert.deepEqual(parseScope({ userId: 'u', resourceId: 'r' }), { userId: 'u', resourceId: 'r' });
    assert.deepEqual(parseScope({ threadId: 't' }), { threadId: 't' });
    for (const bad of [
      {},
      { resourceId: 'r' },
      { threadId: 't', userId: 'u' },
      { userId: 'u', extra: 1 },
      null,
    ])
      assert.throws(() => parseScope(bad), refusedWith('invalid_option'), JSON.stringify(bad));
    assert.throws(() => parseScope({ userId: '' }), refusedWith('invalid_id'));
  });
});

describe('workingMemoryBlock', () => {
  it('is the whole content under a header naming its version when it fits', () => {
    const block = workingMemoryBlock(
      { format: 'markdown', content: '# Plan\n- Oslo', version: 3 },
      100,
      count,
    )!;
    assert.equal(block.truncated, false);
    assert.equal(block.message.id, WORKING_MEMORY_BLOCK_ID);
    assert.equal(block.message.role, 'system');
    assert.match(textOf(block.message), /^Working memory \(version 3[;)].*\n# Plan\n- Oslo$/su);
    assert.equal(block.tokens, count(block.message));
  });

  it('JSON is shown indented', () => {
    const block = workingMemoryBlock({ format: 'json', content: { a: [1] }, version: 1 }, 100, count)!;
    assert.ok(textOf(block.message).endsWith('{\n  "a": [\n    1\n  ]\n}'));
  });

  it('over its share it is cut at the longest start that fits, with a marker', () => {
    const content = Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n');
    const block = workingMemoryBlock({ format: 'markdown', content, version: 2 }, 120, count)!;
    assert.equal(block.truncated, true);
    assert.ok(block.tokens <= 120);
    const text = textOf(block.message);
    assert.match(
      text,
      /\[… working memory cut to fit its share of the context: \d+ of \d+ characters shown\]$/u,
    );
    const shown = Number(/: (\d+) of/u.exec(text)![1]);
    assert.ok(content.startsWith(text.split('\n').slice(1, -1).join('\n')));
    // One more character would not fit.
    const longer = workingMemoryBlock(
      { format: 'markdown', content: content.slice(0, shown + 1) + 'x'.repeat(2000), version: 2 },
      120,
      count,
    )!;
    assert.ok(Number(/: (\d+) of/u.exec(textOf(longer.message))![1]) <= shown + 1);
  });

  it('its marker counts characters as the limit does, in code points', () => {
    // It counted UTF-16 units: 300 emoji were "of 600 characters", where the limit counts 300.
    const content = '😀'.repeat(300);
    const block = workingMemoryBlock({ format: 'markdown', content, version: 2 }, 60, count)!;
    assert.equal(block.truncated, true);
    const text = textOf(block.message);
    const [, shown, total] = /: (\d+) of (\d+) characters shown\]$/u.exec(text)!;
    assert.equal(Number(total), 300);
    const body = text.split('\n')[1]!;
    assert.equal(Number(shown), Array.from(body).length, body);
  });

  it('nothing for version 0, empty content, a share of 0, or a share too small for the header', () => {
    assert.equal(workingMemoryBlock({ format: 'markdown', content: '', version: 0 }, 100, count), undefined);
    assert.equal(
      workingMemoryBlock({ format: 'markdown', content: '  ', version: 4 }, 100, count),
      undefined,
    );
    assert.equal(workingMemoryBlock({ format: 'markdown', content: 'x', version: 1 }, 0, count), undefined);
    assert.equal(
      workingMemoryBlock({ format: 'markdown', content: 'x'.repeat(400), version: 1 }, 5, count),
      undefined,
    );
  });
});

describe('buildContext with a pinned working memory', () => {
  const entries = (messages: Message[]): ContextEntry[] =>
    messages.map((message, i) => ({
      message,
      tokens: 10,
      meta: { ...describeMessage(message, i + 1), tokens: 10 },
    }));
  const pinned = (tokens: number) => ({
    message: {
      id: WORKING_MEMORY_BLOCK_ID,
      role: 'system',
      parts: [{ type: 'text', text: 'wm' }],
    } as Message,
    tokens,
  });
  const recalled = {
    message: { id: 'recalled', role: 'system', parts: [{ type: 'text', text: 'r' }] } as Message,
    tokens: 5,
  };

  it('goes right after the system prompt, in the stable prefix, before the injected blocks', async () => {
    const c = conversation();
    c.system('prompt');
    c.user('q1');
    c.assistant('a1');
    c.user('q2');
    const built = await buildContext(entries(c.messages), 1000, [recalled], { pinned: pinned(20) });
    assert.deepEqual(
      built.messages.map((m) => m.id),
      ['m1', WORKING_MEMORY_BLOCK_ID, 'm2', 'm3', 'recalled', 'm4'],
    );
    assert.equal(built.tokens, 40 + 20 + 5);
    assert.equal(built.stableTokens, 30 + 20);
  });

  it('goes first without a system prompt', async () => {
    const c = conversation();
    c.user('q1');
    const built = await buildContext(entries(c.messages), 1000, [], { pinned: pinned(20) });
    assert.deepEqual(
      built.messages.map((m) => m.id),
      [WORKING_MEMORY_BLOCK_ID, 'm1'],
    );
    assert.equal(built.stableTokens, 30);
  });

  it('its tokens come off the view', async () => {
    const c = conversation();
    for (let i = 0; i < 10; i++) c.user(`q${i}`);
    const without = await buildContext(entries(c.messages), 100);
    const withPinned = await buildContext(entries(c.messages), 100, [], { pinned: pinned(40) });
    assert.equal(without.messages.length, 10);
    assert.ok(withPinned.tokens <= 100);
    assert.ok(withPinned.messages.length < 10);
    assert.equal(withPinned.messages[0]!.id, WORKING_MEMORY_BLOCK_ID);
  });
});
