/**
 * What a JSON Schema finds wrong with a value, as one line, and the meta-schemas a working memory's
 * schema may be written in: for the checks schema-check-worker.ts makes, and working-memory.ts's
 * refusal of an unknown dialect.
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

/** The dialect of a schema that names none. */
const DRAFT_07 = 'http://json-schema.org/draft-07/schema';
let META: Map<string, unknown> | undefined;

/**
 * The meta-schema of the dialect `$schema` names (draft-07 when it names none), or undefined for one
 * not taken. Drafts 03 and 04 are left out: the validator reads every schema by draft-06+ rules, where
 * some of their keywords mean something else (`exclusiveMaximum: true`), so such a schema would
 * check less than it says.
 */
export function metaSchemaOf(validator: Validator, named: unknown): unknown {
  META ??= new Map<string, unknown>(
    Object.entries(validator.Meta)
      .filter(([uri]) => !/draft-0[34]\//u.test(uri))
      .map(([uri, meta]) => [uri.replace(/#$/u, ''), meta]),
  );
  return META.get(typeof named === 'string' ? named.replace(/#$/u, '') : DRAFT_07);
}
