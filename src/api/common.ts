/**
 * What every route shares: ids in paths, the error responses a route can give, the security
 * requirement.
 */
import Type, { type TSchema } from 'typebox';
import { ref } from './shared.js';

/** The alphabet of thread and user ids (the engine's `validateThreadId`). */
export const ID_PATTERN = '^[A-Za-z0-9._:@-]{1,128}$';

/**
 * A `since`/`until` of recall and search: epoch milliseconds, or an ISO 8601 date or time (the
 * library's `instant` then checks that the day exists, and reads eight digits as a date, 20230508).
 */
export const TIME_PATTERN = '^(\\d{1,16}|\\d{4}-\\d{2}-\\d{2}([T ][0-9:.]+(Z|[+-]\\d{2}:?\\d{2})?)?)$';

/**
 * What a value of each pattern is, in words: a refusal says this (`since: must be an ISO 8601 …`),
 * never the regex, which its caller would have to decode.
 */
export const PATTERN_WORDS: Readonly<Record<string, string>> = {
  [ID_PATTERN]: '1–128 letters, digits and . _ : @ -',
  [TIME_PATTERN]: 'an ISO 8601 date or time (2023-05-08, 2023-05-08T14:00:00Z) or epoch milliseconds',
};

/**
 * A thread id as the caller writes it (the tenant prefix is added inside): letters, digits and
 * `. _ : @ -`. Stored with the tenant's prefix, so at most 127 minus the tenant name's length.
 */
export function threadIdSchema(
  description = 'Thread id: 1–128 letters, digits and `. _ : @ -` (at most 127 minus the tenant length).',
) {
  return Type.String({ pattern: ID_PATTERN, description });
}

/** A user id, same alphabet and length as thread ids (emails fit). */
export function userIdSchema(
  description = 'User id: 1–128 letters, digits and `. _ : @ -` (at most 127 minus the tenant length).',
) {
  return Type.String({ pattern: ID_PATTERN, description });
}

/** Path parameters of the thread routes. */
export const ThreadParams = Type.Object({ id: threadIdSchema() });

/** Why each error status happens, for the OpenAPI description. */
const ERROR_REASONS = {
  400: 'Invalid input: `code` says what, `field` says where (also `invalid_json`, `invalid_utf8`).',
  401: 'Missing, unknown or revoked bearer token (`missing_token`, `invalid_token`).',
  404: 'No such thread, user or memory for this tenant (`unknown_thread`, `unknown_user`, `unknown_memory`).',
  409: 'Conflicts with stored data (`id_conflict`, `memory_superseded`, `conflict`: the id is taken, or a working memory write on a version that is no longer the latest).',
  413: 'The request body exceeds the size limit (`body_too_large`).',
  415: 'The body is not `application/json` (`unsupported_media_type`).',
  500: 'An unexpected failure (`internal`); details are in the server log, never in the answer.',
  503: 'PostgreSQL or Temporal is unreachable or too slow (`backend_unavailable`, `timeout`); see `Retry-After`.',
} as const;

/** An error status a route may answer with. */
export type ErrorStatus = keyof typeof ERROR_REASONS;

/** Statuses any authenticated route can give, whatever it does. */
const ALWAYS: readonly ErrorStatus[] = [400, 401, 500, 503];

/**
 * The error responses of a route: the ones every authenticated route can give plus `extra`
 * (404 for a thread, 413/415 for a body). Listing them is what lets the tests check that every
 * status the API really answers with is documented.
 */
export function errorResponses(...extra: ErrorStatus[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of [...ALWAYS, ...extra].sort((a, b) => a - b))
    out[status] = ref('Error', ERROR_REASONS[status]);
  return out;
}

/** Statuses of a route with a JSON body (too large, wrong type). */
export const BODY_ERRORS: readonly ErrorStatus[] = [413, 415];

/** The OpenAPI security requirement of authenticated routes. */
export const BEARER = [{ bearerAuth: [] }];
