/**
 * Long-term memory extraction (SPEC §6): after new turns, propose durable facts about the user. An
 * extractor only proposes; the store decides (add, supersede the old fact while keeping it, or leave
 * alone). This file holds the interface and the LLM extractor, which asks for structured output (the
 * JSON schema goes with the request) and checks the reply against the schema itself.
 *
 * Rules of the LLM extractor: no new messages, no call; a reply that is not JSON or not the schema is
 * an `LlmReplyError` (retried), never "no memories"; a `supersedes` id that is not one of the existing
 * memories, and source ids that are not among the new messages, are dropped rather than trusted;
 * facts with empty text, facts longer than a memory may be (`MAX_MEMORY_TEXT_LENGTH`: no fact is
 * that long, and the store would refuse the whole extraction), facts equal to an existing memory and
 * repeats within the reply are dropped.
 */
import type OpenAI from 'openai';
import type { Message } from '../model/message.js';
import { MAX_MEMORY_TEXT_LENGTH, characterCount } from '../model/limits.js';
import { MEMORY_SCHEMA, parseMemoryReply, type MemoryCategory } from './memory-schema.js';
import { complete } from './complete.js';
import { renderTranscript } from './transcript.js';

export { MEMORY_CATEGORIES, MEMORY_SCHEMA, type MemoryCategory } from './memory-schema.js';

/** A memory the user already has (live, not superseded). */
export interface ExistingMemory {
  id: string;
  text: string;
}

/** A fact an extractor proposes. */
export interface MemoryProposal {
  /** One short third-person sentence, e.g. `User lives in Berlin`. */
  text: string;
  /** One of `MEMORY_CATEGORIES` (extractors from elsewhere may use their own). */
  category?: MemoryCategory | string;
  /** Id of an existing memory this one replaces (it is kept, marked as superseded). */
  supersedes?: string;
  /** Why it replaces that memory. */
  reason?: string;
  /** Ids of the messages that state the fact. */
  sourceMessageIds: string[];
}

/** What an extractor reads. */
export interface ExtractRequest {
  /** The new turns, oldest first. */
  messages: Message[];
  /** The user's live memories, so known facts are skipped and changed ones superseded. */
  existing: ExistingMemory[];
}

/** What an extractor proposes, with its provenance. */
export interface ExtractResult {
  proposals: MemoryProposal[];
  /** The model that proposed (`local-rules` for the local fallback). */
  model: string;
  inputTokens?: number;
  outputTokens?: number;
}

/** Proposes facts about the user from new turns. */
export type MemoryExtractor = (req: ExtractRequest) => Promise<ExtractResult>;

/** The instructions of the LLM extractor. */
export const MEMORY_PROMPT =
  'You maintain long-term memories about the user of a chat assistant. Read the new messages and ' +
  'propose durable facts about the user: preferences, identity (name, occupation, employer), ' +
  'circumstances (where they live, health, allergies, family) and plans. Only facts the user states ' +
  'or clearly confirms; nothing about the assistant, nothing passing (the weather today), nothing ' +
  'guessed. Write each fact as one short third-person sentence starting with "User" (e.g. "User ' +
  'lives in Berlin"). Skip facts the existing memories already hold. When a fact contradicts or ' +
  'updates an existing memory, set "supersedes" to that memory\'s id and give the reason; otherwise ' +
  'null. Cite the ids of the messages that state the fact in "source_message_ids". If there is ' +
  'nothing new, return {"facts": []}.';

/** Options of {@link createLlmMemoryExtractor}. */
export interface LlmMemoryExtractorOptions {
  /** Aborts the call in flight, e.g. the activity's `cancellationSignal`. */
  signal?: AbortSignal;
}

/**
 * Creates the LLM memory extractor.
 * @param client An `openai` client, normally from `createLlmClient` (retries off, a timeout).
 * @param model The model asked; it must support `response_format: json_schema`.
 * @returns A {@link MemoryExtractor}.
 * @throws LlmReplyError (`no_choices`, `empty_content`, `invalid_json`, `schema_mismatch`); the
 *   client's errors as they are.
 */
export function createLlmMemoryExtractor(
  client: OpenAI,
  model: string,
  options: LlmMemoryExtractorOptions = {},
): MemoryExtractor {
  return async (req: ExtractRequest): Promise<ExtractResult> => {
    if (req.messages.length === 0) return { proposals: [], model };
    const reply = await complete(
      client,
      {
        model,
        messages: [
          { role: 'system', content: MEMORY_PROMPT },
          { role: 'user', content: extractorInput(req) },
        ],
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'memories',
            strict: true,
            schema: MEMORY_SCHEMA as unknown as Record<string, unknown>,
          },
        },
      },
      options.signal,
    );
    const result: ExtractResult = {
      proposals: toProposals(parseMemoryReply(reply.text), req),
      model: reply.model ?? model,
    };
    if (reply.inputTokens !== undefined) result.inputTokens = reply.inputTokens;
    if (reply.outputTokens !== undefined) result.outputTokens = reply.outputTokens;
    return result;
  };
}

/**
 * The user message of an extraction request: the existing memories with their ids, then the new
 * messages with theirs.
 */
export function extractorInput(req: ExtractRequest): string {
  const existing = req.existing.length
    ? req.existing.map((m) => `- [${m.id}] ${m.text}`).join('\n')
    : '(none)';
  return `Existing memories:\n${existing}\n\nNew messages:\n${renderTranscript(req.messages, { withIds: true })}`;
}

function toProposals(facts: ReturnType<typeof parseMemoryReply>, req: ExtractRequest): MemoryProposal[] {
  const existingIds = new Set(req.existing.map((m) => m.id));
  const messageIds = new Set(req.messages.map((m) => m.id));
  const seen = new Set(req.existing.map((m) => normalize(m.text)));
  const out: MemoryProposal[] = [];
  for (const fact of facts) {
    const text = fact.text.trim();
    if (!text || characterCount(text) > MAX_MEMORY_TEXT_LENGTH || seen.has(normalize(text))) continue;
    seen.add(normalize(text));
    const proposal: MemoryProposal = {
      text,
      category: fact.category,
      sourceMessageIds: [...new Set(fact.source_message_ids.filter((id) => messageIds.has(id)))],
    };
    if (fact.supersedes !== null && existingIds.has(fact.supersedes)) proposal.supersedes = fact.supersedes;
    if (fact.reason?.trim()) proposal.reason = fact.reason.trim();
    out.push(proposal);
  }
  return out;
}

/** Texts compared for duplicates: case, surrounding space and a final period do not matter. */
function normalize(text: string): string {
  return text.trim().replace(/\.$/, '').toLowerCase();
}
