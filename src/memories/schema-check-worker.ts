/**
 * The worker thread that checks working memory content against its schema (schema-check.ts starts
 * it and bounds each check in time). Patterns are matched by RE2 (schema-patterns.ts): built here, as
 * a RegExp does not cross threads.
 */
import { parentPort } from 'node:worker_threads';
import Schema from 'typebox/schema';
import { withLinearPatterns } from './schema-patterns.js';
import { schemaProblems } from './schema-problems.js';

/** A check asked of this worker. */
export interface CheckRequest {
  id: number;
  schema: unknown;
  content: unknown;
}

/** Its answer: what is wrong with the content (undefined: it matches). */
export interface CheckReply {
  id: number;
  problems?: string;
}

parentPort?.on('message', ({ id, schema, content }: CheckRequest) => {
  const linear = withLinearPatterns(schema);
  const problems = 'problem' in linear ? linear.problem : schemaProblems(Schema, linear.schema, content);
  parentPort!.postMessage({ id, problems } satisfies CheckReply);
});
parentPort?.postMessage({ ready: true }); // loaded: checks are timed from here on
