/**
 * What a JSON Schema finds wrong with a value, as one line: shared by the check of a working memory's
 * schema against its meta-schema (working-memory.ts) and of its content against the schema
 * (schema-check-worker.ts).
 */
import type Schema from 'typebox/schema';

/** typebox's JSON Schema validator (`typebox/schema`). */
export type Validator = typeof Schema;

/** The first few reasons `value` fails `schema`, as one line; undefined when it matches. */
export function schemaProblems(validator: Validator, schema: unknown, value: unknown): string | undefined {
  let errors;
  try {
    const [ok, found] = validator.Errors(schema as Schema.XSchema, value);
    if (ok) return undefined;
    errors = found;
  } catch (err) {
    return `cannot be checked: ${err instanceof Error ? err.message : String(err)}`;
  }
  // The most specific first: a wrong field says more than the `anyOf` around it.
  const shown = [...errors]
    .sort((a, b) => b.instancePath.length - a.instancePath.length)
    .slice(0, 3)
    .map((e) => `${e.instancePath || '/'} ${e.message}`);
  return shown.join('; ') || 'does not match';
}
