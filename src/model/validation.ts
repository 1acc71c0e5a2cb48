/**
 * Validation and normalisation of incoming messages (SPEC §1): what a caller writes (`MessageInput`)
 * becomes a well-formed `Message`, or a {@link ValidationError} names the offending message.
 *
 * Pure on purpose: deterministic code imports it, so no Node built-ins, no clock, no randomness.
 */
import { ValidationError, type ValidationCode } from './errors.js';
import {
  MAX_CREATED_AT,
  MAX_ID_LENGTH,
  MAX_JSON_DEPTH,
  MIN_CREATED_AT,
  characterCount,
  firstCharacters,
} from './limits.js';
import { ROLES } from './message.js';
import type { Message, MessageInput, Part, Role, ToolResultPart } from './message.js';

/** Options of {@link normalizeMessages}. */
export interface NormalizeOptions {
  /** Ids already stored in the thread: reusing one is a `duplicate_id` error. */
  existingIds?: ReadonlySet<string>;
  /** Prefix of generated ids (`${idPrefix}${index}`); default `m`. */
  idPrefix?: string;
}

export { MAX_ID_LENGTH };

/**
 * True when `value` nests deeper than `limit` levels of objects and arrays (`{}` is one level).
 * Never looks further than `limit` levels down, so any input, however deep, is safe to check.
 */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (limit <= 0) return true;
  for (const item of Array.isArray(value) ? value : Object.values(value))
    if (nestedDeeperThan(item, limit - 1)) return true;
  return false;
}

/**
 * Throws `too_deep` naming `field` when `value` nests deeper than {@link MAX_JSON_DEPTH} levels: such
 * input would overflow the stack of the code that copies, serialises and stores it.
 */
export function assertJsonDepth(value: unknown, field: string, limit = MAX_JSON_DEPTH): void {
  if (nestedDeeperThan(value, limit))
    throw new ValidationError('too_deep', `${field} is nested deeper than ${limit} levels`, { field });
}

/**
 * Throws `out_of_range` naming `field` unless `value` is a whole number from `min` to `max`.
 * @returns the number.
 */
export function assertWholeNumber(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new ValidationError(
      'out_of_range',
      `${field}: expected a whole number from ${min} to ${max}, got ${show(value)}`,
      { field },
    );
  return value;
}

/** A caller's value, shown safely in an error message (JSON.stringify throws on BigInt). */
function show(x: unknown): string {
  return typeof x === 'string'
    ? JSON.stringify(firstCharacters(x, 80))
    : typeof x === 'object' || typeof x === 'bigint'
      ? typeof x
      : String(x);
}

/** Where a failing message sits, carried into every error it raises. */
interface At {
  index: number;
  id: string | undefined;
}

function fail(code: ValidationCode, at: At, what: string): never {
  const shownId = at.id === undefined ? '' : ` (id ${show(at.id)})`;
  throw new ValidationError(code, `Message ${at.index}${shownId}: ${what}`, {
    index: at.index,
    messageId: at.id,
  });
}

/**
 * Position of the first NUL or lone UTF-16 surrogate in `s` (text no store can keep), or -1. One
 * pass, no allocation: it runs over every string of every message, some of them megabytes long.
 */
export function firstBadChar(s: string, from = 0): number {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) return i;
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++;
      else return i;
    }
  }
  return -1;
}

/**
 * Replaces each NUL (U+0000) and each lone UTF-16 surrogate with U+FFFD. {@link normalizeMessages}
 * rejects such text instead; this is for callers who prefer to clean their input first.
 * @returns `s` itself when there is nothing to replace.
 */
export function sanitizeText(s: string): string {
  let at = firstBadChar(s);
  if (at < 0) return s;
  let out = '';
  let from = 0;
  while (at >= 0) {
    out += s.slice(from, at) + '\uFFFD';
    from = at + 1;
    at = firstBadChar(s, from);
  }
  return out + s.slice(from);
}

/** Rejects NUL (PostgreSQL text and jsonb refuse it) and lone surrogates (not valid UTF-8). */
function checkText(s: string, at: At, field: string): string {
  const bad = firstBadChar(s);
  if (bad >= 0) {
    if (s.charCodeAt(bad) === 0) fail('nul_byte', at, `${field} contains a NUL at ${bad}`);
    fail('lone_surrogate', at, `${field} contains a lone surrogate at ${bad}`);
  }
  return s;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/**
 * Deep copy of metadata that must survive a JSON round trip unchanged (it is stored as jsonb): plain
 * objects, arrays, strings, finite numbers, booleans and null. Undefined properties are left out, as
 * JSON would; anything else (Date, BigInt, NaN, functions, cycles) is rejected rather than altered.
 */
function copyJson(x: unknown, at: At, path: string, seen: Set<object>, depth = 1): unknown {
  if (x === null || typeof x === 'boolean') return x;
  if (typeof x === 'string') return checkText(x, at, path);
  if (typeof x === 'number' && Number.isFinite(x)) return x;
  if (
    typeof x === 'object' &&
    (Array.isArray(x) || Object.getPrototypeOf(x) === Object.prototype || Object.getPrototypeOf(x) === null)
  ) {
    if (seen.has(x)) fail('invalid_message', at, `${path} is cyclic`);
    if (depth > MAX_JSON_DEPTH)
      fail('too_deep', at, `metadata is nested deeper than ${MAX_JSON_DEPTH} levels`);
    seen.add(x);
    let copy: unknown;
    if (Array.isArray(x)) copy = x.map((v, i) => copyJson(v, at, `${path}[${i}]`, seen, depth + 1));
    else {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(x)) {
        if (v !== undefined)
          out[checkText(k, at, `${path} key`)] = copyJson(v, at, `${path}.${k}`, seen, depth + 1);
      }
      copy = out;
    }
    seen.delete(x);
    return copy;
  }
  return fail('invalid_message', at, `${path} is not JSON data (${typeof x})`);
}

/** Tool-call arguments as a JSON string: strings kept as they are, other values serialised. */
function argumentsText(value: unknown, at: At): string {
  if (typeof value === 'string') return checkText(value, at, 'tool_call.arguments');
  if (value === undefined) return '{}';
  // JSON.stringify recurses: thousands of levels would overflow the stack (a cycle counts as deep).
  if (nestedDeeperThan(value, MAX_JSON_DEPTH))
    fail(
      'invalid_arguments',
      at,
      `tool_call.arguments is cyclic or nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    fail('invalid_arguments', at, `tool_call.arguments cannot be serialised: ${(e as Error).message}`);
  }
  if (text === undefined)
    fail('invalid_arguments', at, `tool_call.arguments is not JSON data (${typeof value})`);
  return checkText(text, at, 'tool_call.arguments');
}

function requiredId(value: unknown, code: ValidationCode, at: At, field: string): string {
  if (typeof value !== 'string' || value === '') fail(code, at, `${field} must be a non-empty string`);
  return checkText(value, at, field);
}

/** Copies one part, keeping only the fields of its type, and checks it belongs to the role. */
function normalizePart(raw: unknown, role: Role, at: At, k: number): Part {
  if (!isRecord(raw)) return fail('invalid_part', at, `part ${k} is not an object`);
  const type = raw['type'];
  const mismatch = (allowed: string): never =>
    fail(
      'role_part_mismatch',
      at,
      `part ${k}: ${String(type)} parts belong in ${allowed} messages, not ${role}`,
    );
  switch (type) {
    case 'text':
    case 'reasoning': {
      // A tool message answers calls and nothing else; reasoning comes only from the model.
      if (role === 'tool') mismatch('non-tool');
      if (type === 'reasoning' && role !== 'assistant') mismatch('assistant');
      if (typeof raw['text'] !== 'string')
        fail('invalid_part', at, `part ${k} (${type}) needs a string text`);
      return { type, text: checkText(raw['text'], at, `part ${k} text`) };
    }
    case 'tool_call': {
      if (role !== 'assistant') mismatch('assistant');
      const callId = requiredId(raw['callId'], 'missing_call_id', at, `part ${k} (tool_call) callId`);
      const name = requiredId(raw['name'], 'missing_tool_name', at, `part ${k} (tool_call) name`);
      return { type, callId, name, arguments: argumentsText(raw['arguments'], at) };
    }
    case 'tool_result': {
      if (role !== 'tool') mismatch('tool');
      const callId = requiredId(raw['callId'], 'missing_call_id', at, `part ${k} (tool_result) callId`);
      if (typeof raw['result'] !== 'string')
        fail('invalid_part', at, `part ${k} (tool_result) needs a string result`);
      const part: ToolResultPart = { type, callId, result: checkText(raw['result'], at, `part ${k} result`) };
      if (raw['name'] !== undefined) {
        if (typeof raw['name'] !== 'string')
          fail('invalid_part', at, `part ${k} (tool_result) name must be a string`);
        part.name = checkText(raw['name'], at, `part ${k} name`);
      }
      if (raw['isError'] !== undefined) {
        if (typeof raw['isError'] !== 'boolean')
          fail('invalid_part', at, `part ${k} (tool_result) isError must be a boolean`);
        part.isError = raw['isError'];
      }
      return part;
    }
    default:
      return fail('invalid_part', at, `part ${k} has unknown type ${show(type)}`);
  }
}

/** The message's id: the caller's, checked, or `${prefix}${index}` when it gave none. */
function messageId(raw: Record<string, unknown>, index: number, prefix: string): string {
  const given = raw['id'];
  const id = given === undefined ? `${prefix}${index}` : given;
  const at: At = { index, id: typeof id === 'string' ? id : undefined };
  if (typeof id !== 'string' || id === '') fail('invalid_id', at, 'id must be a non-empty string');
  checkText(id, at, 'id');
  if (characterCount(id) > MAX_ID_LENGTH)
    fail('invalid_id', at, `id is longer than ${MAX_ID_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f-\u009f]/.test(id)) fail('invalid_id', at, 'id contains a control character');
  return id;
}

/** What is wrong with a timestamp (a Date or a date string within the years 1 to 9999), if anything. */
function timestampProblem(value: unknown): string | undefined {
  const time = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : NaN;
  if (Number.isNaN(time)) return `must be a Date or a date string, got ${show(value)}`;
  if (time < MIN_CREATED_AT || time > MAX_CREATED_AT) return `${show(value)} is outside the years 1 to 9999`;
  return undefined;
}

/** Throws `invalid_message` naming `field` unless `value` is a timestamp every backend can store. */
export function assertTimestamp(value: unknown, field: string): void {
  const problem = timestampProblem(value);
  if (problem) throw new ValidationError('invalid_message', `${field} ${problem}`, { field });
}

function createdAtOf(value: unknown, at: At): string | undefined {
  if (value === undefined) return undefined;
  const problem = timestampProblem(value);
  if (problem) fail('invalid_message', at, `createdAt ${problem}`);
  return value instanceof Date ? value.toISOString() : (value as string);
}

/**
 * Validates caller input and returns well-formed messages (SPEC §1). The input is never mutated.
 *
 * Rules:
 * - `content: string` is shorthand for one text part (give `content` or `parts`, not both); role
 *   `developer` becomes `system`. Parts keep only the fields of their type.
 * - Ids: generated as `${idPrefix ?? 'm'}${index}` when absent (deterministic); at most
 *   {@link MAX_ID_LENGTH} characters, no control characters; unique in the batch and not in `existingIds`.
 * - Tool-call arguments: strings kept, other JSON values serialised, `undefined` becomes `'{}'`.
 * - `createdAt`: a Date becomes an ISO string; a string must parse as a date and is kept as is.
 * - A message needs at least one part that is not empty text (tool calls count as content).
 * - `tool_call` and `reasoning` parts only in assistant messages; `tool_result` parts only in tool
 *   messages, which hold nothing else.
 * - NUL and lone surrogates are REJECTED (`nul_byte`, `lone_surrogate`) anywhere, metadata included,
 *   not repaired: nothing a caller sends is silently altered. {@link sanitizeText} repairs on request.
 * - Special-token strings such as `<|endoftext|>` are ordinary text. There is no size limit and a
 *   message is never split.
 * - Limits (limits.ts): metadata and tool-call arguments given as values nest at most
 *   {@link MAX_JSON_DEPTH} levels (`too_deep`); `createdAt` lies in the years 1 to 9999.
 *
 * @param inputs Messages as callers write them.
 * @param options Ids already taken, and the prefix of generated ids.
 * @returns New `Message` objects, in input order.
 * @throws ValidationError naming the first offending message by `index` and `messageId` (the caller's
 *   id, or the generated one).
 */
export function normalizeMessages(
  inputs: readonly MessageInput[],
  options: NormalizeOptions = {},
): Message[] {
  if (!Array.isArray(inputs)) throw new ValidationError('invalid_message', 'Messages must be an array');
  const prefix = options.idPrefix ?? 'm';
  const seen = new Set<string>();
  return inputs.map((input: unknown, index): Message => {
    if (!isRecord(input))
      return fail('invalid_message', { index, id: undefined }, 'a message must be an object');
    const id = messageId(input, index, prefix);
    const at: At = { index, id };
    if (seen.has(id) || options.existingIds?.has(id)) fail('duplicate_id', at, 'id is already used');
    seen.add(id);

    const rawRole = input['role'];
    if (typeof rawRole !== 'string' || (rawRole !== 'developer' && !ROLES.includes(rawRole as Role))) {
      fail('unknown_role', at, `unknown role ${show(rawRole)}`);
    }
    const role: Role = rawRole === 'developer' ? 'system' : (rawRole as Role);

    const { content, parts: rawParts } = input;
    let parts: Part[];
    if (rawParts !== undefined) {
      if (content !== undefined) fail('invalid_message', at, 'give either content or parts, not both');
      if (!Array.isArray(rawParts)) fail('invalid_message', at, 'parts must be an array');
      parts = rawParts.map((p, k) => normalizePart(p, role, at, k));
    } else if (typeof content === 'string') {
      parts = [normalizePart({ type: 'text', text: content }, role, at, 0)];
    } else if (content !== undefined) {
      const hint =
        'tool_calls' in input || 'tool_call_id' in input ? ' (an OpenAI message? use fromOpenAI)' : '';
      return fail('invalid_message', at, `content must be a string${hint}`);
    } else parts = [];

    const hasContent = parts.some((p) =>
      p.type === 'text' || p.type === 'reasoning' ? p.text !== '' : true,
    );
    if (!hasContent) fail('empty_message', at, parts.length === 0 ? 'no parts' : 'only empty text');

    const message: Message = { id, role, parts };
    const createdAt = createdAtOf(input['createdAt'], at);
    if (createdAt !== undefined) message.createdAt = createdAt;
    const metadata = input['metadata'];
    if (metadata !== undefined) {
      if (!isRecord(metadata)) fail('invalid_message', at, 'metadata must be an object');
      message.metadata = copyJson(metadata, at, 'metadata', new Set()) as Record<string, unknown>;
    }
    return message;
  });
}
