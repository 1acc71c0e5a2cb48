/**
 * How requests are checked against their typebox schemas. Bodies are checked as sent (fastify's ajv
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

/** fastify's validator compiler for typebox schemas; see the module comment. */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema);
  return (value: unknown) => {
    const converted = httpPart === 'body' ? value : convertText(schema, value);
    if (check.Check(converted)) return { value: converted };
    return { error: check.Errors(converted) as unknown as FastifySchemaValidationError[] };
  };
};
