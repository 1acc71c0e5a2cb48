/**
 * durable-memory: durable chat memory for AI agents. The public API.
 *
 * - Ad-hoc compaction: `compact()` and `ChatMemory`; the engine (strategies, triggers, the group
 *   index) is pure and tokenizer-free.
 * - Messages: types, validation, OpenAI adapters.
 * - Tokenizers: exact OpenAI encodings by model name and a chars/4 estimator.
 * - Stores: PostgreSQL, in-memory and Redis behind one interface.
 * - The durable pipeline: `connect()` and thread handles; the worker.
 */
export * from './compaction/index.js';
export * from './model/message.js';
export * from './model/errors.js';
export { normalizeMessages, sanitizeText } from './model/validation.js';
export * from './model/limits.js';
export { toOpenAI, fromOpenAI, isOpenAIMessage } from './model/openai.js';
export * from './tokenizers/index.js';
export * from './store/index.js';
export { DEFAULT_CONFIG, defaultStrategy, type ThreadConfig } from './thread/config.js';
export { validateThreadId } from './thread/thread-id.js';
export { buildContext, type BuiltContext } from './thread/build-context.js';
export { connect, DurableMemory, type ConnectOptions } from './client/connect.js';
export {
  rankByEmbedding,
  rankMemoriesByEmbedding,
  DEFAULT_EMBEDDING_HITS,
  type EmbeddingRanked,
  type EmbeddingSources,
  type RankByEmbeddingOptions,
} from './client/embedding-ranker.js';
export {
  ThreadHandle,
  type AppendInput,
  type AppendResult,
  type ThreadAppendOptions,
  type ThreadState,
} from './client/thread-handle.js';
export type { ThreadForkOptions } from './client/fork.js';
export type { ContextOptions, ContextResult, ServiceContext } from './client/context.js';
export type { ActivityRetry } from './client/activity-retries.js';
export type { ServiceState } from './thread/service.js';
export { SERVICE_KINDS, SERVICE_SKIPS, type ServiceResponse, type ServiceSkip } from './model/service.js';
export { toResponsesInput } from './model/openai-responses.js';
export type { HistoryHit, RecalledMessage, RecallReport } from './client/recall.js';
export {
  fuse,
  recallBlock,
  RECALL_BLOCK_HEADER,
  RECALL_BLOCK_ID,
  RECALL_VOLATILE_ID,
  selectRecalled,
  type StableRecallState,
  type FusedHit,
  type Ranker,
  type RankedHit,
  type Ranking,
  type RecalledItem,
  type RecallOptions,
  type RecallScope,
} from './recall/index.js';
export { UnknownThreadError, BackendUnavailableError, TimeoutError } from './client/errors.js';
export { createWorker, type CreateWorkerOptions } from './worker/worker.js';
export type { ThreadStateView } from '../workflows/shared.js';
export { ChatMemory, type ChatMemoryOptions } from './chat-memory/chat-memory.js';
export { compact, type CompactOptions, type CompactResult } from './chat-memory/compact.js';
export * from './llm/index.js';
export type {
  MemoryStore,
  MemoryRecord,
  ScoredMemory,
  RememberInput,
  MemoryEmbedding,
  MemoryPage,
  ListMemoriesOptions,
} from './memories/memory-store.js';
export { CONFIRMED_BY_USER, FORGOTTEN_BY_USER } from './memories/memory-store.js';
export type { UserMemories, RememberOptions } from './client/user-memories.js';
export { InMemoryMemoryStore } from './memories/in-memory-memory-store.js';
export { PostgresMemoryStore } from './memories/postgres-memory-store.js';
export { memoryBlock, MEMORY_BLOCK_HEADER, type RankedMemory } from './thread/memory-block.js';
export { llmRuntimeFromEnv, LOCAL_LLM_LABEL, type LlmRuntime } from '../activities/llm-runtime.js';
export {
  VersionConflictError,
  WORKING_MEMORY_FORMATS,
  type JsonSchema,
  type SetWorkingMemoryOptions,
  type WorkingMemory,
  type WorkingMemoryFormat,
  type WorkingMemoryScope,
} from './memories/working-memory.js';
export type { WorkingMemoryStore, WorkingMemoryHistoryOptions } from './memories/working-memory-store.js';
export type { WorkingMemoryHandle } from './client/working-memory.js';
export type { WorkingMemoryReport } from './client/context.js';
export { WORKING_MEMORY_BLOCK_ID } from './thread/working-memory-block.js';
