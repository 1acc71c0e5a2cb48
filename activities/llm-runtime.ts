/**
 * Which summarizer and memory extractor the activities use: an OpenAI-compatible LLM when
 * OPENAI_BASE_URL or OPENAI_API_KEY is set, otherwise the local extractive summarizer and the
 * rule-based extractor, labelled as such everywhere (state, log) so nothing pretends to be an LLM.
 */
import { activityInfo } from '@temporalio/activity';
import type { Summarizer } from '../src/compaction/strategy.js';
import { llmConfigFromEnv } from '../src/llm/config.js';
import { createLlmClient } from '../src/llm/client.js';
import { createLlmSummarizer } from '../src/llm/llm-summarizer.js';
import { createLlmMemoryExtractor, type MemoryExtractor } from '../src/llm/memory-extractor.js';
import { localSummarizer } from '../src/llm/local-summarizer.js';
import { localMemoryExtractor } from '../src/llm/local-memory-extractor.js';

/** The LLM side of the activities. */
export interface LlmRuntime {
  /** Shown in thread state and logs: the model and endpoint, or the local fallback. */
  label: string;
  /** True when a real LLM is configured. */
  remote: boolean;
  /** The model asked, when `remote`. */
  model?: string;
  /** The summarizer; `signal` aborts its call in flight (the activity's cancellation signal). */
  summarizer(signal?: AbortSignal): Summarizer;
  /** The memory extractor; `signal` as for {@link LlmRuntime.summarizer}. */
  extractor(signal?: AbortSignal): MemoryExtractor;
}

/** The local fallbacks' label. */
export const LOCAL_LLM_LABEL =
  'local fallback (no LLM configured): extractive summarizer, rule-based memory extractor';

/** Builds the runtime from the environment. */
export function llmRuntimeFromEnv(env: NodeJS.ProcessEnv = process.env): LlmRuntime {
  const config = llmConfigFromEnv(env);
  if (!config) {
    return {
      label: LOCAL_LLM_LABEL,
      remote: false,
      summarizer: () => localSummarizer,
      extractor: () => localMemoryExtractor,
    };
  }
  const client = createLlmClient(config);
  return {
    label: `LLM ${config.model} at ${config.baseURL ?? 'api.openai.com'}`,
    remote: true,
    model: config.model,
    // A cancelled activity (thread deleted, worker shutting down) aborts its HTTP call at once.
    summarizer: (signal) => createLlmSummarizer(client, config.model, { signal }),
    extractor: (signal) => createLlmMemoryExtractor(client, config.model, { signal }),
  };
}

/**
 * The longest gap between heartbeats of an activity waiting on the LLM. Cheap: the SDK throttles
 * what reaches the server (see the worker's `maxHeartbeatThrottleInterval`).
 */
const MAX_HEARTBEAT_EVERY_MS = 1000;

/**
 * How often an activity waiting on the LLM heartbeats: a third of its heartbeat timeout, at most
 * every second. A fixed interval would let a healthy call outlive a shorter timeout (the server would retry it
 * on another worker while it still runs); the SDK throttles what it sends to the server anyway.
 * Call from inside an activity.
 */
export function heartbeatEveryMs(): number {
  const timeout = activityInfo().heartbeatTimeoutMs;
  if (!timeout) return MAX_HEARTBEAT_EVERY_MS;
  return Math.max(100, Math.min(MAX_HEARTBEAT_EVERY_MS, Math.floor(timeout / 3)));
}
