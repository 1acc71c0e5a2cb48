/**
 * LLM access (SPEC §6, §8): the `openai` client configured for Temporal (retries off, a timeout), the
 * summarizer and memory extractor that use it, the labelled local fallbacks that run when no endpoint
 * is configured, and the one function that classifies LLM errors into retryable or non-retryable
 * Temporal failures.
 */
export {
  llmConfigFromEnv,
  DEFAULT_LLM_MODEL,
  DEFAULT_LLM_TIMEOUT_MS,
  PLACEHOLDER_API_KEY,
  type LlmConfig,
} from './config.js';
export { createLlmClient } from './client.js';
export {
  toLlmFailure,
  retryAfterMs,
  MAX_RETRY_AFTER_MS,
  type LlmFailureType,
  type LlmFailureDetails,
} from './failures.js';
export { LlmReplyError, type LlmReplyCode } from './reply.js';
export { createLlmSummarizer, summarizerInput, type LlmSummarizerOptions } from './llm-summarizer.js';
export {
  localSummarizer,
  LOCAL_SUMMARY_LABEL,
  LOCAL_SUMMARIZER_MODEL,
  LOCAL_SUMMARY_MAX_CHARS,
} from './local-summarizer.js';
export {
  createLlmMemoryExtractor,
  MEMORY_PROMPT,
  MEMORY_SCHEMA,
  MEMORY_CATEGORIES,
  type MemoryCategory,
  type ExistingMemory,
  type MemoryProposal,
  type ExtractRequest,
  type ExtractResult,
  type MemoryExtractor,
  type LlmMemoryExtractorOptions,
} from './memory-extractor.js';
export { localMemoryExtractor, LOCAL_EXTRACTOR_MODEL } from './local-memory-extractor.js';
export { renderTranscript } from './transcript.js';
export {
  embeddingConfigFromEnv,
  createEmbedder,
  embedderFromEnv,
  embed,
  MAX_EMBEDDING_INPUT_CHARS,
  type EmbeddingConfig,
  type Embedder,
} from './embeddings.js';
