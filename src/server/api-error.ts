/**
 * How failures become answers. Every failure is `{ error: { code, message, field? } }` with a 4xx or
 * 5xx status; codes are stable and machine-readable (the engine's ValidationError codes pass through).
 * Answers never carry stack traces, SQL, addresses or tokens: 5xx messages are fixed texts.
 */
import { WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { BackendUnavailableError, TimeoutError, UnknownThreadError } from '../client/errors.js';
import { DurableMemoryError, ValidationError } from '../model/errors.js';
import {
  ConflictError,
  InvalidRecordError,
  StoreUnavailableError,
  ThreadExistsError,
} from '../store/errors.js';
import { DeadlineError } from './deadline.js';
import { VersionConflictError } from '../memories/working-memory.js';
import { SERVICE_KINDS, serviceNotBound } from '../model/service.js';

/** Seconds a client should wait before retrying after a 503. */
export const RETRY_AFTER_SECONDS = 5;

/** A failure with its HTTP status, stable code and (for input errors) the offending field. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The JSON body of the answer. */
  body(): { error: { code: string; message: string; field?: string } } {
    return {
      error: { code: this.code, message: this.message, ...(this.field ? { field: this.field } : {}) },
    };
  }
}

/** 404 for a thread this tenant does not have (another tenant's thread looks exactly the same). */
export function unknownThread(id: string): ApiError {
  return new ApiError(404, 'unknown_thread', `thread ${JSON.stringify(id)} does not exist`, 'id');
}

/**
 * An engine ValidationError as a 400 naming `field`. The engine prefixes its messages with
 * "Message 3 (id …):"; that prefix is replaced by the field, which is how the API names places.
 */
export function validationFailure(err: ValidationError, field = err.field): ApiError {
  // "configure.budget: …" names the setting the same way; keep one name, not two.
  const detail = err.message.replace(/^Message \d+(?: \(id .*?\))?: /u, '').replace(/^configure\./u, '');
  const message = !field || detail.startsWith(field) ? detail : `${field}: ${detail}`;
  return new ApiError(400, err.code, message, field);
}

/**
 * A library refusal as the HTTP API says it: a `service_not_bound` names the PATCH that binds the
 * thread (the library's names `thread.configure(…)`, which an HTTP caller has not); anything else as
 * it is.
 * @param id - the thread as the caller names it (the path's id)
 */
export function asHttpRefusal(err: ValidationError, id: string): ValidationError {
  if (err.code !== 'service_not_bound') return err;
  const bind = `PATCH /v1/threads/${id} {"service": {"kind": "${SERVICE_KINDS[0]}"}}`;
  return serviceNotBound(err.field ?? 'service', id, bind);
}

/** Maps fastify's own errors (body parsing, limits) to ours; undefined for anything else. */
function fastifyError(err: { code?: unknown; statusCode?: unknown }): ApiError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'body_too_large', 'the request body exceeds the size limit');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'invalid_json', 'the request body is not valid JSON', 'body');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(415, 'unsupported_media_type', 'send the body as application/json');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError(400, 'invalid_id', 'a path parameter is longer than 512 characters', 'path');
    case 'FST_ERR_BAD_URL':
      return new ApiError(400, 'invalid_url', 'the path is not valid percent-encoded UTF-8', 'path');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError(400, 'invalid_content_length', 'Content-Length does not match the body');
  }
  const status = typeof err.statusCode === 'number' ? err.statusCode : 0;
  if (status >= 400 && status < 500) return new ApiError(status, 'bad_request', 'the request is malformed');
  return undefined;
}

const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;

/**
 * Tells whether `err` (or one of its causes) says a backend is unreachable or too slow: then the
 * answer is 503 with Retry-After, because the same request may succeed later. Stores say so with
 * StoreUnavailableError (whatever their backend); Temporal with gRPC codes.
 * @returns `timeout`, `backend_unavailable`, or undefined.
 */
export function backendFailure(err: unknown): 'timeout' | 'backend_unavailable' | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 6; depth++) {
    if (e instanceof DeadlineError || e instanceof TimeoutError) return 'timeout';
    if (e instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return 'timeout';
    if (e instanceof BackendUnavailableError) return 'backend_unavailable';
    if (e instanceof StoreUnavailableError) return e.reason === 'timeout' ? 'timeout' : 'backend_unavailable';
    const { code } = e as { code?: unknown };
    if (code === GRPC_DEADLINE_EXCEEDED) return 'timeout';
    if (code === GRPC_UNAVAILABLE) return 'backend_unavailable';
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Turns anything thrown while handling a request into an ApiError. Routes catch the errors whose
 * field only they know (which message, which setting) first; everything else lands here.
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const backend = backendFailure(err);
  if (backend === 'timeout')
    return new ApiError(503, 'timeout', 'the backend did not answer in time; retry later');
  if (backend === 'backend_unavailable')
    return new ApiError(503, 'backend_unavailable', 'PostgreSQL or Temporal is unreachable; retry later');
  if (err instanceof ValidationError) return validationFailure(err);
  if (err instanceof ConflictError)
    return new ApiError(
      409,
      'id_conflict',
      `message id ${JSON.stringify(err.messageId)} is already stored with different content`,
    );
  // Its message names the id taken; send() strips a tenant's prefix from it.
  if (err instanceof ThreadExistsError) return new ApiError(409, 'conflict', err.message, 'id');
  if (err instanceof VersionConflictError) return new ApiError(409, 'conflict', err.message, 'version');
  if (err instanceof InvalidRecordError) return new ApiError(400, 'invalid_record', err.message);
  if (err instanceof UnknownThreadError)
    return new ApiError(404, 'unknown_thread', 'the thread does not exist');
  if (err instanceof DurableMemoryError) return new ApiError(500, 'internal', 'internal error');
  if (err && typeof err === 'object') {
    const mapped = fastifyError(err as { code?: unknown; statusCode?: unknown });
    if (mapped) return mapped;
  }
  return new ApiError(500, 'internal', 'internal error');
}
