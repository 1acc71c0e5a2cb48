/**
 * The model a thread counts tokens for, as the stores check it on append (AppendOptions.model): its
 * stored configuration's `model`, else the default configuration's (what its workflow uses).
 */
import { DEFAULT_CONFIG } from '../../thread/config.js';

/** The model of a thread with no model configured. */
export const DEFAULT_MODEL = DEFAULT_CONFIG.model;

/** The model of a thread whose stored configuration is `config` (undefined: none stored). */
export function threadModel(config: Record<string, unknown> | undefined | null): string {
  const model = config?.['model'];
  return typeof model === 'string' ? model : DEFAULT_MODEL;
}
