/**
 * Where the LLM lives and how long to wait for it, read from the environment (SPEC §8: an LLM through
 * any OpenAI-compatible endpoint when OPENAI_API_KEY / OPENAI_BASE_URL are set, the labelled local
 * fallbacks when they are not).
 *
 * | variable | default | meaning |
 * | --- | --- | --- |
 * | `OPENAI_BASE_URL` | OpenAI's API | any OpenAI-compatible endpoint (vLLM, Ollama, LM Studio, a proxy) |
 * | `OPENAI_API_KEY` | `unused` when only a base URL is set | bearer token sent to the endpoint |
 * | `DURABLE_MEMORY_LLM_MODEL` | `gpt-4o-mini` | the model asked for summaries and memories |
 * | `DURABLE_MEMORY_LLM_TIMEOUT_MS` | `60000` | one call's time limit; Temporal retries after it |
 */
import { ValidationError } from '../model/errors.js';

/** How to reach an OpenAI-compatible endpoint. */
export interface LlmConfig {
  /** The endpoint, e.g. `http://127.0.0.1:8000/v1`; undefined means OpenAI's own API. */
  baseURL?: string;
  /** Bearer token. Local servers ignore it, so it may be a placeholder. */
  apiKey: string;
  /** The model name sent with each request. */
  model: string;
  /** Time limit of one request, in milliseconds. */
  timeoutMs: number;
}

/** The model used when `DURABLE_MEMORY_LLM_MODEL` is not set: cheap and good enough to summarize. */
export const DEFAULT_LLM_MODEL = 'gpt-4o-mini';

/** One call's time limit when `DURABLE_MEMORY_LLM_TIMEOUT_MS` is not set (60 s). */
export const DEFAULT_LLM_TIMEOUT_MS = 60_000;

/** The key sent when only a base URL is configured: the SDK insists on one, local servers ignore it. */
export const PLACEHOLDER_API_KEY = 'unused';

/**
 * Reads the LLM configuration from environment variables.
 * @param env The environment (default `process.env`); empty values count as unset.
 * @returns The configuration, or undefined when neither `OPENAI_BASE_URL` nor `OPENAI_API_KEY` is set
 *   (then the local extractive summarizer and rule-based memory extractor run instead).
 * @throws ValidationError `invalid_option` when `DURABLE_MEMORY_LLM_TIMEOUT_MS` is not a whole number ≥ 1.
 * @example
 * const config = llmConfigFromEnv();
 * const summarizer = config ? createLlmSummarizer(createLlmClient(config), config.model) : localSummarizer;
 */
export function llmConfigFromEnv(env: NodeJS.ProcessEnv = process.env): LlmConfig | undefined {
  const read = (name: string): string | undefined => env[name]?.trim() || undefined;
  const baseURL = read('OPENAI_BASE_URL');
  const apiKey = read('OPENAI_API_KEY');
  if (baseURL === undefined && apiKey === undefined) return undefined;
  const config: LlmConfig = {
    apiKey: apiKey ?? PLACEHOLDER_API_KEY,
    model: read('DURABLE_MEMORY_LLM_MODEL') ?? DEFAULT_LLM_MODEL,
    timeoutMs: timeoutFrom(read('DURABLE_MEMORY_LLM_TIMEOUT_MS')),
  };
  if (baseURL !== undefined) config.baseURL = baseURL;
  return config;
}

function timeoutFrom(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LLM_TIMEOUT_MS;
  const ms = Number(raw);
  // A typo here would otherwise become NaN and the SDK would wait its own default of 10 minutes.
  if (!Number.isInteger(ms) || ms < 1) {
    throw new ValidationError(
      'invalid_option',
      `DURABLE_MEMORY_LLM_TIMEOUT_MS: expected a whole number of milliseconds ≥ 1, got ${JSON.stringify(raw)}`,
    );
  }
  return ms;
}
