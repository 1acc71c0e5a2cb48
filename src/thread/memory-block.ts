/**
 * The context-provider pattern's "provide context before the model call": the user's most relevant
 * live memories, ranked against the latest user turn, as one instruction block within a share of the
 * budget.
 */
import type { Message } from '../model/message.js';

/** A memory as the block needs it. */
export interface RankedMemory {
  id: string;
  text: string;
}

/** Header of the block, so the model knows what it reads. */
export const MEMORY_BLOCK_HEADER = 'Known facts about the user (long-term memory; may be out of date):';

/** The id of the injected long-term memory message (never a history message). */
export const MEMORY_BLOCK_ID = 'long-term-memory';

/**
 * Builds the block from memories in rank order, taking as many as fit in `maxTokens` as `count`
 * measures a message (the caller's tokenizer: this module stays free of one). Returns undefined when
 * none fits.
 */
export function memoryBlock(
  ranked: readonly RankedMemory[],
  maxTokens: number,
  count: (message: Message) => number,
): { message: Message; tokens: number; used: RankedMemory[] } | undefined {
  const used: RankedMemory[] = [];
  let best: { message: Message; tokens: number } | undefined;
  for (const memory of ranked) {
    const candidate = [...used, memory];
    const message: Message = {
      id: MEMORY_BLOCK_ID,
      role: 'system',
      parts: [
        { type: 'text', text: [MEMORY_BLOCK_HEADER, ...candidate.map((m) => `- ${m.text}`)].join('\n') },
      ],
      metadata: { memories: candidate.map((m) => m.id) },
    };
    const tokens = count(message);
    if (tokens > maxTokens) continue; // a shorter, lower-ranked one may still fit
    used.push(memory);
    best = { message, tokens };
  }
  return best && { ...best, used };
}
