/**
 * The options objects of the client's calls, checked before anything is read or written: an object
 * (or left out) with known keys only. A misspelt key would otherwise be ignored: `append(m,
 * { responseID })` stored the messages without the response id meant for them. HTTP's schemas refuse
 * unknown fields the same way; `recall` and `configure` check theirs where they are parsed.
 */
import { ValidationError } from '../model/errors.js';

/**
 * Refuses `options` that are not an object (`field` options) or hold a key not in `known` (`field`
 * that key), naming the known ones.
 */
export function checkOptionKeys(options: unknown, known: readonly string[], example: string): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new ValidationError(
      'invalid_option',
      `options: expected an object such as ${example}, got ${JSON.stringify(options)}`,
      { field: 'options' },
    );
  for (const key of Object.keys(options))
    if (!known.includes(key))
      throw new ValidationError('invalid_option', `${key}: unknown option (${known.join(', ')})`, {
        field: key,
      });
}

/** `append()`'s options: `responseId` and the `model` that gave it. */
export function checkAppendOptions(options: unknown): void {
  checkOptionKeys(options, ['responseId', 'model'], '{ responseId, model }');
}
