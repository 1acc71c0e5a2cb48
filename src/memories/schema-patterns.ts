/**
 * A working memory schema's `pattern`s, matched in linear time. JSON Schema's patterns are ECMA-262
 * regular expressions, which V8 matches by backtracking: `^(a+)+$` against 60 a's and a `!` runs for
 * ages, and content is checked where it is set, in the API server every tenant shares. So each
 * pattern is compiled by RE2 (re2js, the RE2/J port: time linear in the text, RE2's syntax: no
 * lookaround, no backreferences) and handed to the validator as a RegExp whose `test` is RE2's.
 * `patternProperties` names its patterns in keys, which the validator compiles itself: refused.
 *
 * Where RE2 and JavaScript differ: `\s` is ASCII whitespace, and `.` matches `\r` and U+2028/9.
 * JavaScript's `\uXXXX` and `\u{X…}` escapes are read as RE2's `\x{…}`.
 */
import { RE2JS } from 're2js';

/** A schema, as parsed JSON. */
type Node = unknown;

/** Keywords whose values are data, not schemas: never searched for patterns. */
const DATA = new Set(['const', 'enum', 'default', 'examples']);
/** Keywords whose values map names to schemas: every value is a schema, whatever its name. */
const SCHEMA_MAPS = new Set(['properties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);

/** A pattern as the validator takes it (a RegExp), matched by RE2. */
class LinearPattern extends RegExp {
  readonly #re2: RE2JS;
  readonly #pattern: string;

  constructor(pattern: string, re2: RE2JS) {
    super('(?:)', 'u');
    this.#re2 = re2;
    this.#pattern = pattern;
  }

  override test(text: string): boolean {
    return this.#re2.matcher(text).find();
  }

  /** The pattern as the schema wrote it, for the validator's messages. */
  override toString(): string {
    return this.#pattern;
  }
}

/** `pattern` in RE2's syntax: JavaScript's `\u` escapes become `\x{…}`; the rest is the same. */
function toRe2(pattern: string): string {
  return pattern.replace(/\\(\\|u\{([0-9a-fA-F]+)\}|u([0-9a-fA-F]{4}))/gu, (all, _e, braced, four) =>
    braced || four ? `\\x{${braced ?? four}}` : all,
  );
}

/** RE2's compiled `pattern`, or why it cannot be. */
function compile(pattern: string): RE2JS | string {
  try {
    return RE2JS.compile(toRe2(pattern));
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return `pattern ${JSON.stringify(pattern)}: ${why} (patterns are matched in linear time, by RE2's rules: no lookaround, no backreferences)`;
  }
}

/**
 * `schema` with each `pattern` a {@link LinearPattern}, or the first reason it cannot be: a pattern
 * RE2 cannot compile, or `patternProperties`.
 */
export function withLinearPatterns(schema: Node): { schema: Node } | { problem: string } {
  let problem: string | undefined;
  const walk = (node: Node): Node => {
    if (problem !== undefined || !node || typeof node !== 'object' || Array.isArray(node)) return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (DATA.has(key)) out[key] = value;
      else if (key === 'patternProperties')
        problem ??=
          'patternProperties is not supported (its patterns would be matched by backtracking): use propertyNames with a pattern, or properties';
      else if (key === 'pattern' && typeof value === 'string') {
        const re2 = compile(value);
        if (typeof re2 === 'string') problem ??= re2;
        else out[key] = new LinearPattern(value, re2);
      } else if (SCHEMA_MAPS.has(key) && value && typeof value === 'object' && !Array.isArray(value))
        out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, walk(sub)]));
      else if (Array.isArray(value)) out[key] = value.map(walk);
      else out[key] = walk(value);
    }
    return out;
  };
  const linear = walk(schema);
  return problem === undefined ? { schema: linear } : { problem };
}
