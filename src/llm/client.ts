/**
 * The `openai` client as this library uses it: retries off and a time limit per call, because
 * Temporal's retry policy is the only one (SPEC §6). Two retry loops would multiply: three SDK
 * attempts inside each of ten activity attempts is thirty calls, and the SDK's sleeps would hide a
 * rate limit's Retry-After from the activity's `nextRetryDelay`.
 */
import OpenAI from 'openai';
import type { LlmConfig } from './config.js';

/** OpenAI's own endpoint, used when no base URL is configured. */
const OPENAI_API = 'https://api.openai.com/v1';

/**
 * Creates the client for summaries and memory extraction.
 * @param config Endpoint, key and time limit (see `llmConfigFromEnv`).
 * @returns An `OpenAI` client with `maxRetries: 0` and `timeout: config.timeoutMs`.
 * @example
 * const client = createLlmClient({ baseURL: 'http://127.0.0.1:8000/v1', apiKey: 'unused', model: 'm', timeoutMs: 30_000 });
 */
export function createLlmClient(config: LlmConfig): OpenAI {
  return new OpenAI({
    apiKey: config.apiKey,
    // Explicit, so the SDK never falls back to OPENAI_BASE_URL behind the configuration's back.
    baseURL: config.baseURL ?? OPENAI_API,
    maxRetries: 0,
    timeout: config.timeoutMs,
  });
}
