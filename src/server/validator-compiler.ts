/**
 * How requests are checked against their typebox schemas, and the API's one rule for unknown fields:
 * a body or query string field no schema names is refused (400 `unknown_field` naming it), in every
 * object of a request (a message's too), unless its schema says `additionalProperties: true` (free
 * metadata, a strategy's options). A typo (`budjet`, `conent`, a tool call's `argument`) is never
 * silently dropped. {@link closed} applies the rule; the OpenAPI description shows it (openapi.ts).
 *
 * Bodies are checked as sent (fastify's ajv
 * default would coerce `"content": 5` into "5"). Query strings and path parameters arrive as text,
 * so numbers and booleans are converted first, strictly: `12` is an integer, `1.5` and `12abc` are
 * not (typebox's own conversion would truncate `1.5` to 1), and `true`/`false` are the booleans.
 */
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

const INTEGER = /^-?\d{1,15}$/u;
const NUMBER = /^-?(?:\d+(?:\.\d+)?|\.\d+)$/u;

/** Converts the text values of a flat query or params object where the schema wants other types. */
function convertText(schema: TSchema, value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [key, v] of Object.entries(out)) {
    if (typeof v !== 'string') continue;
    const type = properties[key]?.type;
    if (type === 'integer' && INTEGER.test(v)) out[key] = Number(v);
    else if (type === 'number' && NUMBER.test(v)) out[key] = Number(v);
    else if (type === 'boolean' && (v === 'true' || v === 'false')) out[key] = v === 'true';
  }
  return out;
}

type Schema = Record<string, unknown>;

/** A copy of `schema` with its own hidden typebox markers (`~kind`, `~optional`) and `changes`. */
function copy(schema: Schema, changes: Schema): Schema {
  const out = Object.create(
    Object.getPrototypeOf(schema),
    Object.getOwnPropertyDescriptors(schema),
  ) as Schema;
  return Object.assign(out, changes);
}

/**
 * `schema` with `additionalProperties: false` on every object that does not say otherwise, nested
 * ones included (properties, array items, unions). Schemas given as references are left as they are.
 */
export function closed<T extends TSchema>(schema: T): T {
  const visit = (s: unknown): unknown => {
    if (!s || typeof s !== 'object' || Array.isArray(s)) return s;
    const node = s as Schema;
    const changes: Schema = {};
    if (node['properties'] && typeof node['properties'] === 'object') {
      changes['properties'] = Object.fromEntries(
        Object.entries(node['properties'] as Schema).map(([k, v]) => [k, visit(v)]),
      );
      if (!('additionalProperties' in node) && !node['patternProperties'])
        changes['additionalProperties'] = false;
    }
    if (node['items']) changes['items'] = visit(node['items']);
    for (const key of ['anyOf', 'oneOf', 'allOf'])
      if (Array.isArray(node[key])) changes[key] = (node[key] as unknown[]).map(visit);
    return copy(node, changes);
  };
  return visit(schema) as T;
}

/** fastify's validator compiler for typebox schemas; see the module comment. */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(httpPart === 'body' || httpPart === 'querystring' ? closed(schema) : schema);
  return (value: unknown) => {
    const converted = httpPart === 'body' ? value : convertText(schema, value);
    if (check.Check(converted)) return { value: converted };
    return { error: check.Errors(converted) as unknown as FastifySchemaValidationError[] };
  };
};
