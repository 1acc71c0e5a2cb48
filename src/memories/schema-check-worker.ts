/**
 * The worker thread that checks working memory content against its schema (schema-check.ts starts
 * it and bounds each check in time). Patterns are matched by RE2 (schema-patterns.ts): built here, as
 * a RegExp does not cross threads.
 */
import { parentPort } from 'node:worker_threads';
import Schema from 'typebox/schema';
import { withLinearPatterns } from './schema-patterns.js';
import { metaSchemaOf, schemaProblems } from './schema-problems.js';

/**
 * A check asked of this worker: a schema against its meta-schema and usable by the validator
 * (`content` absent), or content against its schema.
 */
export interface CheckRequest {
  id: number;
  schema: unknown;
  content?: unknown;
}

/** Its answer: what is wrong with the schema or the content (undefined: nothing). */
export interface CheckReply {
  id: number;
  problems?: string;
}

parentPort?.on('message', (request: CheckRequest) => {
  const problems = 'content' in request ? contentProblems(request) : schemaUnusable(request.schema);
  parentPort!.postMessage({ id: request.id, problems } satisfies CheckReply);
});

function contentProblems({ schema, content }: CheckRequest): string | undefined {
  const linear = withLinearPatterns(schema);
  return 'problem' in linear ? linear.problem : schemaProblems(Schema, linear.schema, content);
}

/** What makes `schema` no JSON Schema of its dialect, or unusable by the validator. */
function schemaUnusable(schema: unknown): string | undefined {
  const meta = metaSchemaOf(Schema, (schema as { $schema?: unknown }).$schema);
  const problems = schemaProblems(Schema, meta, schema);
  if (problems) return problems;
  // A schema can be valid JSON Schema and still not be usable here.
  try {
    Schema.Check(schema as Schema.XSchema, null);
    return undefined;
  } catch (err) {
    return `cannot be used: ${err instanceof Error ? err.message : String(err)}`;
  }
}

parentPort?.postMessage({ ready: true }); // loaded: checks are timed from here on
