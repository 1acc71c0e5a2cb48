/**
 * Working memory: one pinned block per user, per resource of a user, or per thread, that the agent
 * itself reads and replaces (Mastra's working memory, Letta's memory blocks). Its content is Markdown
 * text, or JSON checked against a JSON Schema the caller sets. The rules every store keeps:
 * - Versions count from 1; version 0 means "never set". Every version is kept.
 * - Optimistic concurrency: a write names the version it replaces and lands as the next one only if
 *   that is still the latest; otherwise it is refused ({@link VersionConflictError}) and changes nothing.
 * - A version's schema stays in force for the next ones until a write gives another (or `null`).
 * - Deleting a thread erases its working memory; erasing a user erases the user's (and their threads').
 * What a version may hold is decided here, once, for the client and every store (no I/O; content is
 * checked against its schema in a worker thread, within a time limit: schema-check.ts). The JSON
 * Schema validator loads the first time a schema is in play (see {@link loadValidator}).
 */
import { withLinearPatterns } from './schema-patterns.js';
import { checkInWorker, CHECK_TIMEOUT_MS } from './schema-check.js';
import { metaSchemaOf, type Validator } from './schema-problems.js';
import { DurableMemoryError, ValidationError } from '../model/errors.js';
import {
  MAX_JSON_DEPTH,
  MAX_WORKING_MEMORY_LENGTH,
  MAX_WORKING_MEMORY_SCHEMA_LENGTH,
  characterCount,
} from '../model/limits.js';
import { nestedDeeperThan } from '../model/validation.js';
import { assertStorableText } from '../store/internal/prepare.js';

/** Whose working memory: a user's, a user's for one resource, or one thread's. */
export type WorkingMemoryScope = { userId: string; resourceId?: string } | { threadId: string };

/** `markdown`: the content is text; `json`: any JSON value, checked against the schema if one is set. */
export type WorkingMemoryFormat = 'markdown' | 'json';

/** The formats, as errors and schemas list them. */
export const WORKING_MEMORY_FORMATS: readonly WorkingMemoryFormat[] = ['markdown', 'json'];

/** A JSON Schema (draft-07 unless its `$schema` names 2019-09 or 2020-12), as plain JSON. */
export type JsonSchema = Record<string, unknown>;

/** What one version holds. */
export interface WorkingMemoryContent {
  format: WorkingMemoryFormat;
  /** Markdown text, or the JSON value. */
  content: unknown;
  /** The JSON Schema the content was checked against (`json` only). */
  schema?: JsonSchema;
}

/** One version of a working memory, or its empty start (`version: 0`, empty Markdown). */
export interface WorkingMemory extends WorkingMemoryContent {
  userId?: string;
  resourceId?: string;
  threadId?: string;
  /** 1, 2, …; 0 when it was never set. Give it back to `set` to replace this version. */
  version: number;
  /** When this version was written (ISO-8601); absent for version 0. */
  updatedAt?: string;
}

/** Options of a write. */
export interface SetWorkingMemoryOptions {
  /** The version this write replaces: the `version` last read (0 for the first write). */
  version: number;
  /** Default: `json` when a schema is in force, else `markdown` for text and `json` for anything else. */
  format?: WorkingMemoryFormat;
  /** A JSON Schema the content must match from now on; `null` drops it; absent keeps the previous one. */
  schema?: JsonSchema | null;
}

/**
 * A write named a version that is no longer the latest (another writer came first): nothing was
 * written. Read again, merge, and write with the new version. The HTTP API answers 409 `conflict`.
 */
export class VersionConflictError extends DurableMemoryError {
  declare readonly code: 'conflict';
  /** The latest version when the write was refused. */
  readonly current: number;
  constructor(expected: number, current: number) {
    super(
      'conflict',
      `working memory is at version ${current}, not ${expected}: read it again and write on top of version ${current}`,
    );
    this.name = 'VersionConflictError';
    this.current = current;
  }
}

/**
 * Checks a scope as callers give it: `{ userId }`, `{ userId, resourceId }` or `{ threadId }`.
 * @throws ValidationError `invalid_option` for any other shape, the id codes for a bad id.
 */
export function parseScope(input: unknown): WorkingMemoryScope {
  const given = (input ?? {}) as Record<string, unknown>;
  const { userId, resourceId, threadId, ...rest } = given;
  const extra = Object.keys(rest)[0];
  const shape = 'expected { userId }, { userId, resourceId } or { threadId }';
  if (typeof input !== 'object' || Array.isArray(input) || extra !== undefined)
    throw new ValidationError('invalid_option', `working memory scope: ${shape}`, { field: extra });
  if (threadId !== undefined) {
    if (userId !== undefined || resourceId !== undefined)
      throw new ValidationError('invalid_option', `working memory scope: ${shape}, not both`, {
        field: 'threadId',
      });
    assertScopeId(threadId, 'threadId');
    return { threadId };
  }
  if (userId === undefined)
    throw new ValidationError('invalid_option', `working memory scope: ${shape}`, { field: 'userId' });
  assertScopeId(userId, 'userId');
  if (resourceId === undefined) return { userId };
  assertScopeId(resourceId, 'resourceId');
  return { userId, resourceId };
}

/** A non-empty id a store can keep (memory-store.ts's rule; not imported: it imports this module). */
function assertScopeId(value: unknown, name: string): asserts value is string {
  if (typeof value !== 'string' || value.length === 0)
    throw new ValidationError('invalid_id', `${name} must be a non-empty string`, { field: name });
  assertStorableText(value, {});
}

/** The scope's ids as a working memory carries them. */
export function scopeFields(
  scope: WorkingMemoryScope,
): Pick<WorkingMemory, 'userId' | 'resourceId' | 'threadId'> {
  if ('threadId' in scope) return { threadId: scope.threadId };
  return scope.resourceId === undefined
    ? { userId: scope.userId }
    : { userId: scope.userId, resourceId: scope.resourceId };
}

/** A scope's working memory before its first write. */
export function emptyWorkingMemory(scope: WorkingMemoryScope): WorkingMemory {
  return { ...scopeFields(scope), format: 'markdown', content: '', version: 0 };
}

/** The content as stored: Markdown as is, JSON as `JSON.stringify` writes it. */
export function contentText(version: WorkingMemoryContent): string {
  return version.format === 'markdown' ? (version.content as string) : JSON.stringify(version.content);
}

/**
 * Whether a write given as text (a tool's argument, the command line's) is JSON text to parse: the
 * working memory it replaces is JSON, or a schema is in force (only JSON can match one). Otherwise
 * the text is Markdown.
 */
export function takesJsonText(current: Pick<WorkingMemory, 'format' | 'schema'>): boolean {
  return current.format === 'json' || current.schema !== undefined;
}

/** Checks a version number a caller gives (a whole number, 0 or more). */
export function assertVersion(version: unknown): asserts version is number {
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0)
    throw new ValidationError(
      'invalid_option',
      `version: expected the version last read (a whole number, 0 before the first write), got ${String(version)}`,
      { field: 'version' },
    );
}

/**
 * The version a write makes of `content` on top of `previous` (the version it replaces): the format
 * and schema decided, the content checked. Nothing is stored here. Async because the JSON Schema
 * validator is imported the first time a schema is in play and content is checked in a worker.
 * @throws ValidationError (a rejection) `invalid_schema` (the schema is not a JSON Schema, or
 *   checking the content against it took over CHECK_TIMEOUT_MS),
 *   `schema_mismatch` (the content does not match the schema in force; the message says where and
 *   why), `invalid_option` (a format that does not fit the content), `too_long`, `too_deep`,
 *   `nul_byte`, `lone_surrogate`.
 */
export async function prepareVersion(
  previous: WorkingMemoryContent | undefined,
  content: unknown,
  options: SetWorkingMemoryOptions,
): Promise<WorkingMemoryContent> {
  assertVersion(options.version);
  const schema = options.schema === undefined ? previous?.schema : (options.schema ?? undefined);
  if (options.schema != null) await checkSchema(await loadValidator(), options.schema);
  if (options.format !== undefined && !WORKING_MEMORY_FORMATS.includes(options.format))
    throw new ValidationError(
      'invalid_option',
      `format: expected ${WORKING_MEMORY_FORMATS.join(' or ')}, got ${JSON.stringify(options.format)}`,
      { field: 'format' },
    );
  const format = options.format ?? (schema || typeof content !== 'string' ? 'json' : 'markdown');
  if (format === 'markdown') {
    if (schema)
      throw new ValidationError(
        'invalid_option',
        'a schema needs format json (or drop it with schema: null)',
        {
          field: 'format',
        },
      );
    if (typeof content !== 'string')
      throw new ValidationError('invalid_option', 'content: Markdown working memory is text', {
        field: 'content',
      });
    checkText(content, 'content', MAX_WORKING_MEMORY_LENGTH);
    return { format, content };
  }
  const json = checkJson(content, 'content', MAX_WORKING_MEMORY_LENGTH);
  if (schema) {
    const checked = await checkInWorker(schema, { value: json });
    if ('timedOut' in checked)
      throw invalidSchema(`checking the content against it took over ${CHECK_TIMEOUT_MS} ms: ${SIMPLIFY}`);
    const problems = checked.problems;
    if (problems)
      throw new ValidationError('schema_mismatch', `content does not match the schema: ${problems}`, {
        field: 'content',
      });
  }
  return schema ? { format, content: json, schema } : { format, content: json };
}

let validator: Promise<Validator> | undefined;

/**
 * The validator, imported the first time a schema is in play: it is some 235 modules, which
 * everything else that reaches this module (the client library, so every command-line command that
 * reads a thread) need not load.
 */
function loadValidator(): Promise<Validator> {
  validator ??= import('typebox/schema').then((module) => module.default);
  return validator;
}

/**
 * Checks that `schema` is a JSON Schema (an object valid against its meta-schema, usable by the
 * validator) of storable size: what costs little here, the rest in a worker, within a time limit.
 * @throws ValidationError `invalid_schema` saying what is wrong.
 */
async function checkSchema(validator: Validator, schema: unknown): Promise<void> {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema))
    throw invalidSchema('expected a JSON Schema object');
  checkJson(schema, 'schema', MAX_WORKING_MEMORY_SCHEMA_LENGTH);
  const named = (schema as JsonSchema)['$schema'];
  if (named !== undefined && !metaSchemaOf(validator, named))
    throw invalidSchema(
      `$schema: unknown dialect ${JSON.stringify(named)} (use draft-07, 2019-09 or 2020-12)`,
    );
  const checked = await checkInWorker(schema);
  if ('timedOut' in checked) throw invalidSchema(`checking it took over ${CHECK_TIMEOUT_MS} ms: ${SIMPLIFY}`);
  if (checked.problems) throw invalidSchema(checked.problems);
  const linear = withLinearPatterns(schema);
  if ('problem' in linear) throw invalidSchema(linear.problem);
  const unresolved = unresolvedRef(schema as JsonSchema);
  if (unresolved !== undefined)
    throw invalidSchema(
      `$ref ${JSON.stringify(unresolved)} does not resolve within the schema (nothing is fetched: ` +
        'put what it names under definitions or $defs and refer to it with #/…)',
    );
}

/** What a schema whose check takes too long is told. */
const SIMPLIFY = 'anyOf or oneOf branches that multiply; simplify it';

/**
 * The first `$ref` of `schema` that names nothing in it, if any: the validator takes such a ref as a
 * schema nothing matches (`schema is false`) rather than refusing the schema. A ref resolves when it
 * is a JSON pointer into the schema (`#`, `#/$defs/a`), an anchor of it (`#name`: `$anchor`, or a
 * draft-07 `$id` of `#name`), or the `$id` of one of its parts.
 */
function unresolvedRef(root: JsonSchema): string | undefined {
  const nodes: Record<string, unknown>[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      nodes.push(value as Record<string, unknown>);
      Object.values(value).forEach(walk);
    }
  };
  walk(root);
  const ids = new Set<unknown>(nodes.flatMap((n) => [n['$id'], n['$anchor'] && `#${String(n['$anchor'])}`]));
  const resolves = (ref: string): boolean => {
    if (ids.has(ref) || ref === '#') return true;
    if (!ref.startsWith('#/')) return false;
    let at: unknown = root;
    for (const step of ref.slice(2).split('/')) {
      let key: string;
      try {
        key = decodeURIComponent(step).replace(/~1/gu, '/').replace(/~0/gu, '~');
      } catch {
        return false; // malformed percent-encoding: names nothing
      }
      if (!at || typeof at !== 'object' || !Object.hasOwn(at, key)) return false;
      at = (at as Record<string, unknown>)[key];
    }
    return at !== null && (typeof at === 'object' || typeof at === 'boolean');
  };
  for (const node of nodes) {
    const ref = node['$ref'];
    if (typeof ref === 'string' && !resolves(ref)) return ref;
  }
  return undefined;
}

function invalidSchema(detail: string): ValidationError {
  return new ValidationError('invalid_schema', `schema: ${detail}`, { field: 'schema' });
}

/** Checks text a store can keep within `max` characters. */
function checkText(text: string, field: string, max: number): void {
  const length = overLimit(text, max);
  if (length !== undefined)
    throw new ValidationError('too_long', `${field}: ${fmt(length)} characters, more than ${fmt(max)}`, {
      field,
    });
  try {
    assertStorableText(text, {});
  } catch (err) {
    if (err instanceof ValidationError)
      throw new ValidationError(err.code, `${field}: ${err.message}`, { field });
    throw err;
  }
}

/** A text's characters (code points) when more than `max`, else undefined (a short text is not counted). */
function overLimit(text: string, max: number): number | undefined {
  if (text.length <= max) return undefined; // never more code points than code units
  const length = characterCount(text);
  return length > max ? length : undefined;
}

const fmt = (n: number): string => n.toLocaleString('en-US');

/** `value` as the JSON it stands for (a copy), checked for depth, size and storable text. */
function checkJson(value: unknown, field: string, max: number): unknown {
  if (nestedDeeperThan(value, MAX_JSON_DEPTH))
    throw new ValidationError('too_deep', `${field}: nested deeper than ${MAX_JSON_DEPTH} levels of JSON`, {
      field,
    });
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined)
    throw new ValidationError('invalid_option', `${field}: expected a JSON value`, { field });
  const length = overLimit(text, max);
  if (length !== undefined)
    throw new ValidationError(
      'too_long',
      `${field}: its JSON is ${fmt(length)} characters, more than ${fmt(max)}`,
      { field },
    );
  const copy: unknown = JSON.parse(text);
  try {
    assertStorableText(copy, {});
  } catch (err) {
    if (err instanceof ValidationError)
      throw new ValidationError(err.code, `${field}: ${err.message}`, { field });
    throw err;
  }
  return copy;
}
