/**
 * How a failed tool call reads to the assistant: `code: message`, naming the input field and the
 * caller's own ids. Stored ids (with a tenant prefix), addresses and stack traces never leave.
 */
import { BackendUnavailableError, TimeoutError, UnknownThreadError } from '../client/errors.js';
import { DurableMemoryError, StoreUnavailableError, ValidationError } from '../model/errors.js';
import { VersionConflictError } from '../memories/working-memory.js';

/** A failure a tool reports as is: its code and message are the caller's words. */
export class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

/** The text of a tool error result for `err`. */
export function toolErrorText(err: unknown, strip: (id: string) => string): string {
  if (err instanceof ToolError) return line(err.code, err.message, err.field);
  if (err instanceof ValidationError)
    return line(err.code, err.message.replace(/^Message \d+(?: \(id .*?\))?: /u, ''), err.field);
  if (err instanceof UnknownThreadError)
    return line('unknown_thread', `thread ${JSON.stringify(strip(err.threadId))} does not exist`, 'threadId');
  if (err instanceof BackendUnavailableError || err instanceof StoreUnavailableError)
    return line('backend_unavailable', 'the memory backend is unreachable; try again shortly');
  if (err instanceof TimeoutError) return line('timeout', 'the call took too long; try again');
  if (err instanceof VersionConflictError) return line('conflict', err.message, 'version');
  if (err instanceof DurableMemoryError) return line(err.code, 'internal error');
  return line('internal', 'internal error');
}

/**
 * `code: message`, the field named in its place: the message's own `field: …`, else `(field: …)`
 * after it (a message that merely begins with the field's word, `since bounds …`, names it too).
 */
function line(code: string, message: string, field?: string): string {
  return `${code}: ${message}${field && !message.startsWith(`${field}:`) ? ` (field: ${field})` : ''}`;
}
