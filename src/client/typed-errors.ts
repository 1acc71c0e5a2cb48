/**
 * How failures of workflow commands (updates and queries) become the client's typed errors. The
 * workflow rejects a bad `configure` with the engine's ValidationError and an unsatisfiable `sync`
 * with an ApplicationFailure of type `not_found`; Temporal reports transport trouble as gRPC codes.
 * A library caller sees ValidationError, UnknownThreadError, BackendUnavailableError or
 * TimeoutError instead of the SDK's wrappers; anything else passes through unchanged.
 */
import type { ApplicationFailure } from '@temporalio/client';
import { temporalSdk } from '../settings/temporal-connection.js';
import { DurableMemoryError, ValidationError, type ValidationCode } from '../model/errors.js';
import { BackendUnavailableError, TimeoutError, UnknownThreadError } from './errors.js';

/** gRPC status codes the client names (as numbers: grpc-js's `status` loads with the Temporal SDK only). */
export const GRPC_DEADLINE_EXCEEDED = 4;
export const GRPC_NOT_FOUND = 5;
export const GRPC_RESOURCE_EXHAUSTED = 8;
export const GRPC_FAILED_PRECONDITION = 9;
export const GRPC_UNAVAILABLE = 14;

/** What a failed command was, for the typed error's message. */
export interface CommandContext {
  threadId: string;
  /** The command, e.g. `configure update` or `state query`. */
  what: string;
  /** Its time bound in ms (named in a TimeoutError). */
  ms: number;
  /** Where Temporal was expected (named in a BackendUnavailableError). */
  address: string;
}

/**
 * The workflow's own rejection: `err` itself or its direct cause (what WorkflowUpdateFailedError
 * wraps) when that is an ApplicationFailure. Deeper ones (an activity's failure inside) are not the
 * workflow's answer and are left alone.
 */
export function workflowRejection(err: unknown): ApplicationFailure | undefined {
  const { ApplicationFailure } = temporalSdk();
  if (err instanceof ApplicationFailure) return err;
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  return cause instanceof ApplicationFailure ? cause : undefined;
}

/** The gRPC status code in `err` or one of its causes, if any. */
export function grpcCodeIn(err: unknown): number | undefined {
  const { isGrpcServiceError } = temporalSdk();
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 6; depth++) {
    if (isGrpcServiceError(e)) return (e as { code?: number }).code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** An ApplicationFailure's ValidationError code: from its details if given, else `invalid_option`. */
function validationCodeOf(failure: ApplicationFailure): ValidationCode {
  const detail = failure.details?.[0] as { code?: unknown } | undefined;
  return typeof detail?.code === 'string' ? (detail.code as ValidationCode) : 'invalid_option';
}

/**
 * Turns a failed workflow update or query into the client's typed error: the workflow's
 * ValidationError rejection becomes a ValidationError (code and message kept), `not_found` an
 * UnknownThreadError, an RPC deadline a TimeoutError and an unreachable server a
 * BackendUnavailableError. Returns `err` itself when it is none of these.
 */
export function toClientError(err: unknown, ctx: CommandContext): unknown {
  if (err instanceof DurableMemoryError) return err; // typed already (e.g. Temporal unreachable on connect)
  if (err instanceof temporalSdk().WorkflowUpdateRPCTimeoutOrCancelledError)
    return new TimeoutError(ctx.what, ctx.ms);
  const failure = workflowRejection(err);
  if (failure?.type === 'ValidationError') {
    const typed = new ValidationError(validationCodeOf(failure), failure.message);
    (typed as { cause?: unknown }).cause = err;
    return typed;
  }
  if (failure?.type === 'not_found') return new UnknownThreadError(ctx.threadId);
  const code = grpcCodeIn(err);
  if (code === GRPC_DEADLINE_EXCEEDED) return new TimeoutError(ctx.what, ctx.ms);
  if (code === GRPC_UNAVAILABLE) return new BackendUnavailableError('temporal', ctx.address, err);
  return err;
}
