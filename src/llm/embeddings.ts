/**
 * Embeddings: the one place this library calls an OpenAI-compatible `/v1/embeddings` endpoint. The
 * worker's embedding lane embeds stored messages and memories with it in the background, and the read
 * path embeds a query with it. Off unless `DURABLE_MEMORY_EMBEDDING_MODEL` is set.
 *
 * | variable | default | meaning |
 * | --- | --- | --- |
 * | `DURABLE_MEMORY_EMBEDDING_MODEL` | unset: embeddings off | the embedding model, e.g. `text-embedding-3-small` |
 * | `DURABLE_MEMORY_EMBEDDING_BASE_URL` | `OPENAI_BASE_URL`, else OpenAI's API | where the embeddings endpoint is |
 * | `DURABLE_MEMORY_EMBEDDING_API_KEY` | `OPENAI_API_KEY`, else `unused` | bearer token sent to it |
 *
 * The client is the LLM's (src/llm/client.ts): retries off and `DURABLE_MEMORY_LLM_TIMEOUT_MS` per
 * call, so Temporal's retry policy is the only one and a 429's Retry-After reaches it.
 */
import type OpenAI from 'openai';
import { firstCharacters } from '../model/limits.js';
import { embeddingRequestsTotal } from '../observability/metrics.js';
import { llmConfigFromEnv, PLACEHOLDER_API_KEY, type LlmConfig } from './config.js';
import { LlmReplyError } from './reply.js';

/** Where the embeddings endpoint is and which model it runs. */
export type EmbeddingConfig = LlmConfig;

/** Embeds texts; one vector per text, in input order. */
export interface Embedder {
  /** The model name: stored with every vector, so a change of model re-embeds. */
  readonly model: string;
  /** Shown in logs: the model and endpoint. */
  readonly label: string;
  /** One request for all `texts`; `signal` aborts it. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]>;
}

/** Longest text sent for one input, in characters: well below the 8,192-token limit of OpenAI's models. */
export const MAX_EMBEDDING_INPUT_CHARS = 8_000;

/** `text` as sent for embedding: its first {@link MAX_EMBEDDING_INPUT_CHARS} characters (code points). */
export function embeddingInput(text: string): string {
  return firstCharacters(text, MAX_EMBEDDING_INPUT_CHARS);
}

/**
 * Reads the embedding configuration from environment variables (see the module comment).
 * @returns undefined when `DURABLE_MEMORY_EMBEDDING_MODEL` is unset or blank (embeddings off).
 * @throws ValidationError as {@link llmConfigFromEnv} for a bad `DURABLE_MEMORY_LLM_TIMEOUT_MS`.
 */
export function embeddingConfigFromEnv(env: NodeJS.ProcessEnv = process.env): EmbeddingConfig | undefined {
  const read = (name: string): string | undefined => env[name]?.trim() || undefined;
  const model = read('DURABLE_MEMORY_EMBEDDING_MODEL');
  if (model === undefined) return undefined;
  const llm = llmConfigFromEnv({ ...env, OPENAI_API_KEY: read('OPENAI_API_KEY') ?? PLACEHOLDER_API_KEY });
  const baseURL = read('DURABLE_MEMORY_EMBEDDING_BASE_URL') ?? llm?.baseURL;
  const config: EmbeddingConfig = {
    apiKey: read('DURABLE_MEMORY_EMBEDDING_API_KEY') ?? llm?.apiKey ?? PLACEHOLDER_API_KEY,
    model,
    timeoutMs: llm!.timeoutMs,
  };
  if (baseURL !== undefined) config.baseURL = baseURL;
  return config;
}

/** The embedder of a configuration (the `openai` client with retries off). */
export function createEmbedder(config: EmbeddingConfig): Embedder {
  // The `openai` package loads on the first call: a client that never embeds (most CLI commands)
  // does not pay its start-up.
  let client: Promise<OpenAI> | undefined;
  return {
    model: config.model,
    label: `embeddings ${config.model} at ${config.baseURL ?? 'api.openai.com'}`,
    embed: async (texts, signal) => {
      client ??= import('./client.js').then((m) => m.createLlmClient(config));
      return embed(await client, config.model, texts, signal);
    },
  };
}

/** The embedder the environment configures, or undefined (embeddings off). */
export function embedderFromEnv(env: NodeJS.ProcessEnv = process.env): Embedder | undefined {
  const config = embeddingConfigFromEnv(env);
  return config ? createEmbedder(config) : undefined;
}

/**
 * Sends one embeddings request and checks the reply: one vector per input, all of one dimension.
 * @throws LlmReplyError for a reply that does not hold that; the client's errors as they are.
 */
export async function embed(
  client: OpenAI,
  model: string,
  texts: readonly string[],
  signal?: AbortSignal,
): Promise<number[][]> {
  if (texts.length === 0) return [];
  const input = texts.map(embeddingInput);
  try {
    const reply = await client.embeddings.create(
      { model, input, encoding_format: 'float' },
      signal ? { signal } : undefined,
    );
    const vectors = readEmbeddings(reply, texts.length);
    embeddingRequestsTotal.inc({ model, result: 'ok' });
    return vectors;
  } catch (err) {
    embeddingRequestsTotal.inc({ model, result: 'error' });
    throw err;
  }
}

function readEmbeddings(reply: OpenAI.CreateEmbeddingResponse, count: number): number[][] {
  const data = Array.isArray(reply?.data) ? reply.data : undefined;
  if (!data || data.length !== count)
    throw new LlmReplyError('bad_embeddings', `expected ${count} embeddings, got ${data?.length ?? 'none'}`);
  const vectors: number[][] = new Array(count);
  for (const item of data) {
    const v = item?.embedding;
    if (!Number.isInteger(item?.index) || item.index < 0 || item.index >= count || !Array.isArray(v))
      throw new LlmReplyError('bad_embeddings', 'an embedding without a valid index or vector');
    vectors[item.index] = v;
  }
  const dims = vectors[0]?.length ?? 0;
  for (const v of vectors) {
    if (!v || v.length === 0 || v.length !== dims || !v.every(Number.isFinite))
      throw new LlmReplyError('bad_embeddings', 'embeddings of different or no dimensions, or not numbers');
  }
  return vectors;
}
