/**
 * Adapters between our messages and OpenAI chat-completions messages (SPEC §1).
 *
 * What maps, both ways: roles, text, tool calls (`tool_calls` ↔ `tool_call` parts), tool results
 * (`role: 'tool'` ↔ `tool_result` parts), and the optional `name` (↔ `metadata.name`). What does not:
 * - reasoning parts are not sent: chat-completions has no input field for them (reasoning is returned
 *   by the API, never accepted back), so an assistant message holding only reasoning is left out;
 * - a tool message with N results becomes N OpenAI tool messages (each carries one `tool_call_id`),
 *   and coming back each OpenAI message stays one message; a result's `name` and `isError` have no
 *   OpenAI field and are dropped;
 * - `developer` comes in as `system` and goes out as `system`;
 * - images, audio, files, custom tool calls and the legacy `function` role are not representable and
 *   are rejected with `invalid_part` rather than silently dropped.
 * An assistant's text goes before its tool calls (OpenAI keeps them in separate fields).
 *
 * Only a type is imported from `openai`: this module stays pure and loads no OpenAI code.
 */
import type * as OpenAI from 'openai/resources/chat/completions';
import { ValidationError } from './errors.js';
import { firstCharacters } from './limits.js';
import type { Message, MessageInput, PartInput, TextPart } from './message.js';

type OpenAIMessage = OpenAI.ChatCompletionMessageParam;
type TextContent = string | OpenAI.ChatCompletionContentPartText[];

/** A caller's value, shown safely in an error message (JSON.stringify throws on BigInt). */
function show(x: unknown): string {
  return typeof x === 'string'
    ? JSON.stringify(firstCharacters(x, 80))
    : typeof x === 'object' || typeof x === 'bigint'
      ? typeof x
      : String(x);
}

/** One text part as a plain string (what most callers send); several as an array, so they round-trip. */
function textContent(texts: readonly TextPart[]): TextContent {
  return texts.length === 1 ? texts[0]!.text : texts.map((t) => ({ type: 'text', text: t.text }));
}

/**
 * Converts messages to OpenAI chat-completions messages, ready for `chat.completions.create`.
 * Summary messages (`metadata.compaction`) go out with their role like any other message.
 * @param messages Validated messages (see `normalizeMessages`).
 * @returns One OpenAI message per message, except: a tool message yields one per result, and an
 *   assistant message with only reasoning yields none.
 */
export function toOpenAI(messages: readonly Message[]): OpenAIMessage[] {
  const out: OpenAIMessage[] = [];
  for (const m of messages) {
    const texts = m.parts.filter((p): p is TextPart => p.type === 'text');
    const name = m.metadata?.['name'];
    const named = typeof name === 'string' ? { name } : {};
    switch (m.role) {
      case 'system':
      case 'user':
        out.push({ role: m.role, content: textContent(texts), ...named });
        break;
      case 'assistant': {
        const calls: OpenAI.ChatCompletionMessageFunctionToolCall[] = [];
        for (const p of m.parts) {
          if (p.type === 'tool_call') {
            calls.push({
              id: p.callId,
              type: 'function',
              function: { name: p.name, arguments: p.arguments },
            });
          }
        }
        if (texts.length === 0 && calls.length === 0) break; // reasoning only: nothing OpenAI accepts
        const content = texts.length === 0 ? null : textContent(texts);
        out.push({
          role: 'assistant',
          content,
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
          ...named,
        });
        break;
      }
      case 'tool':
        for (const p of m.parts) {
          if (p.type === 'tool_result') out.push({ role: 'tool', tool_call_id: p.callId, content: p.result });
        }
        break;
    }
  }
  return out;
}

/** Options of {@link fromOpenAI}. */
export interface FromOpenAIOptions {
  /** When set, messages without an `id` get `${idPrefix}${index}`; otherwise `normalizeMessages` assigns. */
  idPrefix?: string;
}

/**
 * Converts OpenAI chat-completions messages (requests' `messages`, or `choices[i].message` from a
 * response) into message input for `normalizeMessages`, one per OpenAI message, in order.
 *
 * Besides OpenAI's fields, an `id`, `createdAt` and `metadata` put on the objects are carried over, so
 * that `{ role, content: string }` gives the same message on both paths (see {@link isOpenAIMessage}).
 * An assistant `refusal` is kept as text: it is what the assistant said, and we have no refusal part.
 * Shapes that `normalizeMessages` checks anyway (ids, call ids, names, emptiness) are left to it.
 * @throws ValidationError `invalid_part` for content we cannot represent (images, audio, files, custom
 *   tool calls, the legacy `function` role), `unknown_role`, or `invalid_message` for a non-object.
 */
export function fromOpenAI(
  messages: readonly OpenAIMessage[],
  options: FromOpenAIOptions = {},
): MessageInput[] {
  if (!Array.isArray(messages)) throw new ValidationError('invalid_message', 'Messages must be an array');
  return messages.map((m, index) => fromOpenAIMessage(m, index, options));
}

/**
 * A list that may mix our message inputs and OpenAI chat-completions messages, as our inputs: each
 * OpenAI message converted once, here (the client's `append`, `compact()` and the HTTP API all come
 * through this), and a conversion error names the message's place in the whole list.
 */
export function toMessageInputs(list: readonly unknown[]): MessageInput[] {
  return list.map((m, index) =>
    isOpenAIMessage(m) ? fromOpenAIMessage(m as OpenAIMessage, index, {}) : (m as MessageInput),
  );
}

/** One OpenAI message at `index` of its list; see {@link fromOpenAI}. */
function fromOpenAIMessage(m: OpenAIMessage, index: number, options: FromOpenAIOptions): MessageInput {
  if (typeof m !== 'object' || m === null) {
    throw new ValidationError('invalid_message', `Message ${index}: not an object`, { index });
  }
  const raw = m as unknown as Record<string, unknown>;
  const givenId = typeof raw['id'] === 'string' ? raw['id'] : undefined;
  const where = { index, messageId: givenId };
  const reject = (what: string): never => {
    const shownId = givenId === undefined ? '' : ` (id ${show(givenId)})`;
    throw new ValidationError('invalid_part', `Message ${index}${shownId}: ${what}`, where);
  };
  const textParts = (content: unknown): PartInput[] => {
    if (content === null || content === undefined) return [];
    if (typeof content === 'string') return [{ type: 'text', text: content }];
    if (!Array.isArray(content)) return reject('content must be a string or an array of parts');
    return content.map((c: { type?: unknown; text?: unknown; refusal?: unknown }): PartInput => {
      if (c?.type === 'text') return { type: 'text', text: c.text as string };
      if (c?.type === 'refusal') return { type: 'text', text: c.refusal as string };
      return reject(`a content part of type ${show(c?.type)} cannot be stored: messages hold text`);
    });
  };

  let role: string;
  let parts: PartInput[];
  switch (m.role) {
    case 'system':
    case 'developer':
    case 'user':
      role = m.role === 'user' ? 'user' : 'system';
      parts = textParts(m.content);
      break;
    case 'assistant': {
      if (m.audio) reject('assistant audio cannot be stored');
      if (m.function_call) reject('the legacy function_call cannot be stored; use tool_calls');
      parts = textParts(m.content);
      if (typeof m.refusal === 'string' && m.refusal !== '') parts.push({ type: 'text', text: m.refusal });
      if (m.tool_calls !== undefined && !Array.isArray(m.tool_calls)) reject('tool_calls must be an array');
      for (const call of m.tool_calls ?? []) {
        if (call?.type !== 'function') reject(`a ${show(call?.type)} tool call cannot be stored`);
        const fn = (call as OpenAI.ChatCompletionMessageFunctionToolCall).function;
        parts.push({ type: 'tool_call', callId: call.id, name: fn?.name, arguments: fn?.arguments });
      }
      role = 'assistant';
      break;
    }
    case 'tool': {
      const texts = textParts(m.content) as TextPart[];
      parts = [{ type: 'tool_result', callId: m.tool_call_id, result: texts.map((t) => t.text).join('\n') }];
      role = 'tool';
      break;
    }
    case 'function':
      return reject('the legacy function role cannot be stored; use tool messages');
    default:
      throw new ValidationError('unknown_role', `Message ${index}: unknown role ${show(raw['role'])}`, where);
  }

  const input: MessageInput = { role, parts };
  const id = givenId ?? (options.idPrefix === undefined ? undefined : `${options.idPrefix}${index}`);
  if (id !== undefined) input.id = id;
  if (raw['createdAt'] !== undefined) input.createdAt = raw['createdAt'] as string | Date;
  const name = 'name' in m ? m.name : undefined;
  const metadata = raw['metadata'];
  if (name === undefined) {
    if (metadata !== undefined) input.metadata = metadata as Record<string, unknown>; // checked later
  } else if (metadata === undefined || (typeof metadata === 'object' && metadata !== null)) {
    input.metadata = { ...metadata, name }; // OpenAI's `name` lives in metadata.name
  } else {
    throw new ValidationError('invalid_message', `Message ${index}: metadata must be an object`, where);
  }
  return input;
}

const OPENAI_ONLY_FIELDS = ['tool_calls', 'tool_call_id', 'name', 'refusal', 'audio', 'function_call'];

/**
 * Tells an OpenAI chat-completions message from our `MessageInput`, so that `append()` can take
 * either. Ours has `parts` (never OpenAI); OpenAI's has a field we lack (`tool_calls`, `tool_call_id`,
 * `name`, ...), array or null `content`, or the `function` role.
 *
 * `{ role, content: 'text' }` with one of our roles (or `developer`) is valid in both formats; this
 * returns false for it, and both paths give the same `Message` for it (tested), so the answer is
 * immaterial.
 * @param x Anything a caller passed as a message.
 */
export function isOpenAIMessage(x: unknown): boolean {
  if (typeof x !== 'object' || x === null || 'parts' in x) return false;
  const r = x as Record<string, unknown>;
  if (OPENAI_ONLY_FIELDS.some((f) => f in r) || r['role'] === 'function') return true;
  return 'content' in r && (r['content'] === null || Array.isArray(r['content']));
}
