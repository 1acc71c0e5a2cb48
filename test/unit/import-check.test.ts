/**
 * The check of a thread export before an import writes anything (src/client/import-check.ts): each
 * rule names the field, so the library's caller and the HTTP API's learn where the export is wrong.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkThreadExport } from '../../src/client/import-check.js';
import { ValidationError } from '../../src/model/errors.js';
import { MAX_SEQ, MAX_TOKEN_COUNT } from '../../src/model/limits.js';
import type { ThreadExport } from '../../src/store/types.js';

const message = (id: string, seq: number) => ({
  id,
  role: 'user' as const,
  parts: [{ type: 'text' as const, text: `message ${seq}` }],
  createdAt: '2024-01-01T00:00:00.000Z',
  seq,
  tokens: 5,
  bytes: 10,
});

/** A valid export of two messages and one compaction with a summary. */
function exported(): ThreadExport {
  return {
    version: 1,
    thread: {
      threadId: 't',
      createdAt: '2024-01-01T00:00:00.000Z',
      updatedAt: '2024-01-01T00:00:00.000Z',
      lastSeq: 2,
      messageCount: 2,
      config: { budget: 100, model: 'gpt-4o', idleMs: 0, extractEveryTurns: 5, memoryShare: 0.1 },
    },
    messages: [message('m1', 1), message('m2', 2)],
    compactions: [
      {
        id: 't:c1:2',
        threadId: 't',
        strategy: 'summarization',
        reason: 'over budget',
        excludedMessageIds: ['m1'],
        supersededSummaryIds: [],
        summaries: [
          {
            message: {
              id: `summary:${'a'.repeat(200)}..${'b'.repeat(200)}`,
              role: 'system',
              parts: [{ type: 'text', text: 'sum' }],
            },
            tokens: 3,
            positionSeq: 1,
          },
        ],
        steps: [],
        warnings: [],
        upToSeq: 1,
        includedTokensBefore: 10,
        includedTokensAfter: 3,
      },
    ],
    summaries: [],
  };
}

/** Asserts the check refuses `data` with `code`, naming `field`. */
async function refuses(data: ThreadExport, code: string, field: string): Promise<void> {
  await assert.rejects(
    async () => checkThreadExport(data),
    (err: unknown) => err instanceof ValidationError && err.code === code && err.field === field,
  );
}

describe('checkThreadExport', () => {
  test('a valid export passes, summaries named after two long message ids included', async () => {
    await checkThreadExport(exported());
  });

  test('token counts and seqs out of range are out_of_range, named', async () => {
    const data = exported();
    data.messages[1]!.tokens = MAX_TOKEN_COUNT + 1;
    await refuses(data, 'out_of_range', 'messages[1].tokens');
    const seq = exported();
    seq.messages[0]!.seq = MAX_SEQ + 2;
    await refuses(seq, 'out_of_range', 'messages[0].seq');
    const summary = exported();
    summary.compactions[0]!.summaries[0]!.outputTokens = 2 ** 40;
    await refuses(summary, 'out_of_range', 'compactions[0].summaries[0].outputTokens');
  });

  test("seqs must increase in file order (gaps allowed): the file's order is the history's", async () => {
    const gaps = exported();
    gaps.messages[1]!.seq = 40;
    await checkThreadExport(gaps);
    const before = exported();
    before.messages[0]!.seq = 3;
    await refuses(before, 'out_of_range', 'messages[1].seq');
    const repeated = exported();
    repeated.messages[1]!.seq = 1;
    await refuses(repeated, 'out_of_range', 'messages[1].seq');
  });

  test('messages are checked as an append checks them', async () => {
    const data = exported();
    data.messages[0]!.parts = [];
    await refuses(data, 'empty_message', 'messages[0]');
    const nul = exported();
    nul.messages[1]!.metadata = { note: 'a\u0000b' };
    await refuses(nul, 'nul_byte', 'messages[1]');
  });

  test('the configuration is checked as configure checks it, naming the setting', async () => {
    const data = exported();
    data.thread.config = { ...data.thread.config, idleMs: -1 };
    await refuses(data, 'invalid_option', 'thread.config.idleMs');
    const unknown = exported();
    unknown.thread.config = { colour: 'red' };
    await refuses(unknown, 'invalid_option', 'thread.config.colour');
  });

  test('compactions: ids, timestamps, steps and warnings', async () => {
    const id = exported();
    id.compactions[0]!.id = 'c'.repeat(301);
    await refuses(id, 'invalid_id', 'compactions[0].id');
    const at = exported();
    at.compactions[0]!.createdAt = '-200000-01-01T00:00:00Z';
    await refuses(at, 'invalid_message', 'compactions[0].createdAt');
    const steps = exported();
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 10_000; i++) deep = { d: deep };
    steps.compactions[0]!.steps = [deep as never];
    await refuses(steps, 'too_deep', 'compactions[0].steps');
    const old = exported(); // an export from before compactions held their steps
    delete (old.compactions[0] as Partial<(typeof old.compactions)[0]>).steps;
    await refuses(old, 'invalid_message', 'compactions[0].steps');
  });
  test("a working memory that breaks a write's rules is refused, its message naming the field once", async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const cases: [Record<string, unknown>, string, string, RegExp][] = [
      [
        { format: 'json', content: { town: 'x' }, schema },
        'schema_mismatch',
        'workingMemory.content',
        /^workingMemory\.content does not match the schema: /u,
      ],
      [
        { format: 'markdown', content: 5 },
        'invalid_option',
        'workingMemory.content',
        /^workingMemory\.content: /u,
      ],
      [
        { format: 'json', content: {}, schema: { type: 'nope' } },
        'invalid_schema',
        'workingMemory.schema',
        /^workingMemory\.schema: /u,
      ],
      [
        { format: 'weird', content: 'x' },
        'invalid_option',
        'workingMemory.format',
        /^workingMemory\.format: /u,
      ],
    ];
    for (const [notes, code, field, message] of cases) {
      const data = { ...exported(), workingMemory: { ...notes, version: 1 } } as ThreadExport;
      await assert.rejects(
        async () => checkThreadExport(data),
        (err: unknown) =>
          err instanceof ValidationError &&
          err.code === code &&
          err.field === field &&
          message.test(err.message) &&
          err.message.split('workingMemory').length === 2,
        `${JSON.stringify(notes)}`,
      );
    }
  });
});
