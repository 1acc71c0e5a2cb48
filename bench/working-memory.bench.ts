/**
 * `npm run bench:working-memory`: what checking working memory content against its schema in a
 * worker thread (src/memories/schema-check.ts) costs a write, against the same check made on the
 * calling thread (the baseline: how it ran before, here with the same RE2 patterns), interleaved
 * round by round in one process. A typical schema (an object with a pattern, an enum, an array of
 * objects), content of about 300 B and about 50 kB (`--rounds n` checks of each, default 2,000).
 * Also the first check's time, the worker's start included. No I/O: the check alone.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import Schema from 'typebox/schema';
import { checkInWorker } from '../src/memories/schema-check.js';
import { withLinearPatterns } from '../src/memories/schema-patterns.js';
import { schemaProblems } from '../src/memories/schema-problems.js';

const ROUNDS = process.argv.includes('--rounds')
  ? Number(process.argv[process.argv.indexOf('--rounds') + 1])
  : 2000;

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', pattern: '^\\p{Lu}[\\p{L} .-]+$' },
    plan: { enum: ['free', 'pro', 'team'] },
    trips: {
      type: 'array',
      items: {
        type: 'object',
        properties: { city: { type: 'string' }, nights: { type: 'integer', minimum: 1 } },
        required: ['city', 'nights'],
      },
    },
  },
  required: ['name'],
};

const content = (trips: number) => ({
  name: 'Ada Lovelace',
  plan: 'pro',
  trips: Array.from({ length: trips }, (_, i) => ({ city: `City number ${i}`, nights: 1 + (i % 9) })),
});
const CONTENTS = { 'about 300 B': content(8), 'about 50 kB': content(1400) };

const percentile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)]!;
const ms = (x: number) => `${x.toFixed(3)} ms`;

async function main(): Promise<void> {
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
  const linear = withLinearPatterns(SCHEMA);
  if ('problem' in linear) throw new Error(linear.problem);
  const inThread = (value: unknown) => schemaProblems(Schema, linear.schema, value);
  let started = performance.now();
  const first = await checkInWorker(SCHEMA, { value: CONTENTS['about 300 B'] });
  const firstMs = performance.now() - started;
  if ('timedOut' in first || first.problems)
    throw new Error(`the content must match: ${JSON.stringify(first)}`);
  const rows: string[] = [];
  for (const [label, value] of Object.entries(CONTENTS)) {
    const worker: number[] = [];
    const thread: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      started = performance.now();
      await checkInWorker(SCHEMA, { value });
      worker.push(performance.now() - started);
      started = performance.now();
      if (inThread(value)) throw new Error('the content must match');
      thread.push(performance.now() - started);
    }
    const [w50, t50] = [percentile(worker, 0.5), percentile(thread, 0.5)];
    rows.push(
      `| ${label} | ${ms(w50)} / ${ms(percentile(worker, 0.99))} | ${ms(t50)} / ${ms(percentile(thread, 0.99))} | +${ms(w50 - t50)} |`,
    );
  }
  process.stdout.write(
    [
      `Command: \`npm run bench:working-memory -- --rounds ${ROUNDS}\`; ${os.availableParallelism()} cores; load average at start ${load}`,
      '',
      `| content | in a worker thread: p50 / p99 | on the calling thread (baseline): p50 / p99 | worker's cost at p50 |`,
      '| --- | --- | --- | --- |',
      ...rows,
      '',
      `First check of the process, the worker's start included: ${ms(firstMs)}.`,
      '',
    ].join('\n'),
  );
}

void main();
