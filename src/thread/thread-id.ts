/**
 * Thread ids are chosen by callers and become part of workflow ids and URLs, so they are checked:
 * 1–128 characters of letters, digits and `. _ : @ -`.
 */
import { ValidationError } from '../model/errors.js';

const THREAD_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** Whether `id` is a valid thread id. */
export function isThreadId(id: unknown): id is string {
  return typeof id === 'string' && THREAD_ID.test(id);
}

/** Throws a ValidationError (`invalid_id`) unless `id` is a valid thread id. */
export function validateThreadId(id: unknown): string {
  if (!isThreadId(id)) {
    throw new ValidationError(
      'invalid_id',
      `thread id ${JSON.stringify(id)}: expected 1–128 characters of letters, digits and . _ : @ -`,
    );
  }
  return id;
}
