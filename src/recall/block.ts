/**
 * The recalled block: the recalled messages as one system message, under a header that tells the
 * model what it reads. Each message keeps its own text verbatim (a model, and the benchmark, must
 * find the very words said), prefixed by its speaker, and by its day when that differs from the
 * message before it (a day's date once, not on every line: it cost 14 tokens a message, a quarter
 * of a chat turn); excerpts that do not follow each other are separated by a blank line. Tool calls and results are written out as text, so the block is
 * valid in any position of an OpenAI conversation.
 */
import type { Message } from '../model/message.js';
import { dayOf } from './fuse.js';
import type { RecalledItem } from './select.js';

/** Header of the block. */
export const RECALL_BLOCK_HEADER =
  'Recalled from earlier in the conversation (verbatim excerpts, oldest first, each day dated once; they may be out of date):';

/** The id of the injected recalled block (never a history message): the stable one (src/recall/stable.ts). */
export const RECALL_BLOCK_ID = 'recalled-history';

/** The id of the volatile recalled block: this query's new hits, right before the newest user message. */
export const RECALL_VOLATILE_ID = 'recalled-history-new';

/**
 * Tokens a recalled message costs in the block beyond its stored count, for packing: none, since its
 * speaker, line break and the blank line between excerpts cost about what the stored count already
 * holds for a chat message's framing (gpt-4o: 21 tokens stored, 22 as a line of the block). The caller
 * counts the finished block and chooses again in less room if it is over.
 */
export const RECALL_ITEM_OVERHEAD = 0;

/** Tokens of a day's date (`[2024-03-05] `: 8 with gpt-4o), once per day and thread. */
export const RECALL_DAY_OVERHEAD = 8;

/** `2024-03-05` from an ISO-8601 time (UTC). */
export function shortDate(iso: string): string {
  return iso.slice(0, 10);
}

/** The text of one message as the block shows it: text parts, tool calls and results (no reasoning). */
export function recalledText(message: Message): string {
  return message.parts
    .flatMap((p) => {
      switch (p.type) {
        case 'text':
          return [p.text];
        case 'tool_call':
          return [`called ${p.name}(${p.arguments})`];
        case 'tool_result':
          return [`${p.name ?? 'tool'} returned: ${p.result}`];
        default:
          return [];
      }
    })
    .join('\n');
}

/**
 * Builds the block.
 * @param items the recalled items, in block order (chronological).
 * @param messageOf the stored message of an item.
 * @param threadId the thread the context is for: messages of other threads are marked as such.
 * @param id the block's id ({@link RECALL_BLOCK_ID} or {@link RECALL_VOLATILE_ID}).
 */
export function recallBlock(
  items: readonly Pick<RecalledItem, 'threadId' | 'seq' | 'createdAt'>[],
  messageOf: (item: Pick<RecalledItem, 'threadId' | 'seq'>) => Message,
  threadId: string,
  id = RECALL_BLOCK_ID,
): Message {
  const lines = [RECALL_BLOCK_HEADER];
  let previous: Pick<RecalledItem, 'threadId' | 'seq' | 'createdAt'> | undefined;
  for (const item of items) {
    const adjacent = previous && previous.threadId === item.threadId && previous.seq + 1 === item.seq;
    if (previous && !adjacent) lines.push('');
    const message = messageOf(item);
    const where = item.threadId === threadId ? '' : ' (another conversation)';
    const dated = !previous || dayOf(previous) !== dayOf(item);
    const date = dated ? `[${shortDate(item.createdAt)}]${where} ` : '';
    lines.push(`${date}${message.role}: ${recalledText(message)}`);
    previous = item;
  }
  return {
    id,
    role: 'system',
    parts: [{ type: 'text', text: lines.join('\n') }],
    metadata: { recalled: items.map((i) => ({ threadId: i.threadId, seq: i.seq })) },
  };
}
