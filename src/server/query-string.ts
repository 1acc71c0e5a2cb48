/**
 * Query strings, held to the rules of bodies. The router's own parser keeps text it cannot decode
 * as it came (`?query=%FF` searched for the three characters `%FF`), so a garbled parameter was
 * silently a different one. Here a value that is not well-formed percent-encoded UTF-8, or that
 * holds a NUL, is a 400 naming the parameter, with the codes a body with the same text gets
 * (`invalid_utf8`, `nul_byte`; `invalid_url` for a `%` not followed by two hex digits, as in paths).
 * A lone surrogate cannot be percent-encoded UTF-8, so it is `invalid_utf8` here.
 *
 * Unknown parameters follow the API's one rule for unknown fields (validator-compiler.ts): refused.
 * A documented route without query parameters takes none.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './api-error.js';

/** The first fault of a parsed query string. */
interface QueryFault {
  code: 'invalid_url' | 'invalid_utf8' | 'nul_byte';
  field: string;
}

/** Faults of the objects {@link parseQueryString} returned, found again by the hook. */
const faults = new WeakMap<object, QueryFault>();

const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/u;

/** One key or value decoded (`+` is a space), or why it cannot be. */
function decode(text: string): string | { fault: QueryFault['code'] } {
  if (BAD_ESCAPE.test(text)) return { fault: 'invalid_url' };
  let decoded: string;
  try {
    decoded = decodeURIComponent(text.replace(/\+/gu, ' '));
  } catch {
    return { fault: 'invalid_utf8' }; // invalid UTF-8, lone surrogates included
  }
  return decoded.includes('\u0000') ? { fault: 'nul_byte' } : decoded;
}

/**
 * The router's query string parser: `a=1&b=2&b=3` → `{ a: '1', b: ['2', '3'] }` as before, but
 * strict (see the module comment); a fault is kept for {@link checkQueryStrings} to answer.
 */
export function parseQueryString(text: string): Record<string, string | string[]> {
  const out = Object.create(null) as Record<string, string | string[]>;
  let fault: QueryFault | undefined;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawKey = eq < 0 ? pair : pair.slice(0, eq);
    const key = decode(rawKey);
    const value = decode(eq < 0 ? '' : pair.slice(eq + 1));
    if (typeof key !== 'string') {
      fault ??= { code: key.fault, field: rawKey.slice(0, 100) };
      continue;
    }
    if (typeof value !== 'string') {
      fault ??= { code: value.fault, field: key.slice(0, 100) };
      continue;
    }
    const before = out[key];
    out[key] = before === undefined ? value : Array.isArray(before) ? [...before, value] : [before, value];
  }
  if (fault) faults.set(out, fault);
  return out;
}

const MESSAGES: Record<QueryFault['code'], string> = {
  invalid_url: 'is not valid percent-encoding',
  invalid_utf8: 'is not valid UTF-8',
  nul_byte: 'text contains a NUL (U+0000)',
};

/** Whether `request`'s route is a documented one of the API (not the inspector, MCP or metrics). */
function documented(request: FastifyRequest): boolean {
  const schema = request.routeOptions.schema as { hide?: boolean } | undefined;
  return !!schema && !schema.hide && (request.routeOptions.url ?? '').startsWith('/v1/');
}

/** Answers 400 for a query string {@link parseQueryString} found at fault, on every route. */
export function checkQueryStrings(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const query = request.query as Record<string, unknown> | undefined;
    if (!query) return;
    const fault = faults.get(query);
    if (fault) throw new ApiError(400, fault.code, `${fault.field}: ${MESSAGES[fault.code]}`, fault.field);
    if (!request.routeOptions.schema?.querystring && documented(request)) {
      const name = Object.keys(query)[0];
      if (name !== undefined)
        throw new ApiError(
          400,
          'unknown_field',
          `${name.slice(0, 100)}: this operation takes no query parameters`,
          name.slice(0, 100),
        );
    }
  });
}
